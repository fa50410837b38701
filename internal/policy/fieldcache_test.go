package policy

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"cel.dev/cel-go/common/types/ref"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// cacheExpr reads every cached view twice, so the second read of each
// field comes from the cache.
const cacheExpr = `[action.kinds.join(","), action.kind, mandate.allow.join(","), scope.paths_outside.join(","), self.ports.join(","), call.tool, string(call.args.n),
	action.kinds.join(","), action.kind, mandate.allow.join(","), scope.paths_outside.join(","), self.ports.join(","), call.tool, string(call.args.n)].join(";")`

func cacheInput(n int) (*Input, string) {
	kinds := []action.Kind{action.Read, action.Write, action.Execute, action.Send, action.Pay}
	k := kinds[n%len(kinds)]
	in := &Input{
		Call:    CallFacts{Tool: fmt.Sprintf("tool-%d", n), Args: map[string]any{"n": fmt.Sprint(n)}},
		Action:  &action.Action{Kind: k, Kinds: []action.Kind{k}},
		Mandate: &mandate.Mandate{Allow: []action.Kind{k, action.Read}},
		Scope:   mandate.Report{PathsOutside: []string{fmt.Sprintf("/p/%d", n)}},
		Self:    SelfFacts{Ports: []string{fmt.Sprint(7000 + n)}},
	}
	once := fmt.Sprintf("%s;%s;%s,read;/p/%d;%d;tool-%d;%d", k, k, k, n, 7000+n, n, n)
	return in, once + ";" + once
}

// TestFieldCacheIsPerEvaluation checks that a view's kept field values are
// its own evaluation's: evaluations of different inputs in a row and at
// once each see their own values (go test -race checks the latter).
func TestFieldCacheIsPerEvaluation(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	prg := mustProgram(t, env, cacheExpr, benchProgramOpts...)
	p := &Policy{adapter: env.CELTypeAdapter(), letIndex: map[string]int{}}
	eval := func(n int) error {
		in, want := cacheInput(n)
		vars := newActivation(p, in)
		out, _, err := prg.Eval(vars)
		if err != nil {
			return err
		}
		if got := out.Value(); got != want {
			return fmt.Errorf("input %d: got %q, want %q", n, got, want)
		}
		// Evaluated again on the same activation, the values come from
		// the views' caches and are still this input's.
		if out, _, err = prg.Eval(vars); err != nil || out.Value() != want {
			return fmt.Errorf("input %d again: got %v (%v), want %q", n, out, err, want)
		}
		return nil
	}
	for n := range 8 {
		if err := eval(n); err != nil {
			t.Error(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for n := range 64 {
		wg.Go(func() {
			if err := eval(n); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestFieldCacheKeepsReads checks that the cache is used: after one
// evaluation each view holds the fields the expression read.
func TestFieldCacheKeepsReads(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	prg := mustProgram(t, env, cacheExpr, benchProgramOpts...)
	p := &Policy{adapter: env.CELTypeAdapter(), letIndex: map[string]int{}}
	in, _ := cacheInput(1)
	vars := newActivation(p, in)
	if _, _, err := prg.Eval(vars); err != nil {
		t.Fatal(err)
	}
	kept := func(f []ref.Val) int {
		n := 0
		for _, v := range f {
			if v != nil {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		view string
		f    []ref.Val
		want int
	}{
		{"action", vars.av.cache[:], 2}, // kind, kinds
		{"mandate", vars.mv.cache[:], 1},
		{"scope", vars.rv.cache[:], 1},
		{"self", vars.sv.cache[:], 1},
		{"call", vars.cv.cache[:], 2}, // tool, args
	} {
		if got := kept(c.f); got != c.want {
			t.Errorf("%s view keeps %d fields, want %d", c.view, got, c.want)
		}
	}
}

// TestViewProviderRefuses checks the load-time errors: a view that keeps
// no cache, and one with more fields than the cache holds.
func TestViewProviderRefuses(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]reflect.Type{
		"no cache": reflect.TypeFor[CallFacts](),
		"too wide": reflect.TypeFor[wideView](),
	} {
		if _, err := newViewProvider(env.CELTypeProvider(), map[string]reflect.Type{"x.X": v}, nil); err == nil {
			t.Errorf("%s: newViewProvider accepted %s", name, v)
		}
	}
}

// wideView has one field more than its cache holds.
type wideView struct {
	A, B, C string

	cache [2]ref.Val
}

func (v *wideView) cachedFields() []ref.Val { return v.cache[:] }
