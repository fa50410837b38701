package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
)

// RunBaselines runs the baseline cases against a backend that implements
// store.Baselines; with names, only those cases.
func RunBaselines(t *testing.T, b Backend, names ...string) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"FoldAndReopen", testFoldReopen},
		{"FoldIsIdempotent", testFoldIdempotent},
		{"FoldConcurrent", testFoldConcurrent},
		{"FoldAcrossReplicas", testFoldReplicas},
	} {
		if len(names) > 0 && !slices.Contains(names, c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, b)
		})
	}
}

func baselines(t *testing.T, s store.Store) store.Baselines {
	t.Helper()
	return kept[store.Baselines](t, s, "no agent's behaviour would be learned")
}

// counter is the profile these cases fold: how many decisions it saw.
type counter struct {
	N int `json:"n"`
}

// foldSeqs folds decisions 1..upTo of session into each key's counter,
// skipping those at or below the committed cursor, as the engine's fold
// does.
func foldSeqs(ctx context.Context, bs store.Baselines, session string, upTo int, keys ...store.BaselineKey) error {
	return bs.FoldBaseline(ctx, &store.BaselineFold{SessionID: session, Keys: keys, Apply: func(cursor int, rows []*store.Baseline) (int, error) {
		for _, r := range rows {
			var c counter
			if r.Profile != nil {
				if err := json.Unmarshal(r.Profile, &c); err != nil {
					return 0, err
				}
			}
			c.N += max(0, upTo-cursor)
			r.Profile, _ = json.Marshal(c)
		}
		return max(cursor, upTo), nil
	}})
}

func count(t *testing.T, bs store.Baselines, agent, version string) int {
	t.Helper()
	row, err := bs.GetBaseline(context.Background(), agent, version)
	if err != nil {
		t.Fatalf("get baseline %s/%s: %v", agent, version, err)
	}
	var c counter
	if err := json.Unmarshal(row.Profile, &c); err != nil {
		t.Fatal(err)
	}
	return c.N
}

func testFoldReopen(t *testing.T, b Backend) {
	ctx := context.Background()
	loc := b.New(t)
	s := open(t, b, loc, nil)
	bs := baselines(t, s)
	v1, all := store.BaselineKey{Agent: "mailer", Version: "v1"}, store.BaselineKey{Agent: "mailer"}
	if _, err := bs.GetBaseline(ctx, "mailer", "v1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get of a missing baseline: %v, want ErrNotFound", err)
	}
	if err := foldSeqs(ctx, bs, "s1", 3, all, v1); err != nil {
		t.Fatal(err)
	}
	if err := foldSeqs(ctx, bs, "s2", 2, all, store.BaselineKey{Agent: "mailer", Version: "v2"}); err != nil {
		t.Fatal(err)
	}
	if err := foldSeqs(ctx, bs, "o1", 1, store.BaselineKey{Agent: "other", Version: "v9"}); err != nil {
		t.Fatal(err)
	}
	if err := bs.FoldBaseline(ctx, &store.BaselineFold{SessionID: "s1", Keys: []store.BaselineKey{v1}, Apply: func(int, []*store.Baseline) (int, error) { return 1, nil }}); err == nil {
		t.Fatal("a fold moved a cursor backwards")
	}
	boom := errors.New("boom")
	if err := bs.FoldBaseline(ctx, &store.BaselineFold{Keys: []store.BaselineKey{v1}, Apply: func(_ int, rows []*store.Baseline) (int, error) {
		rows[0].Profile = json.RawMessage(`{"n":999}`)
		return 0, boom
	}}); !errors.Is(err, boom) {
		t.Fatalf("apply's error: %v, want it returned as is", err)
	}
	s.Close()

	s = open(t, b, loc, nil)
	bs = baselines(t, s)
	if n := count(t, bs, "mailer", ""); n != 5 {
		t.Fatalf("agent row after reopen: %d decisions, want 5", n)
	}
	if n := count(t, bs, "mailer", "v1"); n != 3 {
		t.Fatalf("v1 row: %d, want 3 (a failed apply must write nothing)", n)
	}
	if c, err := bs.BaselineCursor(ctx, "s1"); err != nil || c != 3 {
		t.Fatalf("cursor of s1: %d, %v; want 3", c, err)
	}
	if c, err := bs.BaselineCursor(ctx, "nobody"); err != nil || c != 0 {
		t.Fatalf("cursor of an unknown session: %d, %v; want 0", c, err)
	}
	rows, err := bs.ListBaselines(ctx, "mailer")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Agent+"/"+r.Version)
	}
	if fmt.Sprint(got) != "[mailer/ mailer/v1 mailer/v2]" {
		t.Fatalf("list mailer: %v, want the rows in the order they were made", got)
	}
	if all, err := bs.ListBaselines(ctx, ""); err != nil || len(all) != 4 {
		t.Fatalf("list all: %d rows, %v; want 4", len(all), err)
	}
	// A row the apply leaves without a profile is deleted (a reset).
	if err := bs.FoldBaseline(ctx, &store.BaselineFold{Keys: []store.BaselineKey{v1}, Apply: func(_ int, rows []*store.Baseline) (int, error) {
		rows[0].Profile = nil
		return 0, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := bs.GetBaseline(ctx, "mailer", "v1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted row: %v, want ErrNotFound", err)
	}
}

// testFoldIdempotent: a fold replayed after it committed (a crash before
// the caller learned it did) applies nothing twice.
func testFoldIdempotent(t *testing.T, b Backend) {
	ctx := context.Background()
	bs := baselines(t, open(t, b, b.New(t), nil))
	k := store.BaselineKey{Agent: "a", Version: "v"}
	for _, upTo := range []int{4, 4, 2, 7, 7} {
		if err := foldSeqs(ctx, bs, "s", upTo, k); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, bs, "a", "v"); n != 7 {
		t.Fatalf("replayed folds counted %d decisions, want 7", n)
	}
}

// testFoldConcurrent: folds of many sessions into one agent's row, at
// once and beside the group-commit writer's own traffic, lose no update.
func testFoldConcurrent(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	bs := baselines(t, s)
	k := store.BaselineKey{Agent: "busy"}
	const sessions, steps = 8, 10
	work := []func() error{func() error { // the writer's own traffic
		for i := range 20 {
			if err := store.Apply(ctx, s, NewSession(fmt.Sprintf("w%d", i))); err != nil {
				return err
			}
		}
		return nil
	}}
	for i := range sessions {
		work = append(work, func() error {
			for step := 1; step <= steps; step++ {
				if err := foldSeqs(ctx, bs, fmt.Sprintf("c%d", i), step, k); err != nil {
					return err
				}
			}
			return nil
		})
	}
	concurrently(t, work...)
	if n := count(t, bs, "busy", ""); n != sessions*steps {
		t.Fatalf("concurrent folds counted %d, want %d", n, sessions*steps)
	}
}

// testFoldReplicas: two replicas folding the same sessions (each catching
// up on the same decisions) count each decision once.
func testFoldReplicas(t *testing.T, b Backend) {
	if !b.Shared {
		t.Skip("the backend is not shared between processes")
	}
	ctx := context.Background()
	loc := b.New(t)
	r1, r2 := baselines(t, open(t, b, loc, nil)), baselines(t, open(t, b, loc, nil))
	k := store.BaselineKey{Agent: "shared", Version: "v"}
	var work []func() error
	for _, bs := range []store.Baselines{r1, r2} {
		work = append(work, func() error {
			for step := 1; step <= 20; step++ {
				for s := range 3 {
					if err := foldSeqs(ctx, bs, fmt.Sprint("s", s), step, k); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	concurrently(t, work...)
	if n := count(t, r2, "shared", "v"); n != 60 {
		t.Fatalf("two replicas folding the same 60 decisions counted %d", n)
	}
}

// concurrently runs every fn at once and fails t with the first error
// once all have returned.
func concurrently(t *testing.T, fns ...func() error) {
	t.Helper()
	errs := make(chan error, len(fns))
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Go(func() { errs <- fn() })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
