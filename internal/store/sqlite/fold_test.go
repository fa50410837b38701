package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
)

// countFold folds n more decisions of session into key's counter profile.
func countFold(session string, upTo int, key store.BaselineKey) *store.BaselineFold {
	return &store.BaselineFold{SessionID: session, Keys: []store.BaselineKey{key}, Apply: func(cursor int, rows []*store.Baseline) (int, error) {
		var c struct {
			N int `json:"n"`
		}
		if rows[0].Profile != nil {
			if err := json.Unmarshal(rows[0].Profile, &c); err != nil {
				return 0, err
			}
		}
		c.N += max(0, upTo-cursor)
		rows[0].Profile, _ = json.Marshal(c)
		return max(cursor, upTo), nil
	}}
}

// A fold runs inside the writer's batch: a failing fold undoes only its own
// writes, a failing change in the same batch (which sends the batch down
// the one-change-at-a-time path) neither loses the fold nor applies it
// twice, and every outcome is answered after the batch is durable.
func TestFoldRunsInTheWritersBatch(t *testing.T) {
	ctx := context.Background()
	var hold atomic.Bool
	release := make(chan struct{})
	var syncs atomic.Int64
	// While hold is set the WAL sync waits, so the writer stops after one
	// more batch and the rest of the submissions queue up behind it.
	s := open(t, filepath.Join(t.TempDir(), "m.db"), Options{syncWAL: func() error {
		if hold.Load() {
			<-release
		}
		syncs.Add(1)
		return nil
	}})
	applyAll(t, s, newSession("s1"))
	if err := s.FoldBaseline(ctx, countFold("s2", 5, store.BaselineKey{Agent: "a2"})); err != nil {
		t.Fatal(err)
	}
	hold.Store(true)

	first := s.Submit(decision("s1", 1))
	dup := s.Submit(decision("s1", 1)) // same id: a conflict
	var wg sync.WaitGroup
	var goodErr, badErr error
	wg.Go(func() { goodErr = s.FoldBaseline(ctx, countFold("s1", 2, store.BaselineKey{Agent: "a1"})) })
	wg.Go(func() {
		// Fills the row in and then moves the cursor back: the store
		// refuses it after writing the row, which must be undone.
		f := countFold("s2", 9, store.BaselineKey{Agent: "a2"})
		apply := f.Apply
		f.Apply = func(cursor int, rows []*store.Baseline) (int, error) {
			_, err := apply(cursor, rows)
			return cursor - 1, err
		}
		badErr = s.FoldBaseline(ctx, f)
	})
	third := s.Submit(decision("s1", 3))
	hold.Store(false)
	close(release)
	wg.Wait()

	if err := <-first; err != nil {
		t.Errorf("decision 1: %v", err)
	}
	if err := <-dup; !errors.Is(err, store.ErrConflict) {
		t.Errorf("duplicate decision: %v, want ErrConflict", err)
	}
	if err := <-third; err != nil {
		t.Errorf("decision 3: %v", err)
	}
	if goodErr != nil {
		t.Errorf("good fold: %v", goodErr)
	}
	if badErr == nil || !strings.Contains(badErr.Error(), "only move forward") {
		t.Errorf("bad fold: %v, want its own error", badErr)
	}
	b, err := s.GetBaseline(ctx, "a1", "")
	if err != nil {
		t.Fatalf("a1's baseline: %v", err)
	}
	if string(b.Profile) != `{"n":2}` || b.Revision != 1 {
		t.Errorf("a1's baseline %s revision %d, want {\"n\":2} once", b.Profile, b.Revision)
	}
	if cur, err := s.BaselineCursor(ctx, "s1"); err != nil || cur != 2 {
		t.Errorf("s1's cursor %d (%v), want 2", cur, err)
	}
	if b, err := s.GetBaseline(ctx, "a2", ""); err != nil || string(b.Profile) != `{"n":5}` || b.Revision != 1 {
		t.Errorf("the failed fold's row: %+v (%v), want it as the first fold left it", b, err)
	}
	if cur, _ := s.BaselineCursor(ctx, "s2"); cur != 5 {
		t.Errorf("the failed fold moved its cursor to %d", cur)
	}
	if _, err := s.GetDecision(ctx, "s1-d3"); err != nil {
		t.Errorf("decision 3 after the batch: %v", err)
	}
}

// A read-only store refuses a fold as it refuses a change.
func TestFoldReadOnly(t *testing.T) {
	_, path := seeded(t, Options{}, newSession("s1"))
	ro, err := OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.FoldBaseline(context.Background(), countFold("s1", 1, store.BaselineKey{Agent: "a1"})); !errors.Is(err, ErrReadOnly) {
		t.Errorf("fold on a read-only store: %v, want ErrReadOnly", err)
	}
}
