package policy

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

var testEnv = sync.OnceValues(newEnv)

// compileFiles compiles operator files given as name, content pairs,
// without the built-in pack.
func compileFiles(t testing.TB, nameContent ...string) (*Policy, error) {
	t.Helper()
	env, err := testEnv()
	if err != nil {
		t.Fatal(err)
	}
	var srcs []source
	for i := 0; i+1 < len(nameContent); i += 2 {
		srcs = append(srcs, source{name: nameContent[i], data: []byte(nameContent[i+1])})
	}
	return compileWith(env, srcs)
}

func mustCompile(t testing.TB, nameContent ...string) *Policy {
	t.Helper()
	p, err := compileFiles(t, nameContent...)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return p
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name  string
		files []string
		want  []string // substrings of the error
	}{
		{"unknown top-level key", []string{"x.yaml", "rulez: []\n"},
			[]string{`x.yaml:1:1: unknown key "rulez"`}},
		{"top level is a list", []string{"x.yaml", "- a\n- b\n"},
			[]string{`x.yaml:1:1: a policy file is a mapping`}},
		{"yaml syntax error", []string{"x.yaml", "rules: [\n"},
			[]string{`x.yaml:1: YAML: did not find expected node content`}},
		{"key twice", []string{"x.yaml", "rules: []\nrules: []\n"},
			[]string{`x.yaml:2:1: key "rules" appears twice`}},
		{"rules not a list", []string{"x.yaml", "rules: {a: b}\n"},
			[]string{`x.yaml:1:8: rules must be a list`}},
		{"unknown rule key", []string{"x.yaml", "rules:\n  - name: a\n    when: \"true\"\n    effect: deny\n    reasn: x\n"},
			[]string{`x.yaml:5:5: rule "a": unknown key "reasn"`}},
		{"rule key twice", []string{"x.yaml", "rules:\n  - name: a\n    when: \"true\"\n    effect: deny\n    effect: ask\n"},
			[]string{`x.yaml:5:5: rule "a": key "effect" appears twice`}},
		{"rule not a mapping", []string{"x.yaml", "rules:\n  - just a string\n"},
			[]string{`x.yaml:2:5: a rule must be a mapping`}},
		{"when is a list", []string{"x.yaml", "rules:\n  - name: a\n    when: [x]\n    effect: deny\n"},
			[]string{`x.yaml:3:11: rule "a": when must be a string`}},
		{"no name", []string{"x.yaml", "rules:\n  - when: \"true\"\n    effect: deny\n"},
			[]string{`x.yaml:2:5: rule has no name`}},
		{"bad name", []string{"x.yaml", "rules:\n  - name: default:read\n    when: \"true\"\n    effect: deny\n"},
			[]string{`x.yaml:2:11: rule "default:read": bad rule name`}},
		{"no when", []string{"x.yaml", "rules:\n  - name: a\n    effect: deny\n"},
			[]string{`x.yaml:2:5: rule "a": rule has no condition`}},
		{"empty when", []string{"x.yaml", "rules:\n  - name: a\n    when:\n    effect: deny\n"},
			[]string{`rule "a": rule has no condition`}},
		{"no effect", []string{"x.yaml", "rules:\n  - name: a\n    when: \"true\"\n"},
			[]string{`x.yaml:2:5: rule "a": rule has no effect`}},
		{"bad effect", []string{"x.yaml", "rules:\n  - name: a\n    when: \"true\"\n    effect: block\n"},
			[]string{`x.yaml:4:13: rule "a": effect "block" is not allow, deny or ask`}},
		{"syntax error in when", []string{"x.yaml", "rules:\n  - name: a\n    when: action.kind ==\n    effect: deny\n"},
			[]string{`x.yaml:3:`, `rule "a": when: Syntax error`}},
		{"misspelt field", []string{"x.yaml", "rules:\n  - name: a\n    when: action.kindz == \"x\"\n    effect: deny\n"},
			[]string{`x.yaml:3:17: rule "a": when: undefined field 'kindz'`}},
		{"misspelt nested field", []string{"x.yaml", "rules:\n  - name: a\n    when: action.paths.exists(p, p.sensitve)\n    effect: deny\n"},
			[]string{`x.yaml:3:35: rule "a": when: undefined field 'sensitve'`}},
		{"misspelt variable", []string{"x.yaml", "rules:\n  - name: a\n    when: acton.kind == \"x\"\n    effect: deny\n"},
			[]string{`x.yaml:3:11: rule "a": when: undeclared reference to 'acton'`}},
		{"type mismatch", []string{"x.yaml", "rules:\n  - name: a\n    when: action.kind == 1\n    effect: deny\n"},
			[]string{`x.yaml:3:`, `rule "a": when: found no matching overload for '_==_'`}},
		{"non-bool condition", []string{"x.yaml", "rules:\n  - name: a\n    when: action.kind\n    effect: deny\n"},
			[]string{`x.yaml:3:11: rule "a": when: the condition must be a bool, but it is string`}},
		{"dyn condition", []string{"x.yaml", "rules:\n  - name: a\n    when: call.args.confirm\n    effect: deny\n"},
			[]string{`rule "a": when: the condition must be a bool, but it is dyn`}},
		{"quoted when keeps the column", []string{"x.yaml", "rules:\n  - name: a\n    when: \"action.nope\"\n    effect: deny\n"},
			[]string{`x.yaml:3:18: rule "a": when: undefined field 'nope'`}},
		{"literal block when", []string{"x.yaml", "rules:\n  - name: a\n    when: |\n      action.kind == \"send\" &&\n        action.nope\n    effect: deny\n"},
			[]string{`x.yaml:5:15: rule "a": when: undefined field 'nope'`}},
		{"folded block when", []string{"x.yaml", "rules:\n  - name: a\n    when: >-\n      action.kind == \"send\" &&\n      action.nope\n    effect: deny\n"},
			[]string{`x.yaml:5:13: rule "a": when: undefined field 'nope'`}},
		{"multi-line plain when", []string{"x.yaml", "rules:\n  - name: a\n    when: action.kind == \"send\" &&\n      action.nope\n    effect: deny\n"},
			[]string{`x.yaml:4:13: rule "a": when: undefined field 'nope'`}},
		{"bad interpolation", []string{"x.yaml", "rules:\n  - name: a\n    when: \"true\"\n    effect: deny\n    reason: sent to ${action.nope}\n"},
			[]string{`x.yaml:5:29: rule "a": reason: ${action.nope}: undefined field 'nope'`}},
		{"unterminated interpolation", []string{"x.yaml", "rules:\n  - name: a\n    when: \"true\"\n    effect: deny\n    reason: sent to ${action.tool\n"},
			[]string{`x.yaml:5:21: rule "a": reason: unterminated ${ interpolation`}},
		{"empty interpolation", []string{"x.yaml", "rules:\n  - name: a\n    when: \"true\"\n    effect: deny\n    reason: x ${ }\n"},
			[]string{`rule "a": reason: empty ${} interpolation`}},
		{"duplicate rule names across files", []string{
			"a.yaml", "rules:\n  - name: same\n    when: \"true\"\n    effect: deny\n",
			"b.yaml", "rules:\n  - name: same\n    when: \"false\"\n    effect: ask\n"},
			[]string{`b.yaml:2:11: rule "same": a rule of this name is already defined at a.yaml:2:11`}},
		{"builtin prefix reserved", []string{"x.yaml", "rules:\n  - name: builtin.mine\n    when: \"true\"\n    effect: deny\n"},
			[]string{`x.yaml:2:11: rule "builtin.mine": the "builtin." prefix is reserved`}},
		{"disable an unknown rule", []string{"x.yaml", "disable: [builtin.nope]\n"},
			[]string{`x.yaml:1:11: disable: no rule named "builtin.nope" is loaded`}},
		{"disable not a list", []string{"x.yaml", "disable: builtin.granted\n"},
			[]string{`x.yaml:1:10: disable must be a list`}},
		{"defaults bad kind", []string{"x.yaml", "defaults:\n  purchase: ask\n"},
			[]string{`x.yaml:2:3: defaults: "purchase" is not a kind`}},
		{"defaults bad effect", []string{"x.yaml", "defaults:\n  pay: block\n"},
			[]string{`x.yaml:2:8: defaults: effect for pay must be allow, deny or ask`}},
		{"let bad name", []string{"x.yaml", "let:\n  Big-Name: \"true\"\n"},
			[]string{`x.yaml:2:3: let: bad name "Big-Name"`}},
		{"let reserved name", []string{"x.yaml", "let:\n  action: \"true\"\n"},
			[]string{`x.yaml:2:3: let: "action" is reserved`}},
		{"let compile error", []string{"x.yaml", "let:\n  x: action.nope\n"},
			[]string{`x.yaml:2:12: let x: undefined field 'nope'`}},
		{"let used before it is defined", []string{
			"a.yaml", "rules:\n  - name: a\n    when: later\n    effect: deny\n",
			"b.yaml", "let:\n  later: \"true\"\n"},
			[]string{`a.yaml:3:11: rule "a": when: undeclared reference to 'later'`}},
		{"let defined twice", []string{
			"a.yaml", "let:\n  x: \"true\"\n",
			"b.yaml", "let:\n  x: \"false\"\n"},
			[]string{`b.yaml:2:3: let: "x" is already defined at a.yaml:2:3`}},
		{"several problems are all reported", []string{"x.yaml", "rules:\n  - name: a\n    when: action.nope\n    effect: deny\n  - name: b\n    when: \"true\"\n    effect: maybe\n"},
			[]string{`x.yaml:3:17: rule "a"`, `x.yaml:7:13: rule "b"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := compileFiles(t, tc.files...)
			if err == nil {
				t.Fatalf("compiled without error (%d rules); want an error containing %q", len(p.rules), tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Errorf("error is not a *policy.Error: %T", err)
			}
		})
	}
}

func TestLoadAccepts(t *testing.T) {
	cases := []struct {
		name  string
		files []string
		rules int
	}{
		{"empty file", []string{"x.yaml", ""}, 0},
		{"comment only", []string{"x.yaml", "# nothing yet\n"}, 0},
		{"null document", []string{"x.yaml", "~\n"}, 0},
		{"empty sections", []string{"x.yaml", "rules:\ndefaults:\ndisable:\nlet:\n"}, 0},
		{"rule without reason", []string{"x.yaml", "rules:\n  - name: a\n    when: action.kind == 'pay'\n    effect: ask\n"}, 1},
		{"anchors and aliases", []string{"x.yaml", "rules:\n  - name: a\n    when: &c action.kind == 'pay'\n    effect: ask\n  - name: b\n    when: *c\n    effect: deny\n"}, 2},
		{"a let and a rule may share a name", []string{"x.yaml", "let:\n  paying: '\"pay\" in action.kinds'\nrules:\n  - name: paying\n    when: paying\n    effect: ask\n"}, 1},
		{"let used by a rule", []string{"x.yaml", "let:\n  paying: '\"pay\" in action.kinds'\nrules:\n  - name: a\n    when: paying\n    effect: ask\n"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustCompile(t, tc.files...)
			if len(p.rules) != tc.rules {
				t.Errorf("%d rules, want %d", len(p.rules), tc.rules)
			}
		})
	}
}

func TestBuiltinLoads(t *testing.T) {
	p := builtinPolicy(t)
	infos := p.Rules()
	if len(infos) < 15 {
		t.Fatalf("built-in pack has %d rules", len(infos))
	}
	for _, r := range infos {
		if !strings.HasPrefix(r.Name, builtinPrefix) || !strings.HasPrefix(r.File, "builtin/") || r.Line == 0 || r.Description == "" || r.When == "" || r.Disabled {
			t.Errorf("rule info incomplete: %+v", r)
		}
	}
	want := map[action.Kind]Effect{
		action.Read: Allow, action.Fetch: Allow, action.Delegate: Allow,
		action.Write: Ask, action.Execute: Ask, action.Credential: Ask, action.Delete: Ask,
		action.Send: Ask, action.Pay: Ask, action.Unknown: Ask,
	}
	got := p.Defaults()
	for k, e := range want {
		if got[k] != e {
			t.Errorf("default for %s = %q, want %s", k, got[k], e)
		}
	}
}

func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadDirs(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"a.yaml":       "rules:\n  - name: op.a\n    when: action.kind == 'pay'\n    effect: deny\n",
		"b.yml":        "defaults:\n  fetch: ask\ndisable: [builtin.granted]\n",
		"a_test.yaml":  "cases: []\n", // a fixture file, not rules
		"notes.txt":    "not yaml",
		"README.md":    "# docs",
		"broken.yaml~": "rules: [",
	})
	p, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var names []string
	for _, r := range p.Rules() {
		names = append(names, r.Name)
		if r.Name == "builtin.granted" && !r.Disabled {
			t.Errorf("builtin.granted not marked disabled")
		}
	}
	if !slices.Contains(names, "op.a") {
		t.Errorf("operator rule not loaded: %q", names)
	}
	if p.Defaults()[action.Fetch] != Ask || p.Defaults()[action.Read] != Allow {
		t.Errorf("operator default did not override the built-in one: %v", p.Defaults())
	}
	b := builtinPolicy(t)
	if p.Hash() == b.Hash() {
		t.Errorf("operator rules did not change the hash")
	}

	// A single file may be given instead of a directory.
	if _, err := Load(filepath.Join(dir, "a.yaml")); err != nil {
		t.Errorf("Load(file): %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("Load of a missing directory succeeded")
	}
	// The built-in pack on disk loads as itself, not as duplicates; a
	// modified copy is an error.
	same, err := Load("../../policies/builtin")
	if err != nil {
		t.Errorf("Load(policies/builtin): %v", err)
	} else if same.Hash() != builtinPolicy(t).Hash() {
		t.Errorf("loading the built-in pack from disk changed the hash")
	}
	data, err := os.ReadFile("../../policies/builtin/hazards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edited := writeDir(t, map[string]string{"hazards.yaml": string(data) + "\n# edited\n"})
	if _, err := Load(edited); err == nil || !strings.Contains(err.Error(), "reserved for the built-in pack") {
		t.Errorf("a modified copy of the pack loaded: %v", err)
	}

	bad := writeDir(t, map[string]string{"x.yaml": "rules:\n  - name: x\n    when: nope\n    effect: deny\n"})
	_, err = Load(bad)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(bad, "x.yaml")+":3:11") {
		t.Errorf("error does not name the file and position: %v", err)
	}
}

func TestIsRuleFile(t *testing.T) {
	for name, want := range map[string]bool{
		"a.yaml": true, "a.yml": true, "a_test.yaml": false, "a_test.yml": false,
		"a.json": false, "README.md": false, "test.yaml": true, "a_testing.yaml": true,
	} {
		if got := isRuleFile(name); got != want {
			t.Errorf("isRuleFile(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestHash(t *testing.T) {
	base := []string{
		"a.yaml", "let:\n  paying: '\"pay\" in action.kinds'\nrules:\n  - name: r1\n    description: d\n    when: paying\n    effect: ask\n    reason: r ${action.tool}\n",
		"b.yaml", "defaults:\n  pay: ask\ndisable: []\n",
	}
	h0 := mustCompile(t, base...).Hash()
	if h0 != mustCompile(t, base...).Hash() {
		t.Fatalf("hash differs between two compiles of the same files")
	}
	if len(h0) != 64 {
		t.Errorf("hash %q is not hex sha256", h0)
	}
	b1, b2 := builtinPolicy(t).Hash(), must(Builtin()).Hash()
	if b1 != b2 {
		t.Errorf("built-in hash not stable: %s vs %s", b1, b2)
	}
	// Moving a rule to another file (same order) does not change behaviour.
	moved := []string{
		"z.yaml", "let:\n  paying: '\"pay\" in action.kinds'\nrules:\n  - name: r1\n    description: d\n    when: paying\n    effect: ask\n    reason: r ${action.tool}\n",
		"y.yaml", "defaults:\n  pay: ask\n",
	}
	if h := mustCompile(t, moved...).Hash(); h != h0 {
		t.Errorf("renaming files changed the hash")
	}
	changes := map[string][]string{
		"condition":   {"a.yaml", strings.Replace(base[1], "when: paying", "when: paying && true", 1), "b.yaml", base[3]},
		"effect":      {"a.yaml", strings.Replace(base[1], "effect: ask", "effect: deny", 1), "b.yaml", base[3]},
		"reason":      {"a.yaml", strings.Replace(base[1], "reason: r", "reason: s", 1), "b.yaml", base[3]},
		"name":        {"a.yaml", strings.Replace(base[1], "name: r1", "name: r2", 1), "b.yaml", base[3]},
		"description": {"a.yaml", strings.Replace(base[1], "description: d", "description: e", 1), "b.yaml", base[3]},
		"let":         {"a.yaml", strings.Replace(base[1], `'"pay" in`, `'"send" in`, 1), "b.yaml", base[3]},
		"default":     {"a.yaml", base[1], "b.yaml", "defaults:\n  pay: deny\n"},
		"disabled":    {"a.yaml", base[1], "b.yaml", base[3] + "\n", "c.yaml", "disable: [r1]\n"},
	}
	for what, files := range changes {
		if h := mustCompile(t, files...).Hash(); h == h0 {
			t.Errorf("changing the %s did not change the hash", what)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
