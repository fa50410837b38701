package policy

import (
	"slices"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
)

// Guards of sequence steps. A step's condition is read like a rule's
// (guard.go): the conjuncts of its top-level `&&` that test plain facts
// become Go predicates, checked once per call and step before any partial
// match's CEL runs — a step whose guard fails is skipped for every match
// waiting at it. A step additionally sees `this`, the call summarised
// (StepCall), whose fields the guard reads here, and `steps`, which a
// guard never reads: so a step's guard depends on the call alone, not on
// the match, and one evaluation serves every match.

// The fields of `this` a guard can read (TestStepGuardFieldsMatchCEL checks
// each against CEL).
var (
	stepBoolFields = map[string]func(*activation) bool{
		"this.sensitive": func(a *activation) bool { return a.stepCall.Sensitive },
	}
	stepStringFields = map[string]func(*activation) string{
		"this.tool": func(a *activation) string { return a.stepCall.Tool },
		"this.kind": func(a *activation) string { return a.stepCall.Kind },
	}
	stepStringLists = map[string]func(*activation) []string{
		"this.kinds":    func(a *activation) []string { return a.stepCall.Kinds },
		"this.programs": func(a *activation) []string { return a.stepCall.Programs },
		"this.reads":    func(a *activation) []string { return a.stepCall.Reads },
		"this.hosts":    func(a *activation) []string { return a.stepCall.Hosts },
	}
	stepListSizes = map[string]func(*activation) int{
		"this.kinds":    func(a *activation) int { return len(a.stepCall.Kinds) },
		"this.programs": func(a *activation) int { return len(a.stepCall.Programs) },
		"this.reads":    func(a *activation) int { return len(a.stepCall.Reads) },
		"this.hosts":    func(a *activation) int { return len(a.stepCall.Hosts) },
		"this.targets":  func(a *activation) int { return len(a.stepCall.Targets) },
	}
)

// The lookups guard.go makes: the rules' facts, then `this`. Rules are
// compiled without `this`, so their conditions never name a field of it.
func boolField(path string) func(*activation) bool {
	return fieldOf(path, boolFields, stepBoolFields)
}

func stringField(path string) func(*activation) string {
	return fieldOf(path, stringFields, stepStringFields)
}

func stringList(path string) func(*activation) []string {
	return fieldOf(path, stringLists, stepStringLists)
}

func listSize(path string) func(*activation) int {
	return fieldOf(path, listSizes, stepListSizes)
}

// fieldOf is the reader of path among the rules' facts, else among the
// step's, or nil.
func fieldOf[F any](path string, rules, step map[string]F) F {
	if f, ok := rules[path]; ok {
		return f
	}
	return step[path]
}

// existsMember reads `xs.exists(x, x == "lit")` and `xs.exists(x, x in
// ["a", "b"])` over a string list the guard knows: the comprehension's
// exact value, since neither test can fail on a string.
func existsMember(e ast.Expr) pred {
	if e.Kind() != ast.ComprehensionKind {
		return nil
	}
	c := e.AsComprehension()
	list := stringList(fieldPath(c.IterRange()))
	if list == nil || !isFalse(c.AccuInit()) || c.Result().Kind() != ast.IdentKind || c.Result().AsIdent() != c.AccuVar() {
		return nil
	}
	// The exists macro's step is `accu || cond`.
	st := c.LoopStep()
	if st.Kind() != ast.CallKind || st.AsCall().FunctionName() != operators.LogicalOr || len(st.AsCall().Args()) != 2 {
		return nil
	}
	args := st.AsCall().Args()
	if args[0].Kind() != ast.IdentKind || args[0].AsIdent() != c.AccuVar() {
		return nil
	}
	lits, ok := memberTest(args[1], c.IterVar())
	if !ok {
		return nil
	}
	return func(a *activation) bool {
		return slices.ContainsFunc(list(a), func(s string) bool { return slices.Contains(lits, s) })
	}
}

// memberTest reads `v == "lit"`, `"lit" == v` or `v in [lits]` for the
// iteration variable v, returning the literals.
func memberTest(e ast.Expr, v string) ([]string, bool) {
	if e.Kind() != ast.CallKind {
		return nil, false
	}
	call := e.AsCall()
	args := call.Args()
	if len(args) != 2 {
		return nil, false
	}
	isVar := func(x ast.Expr) bool { return x.Kind() == ast.IdentKind && x.AsIdent() == v }
	switch call.FunctionName() {
	case operators.Equals:
		for i := range 2 {
			if s, ok := stringConst(args[1-i]); ok && isVar(args[i]) {
				return []string{s}, true
			}
		}
	case operators.In:
		if isVar(args[0]) {
			return stringConsts(args[1])
		}
	}
	return nil, false
}

// stepGuardFor builds a step's guard: the rules' conjuncts, and `x in
// xs` over a list the guard knows, false when xs is empty — for an x that
// cannot fail to evaluate: a literal, a fact, or a field of an earlier
// step's call by an index below that step's count (safe says which), as
// `steps.read[0].decision_id in flow.carries`.
func stepGuardFor(e ast.Expr, lets map[string]ast.Expr, safe func(step string, i int64) bool) *guard {
	g := &guard{preds: conjunctPreds(e, lets, 0)}
	for _, c := range conjuncts(e, nil) {
		if c.Kind() != ast.CallKind || c.AsCall().FunctionName() != operators.In || len(c.AsCall().Args()) != 2 {
			continue
		}
		args := c.AsCall().Args()
		n := listSize(fieldPath(args[1]))
		if n == nil || !totalOperand(args[0], safe) {
			continue
		}
		if stringList(fieldPath(args[1])) != nil {
			if _, lit := stringConst(args[0]); lit {
				continue // read exactly by callPred already
			}
		}
		g.preds = append(g.preds, func(a *activation) bool { return n(a) > 0 })
	}
	if len(g.preds) == 0 {
		return nil
	}
	return g
}

// totalOperand: e evaluates without error — a literal, a field the guard
// reads (an object's declared field), or a field of steps.<name>[<i>] with
// i safe for that step.
func totalOperand(e ast.Expr, safe func(string, int64) bool) bool {
	switch e.Kind() {
	case ast.LiteralKind:
		return true
	case ast.SelectKind:
		if p := fieldPath(e); p != "" {
			return boolField(p) != nil || stringField(p) != nil
		}
		return totalSelect(e, safe)
	}
	return false
}

// totalSelect: e is x.f…, where x is steps.<name>[<i>] with i safe.
func totalSelect(e ast.Expr, safe func(string, int64) bool) bool {
	for e.Kind() == ast.SelectKind && !e.AsSelect().IsTestOnly() {
		e = e.AsSelect().Operand()
	}
	if e.Kind() != ast.CallKind || e.AsCall().FunctionName() != operators.Index || len(e.AsCall().Args()) != 2 {
		return false
	}
	list, idx := e.AsCall().Args()[0], e.AsCall().Args()[1]
	if list.Kind() != ast.SelectKind || list.AsSelect().IsTestOnly() {
		return false
	}
	root := list.AsSelect().Operand()
	if root.Kind() != ast.IdentKind || root.AsIdent() != "steps" || idx.Kind() != ast.LiteralKind {
		return false
	}
	i, ok := idx.AsLiteral().Value().(int64)
	return ok && safe(list.AsSelect().FieldName(), i)
}
