package policy

import (
	"reflect"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

func TestGuardFor(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	pay := &actionView{Kind: "pay", Kinds: []string{"read", "pay"}}
	read := &actionView{Kind: "read", Kinds: []string{"read"}}
	public := &actionView{Kind: "send", Kinds: []string{"send"}, Effects: action.Effects{Public: true}}
	tests := []struct {
		expr    string
		guarded bool
		allows  map[*actionView]bool
	}{
		{`"pay" in action.kinds && size(action.amounts) > 0`, true, map[*actionView]bool{pay: true, read: false}},
		{`action.kind == "pay"`, true, map[*actionView]bool{pay: true, read: false}},
		{`"pay" == action.kind && true`, true, map[*actionView]bool{pay: true, read: false}},
		{`!(action.kind in ["read", "fetch"]) && action.effects.public`, true, map[*actionView]bool{pay: false, read: false, public: true}},
		{`action.destructive && !("delete" in mandate.allow)`, true, map[*actionView]bool{pay: false}},
		// Shapes the guard does not read are left to CEL entirely.
		{`"pay" in action.kinds || action.destructive`, false, nil},
		{`size(scope.paths_outside) > 0`, false, nil},
		{`action.kinds.exists(k, k == "pay")`, false, nil},
		{`!("pay" in action.kinds)`, false, nil},
	}
	for _, tt := range tests {
		a, iss := env.Compile(tt.expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", tt.expr, iss.Err())
		}
		g := guardFor(a)
		if (g != nil) != tt.guarded {
			t.Errorf("%s: guarded = %v, want %v", tt.expr, g != nil, tt.guarded)
			continue
		}
		for av, want := range tt.allows {
			if got := g.allows(av); got != want {
				t.Errorf("%s: allows(%s %v) = %v, want %v", tt.expr, av.Kind, av.Effects, got, want)
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
	guarded := 0
	for i, r := range p.rules {
		c := *r
		if c.guard != nil {
			guarded++
		}
		c.guard = nil
		bare.rules[i] = &c
	}
	if guarded < len(p.rules)/3 {
		t.Errorf("only %d of %d built-in rules have a guard", guarded, len(p.rules))
	}
	for _, tc := range append(builtinCases(), seedCases()...) {
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
