package policy

import (
	"github.com/mandate-dev/mandate/internal/flow"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// ruleFields lists every field path rules can use, with its CEL type, in
// the notation docs/policy.md uses: `action.paths[].access`.
func ruleFields() map[string]string {
	out := map[string]string{}
	roots := []struct {
		name string
		t    reflect.Type
	}{
		{"call", reflect.TypeFor[CallFacts]()},
		{"action", reflect.TypeFor[actionView]()},
		{"mandate", reflect.TypeFor[mandateView]()},
		{"scope", reflect.TypeFor[Input]().Field(3).Type},
		{"session", reflect.TypeFor[SessionFacts]()},
		{"agent", reflect.TypeFor[AgentFacts]()},
		{"self", reflect.TypeFor[SelfFacts]()},
		{"flow", reflect.TypeFor[flow.Facts]()},
		{"baseline", reflect.TypeFor[BaselineFacts]()},
	}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if f.Anonymous && name == "" {
				walk(prefix, f.Type) // promoted fields
				continue
			}
			path := prefix + "." + name
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			out[path] = celTypeName(ft)
			switch {
			case ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]():
				walk(path, ft)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(path+"[]", ft.Elem())
			}
		}
	}
	for _, r := range roots {
		walk(r.name, r.t)
	}
	return out
}

func celTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int64:
		return "int"
	case reflect.Float64:
		return "double"
	case reflect.Slice:
		return "list(" + celTypeName(t.Elem()) + ")"
	case reflect.Map:
		return "map(" + celTypeName(t.Key()) + ", " + celTypeName(t.Elem()) + ")"
	case reflect.Interface:
		return "dyn"
	case reflect.Struct:
		switch t {
		case reflect.TypeFor[time.Time]():
			return "timestamp"
		case reflect.TypeFor[limitsView]():
			return "mandate.Limits"
		}
		return t.String()
	}
	return t.Kind().String()
}

// TestDocsListEveryField keeps docs/policy.md complete: every field a rule
// can use must appear there, as `path` followed by its type.
func TestDocsListEveryField(t *testing.T) {
	doc, err := os.ReadFile("../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for path, typ := range ruleFields() {
		if !strings.Contains(text, "| `"+path+"` | "+typ+" |") {
			t.Errorf("docs/policy.md does not list | `%s` | %s |", path, typ)
		}
	}
	for _, fn := range []string{"glob(", "host_matches(", "kind_rank("} {
		if !strings.Contains(text, fn) {
			t.Errorf("docs/policy.md does not document %s", fn)
		}
	}
	for _, r := range builtinPolicy(t).Rules() {
		if !strings.Contains(text, "`"+r.Name+"`") {
			t.Errorf("docs/policy.md does not describe %s", r.Name)
		}
	}
}

// TestDocsExamplesLoad loads every rule-file example in docs/policy.md on
// top of the built-in pack, so the documentation cannot drift into
// examples that do not compile.
func TestDocsExamplesLoad(t *testing.T) {
	doc, err := os.ReadFile("../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```yaml\n")[1:]
	n := 0
	for i, b := range blocks {
		src, _, _ := strings.Cut(b, "```")
		if strings.Contains(src, "cases:") {
			continue // a fixture example
		}
		n++
		dir := t.TempDir()
		if err := os.WriteFile(dir+"/example.yaml", []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); err != nil {
			t.Errorf("example %d does not load: %v\n%s", i+1, err, src)
		}
	}
	if n < 4 {
		t.Errorf("found %d rule examples", n)
	}
}
