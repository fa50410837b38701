package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/flow"
)

// The CEL type names of a step's call and its targets.
const (
	stepCallType   = "policy.StepCall"
	stepTargetType = "policy.StepTarget"
)

// StepCall is a call as sequence steps see it: `this` for the call being
// decided, `steps.<name>` (a list, one entry per match of a counted step)
// for the calls that matched earlier steps.
type StepCall struct {
	// DecisionID and Effect are the decision's (empty for `this`).
	DecisionID string   `json:"decision_id"`
	Effect     string   `json:"effect"`
	SessionID  string   `json:"session_id"`
	Tool       string   `json:"tool"`
	Kind       string   `json:"kind"`
	Kinds      []string `json:"kinds"`
	// Programs are the commands' programs (rm, mv, find, git).
	Programs []string `json:"programs"`
	// Targets are what the call changes or sends to (flow.Targets), each
	// value normalised the way the session's value table keys it: a clean
	// path, a lower-case address, a host without port.
	Targets []StepTarget `json:"targets"`
	// Reads are the paths it reads; Hosts every host it reaches.
	Reads []string `json:"reads"`
	Hosts []string `json:"hosts"`
	// Sensitive: the call or one of its paths is sensitive (credentials,
	// keys, private files).
	Sensitive bool `json:"sensitive"`
	// At is when it was decided (for `this`, now).
	At time.Time `json:"at"`
}

// StepTarget is one resource a step's call acts on.
type StepTarget struct {
	// Role is path, recipient, account or host; Access, for a path, write,
	// delete or execute.
	Role   string `json:"role"`
	Value  string `json:"value"`
	Access string `json:"access,omitempty"`
}

// NewStepCall summarises a classified call for sequence steps.
func NewStepCall(a *action.Action, sessionID string, at time.Time) StepCall {
	s := StepCall{SessionID: sessionID, At: at, Kinds: []string{}, Programs: []string{}, Targets: []StepTarget{}, Reads: []string{}, Hosts: []string{}}
	if a == nil {
		return s
	}
	s.Tool, s.Kind, s.Sensitive = a.Tool, string(a.Kind), a.Sensitive
	// The four lists share one array, each with room for all it may hold
	// (at most maxStepList but the kinds): one allocation where appending
	// to each made one or more apiece.
	nk, np, nr, nh := len(a.Kinds), min(len(a.Commands), maxStepList), min(len(a.Paths), maxStepList), min(len(a.Hosts), maxStepList)
	if n := nk + np + nr + nh; n > 0 {
		buf := make([]string, 0, n)
		s.Kinds = buf[0:0:nk]
		s.Programs = buf[nk : nk : nk+np]
		s.Reads = buf[nk+np : nk+np : nk+np+nr]
		s.Hosts = buf[nk+np+nr : nk+np+nr : n]
	}
	for _, k := range a.Kinds {
		s.Kinds = append(s.Kinds, string(k))
	}
	for _, c := range a.Commands {
		if c.Name != "" && !slices.Contains(s.Programs, c.Name) && len(s.Programs) < maxStepList {
			s.Programs = append(s.Programs, c.Name)
		}
	}
	for _, p := range a.Paths {
		s.Sensitive = s.Sensitive || p.Sensitive
		if p.Access == action.Read && len(s.Reads) < maxStepList {
			s.Reads = append(s.Reads, p.Path)
		}
	}
	if targets := flow.Targets(a); len(targets) > 0 {
		s.Targets = make([]StepTarget, 0, len(targets))
		for _, t := range targets {
			s.Targets = append(s.Targets, StepTarget{Role: t.Role, Value: flow.NormTarget(t), Access: t.Access})
		}
	}
	for _, h := range a.Hosts {
		if len(s.Hosts) < maxStepList {
			s.Hosts = append(s.Hosts, strings.ToLower(h))
		}
	}
	return s
}

// maxStepList bounds a step call's programs, reads and hosts.
const maxStepList = 16

// Bounds of a group's sequence state.
const (
	// maxChains is how many partial matches one sequence keeps per group;
	// past it the one that started first is dropped.
	maxChains = 32
)

// SequenceState is the partial matches of every sequence for one group
// (a session, a delegation tree or an agent). It is safe for concurrent
// use; memory is bounded by maxChains per sequence.
type SequenceState struct {
	mu sync.Mutex
	// n counts the group's decided calls; within "N calls" is measured on it.
	n      int
	chains map[string][]*chain
}

// NewSequenceState returns an empty state.
func NewSequenceState() *SequenceState { return &SequenceState{chains: map[string][]*chain{}} }

// chain is a partial match: the calls matched so far, per step, up to
// step (the step being matched) with matched[step] calls of it so far.
type chain struct {
	start   int       // the group's call count when its first call matched
	started time.Time // when its first call was decided
	step    int
	calls   [][]StepCall
	// key identifies the calls as the steps' conditions see them
	// (sequence.chainKey): two matches with one key behave alike.
	key string
	// val is bound(q) as a CEL value, made on first use: a chain does not
	// change once stored (Commit stores a grown copy), so every later call
	// evaluated against it reuses the value.
	val atomic.Pointer[ref.Val]
}

// value is the chain's bound steps as a CEL value.
func (c *chain) value(q *sequence, adapter types.Adapter) ref.Val {
	if v := c.val.Load(); v != nil {
		return *v
	}
	v := adapter.NativeToValue(c.bound(q))
	c.val.Store(&v)
	return v
}

func (c *chain) bound(q *sequence) map[string][]StepCall {
	m := make(map[string][]StepCall, len(q.steps))
	for i, calls := range c.calls {
		m[q.steps[i].name] = calls
	}
	return m
}

// chainKey is what tells c's calls apart for the sequence's conditions:
// every field, less the decision's id, time and effect when no condition
// reads them (the reason may; it then names the newer calls).
func (q *sequence) chainKey(c *chain) string {
	var b strings.Builder
	for i, calls := range c.calls {
		b.WriteString(strconv.Itoa(i))
		for _, sc := range calls {
			if !q.readsMeta {
				sc.DecisionID, sc.Effect, sc.At = "", "", time.Time{}
			}
			j, err := json.Marshal(sc)
			if err != nil {
				// Unreachable for a struct of strings, bools and a time;
				// a unique key keeps the match apart.
				j = fmt.Appendf(nil, "%p", &calls)
			}
			b.Write(j)
		}
		b.WriteByte('|')
	}
	return b.String()
}

func (c *chain) clone() *chain {
	cp := &chain{start: c.start, started: c.started, step: c.step}
	cp.calls = make([][]StepCall, len(c.calls))
	for i := range c.calls {
		cp.calls[i] = slices.Clone(c.calls[i])
	}
	return cp
}

// expired: the chain's first call lies outside the sequence's window.
func (q *sequence) expired(c *chain, n int, now time.Time) bool {
	if q.withinCalls > 0 && n-c.start > q.withinCalls {
		return true
	}
	return q.withinTime > 0 && now.Sub(c.started) > q.withinTime
}

// SequenceGroups are the states a call belongs to, one per grouping; a nil
// one is not evaluated.
type SequenceGroups struct {
	Session, Tree, Agent *SequenceState
}

func (g *SequenceGroups) state(by By) *SequenceState {
	switch by {
	case ByTree:
		return g.Tree
	case ByAgent:
		return g.Agent
	}
	return g.Session
}

// SequenceCall is one call's part in the policy's sequences: Evaluate
// checks whether the call completes a sequence and notes which partial
// matches it would extend; Commit records them once the call is decided.
type SequenceCall struct {
	Groups SequenceGroups
	// This is the call (NewStepCall); its DecisionID and Effect are set by
	// Commit.
	This StepCall

	pending []advance
}

// advance is a partial match the call extends (base nil: a new one).
type advance struct {
	q    *sequence
	st   *SequenceState
	base *chain
	step int
}

// evalSequences checks the call against every sequence: it returns the
// sequences the call completes (with the chain completed), and notes in sc
// the partial matches it extends. A step that cannot be evaluated fails
// closed when it would complete its sequence, and extends nothing
// otherwise; both are listed in errs.
func (p *Policy) evalSequences(vars *activation, sc *SequenceCall, now time.Time) (fired []firedSequence, errs []string) {
	sc.pending = sc.pending[:0]
	vars.stepCall = &sc.This
	var this ref.Val // made on first use: most calls pass no step's guard
	var candidates []*chain
	for _, q := range p.sequences {
		st := sc.Groups.state(q.by)
		if st == nil {
			continue
		}
		// open[i] says whether step i's guard lets this call match it:
		// the guard reads the call, not the match, so it is checked once
		// for every match waiting at step i. 0: not checked yet.
		var open [maxSteps]int8
		passes := func(i int) bool {
			if open[i] == 0 {
				open[i] = 2
				if g := q.steps[i].guard; g == nil || g.allows(vars) {
					open[i] = 1
				}
			}
			return open[i] == 1
		}
		st.mu.Lock()
		candidates = append(candidates[:0], nil)
		for _, c := range st.chains[q.name] {
			if passes(c.step) {
				candidates = append(candidates, c)
			}
		}
		n := st.n
		st.mu.Unlock()
		last := len(q.steps) - 1
		for _, c := range candidates {
			base := q.empty
			if c != nil {
				if q.expired(c, n, now) {
					continue
				}
				base = c
			} else if !passes(0) {
				continue
			}
			s := q.steps[base.step]
			if this == nil {
				this = vars.p.adapter.NativeToValue(&sc.This)
			}
			vars.steps = base.value(q, vars.p.adapter)
			vars.this = this
			ok, err := s.prg.holds(vars)
			completes := base.step == last && len(base.calls[base.step])+1 >= s.count
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: step %s: %v", q.name, s.name, err))
				if completes {
					fired = append(fired, firedSequence{q: q, c: base, err: err})
				}
				continue
			}
			if !ok {
				continue
			}
			if completes {
				fired = append(fired, firedSequence{q: q, c: base, steps: vars.steps})
				continue
			}
			sc.pending = append(sc.pending, advance{q: q, st: st, base: c, step: base.step})
		}
	}
	vars.steps, vars.this, vars.stepCall = nil, nil, nil
	return fired, errs
}

// firedSequence is a sequence the call completes.
type firedSequence struct {
	q     *sequence
	c     *chain
	steps ref.Val
	err   error
}

// render is the fired sequence's reason, with its steps named.
func (f *firedSequence) render(vars *activation, sc *SequenceCall) string {
	if f.err != nil {
		return fmt.Sprintf("sequence %s could not be evaluated (%v); failing closed with %s (%s)", f.q.name, f.err, f.q.effect, f.describe())
	}
	vars.steps, vars.this = f.steps, vars.p.adapter.NativeToValue(&sc.This)
	defer func() { vars.steps, vars.this = nil, nil }()
	return f.q.reason.render(vars) + " (" + f.describe() + ")"
}

// describe names the steps of a completed sequence by decision.
func (f firedSequence) describe() string {
	var parts []string
	for i, calls := range f.c.calls {
		name := f.q.steps[i].name
		var ids []string
		for _, c := range calls {
			ids = append(ids, c.DecisionID)
		}
		if i == len(f.c.calls)-1 && len(f.c.calls) == len(f.q.steps) {
			ids = append(ids, "this call")
		}
		if len(ids) > 0 {
			parts = append(parts, name+": "+strings.Join(ids, ", "))
		}
	}
	if len(f.c.calls) < len(f.q.steps) || len(parts) == 0 {
		parts = append(parts, f.q.steps[len(f.q.steps)-1].name+": this call")
	}
	return "steps " + strings.Join(parts, "; ")
}

// Commit records the call in its groups' sequence state once it is
// decided: every group counts it, and each partial match Evaluate found it
// extends grows by it (kept beside the shorter one, which later calls may
// extend too), unless the step wants another outcome (decided:).
func (sc *SequenceCall) Commit(decisionID string, effect Effect, at time.Time) {
	if sc == nil {
		return
	}
	this := sc.This
	this.DecisionID, this.Effect, this.At = decisionID, string(effect), at
	seen := map[*SequenceState]bool{}
	for _, st := range []*SequenceState{sc.Groups.Session, sc.Groups.Tree, sc.Groups.Agent} {
		if st != nil && !seen[st] {
			seen[st] = true
			st.mu.Lock()
			st.n++
			st.mu.Unlock()
		}
	}
	for _, a := range sc.pending {
		s := a.q.steps[a.step]
		if len(s.decided) > 0 && !slices.Contains(s.decided, effect) {
			continue
		}
		a.st.mu.Lock()
		list := a.st.chains[a.q.name]
		at0 := slices.Index(list, a.base)
		var c *chain
		switch {
		case a.base == nil && s.count > 1 && slices.ContainsFunc(list, func(o *chain) bool { return o.step == 0 }):
			// A counted first step is being collected already: the call
			// extends that match (below) rather than starting another.
		case a.base == nil:
			c = &chain{start: a.st.n - 1, started: at, calls: [][]StepCall{nil}}
		case at0 >= 0:
			c = a.base.clone()
		}
		if c != nil {
			c.calls[c.step] = append(c.calls[c.step], this)
			if len(c.calls[c.step]) >= s.count {
				c.step++
				c.calls = append(c.calls, nil)
			}
			c.key = a.q.chainKey(c)
			// A match holding the same calls as c, as far as the steps'
			// conditions can tell them apart, does from here on exactly
			// what c does: keep one, with the later start (it stays in
			// its window longer), named by the newer calls.
			list = slices.DeleteFunc(list, func(o *chain) bool {
				if o == a.base && at0 >= 0 && s.count > 1 {
					return false // replaced in place below
				}
				if o.step != c.step || o.key != c.key {
					return false
				}
				if o.start > c.start {
					c.start, c.started = o.start, o.started
				}
				return true
			})
			at0 = slices.Index(list, a.base)
			if at0 >= 0 && s.count > 1 {
				// A counted step grows its match in place: keeping every
				// shorter copy would crowd the longest out.
				list[at0] = c
			} else {
				list = append(list, c)
			}
			list = slices.DeleteFunc(list, func(o *chain) bool { return a.q.expired(o, a.st.n, at) })
			if len(list) > maxChains {
				list = list[len(list)-maxChains:]
			}
			a.st.chains[a.q.name] = list
		}
		a.st.mu.Unlock()
	}
	sc.pending = nil
}

// SequenceInfo describes one loaded sequence, for documentation and the
// dashboard.
type SequenceInfo struct {
	Name        string   `json:"name"`
	Effect      Effect   `json:"effect"`
	By          By       `json:"by"`
	Within      string   `json:"within,omitempty"`
	Steps       []string `json:"steps"`
	File        string   `json:"file"`
	Line        int      `json:"line"`
	Description string   `json:"description,omitempty"`
	Disabled    bool     `json:"disabled,omitempty"`
}

// Sequences describes every loaded sequence in evaluation order.
func (p *Policy) Sequences() []SequenceInfo { return slices.Clone(p.seqInfo) }

// ReplaySequences re-evaluates the steps of the sequences for a call that
// was decided earlier — when a group's state is rebuilt from stored
// decisions — and notes in in.Sequences the partial matches it extends;
// the caller commits them with the stored decision. Completed sequences
// are not reported (the stored verdict stands); the steps' errors are
// returned. in.Sequences must be set.
func (p *Policy) ReplaySequences(in *Input) []string {
	if in == nil || in.Sequences == nil || len(p.sequences) == 0 {
		return nil
	}
	vars := newActivation(p, in)
	_, errs := p.evalSequences(vars, in.Sequences, in.Sequences.This.At)
	return errs
}

// SequencesBy reports whether a loaded sequence groups its calls by by.
func (p *Policy) SequencesBy(by By) bool {
	return slices.ContainsFunc(p.sequences, func(q *sequence) bool { return q.by == by })
}
