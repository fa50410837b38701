package policy

import (
	"slices"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
)

// A guard is a precondition read off a rule's condition at compile time:
// the conjuncts of its top-level `&&` chain that test a few plain facts
// of the input — the action's kind, kinds, tool, family or boolean flags,
// the mandate's granted kinds, the sizes of the action's, the scope
// report's, the flow's and Mandate's own lists, the session's status
// ("pay" in action.kinds, action.kind != "read", !(action.kind in ["read",
// "fetch"]), action.destructive, size(scope.paths_outside) > 0,
// action.family == "shell" || size(action.commands) > 0), and the
// comprehensions that are false over an empty list (action.paths.exists(…)
// needs a path; size(action.paths.filter(…)) > 0 too). A conjunct that
// names a let is read through the let's own conjuncts. Evaluate checks the
// guard in Go before running the rule's program, and skips the program
// when the guard fails: most rules concern a few kinds or facts, and most
// calls have none of them. A false conjunct makes a CEL conjunction false
// whatever the others do (errors included), so skipping never changes a
// verdict; conjuncts of any other shape are left to CEL.
type guard struct {
	preds []pred // each must hold for the rule to be able to fire
}

// pred is one conjunct the guard understands: false means the conjunct is
// false for this input.
type pred func(*activation) bool

// The facts a guard can read, by their path from the variable. Each
// returns exactly what the CEL expression of the same path evaluates to
// (TestGuardFieldsMatchCEL checks every path against CEL).
var (
	boolFields = map[string]func(*activation) bool{
		"action.destructive":          func(a *activation) bool { return a.av.Destructive },
		"action.sensitive":            func(a *activation) bool { return a.av.Sensitive },
		"action.known":                func(a *activation) bool { return a.av.Known },
		"action.effects.external":     func(a *activation) bool { return a.av.Effects.External },
		"action.effects.irreversible": func(a *activation) bool { return a.av.Effects.Irreversible },
		"action.effects.financial":    func(a *activation) bool { return a.av.Effects.Financial },
		"action.effects.public":       func(a *activation) bool { return a.av.Effects.Public },
		"action.effects.recurring":    func(a *activation) bool { return a.av.Effects.Recurring },
		"action.effects.admin_grant":  func(a *activation) bool { return a.av.Effects.AdminGrant },
		"scope.kind_denied":           func(a *activation) bool { return a.in.Scope.KindDenied },
		"scope.kind_allowed":          func(a *activation) bool { return a.in.Scope.KindAllowed },
		"scope.kind_ask":              func(a *activation) bool { return a.in.Scope.KindAsk },
		"scope.expired":               func(a *activation) bool { return a.in.Scope.Expired },
		"flow.injected":               func(a *activation) bool { return a.fl.Injected },
		"flow.carries_sensitive":      func(a *activation) bool { return a.fl.CarriesSensitive },
		"flow.carries_private":        func(a *activation) bool { return a.fl.CarriesPrivate },
		"flow.seen_injection":         func(a *activation) bool { return a.fl.SeenInjection },
		"flow.lethal_trifecta":        func(a *activation) bool { return a.fl.LethalTrifecta },
		"flow.related":                func(a *activation) bool { return a.fl.Related },
	}
	stringFields = map[string]func(*activation) string{
		"action.kind":    func(a *activation) string { return a.av.Kind },
		"action.tool":    func(a *activation) string { return a.av.Tool },
		"action.family":  func(a *activation) string { return a.av.Family },
		"action.source":  func(a *activation) string { return a.av.Source },
		"call.tool":      func(a *activation) string { return a.in.Call.Tool },
		"session.status": func(a *activation) string { return a.in.Session.Status },
	}
	// stringLists are lists of strings a literal can be tested to be in.
	stringLists = map[string]func(*activation) []string{
		"action.kinds":  func(a *activation) []string { return a.av.Kinds },
		"mandate.allow": func(a *activation) []string { return a.mv.Allow },
		"mandate.deny":  func(a *activation) []string { return a.mv.Deny },
		"mandate.ask":   func(a *activation) []string { return a.mv.Ask },
	}
	// listSizes are lists whose size a conjunct can compare with 0.
	listSizes = map[string]func(*activation) int{
		"action.kinds":                  func(a *activation) int { return len(a.av.Kinds) },
		"action.paths":                  func(a *activation) int { return len(a.av.Paths) },
		"action.urls":                   func(a *activation) int { return len(a.av.URLs) },
		"action.hosts":                  func(a *activation) int { return len(a.av.Hosts) },
		"action.recipients":             func(a *activation) int { return len(a.av.Recipients) },
		"action.accounts":               func(a *activation) int { return len(a.av.Accounts) },
		"action.amounts":                func(a *activation) int { return len(a.av.Amounts) },
		"action.commands":               func(a *activation) int { return len(a.av.Commands) },
		"action.unexamined":             func(a *activation) int { return len(a.av.Unexamined) },
		"scope.paths_outside":           func(a *activation) int { return len(a.in.Scope.PathsOutside) },
		"scope.sensitive_paths_outside": func(a *activation) int { return len(a.in.Scope.SensitivePathsOutside) },
		"scope.hosts_outside":           func(a *activation) int { return len(a.in.Scope.HostsOutside) },
		"scope.recipients_outside":      func(a *activation) int { return len(a.in.Scope.RecipientsOutside) },
		"scope.recipients_by_name":      func(a *activation) int { return len(a.in.Scope.RecipientsByName) },
		"scope.accounts_outside":        func(a *activation) int { return len(a.in.Scope.AccountsOutside) },
		"scope.prohibited":              func(a *activation) int { return len(a.in.Scope.Prohibited) },
		"scope.conditions_met":          func(a *activation) int { return len(a.in.Scope.ConditionsMet) },
		"scope.scratch_writes":          func(a *activation) int { return len(a.in.Scope.ScratchWrites) },
		"self.addresses":                func(a *activation) int { return len(a.in.Self.Addresses) },
		"self.hosts":                    func(a *activation) int { return len(a.in.Self.Hosts) },
		"self.ports":                    func(a *activation) int { return len(a.in.Self.Ports) },
		"self.paths":                    func(a *activation) int { return len(a.in.Self.Paths) },
		"flow.follows_injection":        func(a *activation) int { return len(a.fl.FollowsInjection) },
		"flow.open_body":                func(a *activation) int { return len(a.fl.OpenBody) },
		"flow.retries":                  func(a *activation) int { return len(a.fl.Retries) },
		"flow.carries":                  func(a *activation) int { return len(a.fl.Carries) },
		"flow.values":                   func(a *activation) int { return len(a.fl.Values) },
		"flow.items":                    func(a *activation) int { return len(a.fl.Items) },
		"flow.injections":               func(a *activation) int { return len(a.fl.Injections) },
		"flow.sensitive_read":           func(a *activation) int { return len(a.fl.SensitiveRead) },
		"session.recent":                func(a *activation) int { return len(a.in.Session.Recent) },
		"mandate.limits.counts":         func(a *activation) int { return len(a.mv.Limits.Counts) },
	}
)

// maxGuardDepth bounds how deep guardFor follows lets and disjunctions.
const maxGuardDepth = 8

// guardFor builds the guard of a checked condition, or nil when none of its
// top-level conjuncts has a shape it understands. lets are the expressions
// of the lets defined so far, by name.
func guardFor(a *cel.Ast, lets map[string]ast.Expr) *guard {
	g := &guard{preds: conjunctPreds(a.NativeRep().Expr(), lets, 0)}
	if len(g.preds) == 0 {
		return nil
	}
	return g
}

// conjunctPreds returns the preds of e's conjuncts that have one.
func conjunctPreds(e ast.Expr, lets map[string]ast.Expr, depth int) []pred {
	var out []pred
	for _, c := range conjuncts(e, nil) {
		if c.Kind() == ast.IdentKind && depth < maxGuardDepth {
			// A let used as a conjunct: false when one of its own
			// conjuncts is.
			if le, ok := lets[c.AsIdent()]; ok {
				out = append(out, conjunctPreds(le, lets, depth+1)...)
			}
			continue
		}
		if p := predFor(c, lets, depth); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// conjuncts flattens a chain of `&&`.
func conjuncts(e ast.Expr, out []ast.Expr) []ast.Expr {
	if e.Kind() == ast.CallKind && e.AsCall().FunctionName() == operators.LogicalAnd {
		for _, arg := range e.AsCall().Args() {
			out = conjuncts(arg, out)
		}
		return out
	}
	return append(out, e)
}

// predFor returns the pred of one conjunct, or nil when its shape is not
// one the guard reads.
func predFor(e ast.Expr, lets map[string]ast.Expr, depth int) pred {
	if depth >= maxGuardDepth {
		return nil
	}
	switch e.Kind() {
	case ast.SelectKind:
		// action.destructive
		if f := boolField(fieldPath(e)); f != nil {
			return pred(f)
		}
	case ast.IdentKind:
		// A let inside a disjunction: it holds when all its conjuncts can.
		if le, ok := lets[e.AsIdent()]; ok {
			if ps := conjunctPreds(le, lets, depth+1); len(ps) > 0 {
				return all(ps)
			}
		}
	case ast.CallKind:
		if e.AsCall().FunctionName() == operators.LogicalAnd {
			// a && b inside a disjunction: false when a conjunct it
			// reads is.
			if ps := conjunctPreds(e, lets, depth+1); len(ps) > 0 {
				return all(ps)
			}
			return nil
		}
		return callPred(e.AsCall(), lets, depth)
	case ast.ComprehensionKind:
		// xs.exists(x, x == "lit"): exact (sequence_guard.go).
		if p := existsMember(e); p != nil {
			return p
		}
		// xs.exists(x, …): false over an empty list.
		if n, ok := emptyRangeGives(e, isFalse); ok {
			return func(a *activation) bool { return n(a) > 0 }
		}
	}
	return nil
}

// emptyRangeGives reports whether e is a comprehension over a list the
// guard knows whose result, when that list is empty, is its initial
// accumulator and that accumulator satisfies init — and returns the list's
// size. Over an empty range a comprehension's loop never runs, whatever it
// does, so its result is its Result expression on the initial value: the
// macros exists and exists_one start from false, filter and map from [].
func emptyRangeGives(e ast.Expr, init func(ast.Expr) bool) (func(*activation) int, bool) {
	if e.Kind() != ast.ComprehensionKind {
		return nil, false
	}
	c := e.AsComprehension()
	r := c.Result()
	if r.Kind() != ast.IdentKind || r.AsIdent() != c.AccuVar() || !init(c.AccuInit()) {
		return nil, false
	}
	f := listSize(fieldPath(c.IterRange()))
	return f, f != nil
}

func isFalse(e ast.Expr) bool {
	if e.Kind() != ast.LiteralKind {
		return false
	}
	b, ok := e.AsLiteral().(types.Bool)
	return ok && !bool(b)
}

func isEmptyList(e ast.Expr) bool {
	return e.Kind() == ast.ListKind && len(e.AsList().Elements()) == 0
}

func callPred(call ast.CallExpr, lets map[string]ast.Expr, depth int) pred {
	args := call.Args()
	switch fn := call.FunctionName(); fn {
	case operators.LogicalOr:
		// a || b: false only when every disjunct is, so every disjunct
		// must be understood.
		var alts []pred
		for _, d := range disjuncts(call, nil) {
			p := predFor(d, lets, depth+1)
			if p == nil {
				return nil
			}
			alts = append(alts, p)
		}
		return func(a *activation) bool {
			for _, p := range alts {
				if p(a) {
					return true
				}
			}
			return false
		}
	case operators.LogicalNot:
		if len(args) != 1 {
			return nil
		}
		return notPred(args[0])
	case operators.In:
		if len(args) != 2 {
			return nil
		}
		// "lit" in action.kinds
		if s, ok := stringConst(args[0]); ok {
			if f := stringList(fieldPath(args[1])); f != nil {
				return func(a *activation) bool { return slices.Contains(f(a), s) }
			}
		}
		// action.kind in ["read", "fetch"]
		if f := stringField(fieldPath(args[0])); f != nil {
			if lits, ok := stringConsts(args[1]); ok {
				return func(a *activation) bool { return slices.Contains(lits, f(a)) }
			}
		}
	case operators.Equals, operators.NotEquals:
		if len(args) != 2 {
			return nil
		}
		want := fn == operators.Equals
		for i := range 2 {
			// action.kind == "pay", "shell" != action.family
			if f := stringField(fieldPath(args[i])); f != nil {
				if s, ok := stringConst(args[1-i]); ok {
					return func(a *activation) bool { return (f(a) == s) == want }
				}
			}
		}
		// size(x) == 0, size(x) != 0
		if n, exact, ok := sizeOf(args[0], lets, depth); ok && isZero(args[1]) && (exact || !want) {
			return func(a *activation) bool { return (n(a) == 0) == want }
		}
	case operators.Greater:
		// size(x) > 0
		if len(args) == 2 {
			if n, _, ok := sizeOf(args[0], lets, depth); ok && isZero(args[1]) {
				return func(a *activation) bool { return n(a) > 0 }
			}
		}
	case operators.Less:
		// 0 < size(x)
		if len(args) == 2 {
			if n, _, ok := sizeOf(args[1], lets, depth); ok && isZero(args[0]) {
				return func(a *activation) bool { return n(a) > 0 }
			}
		}
	}
	return nil
}

// notPred reads !x for the shapes whose negation is plain: a boolean
// field, and a string field in a list of literals.
func notPred(e ast.Expr) pred {
	switch e.Kind() {
	case ast.SelectKind:
		if f := boolField(fieldPath(e)); f != nil {
			return func(a *activation) bool { return !f(a) }
		}
	case ast.CallKind:
		// !(action.kind in ["read", "fetch"])
		in := e.AsCall()
		if in.FunctionName() != operators.In || len(in.Args()) != 2 {
			return nil
		}
		f := stringField(fieldPath(in.Args()[0]))
		lits, ok := stringConsts(in.Args()[1])
		if f == nil || !ok {
			return nil
		}
		return func(a *activation) bool { return !slices.Contains(lits, f(a)) }
	}
	return nil
}

// all holds when each of ps does.
func all(ps []pred) pred {
	return func(a *activation) bool {
		for _, p := range ps {
			if !p(a) {
				return false
			}
		}
		return true
	}
}

// disjuncts flattens a chain of `||`.
func disjuncts(c ast.CallExpr, out []ast.Expr) []ast.Expr {
	for _, arg := range c.Args() {
		if arg.Kind() == ast.CallKind && arg.AsCall().FunctionName() == operators.LogicalOr {
			out = disjuncts(arg.AsCall(), out)
			continue
		}
		out = append(out, arg)
	}
	return out
}

// sizeOf reads size(x) (or x.size()) of a list the guard knows. exact is
// false when x is derived from the list (a filter or map of it, directly
// or through a let): its size is then 0 when the list's is, and only a
// test that the size is positive may be read off it.
func sizeOf(e ast.Expr, lets map[string]ast.Expr, depth int) (n func(*activation) int, exact, ok bool) {
	if e.Kind() != ast.CallKind {
		return nil, false, false
	}
	c := e.AsCall()
	if c.FunctionName() != "size" {
		return nil, false, false
	}
	var target ast.Expr
	switch {
	case c.IsMemberFunction() && len(c.Args()) == 0:
		target = c.Target()
	case !c.IsMemberFunction() && len(c.Args()) == 1:
		target = c.Args()[0]
	default:
		return nil, false, false
	}
	for target.Kind() == ast.IdentKind && depth < maxGuardDepth {
		le, ok := lets[target.AsIdent()]
		if !ok {
			break
		}
		target, depth = le, depth+1
	}
	if f := listSize(fieldPath(target)); f != nil {
		return f, true, true
	}
	if f, ok := emptyRangeGives(target, isEmptyList); ok {
		return f, false, true
	}
	return nil, false, false
}

func isZero(e ast.Expr) bool {
	if e.Kind() != ast.LiteralKind {
		return false
	}
	switch v := e.AsLiteral().(type) {
	case types.Int:
		return v == 0
	case types.Uint:
		return v == 0
	}
	return false
}

// fieldPath returns the path a select chain reads from a variable
// ("action.kind", "action.effects.public"), or "" for anything else
// (presence tests included).
func fieldPath(e ast.Expr) string {
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent()
	case ast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return ""
		}
		if p := fieldPath(sel.Operand()); p != "" {
			return p + "." + sel.FieldName()
		}
	}
	return ""
}

func stringConst(e ast.Expr) (string, bool) {
	if e.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

// stringConsts reads a list literal of strings.
func stringConsts(e ast.Expr) ([]string, bool) {
	if e.Kind() != ast.ListKind {
		return nil, false
	}
	var lits []string
	for _, el := range e.AsList().Elements() {
		s, ok := stringConst(el)
		if !ok {
			return nil, false
		}
		lits = append(lits, s)
	}
	return lits, true
}

// allows reports whether the input can satisfy the guard; false means the
// rule cannot fire.
func (g *guard) allows(a *activation) bool {
	for _, p := range g.preds {
		if !p(a) {
			return false
		}
	}
	return true
}
