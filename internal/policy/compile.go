package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"go.yaml.in/yaml/v3"
)

// rule is one compiled rule.
type rule struct {
	name        string
	description string
	effect      Effect
	when        string
	prg         program
	// guard, when not nil, is a precondition of the condition that
	// Evaluate checks in Go first (see guard.go).
	guard  *guard
	reason reasonTemplate
	file   string
	line   int
	ask    askOptions
}

// let is a compiled named expression; rules use it like a variable.
type let struct {
	name string
	expr string
	prg  program
}

// compiler holds the environment rules are compiled in, which grows a
// variable with each let, and what is known of the lets' sizes.
type compiler struct {
	env  *cel.Env
	lets map[string]letEstimate
	// letExprs are the lets' checked expressions, for guards (guard.go).
	letExprs map[string]ast.Expr
	// costs charges the custom functions in tracked programs.
	costs *actualCost
	// extends are the `extend:` entries of all files, by the let they
	// extend, in file order.
	extends map[string][]extension
}

// compileLet compiles a let and extends the environment with it as a
// variable of the expression's type, so later rules are type-checked
// against it like against any other variable.
func (c *compiler) compileLet(f *sourceFile, sl sourceLet, e *errs) (*let, bool) {
	env := c.env
	ast, iss := env.Compile(sl.expr.Value)
	if iss.Err() != nil {
		for _, ce := range iss.Errors() {
			off := lineColOffset(sl.expr.Value, ce.Location.Line(), ce.Location.Column())
			e.add(f.name, scalarPos(f.lines, sl.key.Column, sl.expr, off), "", "let %s: %s", sl.name, ce.Message)
		}
		return nil, false
	}
	expr := strings.TrimSpace(sl.expr.Value)
	if exts := c.extends[sl.name]; len(exts) > 0 {
		var ok bool
		if ast, expr, ok = c.extendLet(sl.name, ast, expr, exts, e); !ok {
			return nil, false
		}
	}
	prg, ok := c.program(ast, f, "", nodePos(sl.expr), e)
	if !ok {
		return nil, false
	}
	next, err := env.Extend(cel.Variable(sl.name, ast.OutputType()))
	if err != nil {
		e.add(f.name, nodePos(sl.key), "", "let %s: %v", sl.name, err)
		return nil, false
	}
	c.env = next
	c.lets[sl.name] = letSize(ast)
	c.letExprs[sl.name] = ast.NativeRep().Expr()
	return &let{name: sl.name, expr: expr, prg: prg}, true
}

// extension is an `extend:` entry: a CEL list, in the file that gives it,
// whose items are added to a list let defined anywhere.
type extension struct {
	file *sourceFile
	sl   sourceLet
}

// extendLet adds the items of each extension to the list let name (ast,
// its checked expression expr): the let becomes `(expr) + (ext) + …`,
// compiled where the let is defined, so every rule and let that uses it —
// in earlier files too, and the built-in pack — sees the longer list and
// is estimated against it. An operator adds words to a built-in list
// without copying it. Each extension must itself be a list of the let's
// type, checked in its own file at its own position.
func (c *compiler) extendLet(name string, base *cel.Ast, expr string, exts []extension, e *errs) (*cel.Ast, string, bool) {
	want := base.OutputType()
	if want.Kind() != types.ListKind {
		for _, x := range exts {
			e.add(x.file.name, nodePos(x.sl.key), "", "extend %s: the let is %s, not a list", name, want)
		}
		return nil, "", false
	}
	ok := true
	combined := "(" + expr + ")"
	for _, x := range exts {
		a, iss := c.env.Compile(x.sl.expr.Value)
		if iss.Err() != nil {
			for _, ce := range iss.Errors() {
				off := lineColOffset(x.sl.expr.Value, ce.Location.Line(), ce.Location.Column())
				e.add(x.file.name, scalarPos(x.file.lines, x.sl.key.Column, x.sl.expr, off), "", "extend %s: %s", name, ce.Message)
			}
			ok = false
			continue
		}
		if !a.OutputType().IsAssignableType(want) {
			e.add(x.file.name, nodePos(x.sl.expr), "", "extend %s: adds %s to a let of type %s", name, a.OutputType(), want)
			ok = false
			continue
		}
		combined += " + (" + strings.TrimSpace(x.sl.expr.Value) + ")"
	}
	if !ok {
		return nil, "", false
	}
	a, iss := c.env.Compile(combined)
	if iss.Err() != nil || !a.OutputType().IsExactType(want) {
		x := exts[0]
		e.add(x.file.name, nodePos(x.sl.expr), "", "extend %s: the extended list does not check as %s: %v", name, want, iss.Err())
		return nil, "", false
	}
	return a, combined, true
}

// reasonTemplate is a reason with its ${…} interpolations compiled.
type reasonTemplate struct {
	src   string
	parts []reasonPart
}

// reasonPart is literal text, or (when prg is set) an expression whose value
// is formatted into the reason.
type reasonPart struct {
	text string
	prg  *program
}

// compileRule compiles a parsed rule's condition and reason, reporting
// problems at their position in the file.
func (c *compiler) compileRule(f *sourceFile, sr sourceRule, e *errs) (*rule, bool) {
	env := c.env
	r := &rule{
		name:        sr.name,
		description: sr.description,
		effect:      sr.effect,
		when:        strings.TrimSpace(sr.when.Value),
		file:        f.name,
		line:        sr.pos.line,
		ask:         sr.ask,
	}
	at := func(n, key *yaml.Node, offset int) position {
		return scalarPos(f.lines, key.Column, n, offset)
	}
	ok := true
	ast, iss := env.Compile(sr.when.Value)
	if iss.Err() != nil {
		for _, ce := range iss.Errors() {
			off := lineColOffset(sr.when.Value, ce.Location.Line(), ce.Location.Column())
			e.add(f.name, at(sr.when, sr.whenKey, off), sr.name, "when: %s", ce.Message)
		}
		ok = false
	} else if !ast.OutputType().IsExactType(cel.BoolType) {
		e.add(f.name, nodePos(sr.when), sr.name, "when: the condition must be a bool, but it is %s (compare it: `… == true`, `size(…) > 0`)", ast.OutputType())
		ok = false
	} else {
		r.prg, ok = c.program(ast, f, sr.name, nodePos(sr.when), e)
		r.guard = guardFor(ast, c.letExprs)
	}

	if sr.reason == nil {
		r.reason = reasonTemplate{parts: []reasonPart{{text: defaultReason(sr)}}}
		return r, ok
	}
	if !c.compileReason(f, sr.name, sr.reason, sr.reasonKey, &r.reason, e) {
		ok = false
	}
	return r, ok
}

// compileReason compiles a reason template's interpolations into t.
func (c *compiler) compileReason(f *sourceFile, name string, node, key *yaml.Node, t *reasonTemplate, e *errs) bool {
	env := c.env
	at := func(n, key *yaml.Node, offset int) position {
		return scalarPos(f.lines, key.Column, n, offset)
	}
	ok := true
	t.src = node.Value
	pieces, err := splitTemplate(node.Value)
	if err != nil {
		e.add(f.name, at(node, key, err.offset), name, "reason: %s", err.msg)
		return false
	}
	if n := countExprs(pieces); n > maxInterpolations {
		e.add(f.name, nodePos(node), name, "reason: %d interpolations, more than %d", n, maxInterpolations)
		return false
	}
	for _, pc := range pieces {
		if !pc.expr {
			t.parts = append(t.parts, reasonPart{text: pc.text})
			continue
		}
		ast, iss := env.Compile(pc.text)
		if iss.Err() != nil {
			for _, ce := range iss.Errors() {
				off := pc.offset + lineColOffset(pc.text, ce.Location.Line(), ce.Location.Column())
				e.add(f.name, at(node, key, off), name, "reason: ${%s}: %s", pc.text, ce.Message)
			}
			ok = false
			continue
		}
		prg, pok := c.program(ast, f, name, at(node, key, pc.offset), e)
		if !pok {
			ok = false
			continue
		}
		t.parts = append(t.parts, reasonPart{text: pc.text, prg: &prg})
	}
	return ok
}

func (c *compiler) program(a *cel.Ast, f *sourceFile, rule string, p position, e *errs) (program, bool) {
	prg, err := newProgram(c.env, a, c.lets, c.costs)
	if err != nil {
		e.add(f.name, p, rule, "%v", err)
		return program{}, false
	}
	return prg, true
}

// defaultReason is the reason of a rule that states none: its description,
// or failing that its name.
func defaultReason(sr sourceRule) string {
	if sr.description != "" {
		return sr.description
	}
	return "rule " + sr.name + " matched"
}

// templatePiece is literal text or an expression of a reason template;
// offset is where it starts in the template, in runes.
type templatePiece struct {
	text   string
	expr   bool
	offset int
}

type templateError struct {
	msg    string
	offset int
}

func countExprs(ps []templatePiece) int {
	n := 0
	for _, p := range ps {
		if p.expr {
			n++
		}
	}
	return n
}

// splitTemplate splits a reason into literal text and ${expr} pieces. "$$"
// is a literal "$". An expression ends at the "}" that balances its "${",
// skipping braces inside CEL string literals, so `${ {"a": 1}["a"] }` and
// `${xs.join("}")}` work.
func splitTemplate(s string) ([]templatePiece, *templateError) {
	var out []templatePiece
	var lit strings.Builder
	litStart := 0
	flush := func(next int) {
		if lit.Len() > 0 {
			out = append(out, templatePiece{text: lit.String(), offset: litStart})
			lit.Reset()
		}
		litStart = next
	}
	runes := []rune(s)
	for i := 0; i < len(runes); i++ {
		c := runes[i]
		if c != '$' || i+1 >= len(runes) {
			lit.WriteRune(c)
			continue
		}
		switch runes[i+1] {
		case '$':
			lit.WriteRune('$')
			i++
			continue
		case '{':
		default:
			lit.WriteRune(c)
			continue
		}
		end, err := exprEnd(runes, i+2)
		if err != nil {
			return nil, &templateError{msg: err.Error(), offset: i}
		}
		expr := string(runes[i+2 : end])
		if strings.TrimSpace(expr) == "" {
			return nil, &templateError{msg: "empty ${} interpolation", offset: i}
		}
		flush(i)
		out = append(out, templatePiece{text: expr, expr: true, offset: i + 2})
		i = end
		litStart = end + 1
	}
	flush(len(runes))
	return out, nil
}

// exprEnd returns the index of the "}" closing an interpolation whose body
// starts at start.
func exprEnd(r []rune, start int) (int, error) {
	depth := 0
	for i := start; i < len(r); i++ {
		switch c := r[i]; c {
		case '"', '\'':
			j, ok := stringEnd(r, i)
			if !ok {
				return 0, fmt.Errorf("unterminated string in ${…} interpolation")
			}
			i = j
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i, nil
			}
			depth--
		}
	}
	return 0, fmt.Errorf("unterminated ${ interpolation (no closing })")
}

// stringEnd returns the index of the quote closing the CEL string literal
// that opens at r[i], handling backslash escapes and triple quotes.
func stringEnd(r []rune, i int) (int, bool) {
	q := r[i]
	if i+2 < len(r) && r[i+1] == q && r[i+2] == q {
		for j := i + 3; j+2 < len(r); j++ {
			if r[j] == '\\' {
				j++
				continue
			}
			if r[j] == q && r[j+1] == q && r[j+2] == q {
				return j + 2, true
			}
		}
		return 0, false
	}
	for j := i + 1; j < len(r); j++ {
		switch r[j] {
		case '\\':
			j++
		case q:
			return j, true
		case '\n':
			return 0, false
		}
	}
	return 0, false
}

// truncate shortens s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
