package engine

import (
	"context"
	"sync"

	"github.com/mandate-dev/mandate/internal/store"
)

// Every ask reads the session's approvals of the exact call and its
// session-scoped answers (matchAsk). Most asks change neither — an agent
// repeating a call that already waits on a pending approval reuses it — so
// the reads are cached per session, and every change of a session's
// approvals drops its cache: all of them are committed through Engine.submit
// (a decision's new or used approval, an answer, an expiry, a withdrawal,
// an observed answer), which marks the session changing before the change
// is submitted and changed once the store has answered, before the caller
// learns the outcome. While a change is in flight nothing read is kept (the
// read may predate it), and a read is kept only if no change started or
// ended while it ran (generations).
//
// A store shared by several servers (store.ApprovalWatcher) is answered by
// other replicas too, which this process hears of only later: there the
// cache is off and every ask reads the store, as before.

// Bounds of the approvals cache.
const (
	maxCachedApprovalSessions = 10_000
	maxCachedCallsPerSession  = 256
)

type approvalCache struct {
	mu       sync.Mutex
	next     uint64 // the last generation handed out
	sessions map[string]*sessionApprovals
}

type sessionApprovals struct {
	gen      uint64
	inflight int
	calls    map[string][]*store.Approval // callKey → CallApprovals
	grants   []*store.Approval
	grantsOK bool
}

func newApprovalCache() *approvalCache {
	return &approvalCache{sessions: map[string]*sessionApprovals{}}
}

// entry returns a session's cache entry, making it (a.mu held).
func (a *approvalCache) entry(session string) *sessionApprovals {
	s := a.sessions[session]
	if s != nil {
		return s
	}
	if len(a.sessions) >= maxCachedApprovalSessions {
		for id, s := range a.sessions {
			if s.inflight == 0 {
				delete(a.sessions, id)
			}
		}
	}
	a.next++
	s = &sessionApprovals{gen: a.next}
	a.sessions[session] = s
	return s
}

// bump starts a new generation of a session's approvals (a.mu held).
func (a *approvalCache) bump(s *sessionApprovals) {
	a.next++
	s.gen, s.calls, s.grants, s.grantsOK = a.next, nil, nil, false
}

func callKey(tool, hash string) string { return tool + "\x00" + hash }

// read returns what get reads for session, cached. hit reports whether
// the entry holds it; keep stores what get read.
func (a *approvalCache) read(session string, hit func(*sessionApprovals) ([]*store.Approval, bool),
	keep func(*sessionApprovals, []*store.Approval), get func() ([]*store.Approval, error)) ([]*store.Approval, error) {
	a.mu.Lock()
	s := a.entry(session)
	if s.inflight == 0 {
		if list, ok := hit(s); ok {
			a.mu.Unlock()
			return list, nil
		}
	}
	gen := s.gen
	a.mu.Unlock()
	list, err := get()
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if s := a.sessions[session]; s != nil && s.gen == gen && s.inflight == 0 {
		keep(s, list)
	}
	a.mu.Unlock()
	return list, nil
}

// callApprovals is store.Approvals.CallApprovals through the cache (the
// approvals are shared: callers must not modify them).
func (a *approvals) callApprovals(ctx context.Context, session, tool, hash string) ([]*store.Approval, error) {
	get := func() ([]*store.Approval, error) { return a.st.CallApprovals(ctx, session, tool, hash) }
	if a.cache == nil {
		return get()
	}
	key := callKey(tool, hash)
	return a.cache.read(session, func(s *sessionApprovals) ([]*store.Approval, bool) {
		list, ok := s.calls[key]
		return list, ok
	}, func(s *sessionApprovals, list []*store.Approval) {
		if s.calls == nil || len(s.calls) >= maxCachedCallsPerSession {
			s.calls = map[string][]*store.Approval{}
		}
		s.calls[key] = list
	}, get)
}

// sessionGrants is store.Approvals.SessionGrants through the cache.
func (a *approvals) sessionGrants(ctx context.Context, session string) ([]*store.Approval, error) {
	get := func() ([]*store.Approval, error) { return a.st.SessionGrants(ctx, session) }
	if a.cache == nil {
		return get()
	}
	return a.cache.read(session, func(s *sessionApprovals) ([]*store.Approval, bool) {
		return s.grants, s.grantsOK
	}, func(s *sessionApprovals, list []*store.Approval) {
		s.grants, s.grantsOK = list, true
	}, get)
}

// approvalSessions are the sessions whose approvals c changes.
func approvalSessions(c *store.Change) []string {
	var out []string
	add := func(id string) {
		for _, have := range out {
			if have == id {
				return
			}
		}
		out = append(out, id)
	}
	for _, ap := range c.Approvals {
		add(ap.SessionID)
	}
	for _, ac := range c.ApprovalChanges {
		if ac.Approval != nil {
			add(ac.Approval.SessionID)
		}
	}
	return out
}

// changing marks the sessions' approvals changing until the returned
// function is called (when the change has committed or failed).
func (a *approvals) changing(c *store.Change) func() {
	if a.cache == nil {
		return nil
	}
	sessions := approvalSessions(c)
	if len(sessions) == 0 {
		return nil
	}
	ac := a.cache
	ac.mu.Lock()
	for _, id := range sessions {
		s := ac.entry(id)
		s.inflight++
		ac.bump(s)
	}
	ac.mu.Unlock()
	return func() {
		ac.mu.Lock()
		for _, id := range sessions {
			s := ac.entry(id)
			s.inflight = max(s.inflight-1, 0)
			ac.bump(s)
		}
		ac.mu.Unlock()
	}
}
