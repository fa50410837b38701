package policy

import (
	"fmt"
	"iter"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/action"
)

// Error is a problem found while loading policy files: where it is and what
// is wrong. Load and Builtin return them, joined when there are several.
type Error struct {
	File   string
	Line   int // 1-based; 0 when the problem has no position
	Column int // 1-based; 0 when unknown
	Rule   string
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Rule != "" {
		fmt.Fprintf(&b, "rule %q: ", e.Rule)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// maxErrors caps how many problems one load reports; past it, a file is
// usually not a policy file at all and more lines would not help.
const maxErrors = 20

// ruleNameRE is what a rule name may look like. ':' is reserved for the
// "default:<kind>" pseudo-rule that verdicts name when no rule fired.
var ruleNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// builtinPrefix starts the name of every rule of the built-in pack and of no
// operator rule, so a verdict shows at a glance whose rule decided.
const builtinPrefix = "builtin."

// sourceFile is one policy file as read, before compiling.
type sourceFile struct {
	name    string // as shown in errors: a path, or builtin/<file>
	lines   []string
	builtin bool

	lets     []sourceLet
	extends  []sourceLet // extend: list lets of any file grown by this one (load.go)
	rules    []sourceRule
	defaults []sourceDefault
	disable  []sourceRef
	// sequences are the file's sequence rules (sequence.go).
	sequences []sourceSequence
}

// sourceLet is a named expression that later rules can use like a variable.
type sourceLet struct {
	name string
	key  *yaml.Node
	expr *yaml.Node
}

type sourceRule struct {
	pos         position // the rule's mapping
	name        string
	namePos     position
	description string
	effect      Effect
	when        *yaml.Node
	whenKey     *yaml.Node
	reason      *yaml.Node // nil when the rule has none
	reasonKey   *yaml.Node
	ask         askOptions // judge: and approval_timeout: (ask.go)
}

type sourceDefault struct {
	kind   action.Kind
	effect Effect
	pos    position
}

type sourceRef struct {
	name string
	pos  position
}

// errs collects load errors up to maxErrors.
type errs struct{ list []error }

func (e *errs) add(file string, p position, rule, format string, args ...any) {
	if len(e.list) < maxErrors {
		e.list = append(e.list, &Error{File: file, Line: p.line, Column: p.col, Rule: rule, Msg: fmt.Sprintf(format, args...)})
	}
}

func (e *errs) full() bool { return len(e.list) >= maxErrors }

// parseFile reads one rule file strictly: unknown keys, wrong node kinds,
// missing or invalid values are errors naming the key and its position.
func parseFile(name string, src []byte, builtin bool, e *errs) *sourceFile {
	f := &sourceFile{name: name, lines: splitLines(src), builtin: builtin}
	if len(src) > maxFileSize {
		e.add(name, position{}, "", "file is %d bytes, more than the %d a policy file may have", len(src), maxFileSize)
		return f
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		line, msg := yamlErrorLine(err)
		e.add(name, position{line: line}, "", "%s", msg)
		return f
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return f // an empty file holds no rules; that is not an error
	}
	top := deref(doc.Content[0])
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return f
	}
	if top.Kind != yaml.MappingNode {
		e.add(name, nodePos(top), "", "a policy file is a mapping with rules, defaults and disable; found %s", describe(top))
		return f
	}
	for k, v := range uniqueKeys(top, func(k *yaml.Node) { e.add(name, nodePos(k), "", "key %q appears twice", k.Value) }) {
		switch k.Value {
		case "rules":
			f.parseRules(v, e)
		case "defaults":
			f.parseDefaults(v, e)
		case "disable":
			f.parseDisable(v, e)
		case "let":
			f.parseLets(v, e)
		case "extend":
			f.parseExtends(v, e)
		case "sequences":
			f.parseSequences(v, e)
		default:
			e.add(name, nodePos(k), "", "unknown key %q (a policy file has let, extend, rules, sequences, defaults and disable)", k.Value)
		}
	}
	return f
}

func (f *sourceFile) parseRules(v *yaml.Node, e *errs) {
	f.eachMapping(v, e, "rules", maxRulesPerFile, "a rule must be a mapping with name, when, effect and reason", func(item *yaml.Node) {
		if r, ok := f.parseRule(item, e); ok {
			f.rules = append(f.rules, r)
		}
	})
}

// eachMapping walks a top-level list of mappings (rules:, sequences:):
// null is empty, anything but a list of at most limit mappings is an error
// naming the list (plural) or the item (shape says what one must hold).
func (f *sourceFile) eachMapping(v *yaml.Node, e *errs, plural string, limit int, shape string, each func(*yaml.Node)) {
	if isNull(v) {
		return
	}
	if v.Kind != yaml.SequenceNode {
		e.add(f.name, nodePos(v), "", "%s must be a list, found %s", plural, describe(v))
		return
	}
	if len(v.Content) > limit {
		e.add(f.name, nodePos(v), "", "%d %s in one file, more than %d", len(v.Content), plural, limit)
		return
	}
	for _, item := range v.Content {
		if e.full() {
			return
		}
		item = deref(item)
		if item.Kind != yaml.MappingNode {
			e.add(f.name, nodePos(item), "", "%s, found %s", shape, describe(item))
			continue
		}
		each(item)
	}
}

func (f *sourceFile) parseRule(m *yaml.Node, e *errs) (sourceRule, bool) {
	r := sourceRule{pos: nodePos(m)}
	ok := true
	r.name, r.namePos = nameOf(m)
	var effectNode *yaml.Node
	for k, v := range uniqueKeys(m, func(k *yaml.Node) {
		e.add(f.name, nodePos(k), r.name, "key %q appears twice", k.Value)
		ok = false
	}) {
		switch k.Value {
		case "name", "description", "when", "effect", "reason", "judge", "approval_timeout":
		default:
			e.add(f.name, nodePos(k), r.name, "unknown key %q (a rule has name, description, when, effect and reason; an ask rule also judge and approval_timeout)", k.Value)
			ok = false
			continue
		}
		if v.Kind != yaml.ScalarNode {
			e.add(f.name, nodePos(v), r.name, "%s must be a string, found %s", k.Value, describe(v))
			ok = false
			continue
		}
		switch k.Value {
		case "description":
			r.description = strings.TrimSpace(v.Value)
		case "when":
			r.when, r.whenKey = v, k
		case "effect":
			effectNode = v
			r.effect = Effect(v.Value)
		case "reason":
			if !isNull(v) {
				r.reason, r.reasonKey = v, k
			}
		case "judge", "approval_timeout":
			if !r.ask.parse(k.Value, v) {
				e.add(f.name, nodePos(v), r.name, "%s", r.ask.err)
				ok = false
			}
		}
	}
	if !f.checkName(e, "rule", r.name, r.pos, r.namePos, "; rename the rule (or disable the built-in one with `disable:`)") {
		ok = false
	}
	if r.when == nil || isNull(r.when) || strings.TrimSpace(r.when.Value) == "" {
		e.add(f.name, r.pos, r.name, "rule has no condition (when)")
		ok = false
	}
	switch {
	case effectNode == nil || isNull(effectNode):
		e.add(f.name, r.pos, r.name, "rule has no effect (allow, deny or ask)")
		ok = false
	case !r.effect.Valid():
		e.add(f.name, nodePos(effectNode), r.name, "effect %q is not allow, deny or ask", effectNode.Value)
		ok = false
	case r.ask.set() && r.effect != Ask:
		e.add(f.name, r.pos, r.name, "judge and approval_timeout are for rules whose effect is ask")
		ok = false
	}
	return r, ok
}

// checkName reports a rule's or a sequence's name (what says which) that
// is missing, malformed, or on the wrong side of the built-in prefix;
// reservedHint follows the error of a file that takes the built-in prefix.
func (f *sourceFile) checkName(e *errs, what, name string, pos, namePos position, reservedHint string) bool {
	switch {
	case name == "":
		e.add(f.name, pos, "", "%s has no name", what)
	case !ruleNameRE.MatchString(name):
		e.add(f.name, namePos, name, "bad %s name: use letters, digits, '.', '-' and '_', at most 128 characters", what)
	case f.builtin && !strings.HasPrefix(name, builtinPrefix):
		e.add(f.name, namePos, name, "built-in %s names start with %q", what, builtinPrefix)
	case !f.builtin && strings.HasPrefix(name, builtinPrefix):
		e.add(f.name, namePos, name, "the %q prefix is reserved for the built-in pack%s", builtinPrefix, reservedHint)
	default:
		return true
	}
	return false
}

// letNameRE is what a let name may look like: a CEL identifier.
var letNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,63}$`)

// reservedNames cannot be let names: the variables, and CEL's reserved words.
var reservedNames = map[string]bool{
	"call": true, "action": true, "mandate": true, "scope": true, "session": true, "agent": true, "baseline": true,
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true,
	"let": true, "loop": true, "package": true, "namespace": true, "return": true, "var": true,
	"void": true, "while": true, "cel": true, "has": true, "dyn": true, "flow": true, "self": true,
	"steps": true, "this": true,
}

func (f *sourceFile) parseLets(v *yaml.Node, e *errs) {
	f.lets = f.parseNamedExprs(v, e, "let", true, "let must be a mapping of name to CEL expression", "a CEL expression", f.lets)
}

// parseExtends reads `extend:`, a mapping of a list let's name (defined in
// this file or any other) to a CEL list whose items are added to it.
func (f *sourceFile) parseExtends(v *yaml.Node, e *errs) {
	f.extends = f.parseNamedExprs(v, e, "extend", false, "extend must be a mapping of a let's name to a CEL list to add to it", "a CEL list", f.extends)
}

// parseNamedExprs is the walk `let:` and `extend:` share: a mapping of a
// CEL identifier to a non-empty scalar CEL expression, each appended to
// into. A let defines its name (defines), so it may not be a reserved
// one; an extend names a let that exists.
func (f *sourceFile) parseNamedExprs(v *yaml.Node, e *errs, what string, defines bool, notMapping, want string, into []sourceLet) []sourceLet {
	if !f.mapping(v, e, notMapping) {
		return into
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], deref(v.Content[i+1])
		switch {
		case !letNameRE.MatchString(k.Value):
			e.add(f.name, nodePos(k), "", "%s: bad name %q: use lower-case letters, digits and '_'", what, k.Value)
		case defines && reservedNames[k.Value]:
			e.add(f.name, nodePos(k), "", "let: %q is reserved", k.Value)
		case val.Kind != yaml.ScalarNode || isNull(val) || strings.TrimSpace(val.Value) == "":
			e.add(f.name, nodePos(val), "", "%s: %s must be %s, found %s", what, k.Value, want, describe(val))
		default:
			into = append(into, sourceLet{name: k.Value, key: k, expr: val})
		}
	}
	return into
}

func (f *sourceFile) parseDefaults(v *yaml.Node, e *errs) {
	if !f.mapping(v, e, "defaults must be a mapping of kind to effect") {
		return
	}
	for k, val := range uniqueKeys(v, func(k *yaml.Node) { e.add(f.name, nodePos(k), "", "defaults: kind %q appears twice", k.Value) }) {
		kind := action.Kind(k.Value)
		switch {
		case !kind.Valid():
			e.add(f.name, nodePos(k), "", "defaults: %q is not a kind (want one of %s)", k.Value, kindList())
		case val.Kind != yaml.ScalarNode || !Effect(val.Value).Valid():
			e.add(f.name, nodePos(val), "", "defaults: effect for %s must be allow, deny or ask, found %s", k.Value, describe(val))
		default:
			f.defaults = append(f.defaults, sourceDefault{kind: kind, effect: Effect(val.Value), pos: nodePos(k)})
		}
	}
}

// mapping reports whether v is a mapping to walk: null is an empty one,
// and anything else is an error (want says what it must be).
func (f *sourceFile) mapping(v *yaml.Node, e *errs, want string) bool {
	if isNull(v) {
		return false
	}
	if v.Kind != yaml.MappingNode {
		e.add(f.name, nodePos(v), "", "%s, found %s", want, describe(v))
		return false
	}
	return true
}

// uniqueKeys yields a mapping's keys with their values, in order; a key
// that appears again is given to dup instead.
func uniqueKeys(m *yaml.Node, dup func(k *yaml.Node)) iter.Seq2[*yaml.Node, *yaml.Node] {
	return func(yield func(k, v *yaml.Node) bool) {
		seen := map[string]bool{}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], deref(m.Content[i+1])
			if seen[k.Value] {
				dup(k)
				continue
			}
			seen[k.Value] = true
			if !yield(k, v) {
				return
			}
		}
	}
}

// nameOf reads a rule's or a sequence's name before its other keys, so
// that every error about them can say which one it is in: the name (""
// unless a string) and where its value stands.
func nameOf(m *yaml.Node) (name string, pos position) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "name" {
			v := deref(m.Content[i+1])
			pos = nodePos(v)
			if v.Kind == yaml.ScalarNode && !isNull(v) {
				name = v.Value
			}
		}
	}
	return name, pos
}

func (f *sourceFile) parseDisable(v *yaml.Node, e *errs) {
	if isNull(v) {
		return
	}
	if v.Kind != yaml.SequenceNode {
		e.add(f.name, nodePos(v), "", "disable must be a list of rule names, found %s", describe(v))
		return
	}
	for _, item := range v.Content {
		item = deref(item)
		if item.Kind != yaml.ScalarNode || isNull(item) || item.Value == "" {
			e.add(f.name, nodePos(item), "", "disable: entries are rule names, found %s", describe(item))
			continue
		}
		f.disable = append(f.disable, sourceRef{name: item.Value, pos: nodePos(item)})
	}
}

// yamlLineRE finds the line yaml.v3 puts in its syntax errors.
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlErrorLine splits a yaml.v3 syntax error into its line (0 if none)
// and message, so it can be reported as file:line like every other error.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			return n, "YAML: " + msg[len(m[0]):]
		}
	}
	return 0, "YAML: " + strings.TrimPrefix(msg, "yaml: ")
}

// deref follows a YAML alias to the node it names. Policy files rarely use
// anchors, but a valid YAML document must not be misread because of them.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// describe names a node's kind for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("%q", truncate(n.Value, 40))
	}
	return "an empty node"
}

func kindList() string {
	ks := action.AllKinds()
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
