package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/mandate-dev/mandate/internal/store"
)

// A session's changes are submitted with its live entry's mu held, so they
// commit in the order its in-memory state took them. The caller may stop
// waiting for a commit (its client gave up), but the commit goes on: the
// store acknowledges it later. Until then the in-memory state is ahead of the
// store, so the entry must not be reloaded from the store: a reload would
// read the session as it was before the pending commits and hand out their
// sequence numbers again (UNIQUE constraint failed: decisions.session_id,
// decisions.seq). Each entry therefore counts its commits in flight, and an
// entry dropped from the cache (retired) is reloaded only once its commits
// have settled.

// pending counts a live entry's commits in flight.
type pending struct {
	mu sync.Mutex
	n  int
	// zero is closed when n drops to 0; nil while n is 0.
	zero chan struct{}
}

func (p *pending) add() {
	p.mu.Lock()
	if p.n == 0 {
		p.zero = make(chan struct{})
	}
	p.n++
	p.mu.Unlock()
}

func (p *pending) done() {
	p.mu.Lock()
	p.n--
	if p.n == 0 {
		close(p.zero)
		p.zero = nil
	}
	p.mu.Unlock()
}

func (p *pending) idle() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n == 0
}

// wait returns once no commit is in flight, or when ctx ends.
func (p *pending) wait(ctx context.Context) error {
	p.mu.Lock()
	z := p.zero
	p.mu.Unlock()
	if z == nil {
		return nil
	}
	select {
	case <-z:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the session's earlier changes to commit: %w", ctx.Err())
	}
}

// submitLocked prepares and submits a change of session l, counting it in
// flight until settle sees its result. The caller holds l.mu.
func (e *Engine) submitLocked(l *live, c *store.Change) <-chan error {
	l.pending.add()
	return e.submit(c)
}

// settle waits for a change submitted with submitLocked. A failed commit
// retires the entry: the next use reloads the session from the store, once
// everything still in flight has settled. When ctx ends first, the commit is
// left to settle in the background and, if keep is false, the entry is
// retired at once (the caller was going to apply the change to the entry
// only once it committed, so the entry no longer says what the store will).
func (e *Engine) settle(ctx context.Context, l *live, ch <-chan error, keep bool) error {
	select {
	case err := <-ch:
		l.pending.done()
		if err != nil {
			e.retire(l)
		}
		return err
	case <-ctx.Done():
		if !keep {
			e.retire(l)
		}
		go func() {
			err := <-ch
			l.pending.done()
			if err != nil {
				e.retire(l)
				e.log.Error("a change committed after its caller gave up failed; the session reloads from the store", "session", l.sess.ID, "err", err)
			}
		}()
		return fmt.Errorf("waiting for the store: %w", ctx.Err())
	}
}

// retire drops a live entry from the cache without needing its mu: whoever
// holds it sees gone and looks the session up again, and the lookup waits
// for the entry's commits in flight before reading the store.
func (e *Engine) retire(l *live) {
	l.gone.Store(true)
	id := l.sess.ID
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sessions[id] == l {
		delete(e.sessions, id)
	}
	if !l.pending.idle() {
		e.retired[id] = append(e.retired[id], l)
	}
}

// awaitRetired waits until no retired entry of the session has a commit
// in flight, so a load reads what they committed.
func (e *Engine) awaitRetired(ctx context.Context, id string) error {
	e.mu.Lock()
	old := slices.Clone(e.retired[id])
	e.mu.Unlock()
	if len(old) == 0 {
		return nil
	}
	for _, l := range old {
		if err := l.pending.wait(ctx); err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
	}
	e.mu.Lock()
	e.retired[id] = slices.DeleteFunc(e.retired[id], func(l *live) bool { return l.pending.idle() })
	if len(e.retired[id]) == 0 {
		delete(e.retired, id)
	}
	e.mu.Unlock()
	return nil
}
