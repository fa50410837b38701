package policy

import (
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// Every program runs under costLimit. Tracking cost at run time roughly
// doubles what a rule costs to evaluate, so each expression is also
// estimated statically, assuming the input sizes of a fit tier: when the
// worst case is within the limit, an untracked program is kept, and
// Evaluate uses it whenever the input actually is within those sizes
// (measureInput). Inputs beyond them, expressions that read call.args
// (whose size nothing bounds) and expressions whose worst case is too
// large always run tracked.
//
// There are two tiers. fitWide is the one every estimate is tried
// against first; an expression too costly for it (a comprehension nested
// in another over lists of 64) is tried against fitNarrow, whose shorter
// lists are what a coding agent's calls have: a shell line's commands and
// their words, a handful of paths and URLs, Mandate's own addresses (one
// per loopback spelling, 17 for a loopback listener) and paths, a command
// line of a few hundred bytes.
// The untracked program is run only on an input within the tier it was
// estimated for, so its cost is within costLimit exactly as the tracked
// program would have found, and the verdict is the same.
const (
	fitList       = 64   // entries of any list or map
	fitString     = 1024 // bytes of any string
	fitKindList   = 16   // entries of a list or map of kinds or currencies
	fitKindString = 16   // bytes of a kind, currency, status or effect
	fitRecent     = 32   // session.recent entries
)

// fitSizes are the input sizes a static estimate assumes, and the
// largest ones an input has (measureInput).
type fitSizes struct {
	list, str         int // any list or map; any string
	kindList, kindStr int // lists of kinds or currencies; a kind, currency, status or effect
	recent            int // session.recent
	selfList, selfStr int // Mandate's own addresses, hosts, ports and paths
	// args is the longest string, list or map anywhere in call.args.
	// Unlike the others it is checked only for the programs whose
	// estimate assumed it (program.args): a Write's long content does
	// not make every other rule run tracked.
	args int
}

var (
	fitWide   = fitSizes{list: fitList, str: fitString, kindList: fitKindList, kindStr: fitKindString, recent: fitRecent, selfList: fitList, selfStr: fitString, args: fitString}
	fitNarrow = fitSizes{list: 16, str: fitString, kindList: fitKindList, kindStr: fitKindString, recent: fitRecent, selfList: 32, selfStr: 96, args: 384}
)

// within reports whether every size in s but args is at most t's.
func (s fitSizes) within(t fitSizes) bool {
	return s.list <= t.list && s.str <= t.str && s.kindList <= t.kindList && s.kindStr <= t.kindStr &&
		s.recent <= t.recent && s.selfList <= t.selfList && s.selfStr <= t.selfStr
}

// kindPaths are the inputs holding kinds, currencies, statuses and effects:
// short strings in short lists, sized tighter than the rest so that the
// common `k in mandate.allow` comprehensions estimate cheaply.
var kindPaths = map[string]bool{
	"action.kind": true, "action.kinds": true,
	"mandate.allow": true, "mandate.deny": true, "mandate.ask": true, "mandate.limits.counts": true,
	"session.counts": true, "session.spend": true, "session.status": true,
	"session.recent.kind": true, "session.recent.effect": true,
}

// program is a compiled expression: always tracked, and fast (untracked)
// when its static worst case is within costLimit for inputs that fit
// fitWide, or else narrow (untracked) when it is for inputs that fit
// fitNarrow. At most one of fast and narrow is set; args says that its
// estimate assumed call.args within the tier's args size too.
type program struct {
	tracked cel.Program
	fast    cel.Program
	narrow  cel.Program
	args    bool
}

// eval runs the untracked program whose tier the input fits, if any.
func (p program) eval(vars *activation) (ref.Val, error) {
	prg := p.tracked
	switch {
	case p.fast != nil && vars.fits(fitWide, p.args):
		prg = p.fast
	case p.narrow != nil && vars.fits(fitNarrow, p.args):
		prg = p.narrow
	}
	out, _, err := prg.Eval(vars)
	return out, err
}

// holds evaluates a rule's or a step's condition.
func (p program) holds(vars *activation) (bool, error) {
	out, err := p.eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		// The checker guarantees bool; a dyn value reaching here would be
		// a bug in CEL or in the views, and it must not pass silently.
		return false, fmt.Errorf("condition returned %v, not bool", out)
	}
	return bool(b), nil
}

// newProgram builds the programs for a checked expression. lets are the
// let variables defined so far, with their result sizes where known.
func newProgram(env *cel.Env, a *cel.Ast, lets map[string]letEstimate, costs *actualCost) (program, error) {
	tracked, err := env.Program(a,
		cel.CostLimit(costLimit),
		cel.CostTracking(costs),
		cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return program{}, err
	}
	p := program{tracked: tracked}
	untracked := &p.fast
	est, err := env.EstimateCost(a, estimator{lets: lets, fit: fitWide, args: &p.args})
	if err != nil || est.Max > costLimit {
		untracked, p.args = &p.narrow, false
		est, err = env.EstimateCost(a, estimator{lets: lets, fit: fitNarrow, args: &p.args})
		if err != nil || est.Max > costLimit {
			return program{tracked: tracked}, nil // always tracked; not an error
		}
	}
	*untracked, err = env.Program(a, cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return program{}, err
	}
	return p, nil
}

// letSize is what is known of a let's value: when its expression is a
// list or map literal (the common case: a list of names), its size and,
// when every element (or key) is a string literal, their longest length.
func letSize(a *cel.Ast) letEstimate {
	e := a.NativeRep().Expr()
	var elems []ast.Expr
	switch e.Kind() {
	case ast.ListKind:
		elems = e.AsList().Elements()
	case ast.MapKind:
		for _, en := range e.AsMap().Entries() {
			elems = append(elems, en.AsMapEntry().Key())
		}
	default:
		if a.OutputType().Kind() == types.StringKind {
			return letEstimate{str: e}
		}
		return letEstimate{}
	}
	s := cost.FixedSizeEstimate(uint64(len(elems)))
	est := letEstimate{size: &s}
	longest := 0
	for _, el := range elems {
		str, ok := stringConst(el)
		if !ok {
			return est
		}
		longest = max(longest, len(str))
	}
	el := cost.RangedSizeEstimate(0, uint64(longest))
	est.elem = &el
	return est
}

// letEstimate is what the estimator knows of a let's value; nil is
// unknown.
type letEstimate struct {
	size *cost.SizeEstimate
	elem *cost.SizeEstimate // the elements of a list, the keys of a map
	// str is the expression of a string-valued let, whose length the
	// estimator bounds per tier where it can (stringBound).
	str ast.Expr
}

// estimator tells CEL's static estimator the sizes of a fit tier, which
// measureInput checks, and what the custom functions cost.
type estimator struct {
	lets map[string]letEstimate
	fit  fitSizes
	// args is set when a size given out depended on fit.args.
	args *bool
}

func (e estimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	path := n.Path()
	if len(path) == 0 {
		return nil
	}
	if s, ok := e.lets[path[0]]; ok {
		switch {
		case len(path) == 1 && s.str != nil:
			n, ok := e.stringBound(s.str)
			if !ok {
				return nil
			}
			b := cost.RangedSizeEstimate(0, n)
			return &b
		case len(path) == 1:
			return s.size
		case len(path) == 2 && (path[1] == "@items" || path[1] == "@keys"):
			return s.elem
		}
		return nil
	}
	switch path[0] {
	case "call":
		if len(path) > 1 && path[1] == "args" {
			// Arbitrary JSON, bounded only by measuring it (measureArgs).
			*e.args = true
			s := cost.RangedSizeEstimate(0, uint64(e.fit.args))
			return &s
		}
	case "action", "mandate", "scope", "session", "agent", "self", "flow", "baseline":
	default:
		return nil
	}
	var fields []string
	for _, p := range path {
		if !strings.HasPrefix(p, "@") {
			fields = append(fields, p)
		}
	}
	kindish := kindPaths[strings.Join(fields, ".")]
	self := path[0] == "self"
	t := n.Type()
	f := e.fit
	var max int
	switch list := t.Kind() == types.ListKind || t.Kind() == types.MapKind; {
	case t.Kind() == types.StringKind && kindish:
		max = f.kindStr
	case t.Kind() == types.StringKind && self:
		max = f.selfStr
	case t.Kind() == types.StringKind:
		max = f.str
	case list && path[0] == "session" && len(path) == 2 && path[1] == "recent":
		max = f.recent
	case list && kindish:
		max = f.kindList
	case list && self:
		max = f.selfList
	case list:
		max = f.list
	default:
		return nil
	}
	s := cost.RangedSizeEstimate(0, uint64(max))
	return &s
}

// maxGlobSegments bounds glob's work: a pattern or path with more segments
// is an error (and the rule fails closed).
const maxGlobSegments = 256

func (estimator) EstimateCallCost(fn, _ string, _ *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	switch fn {
	case "glob":
		// Dynamic programming over segments, each matched with path.Match.
		return cost.NewCallEstimate(cost.Estimate{Min: 1, Max: maxGlobSegments * maxGlobSegments}, nil)
	case "host_matches":
		return cost.NewCallEstimate(cost.Estimate{Min: 1, Max: 1 + 2*fitString/10}, nil)
	case "origin", "trust", "injected":
		return cost.NewCallEstimate(cost.Estimate{Min: 1, Max: flowLookupCost}, nil)
	}
	return nil
}

// flowLookupCost is what a flow lookup is charged: a few map lookups.
const flowLookupCost = 8

// actualCost charges the custom functions at run time in the same terms.
// CEL wants each charge as a pointer, read once; small charges point into
// a table (every value up to its length, never written after it is made)
// so that a tracked call does not allocate its charge.
type actualCost struct {
	small [256]uint64
}

func newActualCost() *actualCost {
	a := &actualCost{}
	for i := range a.small {
		a.small[i] = uint64(i)
	}
	return a
}

func (a *actualCost) CallCost(fn, _ string, args []ref.Val, _ ref.Val) *uint64 {
	var c uint64
	switch fn {
	case "glob":
		if len(args) == 2 {
			p, _ := args[0].(types.String)
			n, _ := args[1].(types.String)
			c = uint64(strings.Count(string(p), "/")+1) * uint64(strings.Count(string(n), "/")+1)
		}
	case "host_matches":
		if len(args) == 2 {
			p, _ := args[0].(types.String)
			h, _ := args[1].(types.String)
			c = 1 + uint64(len(p)+len(h))/10
		}
	case "origin", "trust", "injected":
		c = flowLookupCost
	default:
		return nil
	}
	if c < uint64(len(a.small)) {
		return &a.small[c]
	}
	big := c // c itself stays on the stack
	return &big
}

// inputFits reports whether every list, map and string the rules can see
// (except call.args) is within fitWide.
func inputFits(call *CallFacts, a *actionView, m *mandateView, in *Input) bool {
	return measureInput(call, a, m, in).within(fitWide)
}

// measureInput returns the largest list, map and string of each sort the
// rules can see, except call.args.
func measureInput(call *CallFacts, a *actionView, m *mandateView, in *Input) fitSizes {
	var f fitter
	f.str(call.Tool)

	f.str(a.Tool)
	f.kind(a.Kind)
	f.kinds(a.Kinds)
	f.str(a.Source)
	f.str(a.Family)
	f.str(a.Trust)
	f.list(len(a.Paths))
	for _, p := range a.Paths {
		f.str(p.Path)
		f.str(string(p.Access))
		f.str(p.Why)
	}
	f.strs(a.URLs)
	f.strs(a.Hosts)
	f.list(len(a.Recipients))
	for _, r := range a.Recipients {
		f.str(r.Address)
		f.str(r.Field)
		f.str(r.Name)
	}
	f.strs(a.Accounts)
	f.list(len(a.Amounts))
	for _, am := range a.Amounts {
		f.str(am.Currency)
	}
	f.list(len(a.Commands))
	for _, c := range a.Commands {
		f.strs(c.Argv)
		f.str(c.Name)
		f.str(string(c.Kind))
		f.strs(c.Via)
		f.str(c.Note)
		f.str(c.Hazard)
	}
	f.strs(a.Notes)
	f.strs(a.Unexamined)

	f.list(len(m.Instructions))
	for _, i := range m.Instructions {
		f.str(i.Text)
		f.str(i.Source)
	}
	f.kinds(m.Allow)
	f.kinds(m.Deny)
	f.kinds(m.Ask)
	f.list(len(m.Prohibitions))
	for _, p := range m.Prohibitions {
		f.str(string(p.Kind))
		f.str(p.Target)
		f.str(p.Text)
	}
	f.list(len(m.Conditions))
	for _, c := range m.Conditions {
		f.str(string(c.Kind))
		f.str(c.Text)
	}
	f.strs(m.Scope.Paths)
	f.strs(m.Scope.Hosts)
	f.strs(m.Scope.Recipients)
	f.strs(m.Scope.Accounts)
	f.strs(m.Scope.Names)
	f.strs(m.Scope.None)
	if m.Limits.Spend != nil {
		f.str(m.Limits.Spend.Currency)
	}
	f.kindList(len(m.Limits.Counts))
	for k := range m.Limits.Counts {
		f.kind(k)
	}
	f.str(m.Parent)
	f.strs(m.Notes)
	f.s.args = measureArgs(call.Args, 0)

	s := &in.Scope
	f.strs(s.PathsOutside)
	f.strs(s.SensitivePathsOutside)
	f.strs(s.HostsOutside)
	f.strs(s.RecipientsOutside)
	f.strs(s.RecipientsByName)
	f.strs(s.AccountsOutside)
	f.strs(s.Prohibited)
	f.strs(s.ConditionsMet)
	f.strs(s.ScratchWrites)

	ss := &in.Session
	f.str(ss.ID)
	f.kind(ss.Status)
	f.str(ss.ParentID)
	f.kindList(len(ss.Counts))
	f.kindList(len(ss.Spend))
	f.s.recent = max(f.s.recent, len(ss.Recent))
	for k := range ss.Counts {
		f.kind(k)
	}
	for k := range ss.Spend {
		f.kind(k)
	}
	for _, r := range ss.Recent {
		f.str(r.Tool)
		f.kind(r.Kind)
		f.kind(r.Effect)
	}

	ag := &in.Agent
	f.str(ag.ID)
	f.str(ag.Model)
	f.str(ag.PromptHash)
	f.str(ag.ToolsetHash)
	f.str(ag.Retrieval)

	f.selfStrs(in.Self.Addresses)
	f.selfStrs(in.Self.Hosts)
	f.selfStrs(in.Self.Ports)
	f.selfStrs(in.Self.Paths)

	if bl := in.Baseline; bl != nil {
		f.kind(bl.State)
		f.strs(bl.FirstSeen)
		f.strs(bl.Reasons)
	}

	if fl := in.Flow; fl != nil {
		f.list(len(fl.Values))
		for i := range fl.Values {
			v := &fl.Values[i]
			f.str(v.Value)
			f.str(v.Field)
			f.str(v.Provenance)
			f.str(v.Tool)
		}
		f.strs(fl.FollowsInjection)
		f.strs(fl.Carries)
		f.strs(fl.OpenBody)
		f.list(len(fl.Injections))
		for i := range fl.Injections {
			f.str(fl.Injections[i].Text)
		}
		f.list(len(fl.SensitiveRead))
		for _, s := range fl.SensitiveRead {
			f.str(s.What)
		}
		f.list(len(fl.Retries))
		for _, r := range fl.Retries {
			f.str(r.Resource)
			f.str(r.Reason)
		}
		f.list(len(fl.Items))
		for i := range fl.Items {
			f.str(fl.Items[i].Name)
			f.str(fl.Items[i].ID)
		}
	}
	return f.s
}

// fitter accumulates measureInput's maxima.
type fitter struct{ s fitSizes }

func (f *fitter) str(s string)   { f.s.str = max(f.s.str, len(s)) }
func (f *fitter) kind(s string)  { f.s.kindStr = max(f.s.kindStr, len(s)) }
func (f *fitter) list(n int)     { f.s.list = max(f.s.list, n) }
func (f *fitter) kindList(n int) { f.s.kindList = max(f.s.kindList, n) }

func (f *fitter) strs(ss []string) {
	f.list(len(ss))
	for _, s := range ss {
		f.str(s)
	}
}

func (f *fitter) kinds(ks []string) {
	f.kindList(len(ks))
	for _, k := range ks {
		f.kind(k)
	}
}

func (f *fitter) selfStrs(ss []string) {
	f.s.selfList = max(f.s.selfList, len(ss))
	for _, s := range ss {
		f.s.selfStr = max(f.s.selfStr, len(s))
	}
}
