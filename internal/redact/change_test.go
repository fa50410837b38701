package redact

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
)

// fill sets every text reachable from v to text: strings, a JSON document
// holding it, an element of each list, a member of each map, what an
// empty interface holds. Binary bytes and numbers are left alone (the walk
// never turns them into markers outside decoded JSON).
func fill(v reflect.Value, text string, depth int) {
	if depth > 6 || !v.CanSet() {
		return
	}
	t := v.Type()
	switch {
	case t == numberType:
		v.SetString("1")
		return
	case t == rawMessageType:
		v.SetBytes([]byte(`{"note":"` + text + `"}`))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(text)
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		fill(p.Elem(), text, depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				fill(v.Field(i), text, depth+1)
			}
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return
		}
		s := reflect.MakeSlice(t, 1, 1)
		fill(s.Index(0), text, depth+1)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), text, depth+1)
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return
		}
		m := reflect.MakeMap(t)
		e := reflect.New(t.Elem()).Elem()
		fill(e, text, depth+1)
		m.SetMapIndex(reflect.ValueOf("note").Convert(t.Key()), e)
		v.Set(m)
	case reflect.Interface:
		if t.NumMethod() == 0 {
			v.Set(reflect.ValueOf(text))
		}
	}
}

// holding lists the paths under v at which text survives.
func holding(v reflect.Value, text, path string, depth int) []string {
	if depth > 8 || !v.IsValid() {
		return nil
	}
	t := v.Type()
	if t == rawMessageType {
		if strings.Contains(string(v.Bytes()), text) {
			return []string{path}
		}
		return nil
	}
	var out []string
	switch v.Kind() {
	case reflect.String:
		if strings.Contains(v.String(), text) {
			out = append(out, path)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, holding(v.Elem(), text, path, depth+1)...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				out = append(out, holding(v.Field(i), text, path+"."+t.Field(i).Name, depth+1)...)
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
		for i := range v.Len() {
			out = append(out, holding(v.Index(i), text, fmt.Sprintf("%s[%d]", path, i), depth+1)...)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := fmt.Sprint(iter.Key())
			if strings.Contains(k, text) {
				out = append(out, path+"{key}")
			}
			out = append(out, holding(iter.Value(), text, path+"["+k+"]", depth+1)...)
		}
	}
	return out
}

// filledChange is a change with a secret in every text of every field but
// the evidence records (made from the rest after redaction).
func filledChange(t *testing.T) *store.Change {
	t.Helper()
	c := &store.Change{}
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		switch {
		case f.Name == "Evidence":
		case f.Name == "NewSession":
			// A new session is stored whole (an update only its status).
			c.NewSession = true
		case f.Type.Kind() == reflect.String, f.Type.Kind() == reflect.Pointer, f.Type.Kind() == reflect.Slice:
			fill(v.Field(i), ghToken, 0)
		default:
			t.Fatalf("store.Change.%s is a %s: teach this test (and Redact) about it", f.Name, f.Type)
		}
	}
	return c
}

// TestEveryChangeFieldIsRedacted fails for a field of store.Change (or of
// the decision and observation Redact reads field by field) whose secrets
// survive Redact: a field added to them must be added to Redact.
func TestEveryChangeFieldIsRedacted(t *testing.T) {
	r := newRedactor(t)
	c := filledChange(t)
	if err := r.Redact(c); err != nil {
		t.Fatal(err)
	}
	c.Evidence = nil
	for _, p := range holding(reflect.ValueOf(c).Elem(), ghToken, "Change", 0) {
		t.Errorf("a secret survived Redact in %s", p)
	}
	// The fill put a secret in every field, and in every text of the
	// decision and the observation, which Redact reads field by field.
	before := strings.Join(holding(reflect.ValueOf(filledChange(t)).Elem(), ghToken, "Change", 0), " ")
	var want []string
	for _, typ := range []reflect.Type{reflect.TypeFor[store.Change](), reflect.TypeFor[store.Decision](), reflect.TypeFor[store.Observation]()} {
		prefix := "Change."
		if typ != reflect.TypeFor[store.Change]() {
			prefix += strings.TrimPrefix(typ.String(), "store.") + "."
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Name == "Evidence" || f.Name == "NewSession" || !holdsStrings(f.Type, map[reflect.Type]bool{}) {
				continue
			}
			want = append(want, prefix+f.Name)
		}
	}
	for _, p := range want {
		if !strings.Contains(before, p) {
			t.Errorf("the filled change has no secret in %s", p)
		}
	}
}

// TestRedactMatchesTheWalk: Redact, which knows store.Change's types,
// gives what walking each field generically (as it did before) gives.
func TestRedactMatchesTheWalk(t *testing.T) {
	r := newRedactor(t)
	walked := func(c *store.Change) *store.Change {
		cp := *c
		cv := reflect.ValueOf(&cp).Elem()
		for i := range cv.NumField() {
			switch cv.Type().Field(i).Name {
			case "Session", "NewSession", "Evidence":
				continue
			}
			nv, changed, err := r.walk(cv.Field(i), false)
			if err != nil {
				t.Fatal(err)
			}
			if changed {
				cv.Field(i).Set(nv)
			}
		}
		return &cp
	}
	changes := map[string]*store.Change{
		"filled":         filledChange(t),
		"secret args":    decisionChange(`{"command":"curl -H 'Authorization: Bearer ` + ghToken + `' https://api.example.com","password":"hunter2-xyz"}`),
		"clean decision": decisionChange(`{"command":"go test ./pkg/auth/...","description":"run tests"}`),
		"observation": {Observation: &store.Observation{ID: "o1", SessionID: "s", Output: json.RawMessage(`{"api_key":12345,"text":"key ` + awsKey + `"}`),
			Gap: true, GapReason: "not decided " + stripeKey, Tool: "Bash", Args: json.RawMessage(`{"token":"abc-def-123"}`)}},
	}
	for name, c := range changes {
		c.NewSession = false
		c.Session = nil
		want := walked(c)
		got := *c
		if err := r.Redact(&got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, want) {
			gb, _ := json.Marshal(&got)
			wb, _ := json.Marshal(want)
			t.Errorf("%s: Redact\n %s\nthe walk\n %s", name, gb, wb)
		}
	}
}
