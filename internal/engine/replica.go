package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// Sessions are cached in memory (session.go), and with a shared store other
// replicas change them too. Every change the engine makes to a session — a
// decision, a mandate version, a status change, new tool pins — carries a
// store.Guard: the session's head (the last change the cache knows of) and
// the status and mandate version of each ancestor it was decided under. The
// store commits it only if they still hold, under the session row's lock;
// otherwise it fails with store.ErrStale, nothing is written, the entry and
// its ancestors are dropped from the cache and the operation runs again on
// what the store now holds.
//
// The bound this gives: no decision is ever committed — so none is ever
// answered — on a session state older than the one in the store at commit
// time. An amendment, a suspension or a narrowing made through one replica
// takes effect on the next call through any other, at the cost of a reload
// on that replica. Calls in flight at the moment of the change are ordered
// before or after it by the row lock, as with one replica.

// maxStaleRetries bounds how often one operation is decided again after a
// guard failed; past it the call fails (and is refused).
const maxStaleRetries = 12

// retryStale runs op until it does not fail with store.ErrStale, reloading
// the session (and its ancestors) between attempts.
func retryStale[T any](ctx context.Context, e *Engine, sessionID string, op func() (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, err := op()
		if err == nil || !errors.Is(err, store.ErrStale) || attempt == maxStaleRetries {
			return v, err
		}
		e.invalidate(ctx, sessionID)
		e.metrics.staleRetry()
		e.log.Debug("session changed elsewhere; deciding again", "session", sessionID, "attempt", attempt+1)
		// Contending replicas back off a little, at random, so one wins.
		d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 5)))
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(d):
		}
	}
}

// guardFor is the guard of a change to l decided on its cached state; the
// change moves the head to next. The caller holds l.mu.
func (e *Engine) guardFor(l *live, next string) *store.Guard {
	return &store.Guard{SessionID: l.sess.ID, Head: l.sess.Head, NewHead: next, Sessions: e.ancestorStates(l.sess.ParentID)}
}

// ancestorStates lists the cached status and mandate version of a session's
// ancestors from parentID up, as the decision just made saw them.
func (e *Engine) ancestorStates(parentID string) []store.SessionState {
	var out []store.SessionState
	seen := map[string]bool{}
	for id := parentID; id != "" && !seen[id] && len(out) <= 64; {
		seen[id] = true
		e.mu.Lock()
		p, ok := e.sessions[id]
		e.mu.Unlock()
		if !ok {
			break // not consulted by this decision
		}
		s := p.snap.Load()
		version := 0
		if s.own != nil {
			version = s.own.Version
		}
		out = append(out, store.SessionState{ID: id, Status: s.status, MandateVersion: version})
		id = s.parentID
	}
	return out
}

// invalidate retires a session's ancestors from the caches after a change
// to the session failed its guard: the next use reloads them from the store
// (once their commits in flight settle). Holders of an entry finish with it,
// and their changes fail their guards. The session's own stale entry was
// retired by settle when its commit failed; an entry cached now was loaded
// after that and is retired only by a failure of its own — retiring it here
// made callers contending in one process drop each other's fresh entries
// until one ran out of retries (the slow-clients class of the security
// suite). An entry already retired no longer names its parent: the store
// does.
func (e *Engine) invalidate(ctx context.Context, id string) {
	id, err := e.uncache(ctx, id, false)
	seen := map[string]bool{}
	for err == nil && id != "" && !seen[id] && len(seen) <= 64 {
		seen[id] = true
		id, err = e.uncache(ctx, id, true)
	}
}

// uncache drops a session's cached tool list, retires its cached entry
// when retire is set, and returns its parent: the entry's, or the store's
// when no entry is cached.
func (e *Engine) uncache(ctx context.Context, id string, retire bool) (string, error) {
	e.tools.mu.Lock()
	delete(e.tools.sessions, id)
	e.tools.mu.Unlock()
	e.mu.Lock()
	l, ok := e.sessions[id]
	e.mu.Unlock()
	if ok {
		if retire {
			e.retire(l)
		}
		return l.snap.Load().parentID, nil
	}
	sess, err := e.store.GetSession(ctx, id)
	if err != nil {
		return "", err
	}
	return sess.ParentID, nil
}
