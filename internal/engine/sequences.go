package engine

import (
	"context"
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
// behind its back. A tree's and an agent's states span sessions and are
// kept in memory only: after a restart they start again.

// maxSeqGroups bounds the trees and agents whose sequence state is kept;
// past it an arbitrary one is forgotten.
const maxSeqGroups = 4096

type seqGroups struct {
	mu     sync.Mutex
	trees  map[string]*policy.SequenceState
	agents map[string]*policy.SequenceState
}

func (g *seqGroups) get(m *map[string]*policy.SequenceState, key string) *policy.SequenceState {
	g.mu.Lock()
	defer g.mu.Unlock()
	if *m == nil {
		*m = map[string]*policy.SequenceState{}
	}
	if st, ok := (*m)[key]; ok {
		return st
	}
	if len(*m) >= maxSeqGroups {
		for k := range *m {
			delete(*m, k)
			break
		}
	}
	st := policy.NewSequenceState()
	(*m)[key] = st
	return st
}

// sequenceGroupsLocked returns the states a call of l belongs to, under
// pol: a tree's state (shared by every session of the tree, the root's
// included) and an agent's only when pol has sequences grouped so. l.mu is
// held.
func (e *Engine) sequenceGroupsLocked(ctx context.Context, l *live, pol *policy.Policy) *policy.SequenceGroups {
	if l.seq == nil {
		l.seq = policy.NewSequenceState()
	}
	g := &policy.SequenceGroups{Session: l.seq}
	if pol.SequencesBy(policy.ByTree) {
		g.Tree = e.seq.get(&e.seq.trees, e.treeRoot(ctx, l))
	}
	if id := l.sess.Agent.ID; id != "" && pol.SequencesBy(policy.ByAgent) {
		g.Agent = e.seq.get(&e.seq.agents, id)
	}
	return g
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
	if len(d.Rules) == 1 && slices.Contains([]string{ruleSessionStatus, RuleToolChanged, DenyInternal().Rules[0]}, d.Rules[0]) {
		// Refused before the policy ran: no sequence saw the call.
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
