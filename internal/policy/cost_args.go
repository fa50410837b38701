package policy

import (
	"math"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/overloads"
)

// maxArgsDepth is how deep measureArgs looks into call.args; anything
// deeper counts as too large, so the programs that read the arguments run
// tracked on it.
const maxArgsDepth = 16

// unbounded is measureArgs' answer for a value it cannot bound.
const unbounded = math.MaxInt

// measureArgs returns the longest string (in bytes, which bounds CEL's
// size in code points), list or map anywhere in v, a call's arguments as
// JSON decodes them. A value of any other type that CEL could see as a
// string, list or map, or one nested deeper than maxArgsDepth, is
// unbounded.
func measureArgs(v any, depth int) int {
	if depth > maxArgsDepth {
		return unbounded
	}
	switch x := v.(type) {
	case nil, bool, float64, float32, int, int64, int32, uint, uint64, uint32:
		return 0
	case string:
		return len(x)
	case []any:
		n := len(x)
		for _, e := range x {
			n = max(n, measureArgs(e, depth+1))
		}
		return n
	case map[string]any:
		n := len(x)
		for k, e := range x {
			n = max(n, len(k), measureArgs(e, depth+1))
		}
		return n
	case []string:
		n := len(x)
		for _, e := range x {
			n = max(n, len(e))
		}
		return n
	case map[string]string:
		n := len(x)
		for k, e := range x {
			n = max(n, len(k), len(e))
		}
		return n
	}
	return unbounded
}

// stringBound is the most bytes a string-valued let can hold on an input
// within the estimator's tier, for the forms the built-in lets use:
// string literals, conditionals, concatenations, and string() of an
// argument (call.args.x). ok is false for any other form.
func (e estimator) stringBound(x ast.Expr) (n uint64, ok bool) {
	switch x.Kind() {
	case ast.LiteralKind:
		s, ok := stringConst(x)
		return uint64(len(s)), ok
	case ast.SelectKind:
		if sel := x.AsSelect(); !sel.IsTestOnly() && isArgsPath(sel.Operand()) {
			*e.args = true
			return uint64(e.fit.args), true
		}
	case ast.CallKind:
		c := x.AsCall()
		args := c.Args()
		switch {
		case c.FunctionName() == operators.Conditional && len(args) == 3:
			a, aok := e.stringBound(args[1])
			b, bok := e.stringBound(args[2])
			return max(a, b), aok && bok
		case c.FunctionName() == operators.Add && len(args) == 2:
			a, aok := e.stringBound(args[0])
			b, bok := e.stringBound(args[1])
			return a + b, aok && bok
		case c.FunctionName() == overloads.TypeConvertString && len(args) == 1 && !c.IsMemberFunction():
			return e.stringBound(args[0])
		}
	}
	return 0, false
}

// isArgsPath reports whether x is call.args or a field of it.
func isArgsPath(x ast.Expr) bool {
	for x.Kind() == ast.SelectKind {
		sel := x.AsSelect()
		if op := sel.Operand(); op.Kind() == ast.IdentKind && op.AsIdent() == "call" {
			return sel.FieldName() == "args"
		}
		x = sel.Operand()
	}
	return false
}
