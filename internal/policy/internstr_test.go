package policy

import (
	"fmt"
	"reflect"
	"testing"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// TestInternedGettersMatchCEL reads every string field the provider
// interns, for each word of the vocabulary and for other values, through
// the wrapped getter and CEL's own, handed a pointer and a struct as CEL
// hands them, and requires the same value.
func TestInternedGettersMatchCEL(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	base, err := newEnv() // a second environment's provider, for its unwrapped getters
	if err != nil {
		t.Fatal(err)
	}
	vp, ok := env.CELTypeProvider().(*viewProvider)
	if !ok {
		t.Fatalf("the environment's provider is %T, not the view provider", env.CELTypeProvider())
	}
	raw := base.CELTypeProvider().(*viewProvider).Provider
	values := []string{"", "x", "denied", "Deny", "deny ", "/home/dev/.env"}
	for w := range internedStrings {
		values = append(values, w)
	}
	if len(vp.strs) < 5 {
		t.Fatalf("only %d native types have interned string fields: %v", len(vp.strs), vp.strs)
	}
	for typeName, fields := range vp.strs {
		for fieldName, f := range fields {
			got, ok := vp.FindStructFieldType(typeName, fieldName)
			want, ok2 := raw.FindStructFieldType(typeName, fieldName)
			if !ok || !ok2 {
				t.Fatalf("%s.%s: no field type (%v, %v)", typeName, fieldName, ok, ok2)
			}
			for _, s := range values {
				ptr := reflect.New(f.typ)
				ptr.Elem().Field(f.index).SetString(s)
				for _, obj := range []any{ptr.Interface(), ptr.Elem().Interface()} {
					g, err1 := got.GetFrom(obj)
					w, err2 := want.GetFrom(obj)
					if err1 != nil || err2 != nil {
						t.Fatalf("%s.%s = %q: errors %v, %v", typeName, fieldName, s, err1, err2)
					}
					if g.(ref.Val).Equal(w.(ref.Val)) != types.True || g.(ref.Val).Type() != w.(ref.Val).Type() {
						t.Errorf("%s.%s = %q (%T): interned getter gives %v, CEL's %v", typeName, fieldName, s, obj, g, w)
					}
				}
			}
		}
	}
	for _, want := range []string{"policy.RecentDecision", "policy.StepTarget", "flow.ValueFacts", "act.PathRef"} {
		if _, ok := vp.strs[want]; !ok {
			t.Errorf("%s has no interned string fields", want)
		}
	}
}

// TestInternedReadsDoNotAllocate evaluates a comprehension over
// session.recent whose entries hold vocabulary words and then other words:
// the first must not box a String per field read.
func TestInternedReadsDoNotAllocate(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	prg := mustProgram(t, env, `session.recent.exists(r, r.effect == "none" || r.kind == "none")`, benchProgramOpts...)
	p := &Policy{adapter: env.CELTypeAdapter(), letIndex: map[string]int{}}
	// The fewest of several runs: a collection during one run empties the
	// pools CEL draws activations from, and a refilled pool costs an
	// allocation that has nothing to do with boxing (CI under -race saw
	// 113 against 144 once, a difference of 31).
	allocs := func(effect, kind string) float64 {
		in := &Input{}
		for range 16 {
			in.Session.Recent = append(in.Session.Recent, RecentDecision{Tool: "Bash", Kind: kind, Effect: effect})
		}
		least := -1.0
		for range 5 {
			n := testing.AllocsPerRun(50, func() {
				out, _, err := prg.Eval(newActivation(p, in))
				if err != nil || out != types.False {
					panic(fmt.Sprint(out, err))
				}
			})
			if least < 0 || n < least {
				least = n
			}
		}
		return least
	}
	words, others := allocs("deny", "execute"), allocs("denied", "executed")
	if others-words < 32 {
		t.Errorf("16 entries, two fields each: %v allocations with vocabulary words, %v with others; want at least 32 fewer", words, others)
	}
}

// TestEmptyListGettersMatchCEL reads every list field the provider shares
// empty lists for, nil, empty and with one element, through the wrapped
// getter and CEL's own, handed a pointer and a struct, and requires the
// same list: equal, of the same type and size, converting back to a nil
// or an empty slice as the field was.
func TestEmptyListGettersMatchCEL(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	base, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	vp := env.CELTypeProvider().(*viewProvider)
	raw := base.CELTypeProvider().(*viewProvider).Provider
	checked := map[string]bool{}
	for typeName, fields := range vp.lists {
		for fieldName, f := range fields {
			got, ok := vp.FindStructFieldType(typeName, fieldName)
			want, ok2 := raw.FindStructFieldType(typeName, fieldName)
			if !ok || !ok2 {
				continue // a view under its Go name: CEL knows it by its own
			}
			checked[typeName] = true
			ft := f.typ.Field(f.index).Type
			for _, n := range []int{-1, 0, 1} {
				ptr := reflect.New(f.typ)
				if n >= 0 {
					ptr.Elem().Field(f.index).Set(reflect.MakeSlice(ft, n, n))
				}
				for _, obj := range []any{ptr.Interface(), ptr.Elem().Interface()} {
					g, err1 := got.GetFrom(obj)
					w, err2 := want.GetFrom(obj)
					if err1 != nil || err2 != nil {
						t.Fatalf("%s.%s (%d): errors %v, %v", typeName, fieldName, n, err1, err2)
					}
					gl, wl := g.(ref.Val), w.(ref.Val)
					if gl.Equal(wl) != types.True || gl.Type() != wl.Type() {
						t.Errorf("%s.%s (%d, %T): shared getter gives %v, CEL's %v", typeName, fieldName, n, obj, g, w)
						continue
					}
					gn, err1 := gl.ConvertToNative(ft)
					wn, err2 := wl.ConvertToNative(ft)
					if err1 != nil || err2 != nil {
						continue // lists of objects CEL cannot convert back either way
					}
					if reflect.ValueOf(gn).IsNil() != reflect.ValueOf(wn).IsNil() {
						t.Errorf("%s.%s (%d, %T): converts back to nil %v, CEL's to nil %v", typeName, fieldName, n, obj, reflect.ValueOf(gn).IsNil(), reflect.ValueOf(wn).IsNil())
					}
				}
			}
		}
	}
	for _, want := range []string{stepCallType, "policy.SessionFacts", actionType, mandateType} {
		if !checked[want] {
			t.Errorf("%s: no list field checked", want)
		}
	}
}
