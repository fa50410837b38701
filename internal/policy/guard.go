package policy

import (
	"slices"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
)

// A guard is a precondition read off a rule's condition at compile time:
// the conjuncts of its top-level `&&` chain that test the action's kind or
// one of its boolean flags ("pay" in action.kinds, action.kind ==
// "unknown", !(action.kind in ["read", "fetch"]), action.destructive,
// action.effects.public). Evaluate checks the guard in Go before running
// the rule's program, and skips the program when the guard fails: most
// rules concern a few kinds, and most calls are none of them. A false
// conjunct makes a CEL conjunction false whatever the others do (errors
// included), so skipping never changes a verdict; conjuncts of any other
// shape are left to CEL.
type guard struct {
	kindsHave []string // each must be among action.kinds
	kindIs    string   // action.kind must be this, when set
	kindNotIn []string // action.kind must be none of these
	flags     []func(*actionView) bool
}

// boolFields are the action's boolean fields a guard can test, by their
// path below `action`.
var boolFields = map[string]func(*actionView) bool{
	"destructive":          func(a *actionView) bool { return a.Destructive },
	"sensitive":            func(a *actionView) bool { return a.Sensitive },
	"known":                func(a *actionView) bool { return a.Known },
	"effects.external":     func(a *actionView) bool { return a.Effects.External },
	"effects.irreversible": func(a *actionView) bool { return a.Effects.Irreversible },
	"effects.financial":    func(a *actionView) bool { return a.Effects.Financial },
	"effects.public":       func(a *actionView) bool { return a.Effects.Public },
	"effects.recurring":    func(a *actionView) bool { return a.Effects.Recurring },
	"effects.admin_grant":  func(a *actionView) bool { return a.Effects.AdminGrant },
}

// guardFor builds the guard of a checked condition, or nil when none of its
// top-level conjuncts has a shape it understands.
func guardFor(a *cel.Ast) *guard {
	g := &guard{}
	useful := false
	for _, c := range conjuncts(a.NativeRep().Expr(), nil) {
		if g.add(c) {
			useful = true
		}
	}
	if !useful {
		return nil
	}
	return g
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

// add records what conjunct e requires, reporting whether it could.
func (g *guard) add(e ast.Expr) bool {
	switch e.Kind() {
	case ast.SelectKind:
		if p, ok := actionPath(e); ok {
			if f := boolFields[p]; f != nil {
				g.flags = append(g.flags, f)
				return true
			}
		}
	case ast.CallKind:
		call := e.AsCall()
		args := call.Args()
		switch call.FunctionName() {
		case operators.In:
			if len(args) != 2 {
				return false
			}
			// "lit" in action.kinds
			if s, ok := stringConst(args[0]); ok {
				if p, ok := actionPath(args[1]); ok && p == "kinds" {
					g.kindsHave = append(g.kindsHave, s)
					return true
				}
			}
		case operators.Equals:
			if len(args) != 2 {
				return false
			}
			for i := range 2 {
				if p, ok := actionPath(args[i]); ok && p == "kind" {
					if s, ok := stringConst(args[1-i]); ok && (g.kindIs == "" || g.kindIs == s) {
						g.kindIs = s
						return true
					}
				}
			}
		case operators.LogicalNot:
			// !(action.kind in ["read", "fetch"])
			if len(args) != 1 || args[0].Kind() != ast.CallKind {
				return false
			}
			in := args[0].AsCall()
			if in.FunctionName() != operators.In || len(in.Args()) != 2 {
				return false
			}
			if p, ok := actionPath(in.Args()[0]); !ok || p != "kind" {
				return false
			}
			list := in.Args()[1]
			if list.Kind() != ast.ListKind {
				return false
			}
			var lits []string
			for _, el := range list.AsList().Elements() {
				s, ok := stringConst(el)
				if !ok {
					return false
				}
				lits = append(lits, s)
			}
			g.kindNotIn = append(g.kindNotIn, lits...)
			return true
		}
	}
	return false
}

// actionPath returns the field path below the `action` variable that e
// selects ("kind", "effects.public"), without presence tests.
func actionPath(e ast.Expr) (string, bool) {
	if e.Kind() != ast.SelectKind {
		return "", false
	}
	sel := e.AsSelect()
	if sel.IsTestOnly() {
		return "", false
	}
	op := sel.Operand()
	switch op.Kind() {
	case ast.IdentKind:
		if op.AsIdent() == "action" {
			return sel.FieldName(), true
		}
	case ast.SelectKind:
		if p, ok := actionPath(op); ok {
			return p + "." + sel.FieldName(), true
		}
	}
	return "", false
}

func stringConst(e ast.Expr) (string, bool) {
	if e.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

// allows reports whether the action can satisfy the guard; false means the
// rule cannot fire.
func (g *guard) allows(a *actionView) bool {
	if g.kindIs != "" && a.Kind != g.kindIs {
		return false
	}
	if slices.Contains(g.kindNotIn, a.Kind) {
		return false
	}
	for _, k := range g.kindsHave {
		if !slices.Contains(a.Kinds, k) {
			return false
		}
	}
	for _, f := range g.flags {
		if !f(a) {
			return false
		}
	}
	return true
}
