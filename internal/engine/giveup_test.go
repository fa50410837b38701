package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// slowStore holds every submission back for a while before the real store
// sees it, as a busy disk would.
type slowStore struct {
	store.Store
	delay time.Duration
}

func (s *slowStore) Submit(c *store.Change) <-chan error {
	out := make(chan error, 1)
	go func() {
		time.Sleep(s.delay)
		out <- <-s.Store.Submit(c)
	}()
	return out
}

// A client that gives up while its decision is being committed must not make
// the next decision in the session fail.
func TestGivingUpMidDecision(t *testing.T) {
	e0, st := newEngine(t, "")
	e := restarted(t, &slowStore{Store: st, delay: 20 * time.Millisecond})
	_ = e0
	sid := mustSession(t, e, SessionRequest{AgentID: "a", Intent: "read the docs"})
	var failed []error
	var mu sync.Mutex
	for i := range 40 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*5*time.Millisecond)
		e.Evaluate(ctx, user, EvaluateRequest{SessionID: sid, Tool: "Read", Args: map[string]any{"file_path": "/docs/a"}})
		cancel()
		if _, err := e.Evaluate(context.Background(), user, EvaluateRequest{SessionID: sid, Tool: "Read", Args: map[string]any{"file_path": "/docs/b"}}); err != nil {
			mu.Lock()
			failed = append(failed, err)
			mu.Unlock()
		}
	}
	if len(failed) > 0 {
		t.Fatalf("%d of 40 decisions after a client gave up failed; first: %v", len(failed), failed[0])
	}
}
