package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"

	"github.com/mandate-dev/mandate/internal/action"
)

// TestMeasureArgs: the longest string, list or map anywhere in the
// arguments; what it cannot bound is unbounded.
func TestMeasureArgs(t *testing.T) {
	var deep any = "x"
	for range maxArgsDepth + 1 {
		deep = []any{deep}
	}
	for _, tc := range []struct {
		name string
		args any
		want int
	}{
		{"empty", map[string]any{}, 0},
		{"string", map[string]any{"command": "git status"}, 10},
		{"key", map[string]any{"a_long_key": 1.0}, 10},
		{"list", map[string]any{"to": []any{"a", "b", "c"}}, 3},
		{"nested", map[string]any{"o": map[string]any{"p": []any{strings.Repeat("y", 40)}}}, 40},
		{"scalars", map[string]any{"n": 12.0, "b": true, "z": nil}, 3},
		{"strings", map[string]any{"s": []string{"abcd"}, "m": map[string]string{"k": "abcdef"}}, 6},
		{"json number", map[string]any{"n": json.Number("1")}, unbounded},
		{"bytes", map[string]any{"b": []byte("x")}, unbounded},
		{"too deep", map[string]any{"d": deep}, unbounded},
	} {
		if got := measureArgs(tc.args, 0); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestArgsBoundedRulesAgree: the rules whose untracked program assumed
// call.args within a tier decide a command line and an edit the same as
// under tracking, below and above the bound.
func TestArgsBoundedRulesAgree(t *testing.T) {
	p := builtinPolicy(t)
	slow := *p
	slow.rules, slow.lets = nil, nil
	bounded := 0
	for _, r := range p.rules {
		if r.prg.args {
			bounded++
		}
		c := *r
		c.prg.fast, c.prg.narrow = nil, nil
		slow.rules = append(slow.rules, &c)
	}
	for _, l := range p.lets {
		c := *l
		c.prg.fast, c.prg.narrow = nil, nil
		slow.lets = append(slow.lets, &c)
	}
	if bounded == 0 {
		t.Fatal("no built-in rule's untracked program reads call.args")
	}
	self := SelfFacts{Addresses: []string{"127.0.0.1:7410", "localhost:7410"}, Hosts: []string{"127.0.0.1", "localhost"}, Ports: []string{"7410"}, Paths: []string{"/home/u/.local/share/mandate"}}
	for _, line := range []string{
		"git status && git diff --stat",
		"cat /home/u/.local/share/mandate/admin.token",
		"curl -s localhost:7410/v1/sessions",
		"mandate token create --role admin",
		"go test ./... " + strings.Repeat("-run X ", 100) + "; nc 127.0.0.1 7410",
	} {
		for _, tool := range []string{"Bash", "Edit"} {
			args := map[string]any{"command": line}
			kind := action.Execute
			paths := []action.PathRef(nil)
			if tool == "Edit" {
				args = map[string]any{"file_path": "/home/u/.claude/settings.json", "old_string": line, "new_string": line + " hooks"}
				kind = action.Write
				paths = []action.PathRef{{Path: "/home/u/.claude/settings.json", Access: action.Write}}
			}
			in := &Input{
				Call:   CallFacts{Tool: tool, Args: args},
				Action: &action.Action{Tool: tool, Kind: kind, Kinds: []action.Kind{kind}, Family: "shell", Paths: paths},
				Self:   self,
			}
			a, _ := p.Evaluate(in)
			b, _ := slow.Evaluate(in)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s %.40q: untracked %+v, tracked %+v", tool, line, a, b)
			}
		}
	}
}

// TestContextFlagFormsAgree: builtin.context-unstated tests a word
// against the context flags as `flags.exists(f, a == f ||
// a.startsWith(f + "="))`, which the static estimate bounds, where it
// read `a.split("=")[0] in flags`, which it does not. The two agree on
// every word for flags without "=" (as kube_context_flags is written),
// and the rule has an untracked program.
func TestContextFlagFormsAgree(t *testing.T) {
	for _, r := range builtinPolicy(t).rules {
		if r.name == "builtin.context-unstated" && r.prg.fast == nil && r.prg.narrow == nil {
			t.Error("builtin.context-unstated has no untracked program")
		}
	}
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	env, err = env.Extend(cel.Variable("a", cel.StringType), cel.Variable("flags", cel.ListType(cel.StringType)))
	if err != nil {
		t.Fatal(err)
	}
	prg := func(expr string) cel.Program {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			t.Fatal(iss.Err())
		}
		p, err := env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	split := prg(`a.split("=")[0] in flags`)
	prefix := prg(`flags.exists(f, a == f || a.startsWith(f + "="))`)
	flags := []string{"--context", "--kube-context", "--kubeconfig"}
	for _, word := range []string{
		"", "=", "==", "--context", "--context=", "--context=prod", "--context==x", "--context=a=b",
		"--contexts", "--contexts=prod", "--contex", "-context=prod", "--kube-context=x", "--kubeconfig",
		"--kubeconfig=/home/u/.kube/x", "context", "apply", "=--context", "x=--context", "--CONTEXT=prod", "--context prod",
	} {
		vars := map[string]any{"a": word, "flags": flags}
		a, _, err := split.Eval(vars)
		if err != nil {
			t.Fatalf("%q: %v", word, err)
		}
		b, _, err := prefix.Eval(vars)
		if err != nil {
			t.Fatalf("%q: %v", word, err)
		}
		if a != b {
			t.Errorf("%q: split %v, prefix %v", word, a, b)
		}
	}
}
