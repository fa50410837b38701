package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/mandate-dev/mandate/internal/action"
)

// unguardedSequences are copies of qs whose steps have no guard.
func unguardedSequences(qs []*sequence) []*sequence {
	out := make([]*sequence, len(qs))
	for i, q := range qs {
		c := *q
		c.steps = slices.Clone(q.steps)
		for j := range c.steps {
			c.steps[j].guard = nil
		}
		c.empty = &chain{calls: [][]StepCall{nil}}
		out[i] = &c
	}
	return out
}

// stepCalls are calls in the shapes the built-in sequences look at.
func stepCalls() []*action.Action {
	p := func(path string, k action.Kind) action.PathRef { return action.PathRef{Path: path, Access: k} }
	return []*action.Action{
		{Tool: "Bash", Kind: action.Delete, Kinds: []action.Kind{action.Delete}, Destructive: true, Paths: []action.PathRef{p("/w/build", action.Delete)}, Commands: []action.Command{{Name: "rm"}}},
		{Tool: "Bash", Kind: action.Write, Kinds: []action.Kind{action.Write, action.Delete}, Paths: []action.PathRef{p("/w/build", action.Delete), p("/tmp/trash", action.Write)}, Commands: []action.Command{{Name: "mv"}}},
		{Tool: "Read", Kind: action.Read, Kinds: []action.Kind{action.Read}, Sensitive: true, Paths: []action.PathRef{{Path: "/home/u/.aws/credentials", Access: action.Read, Sensitive: true}}},
		{Tool: "send_email", Kind: action.Send, Kinds: []action.Kind{action.Send}, Recipients: []action.Recipient{{Address: "eve@x.example", Field: "to"}}},
		{Tool: "gmail_send", Kind: action.Send, Kinds: []action.Kind{action.Send}, Recipients: []action.Recipient{{Address: "eve@x.example", Field: "to"}}},
		{Tool: "WebFetch", Kind: action.Fetch, Kinds: []action.Kind{action.Fetch}, Hosts: []string{"a.example"}},
		{Tool: "WebFetch", Kind: action.Fetch, Kinds: []action.Kind{action.Fetch}, Hosts: []string{"b.example"}},
		{Tool: "Edit", Kind: action.Write, Kinds: []action.Kind{action.Write}, Paths: []action.PathRef{p("/w/main.go", action.Write)}},
		{Tool: "Grep", Kind: action.Read, Kinds: []action.Kind{action.Read}},
	}
}

// TestStepGuardFieldsMatchCEL: each field of `this` a step's guard reads
// in Go is what CEL reads.
func TestStepGuardFieldsMatchCEL(t *testing.T) {
	p := builtinPolicy(t)
	env0, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	env, err := stepEnv(env0)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range stepCalls() {
		vars := newActivation(p, &Input{Action: a})
		sc := NewStepCall(a, "s", time.Unix(0, 0))
		vars.stepCall, vars.this, vars.steps = &sc, p.adapter.NativeToValue(&sc), p.adapter.NativeToValue(map[string][]StepCall{})
		eval := func(expr string) ref.Val {
			t.Helper()
			return evalCEL(t, env, expr, vars)
		}
		for path, f := range stepBoolFields {
			if got, want := f(vars), eval(path); types.Bool(got) != want {
				t.Errorf("call %d: %s = %v in Go, %v in CEL", i, path, got, want)
			}
		}
		for path, f := range stepStringFields {
			if got, want := f(vars), eval(path); types.String(got) != want {
				t.Errorf("call %d: %s = %q in Go, %v in CEL", i, path, got, want)
			}
		}
		for path, f := range stepListSizes {
			if got, want := f(vars), eval("size("+path+")"); types.Int(got) != want {
				t.Errorf("call %d: size(%s) = %d in Go, %v in CEL", i, path, got, want)
			}
		}
		for path, f := range stepStringLists {
			for _, lit := range []string{"read", "delete", "rm", "mv", "a.example", "/home/u/.aws/credentials"} {
				q := strconv.Quote(lit)
				if got, want := slices.Contains(f(vars), lit), eval(q+" in "+path); types.Bool(got) != want {
					t.Errorf("call %d: %s in %s = %v in Go, %v in CEL", i, q, path, got, want)
				}
			}
		}
	}
}

// TestBuiltinStepsHaveGuards: every step of the built-in sequences has a
// guard (a step without one runs its CEL for every call and match).
func TestBuiltinStepsHaveGuards(t *testing.T) {
	for _, q := range builtinPolicy(t).sequences {
		for _, s := range q.steps {
			if s.guard == nil {
				t.Errorf("%s: step %s has no guard", q.name, s.name)
			}
		}
	}
}

// TestStepGuardsNeverChangeVerdicts runs one session of calls through the
// built-in sequences with the steps' guards and without, each with its own
// state: every verdict and every partial match must be the same.
func TestStepGuardsNeverChangeVerdicts(t *testing.T) {
	p := builtinPolicy(t)
	bare := *p
	bare.sequences = unguardedSequences(p.sequences)
	calls := stepCalls()
	guardedSt, bareSt := NewSequenceState(), NewSequenceState()
	now := time.Unix(1_700_000_000, 0)
	for i := range 120 {
		a := calls[(i*7)%len(calls)]
		effect := Allow
		if i%3 == 0 {
			effect = Deny
		}
		var verdicts [2]Verdict
		for j, run := range []struct {
			p  *Policy
			st *SequenceState
		}{{p, guardedSt}, {&bare, bareSt}} {
			at := now.Add(time.Duration(i) * time.Second)
			sc := &SequenceCall{Groups: SequenceGroups{Session: run.st}, This: NewStepCall(a, "s", at)}
			v, err := run.p.Evaluate(&Input{Action: a, Call: CallFacts{Tool: a.Tool}, Sequences: sc})
			if err != nil {
				t.Fatal(err)
			}
			verdicts[j] = v
			sc.Commit(fmt.Sprintf("d%d", i), effect, at)
		}
		if !reflect.DeepEqual(verdicts[0], verdicts[1]) {
			t.Fatalf("call %d (%s): with guards %+v, without %+v", i, a.Tool, verdicts[0], verdicts[1])
		}
	}
	for _, q := range p.sequences {
		g, b := guardedSt.chains[q.name], bareSt.chains[q.name]
		if len(g) != len(b) {
			t.Errorf("%s: %d partial matches with guards, %d without", q.name, len(g), len(b))
		}
	}
}

// TestSequenceMatchesDeduplicated: a refused call repeated a hundred times
// leaves one partial match of the retry sequence, not a full list, and the
// retry that follows names the latest refusal.
func TestSequenceMatchesDeduplicated(t *testing.T) {
	p := builtinPolicy(t)
	st := NewSequenceState()
	now := time.Unix(1_700_000_000, 0)
	rm := stepCalls()[0]
	for i := range 100 {
		sc := &SequenceCall{Groups: SequenceGroups{Session: st}, This: NewStepCall(rm, "s", now)}
		if _, err := p.Evaluate(&Input{Action: rm, Call: CallFacts{Tool: rm.Tool}, Sequences: sc}); err != nil {
			t.Fatal(err)
		}
		sc.Commit(fmt.Sprintf("d%d", i), Deny, now)
	}
	if n := len(st.chains["builtin.retry-after-deny"]); n != 1 {
		t.Errorf("%d partial matches of builtin.retry-after-deny, want 1", n)
	}
	mv := &action.Action{Tool: "move_file", Kind: action.Write, Kinds: []action.Kind{action.Write, action.Delete}, Paths: []action.PathRef{{Path: "/w/build", Access: action.Delete}}}
	sc := &SequenceCall{Groups: SequenceGroups{Session: st}, This: NewStepCall(mv, "s", now)}
	v, err := p.Evaluate(&Input{Action: mv, Call: CallFacts{Tool: mv.Tool}, Sequences: sc})
	if err != nil {
		t.Fatal(err)
	}
	if v.Effect != Deny || !slices.Contains(v.Rules, "builtin.retry-after-deny") || !strings.Contains(strings.Join(v.Reasons, " "), "decision d99") {
		t.Errorf("retry after the refusals: %+v", v)
	}
}

// BenchmarkSequencesLongSession evaluates a call against the built-in
// policy, sequences included, in a session that has made 1,000 calls (a
// third of them refused): the sequences' per-call work.
func BenchmarkSequencesLongSession(b *testing.B) {
	p := builtinPolicy(b)
	st := NewSequenceState()
	now := time.Unix(1_700_000_000, 0)
	calls := stepCalls()
	run := func(i int) {
		a := calls[i%len(calls)]
		sc := &SequenceCall{Groups: SequenceGroups{Session: st}, This: NewStepCall(a, "s", now)}
		if _, err := p.Evaluate(&Input{Action: a, Call: CallFacts{Tool: a.Tool}, Sequences: sc}); err != nil {
			b.Fatal(err)
		}
		effect := Allow
		if i%3 == 0 {
			effect = Deny
		}
		sc.Commit(fmt.Sprintf("d%d", i), effect, now)
	}
	for i := range 1000 {
		run(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		run(1000 + i)
	}
}
