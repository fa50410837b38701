package policy

// Sequence rules: ordered steps over the calls of a session, a delegation
// tree or an agent, shaped like EQL sequences and Sigma correlations. Each
// step is a CEL condition over the call (the variables rules see, plus
// `steps`, the calls that matched the earlier steps, and `this`, the call
// itself in the same shape). The last step is evaluated before its call
// runs, so the call that would complete a sequence is the one stopped.

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"go.yaml.in/yaml/v3"
)

// By is what a sequence groups calls by.
type By string

// The groupings.
const (
	BySession By = "session" // the calls of one session
	ByTree    By = "tree"    // the calls of a session and every session delegated from it
	ByAgent   By = "agent"   // the calls of one agent, across its sessions
)

// Bounds of one sequence.
const (
	maxSteps          = 8
	maxStepCount      = 64
	maxWithinCalls    = 10_000
	maxSequencesTotal = 256
)

// stepNameRE is what a step name may look like: a CEL identifier, so that
// `steps.denied` reads it.
var stepNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,31}$`)

// sourceSequence is one parsed sequence rule.
type sourceSequence struct {
	pos         position
	name        string
	namePos     position
	description string
	by          By
	withinCalls int
	withinTime  time.Duration
	within      string
	steps       []sourceStep
	effect      Effect
	reason      *yaml.Node
	reasonKey   *yaml.Node
}

type sourceStep struct {
	pos     position
	name    string
	when    *yaml.Node
	whenKey *yaml.Node
	count   int
	decided []Effect
}

// sequence is one compiled sequence rule.
type sequence struct {
	name        string
	description string
	by          By
	withinCalls int
	withinTime  time.Duration
	within      string
	steps       []step
	effect      Effect
	reason      reasonTemplate
	file        string
	line        int
	// empty is the match no call has started yet.
	empty *chain
	// readsMeta: a step's condition may read a matched call's decision
	// id, time or effect, so matches differing only in them are
	// kept apart (chainKey).
	readsMeta bool
}

// metaRE finds the StepCall fields chainKey leaves out by default, as
// words anywhere in a condition (a string literal too: erring towards
// keeping matches apart).
var metaRE = regexp.MustCompile(`\b(decision_id|at|effect)\b`)

type step struct {
	name    string
	when    string
	prg     program
	count   int
	decided []Effect
	// guard, when not nil, is checked in Go before the step's CEL runs
	// against any match (sequence_guard.go).
	guard *guard
}

func (f *sourceFile) parseSequences(v *yaml.Node, e *errs) {
	f.eachMapping(v, e, "sequences", maxSequencesTotal, "a sequence must be a mapping with name, steps, effect and reason", func(item *yaml.Node) {
		if s, ok := f.parseSequence(item, e); ok {
			f.sequences = append(f.sequences, s)
		}
	})
}

func (f *sourceFile) parseSequence(m *yaml.Node, e *errs) (sourceSequence, bool) {
	s := sourceSequence{pos: nodePos(m), by: BySession}
	s.name, s.namePos = nameOf(m)
	ok := true
	bad := func(n *yaml.Node, format string, args ...any) {
		e.add(f.name, nodePos(n), s.name, format, args...)
		ok = false
	}
	var effectNode, stepsNode *yaml.Node
	for k, v := range uniqueKeys(m, func(k *yaml.Node) { bad(k, "key %q appears twice", k.Value) }) {
		switch k.Value {
		case "steps":
			stepsNode = v
			continue
		case "name", "description", "by", "within", "effect", "reason":
		default:
			bad(k, "unknown key %q (a sequence has name, description, by, within, steps, effect and reason)", k.Value)
			continue
		}
		if v.Kind != yaml.ScalarNode {
			bad(v, "%s must be a string, found %s", k.Value, describe(v))
			continue
		}
		switch k.Value {
		case "description":
			s.description = strings.TrimSpace(v.Value)
		case "by":
			switch By(v.Value) {
			case BySession, ByTree, ByAgent:
				s.by = By(v.Value)
			default:
				bad(v, "by %q: want session, tree or agent", v.Value)
			}
		case "within":
			if err := s.parseWithin(v.Value); err != nil {
				bad(v, "within: %v", err)
			}
		case "effect":
			effectNode = v
			s.effect = Effect(v.Value)
		case "reason":
			if !isNull(v) {
				s.reason, s.reasonKey = v, k
			}
		}
	}
	if !f.checkName(e, "sequence", s.name, s.pos, s.namePos, "") {
		ok = false
	}
	switch {
	case effectNode == nil || isNull(effectNode):
		e.add(f.name, s.pos, s.name, "sequence has no effect (deny or ask)")
		ok = false
	case s.effect != Deny && s.effect != Ask:
		// A sequence that allows would let a history widen the grant.
		bad(effectNode, "effect %q: a sequence denies or asks", effectNode.Value)
	}
	switch {
	case stepsNode == nil:
		e.add(f.name, s.pos, s.name, "sequence has no steps")
		ok = false
	case stepsNode.Kind != yaml.SequenceNode || len(stepsNode.Content) == 0:
		bad(stepsNode, "steps must be a non-empty list of steps, found %s", describe(stepsNode))
	case len(stepsNode.Content) > maxSteps:
		bad(stepsNode, "%d steps, more than %d", len(stepsNode.Content), maxSteps)
	default:
		names := map[string]bool{}
		for i, item := range stepsNode.Content {
			st, sok := f.parseStep(s.name, i, deref(item), e)
			if !sok {
				ok = false
				continue
			}
			if names[st.name] {
				e.add(f.name, st.pos, s.name, "step %d: name %q is used twice", i+1, st.name)
				ok = false
				continue
			}
			names[st.name] = true
			if i == len(stepsNode.Content)-1 && len(st.decided) > 0 {
				e.add(f.name, st.pos, s.name, "step %d (%s): decided: is for earlier steps; the last step is evaluated before its call is decided", i+1, st.name)
				ok = false
			}
			s.steps = append(s.steps, st)
		}
	}
	return s, ok
}

// parseWithin reads "20 calls", "1 call", or a duration ("10m", "1h30m").
func (s *sourceSequence) parseWithin(v string) error {
	v = strings.TrimSpace(v)
	s.within = v
	if n, unit, found := strings.Cut(v, " "); found && (unit == "calls" || unit == "call") {
		c, err := strconv.Atoi(n)
		if err != nil || c < 1 || c > maxWithinCalls {
			return fmt.Errorf("%q: want a number of calls from 1 to %d", v, maxWithinCalls)
		}
		s.withinCalls = c
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: want \"N calls\" or a duration such as 10m", v)
	}
	s.withinTime = d
	return nil
}

func (f *sourceFile) parseStep(seq string, i int, m *yaml.Node, e *errs) (sourceStep, bool) {
	st := sourceStep{pos: nodePos(m), name: "step" + strconv.Itoa(i+1), count: 1}
	if m.Kind != yaml.MappingNode {
		e.add(f.name, nodePos(m), seq, "step %d must be a mapping with when (and name, count, decided), found %s", i+1, describe(m))
		return st, false
	}
	ok := true
	bad := func(n *yaml.Node, format string, args ...any) {
		e.add(f.name, nodePos(n), seq, "step %d: "+format, append([]any{i + 1}, args...)...)
		ok = false
	}
	for k, v := range uniqueKeys(m, func(k *yaml.Node) { bad(k, "key %q appears twice", k.Value) }) {
		switch k.Value {
		case "name":
			if v.Kind != yaml.ScalarNode || !stepNameRE.MatchString(v.Value) || v.Value == "this" {
				bad(v, "bad step name %s: use lower-case letters, digits and '_' (not \"this\")", describe(v))
				continue
			}
			st.name = v.Value
		case "when":
			if v.Kind != yaml.ScalarNode || isNull(v) || strings.TrimSpace(v.Value) == "" {
				bad(v, "when must be a CEL condition, found %s", describe(v))
				continue
			}
			st.when, st.whenKey = v, k
		case "count":
			n, err := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil || n < 1 || n > maxStepCount {
				bad(v, "count must be a number from 1 to %d, found %s", maxStepCount, describe(v))
				continue
			}
			st.count = n
		case "decided":
			items := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				items = v.Content
			}
			for _, it := range items {
				eff := Effect(deref(it).Value)
				if deref(it).Kind != yaml.ScalarNode || !eff.Valid() {
					bad(it, "decided: %s is not allow, deny or ask", describe(deref(it)))
					continue
				}
				st.decided = append(st.decided, eff)
			}
		default:
			bad(k, "unknown key %q (a step has name, when, count and decided)", k.Value)
		}
	}
	if st.when == nil && ok {
		bad(m, "no condition (when)")
	}
	return st, ok
}

// stepEnv is the environment step conditions and sequence reasons compile
// in: the rules' environment (with the lets) plus `steps` and `this`.
func stepEnv(env *cel.Env) (*cel.Env, error) {
	return env.Extend(
		cel.Variable("steps", cel.MapType(cel.StringType, cel.ListType(cel.ObjectType(stepCallType)))),
		cel.Variable("this", cel.ObjectType(stepCallType)),
	)
}

// compileSequence compiles a parsed sequence, reporting a bad step at its
// file, sequence, step and position.
func (c *compiler) compileSequence(f *sourceFile, ss sourceSequence, e *errs) (*sequence, bool) {
	env, err := stepEnv(c.env)
	if err != nil {
		e.add(f.name, ss.pos, ss.name, "%v", err)
		return nil, false
	}
	q := &sequence{
		name: ss.name, description: ss.description, by: ss.by, withinCalls: ss.withinCalls, withinTime: ss.withinTime,
		within: ss.within, effect: ss.effect, file: f.name, line: ss.pos.line,
		empty: &chain{calls: [][]StepCall{nil}},
	}
	ok := true
	saved := c.env
	c.env = env
	defer func() { c.env = saved }()
	for i, st := range ss.steps {
		ast, iss := env.Compile(st.when.Value)
		if iss.Err() != nil {
			for _, ce := range iss.Errors() {
				off := lineColOffset(st.when.Value, ce.Location.Line(), ce.Location.Column())
				e.add(f.name, scalarPos(f.lines, st.whenKey.Column, st.when, off), ss.name, "step %d (%s): when: %s", i+1, st.name, ce.Message)
			}
			ok = false
			continue
		}
		if !ast.OutputType().IsExactType(cel.BoolType) {
			e.add(f.name, nodePos(st.when), ss.name, "step %d (%s): when: the condition must be a bool, but it is %s", i+1, st.name, ast.OutputType())
			ok = false
			continue
		}
		prg, pok := c.program(ast, f, ss.name, nodePos(st.when), e)
		if !pok {
			ok = false
			continue
		}
		earlier := ss.steps[:i]
		safe := func(name string, k int64) bool {
			j := slices.IndexFunc(earlier, func(o sourceStep) bool { return o.name == name })
			return j >= 0 && k >= 0 && k < int64(earlier[j].count)
		}
		q.readsMeta = q.readsMeta || metaRE.MatchString(st.when.Value)
		q.steps = append(q.steps, step{name: st.name, when: strings.TrimSpace(st.when.Value), prg: prg, count: st.count, decided: st.decided,
			guard: stepGuardFor(ast.NativeRep().Expr(), c.letExprs, safe)})
	}
	if ss.reason == nil {
		text := ss.description
		if text == "" {
			text = "sequence " + ss.name + " completed"
		}
		q.reason = reasonTemplate{parts: []reasonPart{{text: text}}}
		return q, ok
	}
	r := &rule{}
	if !c.compileReason(f, ss.name, ss.reason, ss.reasonKey, &r.reason, e) {
		ok = false
	}
	q.reason = r.reason
	return q, ok
}
