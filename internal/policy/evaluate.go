package policy

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/flow"
)

// Valid reports whether e is allow, deny or ask.
func (e Effect) Valid() bool { return e == Allow || e == Deny || e == Ask }

// strength orders effects for combining: deny beats ask beats allow.
func (e Effect) strength() int {
	switch e {
	case Deny:
		return 3
	case Ask:
		return 2
	case Allow:
		return 1
	}
	return 0
}

// maxReasonValue caps how much of one interpolated value a reason shows;
// reasons are read by people, and a list of a thousand recipients is not.
const maxReasonValue = 200

// errNilInput is returned for a nil Input; the caller turns it into deny.
var errNilInput = errors.New("policy: nil input")

// Evaluate decides one action. Every enabled rule is evaluated; the rules
// whose condition holds fire and are all listed in the verdict; the effect
// is the strongest among them (deny > ask > allow) and the reasons are those
// of the rules with that effect. When none fires, the per-kind default
// decides (ask for kinds without one) and the verdict names
// "default:<kind>".
//
// A rule that fails at run time fails closed: a deny or ask rule counts as
// fired, with the error in its reason; an allow rule does not fire. Such
// failures are also listed in Verdict.Errors. An error never yields allow.
//
// A nil Action is evaluated as an unclassified action (kind unknown); a nil
// Mandate as an empty one that grants nothing. Evaluate returns an error
// only for a nil input. It does no I/O and is safe for concurrent use.
func (p *Policy) Evaluate(in *Input) (Verdict, error) {
	if in == nil {
		return Verdict{}, errNilInput
	}
	vars := newActivation(p, in)
	av := &vars.av

	var v Verdict
	best := Effect("")
	// deciders are the fired rules with the best effect so far, with the
	// error that made a failed rule count as fired.
	type decider struct {
		r   *rule
		f   *firedSequence
		err error
	}
	var deciders []decider
	for _, r := range p.rules {
		if r.guard != nil && !r.guard.allows(vars) {
			continue // a conjunct is false: the rule cannot fire
		}
		fired, err := r.prg.holds(vars)
		if err != nil {
			v.Errors = append(v.Errors, fmt.Sprintf("%s: %v", r.name, err))
			if r.effect == Allow {
				continue // an allow rule that cannot be evaluated does not allow
			}
			fired = true // a deny or ask rule that cannot be evaluated fails closed
		}
		if !fired {
			continue
		}
		v.Rules = append(v.Rules, r.name)
		switch s := r.effect.strength(); {
		case s > best.strength():
			best = r.effect
			deciders = append(deciders[:0], decider{r, nil, err})
		case s == best.strength():
			deciders = append(deciders, decider{r, nil, err})
		}
	}
	if sc := in.Sequences; sc != nil && len(p.sequences) > 0 {
		fired, serrs := p.evalSequences(vars, sc, sc.This.At)
		v.Errors = append(v.Errors, serrs...)
		for i := range fired {
			f := &fired[i]
			if !slices.Contains(v.Rules, f.q.name) {
				v.Rules = append(v.Rules, f.q.name)
			}
			switch s := f.q.effect.strength(); {
			case s > best.strength():
				best = f.q.effect
				deciders = append(deciders[:0], decider{nil, f, f.err})
			case s == best.strength():
				deciders = append(deciders, decider{nil, f, f.err})
			}
		}
	}

	if best == "" {
		kind := action.Kind(av.Kind)
		eff, ok := p.defaults[kind]
		if !ok {
			eff = Ask
		}
		v.Effect = eff
		v.Rules = []string{"default:" + string(kind)}
		v.Reasons = []string{fmt.Sprintf("no rule matched; default for %s is %s", kind, eff)}
		return v, nil
	}
	v.Effect = best
	v.Reasons = make([]string, 0, len(deciders))
	for _, d := range deciders {
		if d.f != nil {
			v.Reasons = append(v.Reasons, d.f.render(vars, in.Sequences))
			continue
		}
		if d.err != nil {
			v.Reasons = append(v.Reasons, fmt.Sprintf("rule %s could not be evaluated (%v); failing closed with %s", d.r.name, d.err, d.r.effect))
			continue
		}
		v.Reasons = append(v.Reasons, d.r.reason.render(vars))
	}
	return v, nil
}

// newActivation builds the variables of one evaluation. One allocation
// holds the views and the evaluation state. The CEL values of the
// variables are made on first use (ResolveName): with the guards, most
// evaluations read only a few of them.
func newActivation(p *Policy, in *Input) *activation {
	vars := &activation{p: p, in: in}
	vars.av.fill(normAction(in.Action), &vars.kinds)
	vars.mv.fill(in.Mandate, &vars.kinds)
	vars.fl = in.Flow
	if vars.fl == nil {
		vars.fl = flow.NoFacts()
	}
	return vars
}

// fits reports whether the evaluation's input is within tier t, its
// call.args too when args is set. The input's sizes are measured once, on
// the first program that has an untracked form.
func (a *activation) fits(t fitSizes, args bool) bool {
	if !a.measured {
		a.measured = true
		a.sizes = measureInput(&a.in.Call, &a.av, &a.mv, a.in)
	}
	return a.sizes.within(t) && (!args || a.sizes.args <= t.args)
}

// normAction returns a, or a copy of it, such that Kind and every entry of
// Kinds is a valid kind (invalid ones become unknown: what cannot be
// classified is the worst case) and Kinds contains Kind. Rules can then test
// `"pay" in action.kinds` without also looking at action.kind. The caller's
// Action is never modified.
func normAction(a *action.Action) *action.Action {
	if a == nil {
		return &action.Action{Kind: action.Unknown, Kinds: []action.Kind{action.Unknown}, Source: "none"}
	}
	if a.Kind.Valid() && slices.Contains(a.Kinds, a.Kind) && !slices.ContainsFunc(a.Kinds, invalidKind) {
		return a
	}
	c := *a
	if !c.Kind.Valid() {
		c.Kind = action.Unknown
	}
	ks := make([]action.Kind, 0, len(a.Kinds)+1)
	for _, k := range a.Kinds {
		if invalidKind(k) {
			k = action.Unknown
		}
		if !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	if !slices.Contains(ks, c.Kind) {
		ks = append(ks, c.Kind)
	}
	c.Kinds = ks
	return &c
}

func invalidKind(k action.Kind) bool { return !k.Valid() }

// activation hands the seven variables to CEL without building a map per
// call, and evaluates each let at most once per Evaluate, on first use.
type activation struct {
	p                                            *Policy
	in                                           *Input
	fl                                           *flow.Facts // in.Flow, or no facts
	measured                                     bool        // sizes is set; see fits
	sizes                                        fitSizes
	call, action, mandate, scope, session, agent ref.Val
	self, flow, baseline                         ref.Val
	// steps and this are bound while a sequence step is evaluated.
	steps, this ref.Val
	// stepCall is `this` as Go reads it, for the steps' guards.
	stepCall *StepCall
	lets     []ref.Val

	av     actionView
	mv     mandateView
	cv     callView   // filled when call is first read
	rv     reportView // filled when scope is first read
	sv     selfView   // filled when self is first read
	kinds  kindBuf
	letBuf [16]ref.Val
}

// lazy is the value of a variable, converted from native on its first use
// in this evaluation and kept in slot.
func (a *activation) lazy(slot *ref.Val, native any) ref.Val {
	if *slot == nil {
		*slot = a.p.adapter.NativeToValue(native)
	}
	return *slot
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "call":
		if a.call == nil {
			a.cv.fill(&a.in.Call)
		}
		return a.lazy(&a.call, &a.cv), true
	case "action":
		return a.lazy(&a.action, &a.av), true
	case "mandate":
		return a.lazy(&a.mandate, &a.mv), true
	case "scope":
		if a.scope == nil {
			a.rv.fill(&a.in.Scope)
		}
		return a.lazy(&a.scope, &a.rv), true
	case "session":
		return a.lazy(&a.session, &a.in.Session), true
	case "agent":
		return a.lazy(&a.agent, &a.in.Agent), true
	case "self":
		if a.self == nil {
			a.sv.fill(&a.in.Self)
		}
		return a.lazy(&a.self, &a.sv), true
	case "flow":
		return a.lazy(&a.flow, a.fl), true
	case "baseline":
		bl := a.in.Baseline
		if bl == nil {
			bl = &noBaseline
		}
		return a.lazy(&a.baseline, bl), true
	case "steps":
		return a.steps, a.steps != nil
	case "this":
		return a.this, a.this != nil
	}
	i, ok := a.p.letIndex[name]
	if !ok {
		return nil, false
	}
	if a.lets == nil {
		if n := len(a.p.lets); n <= len(a.letBuf) {
			a.lets = a.letBuf[:n]
		} else {
			a.lets = make([]ref.Val, n)
		}
	}
	if a.lets[i] == nil {
		out, err := a.p.lets[i].prg.eval(a)
		if err != nil {
			// The rule that uses the let then fails, and fails closed.
			out = types.NewErr("let %s: %v", a.p.lets[i].name, err)
		}
		a.lets[i] = out
	}
	return a.lets[i], true
}

func (a *activation) Parent() interpreter.Activation { return nil }

// render evaluates the reason's interpolations. A failing interpolation
// shows its error in place rather than hiding the reason.
func (t reasonTemplate) render(vars *activation) string {
	if len(t.parts) == 1 && t.parts[0].prg == nil {
		return t.parts[0].text
	}
	var b strings.Builder
	for _, part := range t.parts {
		if part.prg == nil {
			b.WriteString(part.text)
			continue
		}
		out, err := part.prg.eval(vars)
		if err != nil {
			fmt.Fprintf(&b, "<error in ${%s}: %v>", part.text, err)
			continue
		}
		b.WriteString(truncate(formatValue(out, 0), maxReasonValue))
	}
	return b.String()
}

// formatValue renders a CEL value for a person: strings bare, lists joined
// with ", ", numbers without trailing zeros.
func formatValue(v ref.Val, depth int) string {
	if depth > 4 {
		return "…"
	}
	switch x := v.(type) {
	case types.String:
		return string(x)
	case types.Bool:
		return strconv.FormatBool(bool(x))
	case types.Int:
		return strconv.FormatInt(int64(x), 10)
	case types.Uint:
		return strconv.FormatUint(uint64(x), 10)
	case types.Double:
		return strconv.FormatFloat(float64(x), 'f', -1, 64)
	case types.Timestamp:
		return x.Time.UTC().Format(time.RFC3339)
	case types.Duration:
		return x.Duration.String()
	case types.Null:
		return "null"
	case *types.Optional:
		if x.HasValue() {
			return formatValue(x.GetValue(), depth+1)
		}
		return "none"
	case traits.Lister:
		return strings.Join(formatFirst(x.Iterator(), func(e ref.Val) string {
			return formatValue(e, depth+1)
		}), ", ")
	case traits.Mapper:
		parts := formatFirst(x.Iterator(), func(k ref.Val) string {
			return formatValue(k, depth+1) + ": " + formatValue(x.Get(k), depth+1)
		})
		slices.Sort(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v.Value())
}

// formatFirst formats the first 20 entries of a list or a map, and "…" for
// any after them.
func formatFirst(it traits.Iterator, format func(ref.Val) string) []string {
	var parts []string
	for i := 0; it.HasNext() == types.True; i++ {
		if i == 20 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, format(it.Next()))
	}
	return parts
}
