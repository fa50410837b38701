package policy

import (
	"reflect"
	"slices"
	"strconv"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
)

func TestGuardFor(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{adapter: env.CELTypeAdapter()}
	vars := func(a *action.Action, mods ...func(*Input)) *activation {
		i := &Input{Action: a, Mandate: &mandate.Mandate{Allow: []action.Kind{action.Read}}}
		for _, f := range mods {
			f(i)
		}
		return newActivation(p, i)
	}
	pay := vars(&action.Action{Kind: action.Pay, Kinds: []action.Kind{action.Read, action.Pay}})
	read := vars(&action.Action{Kind: action.Read, Kinds: []action.Kind{action.Read}, Family: "files"})
	public := vars(&action.Action{Kind: action.Send, Kinds: []action.Kind{action.Send}, Effects: action.Effects{Public: true}})
	shell := vars(&action.Action{Kind: action.Execute, Kinds: []action.Kind{action.Execute}, Family: "shell"})
	outside := vars(&action.Action{Kind: action.Write, Kinds: []action.Kind{action.Write}}, func(i *Input) {
		i.Scope.PathsOutside = []string{"/etc/passwd"}
		i.Self.Paths = []string{"/var/lib/mandate"}
	})
	// lets stand in for compiled lets: a guard reads through them.
	lets := []struct{ name, expr string }{
		{"is_pay", `"pay" in action.kinds && size(action.kinds) > 0`},
		{"not_read", `action.kind != "read"`},
		{"is_public", `action.effects.public && is_pay`},
		{"written", `action.paths.filter(p, p.access != "read")`},
	}
	letExprs := map[string]ast.Expr{}
	letEnv := env
	for _, l := range lets {
		typ := cel.BoolType
		if l.name == "written" {
			typ = cel.ListType(cel.ObjectType("action.PathRef"))
		}
		a, iss := letEnv.Compile(l.expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", l.expr, iss.Err())
		}
		letExprs[l.name] = a.NativeRep().Expr()
		if letEnv, err = letEnv.Extend(cel.Variable(l.name, typ)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		expr    string
		guarded bool
		allows  map[*activation]bool
	}{
		{`"pay" in action.kinds && size(action.amounts) > 0`, true, map[*activation]bool{pay: false, read: false}},
		{`"pay" in action.kinds && action.amounts.all(a, a.value > 0.0)`, true, map[*activation]bool{pay: true, read: false}},
		{`action.kind == "pay"`, true, map[*activation]bool{pay: true, read: false}},
		{`"pay" == action.kind && true`, true, map[*activation]bool{pay: true, read: false}},
		{`!(action.kind in ["read", "fetch"]) && action.effects.public`, true, map[*activation]bool{pay: false, read: false, public: true}},
		{`action.destructive && !("delete" in mandate.allow)`, true, map[*activation]bool{pay: false}},
		{`action.kind != "read" && size(action.paths) == 0`, true, map[*activation]bool{pay: true, read: false}},
		{`!action.effects.public`, true, map[*activation]bool{pay: true, public: false}},
		{`"pay" in action.kinds || action.effects.public`, true, map[*activation]bool{pay: true, read: false, public: true}},
		{`(action.family == "shell" || size(action.commands) > 0) && action.kinds.exists(k, k != "")`, true, map[*activation]bool{shell: true, read: false}},
		{`size(scope.paths_outside) > 0`, true, map[*activation]bool{outside: true, read: false}},
		{`0 < size(self.paths) && size(scope.paths_outside) != 0`, true, map[*activation]bool{outside: true, read: false}},
		{`action.kind in ["read", "fetch"]`, true, map[*activation]bool{read: true, pay: false}},
		{`"write" in mandate.allow`, true, map[*activation]bool{read: false}},
		{`"read" in mandate.allow`, true, map[*activation]bool{read: true}},
		{`session.status in ["suspended", "terminated"]`, true, map[*activation]bool{read: false}},
		// Lets are read through, also inside a disjunction.
		{`is_pay && action.kinds.exists(k, k != "")`, true, map[*activation]bool{pay: true, read: false}},
		{`is_public`, true, map[*activation]bool{pay: false, public: false, read: false}},
		{`not_read || action.effects.public`, true, map[*activation]bool{pay: true, read: false}},
		// Comprehensions that are false or empty over an empty list.
		{`action.paths.exists(p, p.path == "/x")`, true, map[*activation]bool{outside: false, read: false}},
		{`size(action.paths.filter(p, p.access != "read")) > 0`, true, map[*activation]bool{read: false}},
		{`action.paths.map(p, p.path).size() != 0`, true, map[*activation]bool{read: false}},
		{`size(written) > 0`, true, map[*activation]bool{read: false}},
		{`mandate.limits.counts.exists(k, k in action.kinds)`, true, map[*activation]bool{pay: false}},
		{`action.destructive || (action.effects.public && action.kinds.exists(k, k != ""))`, true, map[*activation]bool{pay: false, public: true}},
		// Shapes the guard does not read are left to CEL entirely.
		{`action.destructive || (action.kinds.all(k, k != "") && true)`, false, nil},
		{`size(action.paths.filter(p, true)) == 0`, false, nil},
		{`size(written) == 0`, false, nil},
		{`action.paths.all(p, false)`, false, nil},
		{`[].exists(p, true)`, false, nil},
		{`"pay" in action.kinds || action.kinds.all(k, k == "fetch")`, false, nil},
		{`action.kinds.exists_one(k, k == "pay")`, false, nil},
		{`!("pay" in action.kinds)`, false, nil},
		{`!not_read`, false, nil},
		{`size(action.paths) > 1`, false, nil},
		{`size(call.args) > 0`, false, nil},
	}
	for _, tt := range tests {
		a, iss := letEnv.Compile(tt.expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", tt.expr, iss.Err())
		}
		g := guardFor(a, letExprs)
		if (g != nil) != tt.guarded {
			t.Errorf("%s: guarded = %v, want %v", tt.expr, g != nil, tt.guarded)
			continue
		}
		for v, want := range tt.allows {
			if got := g.allows(v); got != want {
				t.Errorf("%s: allows(%s %v) = %v, want %v", tt.expr, v.av.Kind, v.av.Effects, got, want)
			}
		}
	}
}

// TestGuardFieldsMatchCEL reads every fact a guard can test both ways — in
// Go, and as the CEL expression of the same path — over the built-in
// cases: a guard that read a fact differently from CEL could skip a rule
// that fires.
func TestGuardFieldsMatchCEL(t *testing.T) {
	p := builtinPolicy(t)
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range slices.Concat(builtinCases(), seedCases(), flowCases()) {
		vars := newActivation(p, tc.in)
		for path, f := range boolFields {
			if got, want := f(vars), evalCEL(t, env, path, vars); types.Bool(got) != want {
				t.Errorf("%s: %s = %v in Go, %v in CEL", tc.name, path, got, want)
			}
		}
		for path, f := range stringFields {
			if got, want := f(vars), evalCEL(t, env, path, vars); types.String(got) != want {
				t.Errorf("%s: %s = %q in Go, %v in CEL", tc.name, path, got, want)
			}
		}
		for path, f := range listSizes {
			if got, want := f(vars), evalCEL(t, env, "size("+path+")", vars); types.Int(got) != want {
				t.Errorf("%s: size(%s) = %d in Go, %v in CEL", tc.name, path, got, want)
			}
		}
		for path, f := range stringLists {
			for _, k := range action.AllKinds() {
				lit := strconv.Quote(string(k))
				if got, want := slices.Contains(f(vars), string(k)), evalCEL(t, env, lit+" in "+path, vars); types.Bool(got) != want {
					t.Errorf("%s: %s in %s = %v in Go, %v in CEL", tc.name, lit, path, got, want)
				}
			}
		}
	}
}

// TestGuardsNeverChangeVerdicts evaluates every built-in case with the
// guards and without them: a guard may only skip a rule that would not
// have fired.
func TestGuardsNeverChangeVerdicts(t *testing.T) {
	p := builtinPolicy(t)
	bare := *p
	bare.rules = make([]*rule, len(p.rules))
	for i, r := range p.rules {
		c := *r
		if c.guard == nil {
			// Every rule pays for its program on every call without one
			// (docs/speed.md): a new rule's condition should start with a
			// conjunct guardFor reads.
			t.Errorf("built-in rule %s has no guard", r.name)
		}
		c.guard = nil
		bare.rules[i] = &c
	}
	bare.sequences = unguardedSequences(p.sequences)
	for _, tc := range slices.Concat(builtinCases(), seedCases(), flowCases()) {
		want, err := bare.Evaluate(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Evaluate(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: with guards %+v, without %+v", tc.name, got, want)
		}
	}
}
