package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/mandate-dev/mandate/internal/flow"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// The partial matches of the policy's sequence rules (policy.SequenceState)
// are kept per group: a session's on its live entry, a delegation tree's
// and an agent's here, keyed by the tree's root session and the agent id.
//
// A session's own state is not written anywhere: the store's decisions
// are its source of truth. When a session with history is loaded (after a
// restart, an eviction, or on another replica) its state is rebuilt with
// its flow table, from the same latest decisions, in order: each call's
// steps are evaluated again on what the call was decided on — its stored
// classification, the session's mandate, the flow table as it stood
// before the call — and the call is committed with its stored decision and
// effect. A partial match therefore survives a restart, and, being derived
// from decisions that are bound to the evidence log, cannot be edited
// behind its back.
//
// A tree's and an agent's states span sessions. They are rebuilt the same
// way on their first use in a process (after a restart, or once forgotten
// past maxSeqGroups): from the group's latest maxGroupReplay decisions
// across its sessions, in commit order (rebuildGroup).

// maxSeqGroups bounds the trees and agents whose sequence state is kept;
// past it an arbitrary one is forgotten (and rebuilt from the store when
// next used).
const maxSeqGroups = 4096

// maxGroupReplay is the window a tree's or an agent's state is rebuilt
// from: its latest decisions, across its sessions. The built-in
// sequences' windows are at most 500 calls.
const maxGroupReplay = 512

// groupFlowContext is how many of a session's decisions before its first
// one in a group's window are entered into the table its window calls are
// evaluated on: values first seen earlier are then unknown, as in a
// session table past its own bound.
const groupFlowContext = 256

type seqGroups struct {
	mu     sync.Mutex
	trees  map[string]*seqGroup
	agents map[string]*seqGroup
}

// seqGroup is a tree's or an agent's state, usable once ready is closed;
// err says why it could not be rebuilt (the entry is then dropped, and
// the next call tries again).
type seqGroup struct {
	ready chan struct{}
	st    *policy.SequenceState
	err   error
}

// get returns the state of key in m, rebuilding it with rebuild when the
// process has none. A call of another session of the group waits for a
// rebuild under way rather than starting from nothing.
func (g *seqGroups) get(ctx context.Context, m *map[string]*seqGroup, key string, rebuild func(*policy.SequenceState) error) (*policy.SequenceState, error) {
	g.mu.Lock()
	if *m == nil {
		*m = map[string]*seqGroup{}
	}
	if sg, ok := (*m)[key]; ok {
		g.mu.Unlock()
		select {
		case <-sg.ready:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the sequence state of %s to be rebuilt: %w", key, ctx.Err())
		}
		if sg.err != nil {
			return nil, sg.err
		}
		return sg.st, nil
	}
	if len(*m) >= maxSeqGroups {
		for k, sg := range *m {
			select {
			case <-sg.ready:
				delete(*m, k)
			default:
				continue // being rebuilt: another goes
			}
			break
		}
	}
	sg := &seqGroup{ready: make(chan struct{}), st: policy.NewSequenceState()}
	(*m)[key] = sg
	g.mu.Unlock()

	if err := rebuild(sg.st); err != nil {
		sg.err = err
		g.mu.Lock()
		if (*m)[key] == sg {
			delete(*m, key)
		}
		g.mu.Unlock()
	}
	close(sg.ready)
	return sg.st, sg.err
}

// sequenceGroupsLocked returns the states a call of l belongs to, under
// pol: a tree's state (shared by every session of the tree, the root's
// included) and an agent's only when pol has sequences grouped so. l.mu is
// held. A group's state that cannot be rebuilt is an error: the call is
// then refused, as for any state the engine cannot read.
func (e *Engine) sequenceGroupsLocked(ctx context.Context, l *live, pol *policy.Policy) (*policy.SequenceGroups, error) {
	if l.seq == nil {
		l.seq = policy.NewSequenceState()
	}
	g := &policy.SequenceGroups{Session: l.seq}
	if pol.SequencesBy(policy.ByTree) {
		root := e.treeRoot(ctx, l)
		st, err := e.seq.get(ctx, &e.seq.trees, root, func(st *policy.SequenceState) error {
			return e.rebuildGroup(ctx, pol, store.DecisionFilter{Tree: root}, func(g *policy.SequenceGroups) { g.Tree = st })
		})
		if err != nil {
			return nil, fmt.Errorf("delegation tree of session %s: rebuilding its sequences: %w", root, err)
		}
		g.Tree = st
	}
	if id := l.sess.Agent.ID; id != "" && pol.SequencesBy(policy.ByAgent) {
		st, err := e.seq.get(ctx, &e.seq.agents, id, func(st *policy.SequenceState) error {
			return e.rebuildGroup(ctx, pol, store.DecisionFilter{AgentID: id}, func(g *policy.SequenceGroups) { g.Agent = st })
		})
		if err != nil {
			return nil, fmt.Errorf("agent %s: rebuilding its sequences: %w", id, err)
		}
		g.Agent = st
	}
	return g, nil
}

// rebuildGroup replays a tree's or an agent's latest decisions (f) into its
// state (set by into): first, session by session, each window call's flow
// facts, from a table fed that session's decisions in order up to the
// call; then, in commit order across the sessions, each call's steps on
// those facts, committed with the stored decision and effect. No session's
// lock is taken: everything is read from the store, and the live entries
// are used only for the sessions' effective mandates.
func (e *Engine) rebuildGroup(ctx context.Context, pol *policy.Policy, f store.DecisionFilter, into func(*policy.SequenceGroups)) error {
	f.Limit = maxGroupReplay
	ds, err := e.store.ListDecisions(ctx, f)
	if err != nil {
		return err
	}
	slices.Reverse(ds) // oldest first
	type sessionWindow struct {
		sess  *store.Session
		m     *mandate.Mandate
		first int
		last  int
	}
	windows := map[string]*sessionWindow{}
	var order []string
	for _, d := range ds {
		w := windows[d.SessionID]
		if w == nil {
			w = &sessionWindow{first: d.Seq}
			windows[d.SessionID] = w
			order = append(order, d.SessionID)
		}
		w.first, w.last = min(w.first, d.Seq), max(w.last, d.Seq)
	}
	type replayed struct {
		args  map[string]any
		facts *flow.Facts
	}
	calls := make(map[string]replayed, len(ds))
	for _, id := range order {
		w := windows[id]
		if w.sess, err = e.store.GetSession(ctx, id); err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		if w.m, err = e.groupMandate(ctx, w.sess); err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		fs := &flowState{table: flow.NewTable(flow.TableLimits{})}
		e.addMandateFlow(fs, w.sess, w.m)
		t := fs.table
		err = e.feedFlow(ctx, w.sess, t, max(0, w.first-1-groupFlowContext), w.last, func(d *store.Decision, args map[string]any, sc *flow.Scan) *flow.Facts {
			cf := &callFlow{table: t, args: sc, concepts: e.scan.Detector().Concepts(d.Tool), mandate: w.m}
			for _, k := range w.m.Allow {
				cf.granted = append(cf.granted, string(k))
			}
			ff := cf.Facts(d.Action)
			if d.Seq >= w.first {
				calls[d.ID] = replayed{args: args, facts: ff}
			}
			return ff
		})
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
	}
	for _, d := range ds {
		c, ok := calls[d.ID]
		if !ok || refusedBeforePolicy(d) {
			continue // no action stored, or no sequence saw the call
		}
		w := windows[d.SessionID]
		s := w.sess
		sc := &policy.SequenceCall{This: policy.NewStepCall(d.Action, s.ID, d.CreatedAt)}
		into(&sc.Groups)
		errs := pol.ReplaySequences(&policy.Input{
			Call:      policy.CallFacts{Tool: d.Tool, Args: c.args},
			Action:    d.Action,
			Mandate:   w.m,
			Scope:     w.m.CheckIn(d.Action, mandate.Env{WorkDir: s.WorkingDir, HomeDir: s.HomeDir}, d.CreatedAt),
			Session:   facts(s),
			Agent:     agentFacts(s.Agent),
			Self:      e.self,
			Flow:      c.facts,
			Sequences: sc,
		})
		if len(errs) > 0 {
			e.log.Warn("sequence step failed while rebuilding a group's state", "session", s.ID, "decision", d.ID, "errors", errs)
		}
		sc.Commit(d.ID, policy.Effect(d.Effect), d.CreatedAt)
	}
	return nil
}

// groupMandate is the mandate a session's calls were held against, for a
// group's rebuild: its own, read from the store, or for a delegated
// session its effective one (which its ancestors' live entries narrow).
func (e *Engine) groupMandate(ctx context.Context, s *store.Session) (*mandate.Mandate, error) {
	var m *mandate.Mandate
	if s.ParentID == "" {
		mv, err := e.store.GetMandate(ctx, s.ID, s.MandateVersion)
		if err != nil {
			return nil, err
		}
		m = mv.Mandate
	} else {
		l, err := e.live(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		if m, err = e.effective(ctx, l, 0); err != nil {
			return nil, err
		}
	}
	if m == nil {
		m = &mandate.Mandate{}
	}
	return m, nil
}

// refusedBeforePolicy: the decision was made before the policy ran (the
// session's status, a changed tool, an internal failure), so no sequence
// saw the call.
func refusedBeforePolicy(d *store.Decision) bool {
	return len(d.Rules) == 1 && slices.Contains([]string{ruleSessionStatus, RuleToolChanged, DenyInternal().Rules[0]}, d.Rules[0])
}

// seqReplay rebuilds a loaded session's sequence state (see above).
type seqReplay struct {
	e   *Engine
	l   *live
	pol *policy.Policy
	m   *mandate.Mandate
	st  *policy.SequenceState
}

func (e *Engine) newSeqReplay(ctx context.Context, l *live) (*seqReplay, error) {
	pol := e.policy.Load()
	if !pol.SequencesBy(policy.BySession) {
		return nil, nil
	}
	m, err := e.effective(ctx, l, 0)
	if err != nil {
		return nil, err
	}
	if m == nil {
		m = &mandate.Mandate{}
	}
	return &seqReplay{e: e, l: l, pol: pol, m: m, st: l.seq}, nil
}

// decided replays one stored decision into the session's state, with t as
// it stood before the call, and returns the call's flow facts.
func (r *seqReplay) decided(t *flow.Table, d *store.Decision, args map[string]any, scan *flow.Scan) *flow.Facts {
	s := &r.l.sess
	cf := &callFlow{table: t, args: scan, concepts: r.e.scan.Detector().Concepts(d.Tool), mandate: r.m}
	for _, k := range r.m.Allow {
		cf.granted = append(cf.granted, string(k))
	}
	ff := cf.Facts(d.Action)
	if refusedBeforePolicy(d) {
		return ff
	}
	sc := &policy.SequenceCall{Groups: policy.SequenceGroups{Session: r.st}, This: policy.NewStepCall(d.Action, s.ID, d.CreatedAt)}
	errs := r.pol.ReplaySequences(&policy.Input{
		Call:      policy.CallFacts{Tool: d.Tool, Args: args},
		Action:    d.Action,
		Mandate:   r.m,
		Scope:     r.m.CheckIn(d.Action, mandate.Env{WorkDir: s.WorkingDir, HomeDir: s.HomeDir}, d.CreatedAt),
		Session:   facts(s),
		Agent:     agentFacts(s.Agent),
		Self:      r.e.self,
		Flow:      ff,
		Sequences: sc,
	})
	if len(errs) > 0 {
		r.e.log.Warn("sequence step failed while rebuilding a session's state", "session", s.ID, "decision", d.ID, "errors", errs)
	}
	sc.Commit(d.ID, policy.Effect(d.Effect), d.CreatedAt)
	return ff
}

// treeRoot is the session at the top of l's delegation tree, as far as its
// ancestors can be loaded.
func (e *Engine) treeRoot(ctx context.Context, l *live) string {
	root := l.sess.ID
	seen := map[string]bool{root: true}
	for id := l.snap.Load().parentID; id != "" && !seen[id] && len(seen) < 64; {
		seen[id] = true
		p, err := e.live(ctx, id)
		if err != nil {
			break
		}
		root = id
		id = p.snap.Load().parentID
	}
	return root
}
