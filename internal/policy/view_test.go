package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// TestViewsMirrorCoreTypes checks that the views rules see have exactly
// the JSON fields of the core types, so that a field added to
// action.Action or mandate.Mandate (or Limits) is visible to rules only
// once it is added to the view and to viewAction/viewMandate.
func TestViewsMirrorCoreTypes(t *testing.T) {
	pairs := []struct{ core, view reflect.Type }{
		{reflect.TypeFor[action.Action](), reflect.TypeFor[actionView]()},
		{reflect.TypeFor[mandate.Mandate](), reflect.TypeFor[mandateView]()},
		{reflect.TypeFor[mandate.Limits](), reflect.TypeFor[limitsView]()},
		{reflect.TypeFor[CallFacts](), reflect.TypeFor[callView]()},
		{reflect.TypeFor[mandate.Report](), reflect.TypeFor[reportView]()},
		{reflect.TypeFor[SelfFacts](), reflect.TypeFor[selfView]()},
	}
	for _, p := range pairs {
		core, view := jsonFields(p.core), jsonFields(p.view)
		for name, ct := range core {
			vt, ok := view[name]
			if !ok {
				t.Errorf("%s has field %q that %s lacks: add it to the view and its constructor", p.core, name, p.view)
				continue
			}
			if !sameShape(ct, vt) {
				t.Errorf("%s.%s is %s but %s.%s is %s", p.core, name, ct, p.view, name, vt)
			}
		}
		for name := range view {
			if _, ok := core[name]; !ok {
				t.Errorf("%s has field %q that %s lacks", p.view, name, p.core)
			}
		}
	}
}

// sameShape reports whether a view field's type carries the core field's
// data: identical, or the same kind of container of string-kinded types.
func sameShape(core, view reflect.Type) bool {
	if core == view {
		return true
	}
	if core.Kind() != view.Kind() {
		return false
	}
	switch core.Kind() {
	case reflect.String:
		return true
	case reflect.Slice, reflect.Pointer:
		return sameShape(core.Elem(), view.Elem())
	case reflect.Map:
		return sameShape(core.Key(), view.Key()) && sameShape(core.Elem(), view.Elem())
	case reflect.Struct:
		return view == reflect.TypeFor[limitsView]() && core == reflect.TypeFor[mandate.Limits]()
	}
	return false
}

func jsonFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	return m
}

// TestViewsCarryValues checks that the views hold the same data as the
// values they are built from, by comparing the two as JSON.
func TestViewsCarryValues(t *testing.T) {
	in := realisticInput()
	in.Action.Amounts = []action.Amount{{Value: 3, Currency: "EUR"}}
	in.Action.Commands = []action.Command{goTest}
	in.Mandate.Limits.Spend = &mandate.Money{Amount: 10, Currency: "EUR"}
	in.Mandate.Prohibitions = []mandate.Prohibition{{Kind: action.Pay, Text: "do not buy"}}
	in.Mandate.ExpiresAt = &expiry
	in.Mandate.Parent = "parent"
	in.Mandate.Notes = []string{"note"}
	in.Mandate.Scope = mandate.Scope{Paths: []string{"/p/**"}, Hosts: []string{"h"}, Names: []string{"n"}, None: []string{"accounts"}}
	for _, c := range []struct{ core, view any }{
		{in.Action, viewAction(in.Action)},
		{in.Mandate, viewMandate(in.Mandate)},
		{&mandate.Mandate{}, viewMandate(nil)},
	} {
		a, b := mustJSON(t, c.core), mustJSON(t, c.view)
		if a != b {
			t.Errorf("view differs from its source:\n core %s\n view %s", a, b)
		}
	}
}

// TestInputFitsCoversEveryField grows each list, map and string the rules
// can see, one at a time, past the sizes the static cost estimates assume,
// and checks that inputFits notices. A field added to an input type and
// not to inputFits fails here, instead of silently voiding the estimates.
func TestInputFitsCoversEveryField(t *testing.T) {
	if !fitsInput(realisticInput()) {
		t.Fatal("the realistic input does not fit")
	}
	roots := []string{"Call", "Action", "Mandate", "Scope", "Session", "Agent", "Self"}
	for _, root := range roots {
		// Walk the field paths of a fresh input each time and grow one.
		paths := growablePaths(reflect.ValueOf(fullInput()).Elem().FieldByName(root), root)
		if len(paths) == 0 {
			t.Fatalf("no growable fields under %s", root)
		}
		for _, p := range paths {
			in := fullInput()
			if !fitsInput(in) {
				t.Fatal("the full input does not fit")
			}
			switch p {
			case "Action.Kind", "Action.Kinds.0":
				continue // normAction turns anything but a kind name into "unknown"
			}
			grow(reflect.ValueOf(in).Elem().FieldByName(root), strings.Split(p, ".")[1:])
			if p == "Action.Kinds" {
				in.Action.Kind = in.Action.Kinds[0] // so normAction keeps the long list as it is
			}
			if fitsInput(in) {
				t.Errorf("inputFits does not check %s", p)
			}
		}
	}
}

func fitsInput(in *Input) bool {
	return inputFits(&in.Call, viewAction(normAction(in.Action)), viewMandate(in.Mandate), in)
}

func fitsSizes(in *Input) fitSizes {
	return measureInput(&in.Call, viewAction(normAction(in.Action)), viewMandate(in.Mandate), in)
}

// fullInput has one element in every list and map, so that the fields of
// their elements can be grown too.
func fullInput() *Input {
	in := realisticInput()
	in.Action.Source, in.Action.Family = "catalog", "email"
	in.Action.Paths[0].Why = "why"
	in.Action.URLs, in.Action.Hosts, in.Action.Accounts = []string{"u"}, []string{"h"}, []string{"a"}
	in.Action.Amounts = []action.Amount{{Value: 1, Currency: "EUR"}}
	in.Action.Commands = []action.Command{{Argv: []string{"go"}, Name: "go", Kind: action.Execute, Via: []string{"sudo"}, Note: "n"}}
	in.Mandate.Deny = []action.Kind{action.Pay}
	in.Mandate.Prohibitions = []mandate.Prohibition{{Kind: action.Pay, Target: "t", Text: "x"}}
	in.Mandate.Scope = mandate.Scope{Paths: []string{"p"}, Hosts: []string{"h"}, Recipients: []string{"r"}, Accounts: []string{"a"}, Names: []string{"n"}, None: []string{"hosts"}}
	in.Mandate.Limits.Spend = &mandate.Money{Amount: 1, Currency: "EUR"}
	in.Mandate.Parent, in.Mandate.Notes = "p", []string{"n"}
	in.Scope = mandate.Report{PathsOutside: []string{"p"}, SensitivePathsOutside: []string{"p"}, HostsOutside: []string{"h"},
		RecipientsOutside: []string{"r"}, AccountsOutside: []string{"a"}, Prohibited: []string{"x"}}
	in.Session.ParentID = "p"
	in.Session.Spend = map[string]float64{"EUR": 1}
	in.Agent = AgentFacts{ID: "a", Model: "m", PromptHash: "p", ToolsetHash: "t", Retrieval: "r"}
	in.Self = SelfFacts{Addresses: []string{"127.0.0.1:7410"}, Hosts: []string{"127.0.0.1"}, Ports: []string{"7410"}, Paths: []string{"/srv/mandate"}}
	return in
}

// growablePaths lists the dotted paths of every string, slice and map
// under v, skipping call.args (which rules may read but nothing bounds).
func growablePaths(v reflect.Value, prefix string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return growablePaths(v.Elem(), prefix)
	case reflect.String:
		return []string{prefix}
	case reflect.Map:
		return []string{prefix, prefix + ".#key"}
	case reflect.Slice:
		out := []string{prefix}
		if v.Len() > 0 {
			out = append(out, growablePaths(v.Index(0), prefix+".0")...)
		}
		return out
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" || prefix+"."+f.Name == "Call.Args" {
				continue
			}
			out = append(out, growablePaths(v.Field(i), prefix+"."+f.Name)...)
		}
		return out
	}
	return nil
}

// grow makes the value at path too large: a long string, a long list, a
// map with many (or one long) keys.
func grow(v reflect.Value, path []string) {
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if len(path) == 0 {
		switch v.Kind() {
		case reflect.String:
			v.SetString(strings.Repeat("x", fitString+1))
		case reflect.Slice:
			n := reflect.MakeSlice(v.Type(), fitList+1, fitList+1)
			for i := range n.Len() {
				if v.Len() > 0 {
					n.Index(i).Set(v.Index(0))
				}
			}
			v.Set(n)
		case reflect.Map:
			n := reflect.MakeMap(v.Type())
			for i := range fitList + 1 {
				k := reflect.New(v.Type().Key()).Elem()
				k.SetString(strings.Repeat("k", i+1))
				n.SetMapIndex(k, reflect.Zero(v.Type().Elem()))
			}
			v.Set(n)
		}
		return
	}
	switch path[0] {
	case "0":
		grow(v.Index(0), path[1:])
	case "#key":
		n := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		k.SetString(strings.Repeat("k", fitString+1))
		n.SetMapIndex(k, reflect.Zero(v.Type().Elem()))
		v.Set(n)
	default:
		grow(v.FieldByName(path[0]), path[1:])
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
