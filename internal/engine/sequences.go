package engine

import (
	"context"
	"sync"

	"github.com/mandate-dev/mandate/internal/policy"
)

// The partial matches of the policy's sequence rules (policy.SequenceState)
// are kept per group: a session's on its live entry, a delegation tree's
// and an agent's here, keyed by the tree's root session and the agent id.
// They live in memory only: after a restart or an eviction a sequence
// starts again from its first step.

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

// sequenceGroupsLocked returns the states a call of l belongs to. l.mu is
// held.
func (e *Engine) sequenceGroupsLocked(ctx context.Context, l *live) *policy.SequenceGroups {
	if l.seq == nil {
		l.seq = policy.NewSequenceState()
	}
	g := &policy.SequenceGroups{Session: l.seq, Tree: l.seq}
	if root := e.treeRoot(ctx, l); root != l.sess.ID {
		g.Tree = e.seq.get(&e.seq.trees, root)
	}
	if id := l.sess.Agent.ID; id != "" {
		g.Agent = e.seq.get(&e.seq.agents, id)
	}
	return g
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
