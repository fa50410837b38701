package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
)

var spendEUR = store.SpendDim("EUR")

// drawing is decision seq of session sess drawing steps on budgets: each
// step is a session, from, to and cap (cap < 0: none).
func drawing(sess string, seq int, steps ...draw) *store.Change {
	c := Decision(sess, seq)
	for _, s := range steps {
		d := &store.Draw{SessionID: s.session, Dim: spendEUR, From: s.from, To: s.to, Drawer: sess, DecisionID: c.Decision.ID, CreatedAt: epoch}
		if s.cap >= 0 {
			d.Cap = new(s.cap)
		}
		c.Draws = append(c.Draws, d)
	}
	return c
}

type draw struct {
	session       string
	from, to, cap float64
}

func used(t *testing.T, s store.Store, sess string) float64 {
	t.Helper()
	b, err := s.GetBudget(context.Background(), sess, spendEUR)
	if err != nil {
		t.Fatalf("budget of %s: %v", sess, err)
	}
	return b.Used
}

// testBudgets: a draw commits with its change only on the budget it was
// decided on and within its cap; a change that fails for any reason
// (its guard, a draw) leaves every budget as it was.
func testBudgets(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	apply(t, s, guarded(NewSession("p"), "p", "", "p0"))
	child := NewSession("c")
	child.Session.ParentID = "p"
	apply(t, s, guarded(child, "c", "", "c0"))
	if u := used(t, s, "p"); u != 0 {
		t.Fatalf("a budget nothing drew on: %v", u)
	}
	apply(t, s, guarded(drawing("c", 1, draw{"c", 0, 100, -1}, draw{"p", 0, 100, 120}), "c", "c0", "c1"))
	if u, v := used(t, s, "p"), used(t, s, "c"); u != 100 || v != 100 {
		t.Fatalf("after one draw of 100: parent %v, child %v", u, v)
	}
	before := size(t, s)
	for _, tc := range []struct {
		name string
		c    *store.Change
		want error
	}{
		// The same draw again, as a retry decided on the old state would
		// make it: the budget has moved.
		{"a draw on a budget that moved", guarded(drawing("c", 2, draw{"c", 0, 100, -1}, draw{"p", 0, 100, 120}), "c", "c1", "c2"), store.ErrBudget},
		{"a draw past the cap", guarded(drawing("c", 2, draw{"c", 100, 200, -1}, draw{"p", 100, 200, 120}), "c", "c1", "c2"), store.ErrBudget},
		// A stale guard with a draw that would fit: nothing is drawn.
		{"a stale change's draw", guarded(drawing("c", 2, draw{"c", 100, 110, -1}, draw{"p", 100, 110, 120}), "c", "c0", "c2"), store.ErrStale},
		{"a draw that draws nothing", guarded(drawing("c", 2, draw{"p", 100, 100, 120}), "c", "c1", "c2"), nil},
	} {
		err := store.Apply(ctx, s, tc.c)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if tc.want == store.ErrBudget && !errors.Is(err, store.ErrStale) {
			t.Errorf("%s: %v is not an ErrStale (the caller decides again)", tc.name, err)
		}
	}
	if u, v := used(t, s, "p"), used(t, s, "c"); u != 100 || v != 100 {
		t.Errorf("failed changes drew: parent %v, child %v", u, v)
	}
	if _, err := s.GetDecision(ctx, "c-d2"); !errors.Is(err, store.ErrNotFound) {
		t.Error("a failed draw's decision was written")
	}
	Sync(ctx, t, s)
	if n := size(t, s); n != before {
		t.Errorf("failed changes wrote %d evidence records", n-before)
	}
	// In one batch: the draw decided first commits, the one decided on
	// the same state after it fails alone, the change beside them commits.
	apply(t, s, guarded(NewSession("d"), "d", "", "d0"))
	chans := []<-chan error{
		s.Submit(guarded(drawing("c", 2, draw{"p", 100, 110, 120}), "c", "c1", "c2")),
		s.Submit(guarded(drawing("d", 1, draw{"p", 100, 118, 120}), "d", "d0", "d1")),
		s.Submit(guarded(Decision("c", 3), "c", "c2", "c3")),
	}
	for i, want := range []error{nil, store.ErrBudget, nil} {
		if err := <-chans[i]; (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
			t.Errorf("change %d of the batch: %v, want %v", i+1, err, want)
		}
	}
	if u := used(t, s, "p"); u != 110 {
		t.Errorf("parent after the batch: %v, want 110", u)
	}
	// The budget survives a reopen, held against its draw records.
	if rs, ok := Unwrap(s).(interface {
		VerifyRows(context.Context, func(string)) error
	}); ok {
		var problems []string
		if err := rs.VerifyRows(ctx, func(p string) { problems = append(problems, p) }); err != nil || len(problems) > 0 {
			t.Errorf("verify rows: %v %q", err, problems)
		}
	}
}

// testBudgetReplicas: workers on two stores sharing one database draw 1 at a
// time on one capped budget, each reading the budget and drawing on what it
// read, decided again whenever it moved. Exactly the cap is drawn: a draw
// doubled or lost would show in the count of successes, the budget, or the
// workers' own budgets (which only they draw on).
func testBudgetReplicas(t *testing.T, b Backend) {
	if !b.Shared {
		t.Skip("the backend is not shared between processes")
	}
	ctx := context.Background()
	loc := b.New(t)
	s1, s2 := open(t, b, loc, nil), open(t, b, loc, nil)
	apply(t, s1, NewSession("root"))
	const workers, limit = 6, 30
	for w := range workers {
		c := NewSession(fmt.Sprintf("w%d", w))
		c.Session.ParentID = "root"
		apply(t, s1, c)
	}
	var (
		mu   sync.Mutex
		wins = map[int]int{}
	)
	var wg sync.WaitGroup
	for w := range workers {
		st := s1
		if w%2 == 1 {
			st = s2
		}
		sess := fmt.Sprintf("w%d", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			seq := 0
			for attempt := 0; attempt < 400; attempt++ {
				rb, err := st.GetBudget(ctx, "root", spendEUR)
				if err != nil {
					t.Error(err)
					return
				}
				if rb.Used >= limit {
					return
				}
				own, err := st.GetBudget(ctx, sess, spendEUR)
				if err != nil {
					t.Error(err)
					return
				}
				c := drawing(sess, seq+1, draw{sess, own.Used, own.Used + 1, -1}, draw{"root", rb.Used, rb.Used + 1, limit})
				switch err := store.Apply(ctx, st, c); {
				case err == nil:
					seq++
					mu.Lock()
					wins[w]++
					mu.Unlock()
				case errors.Is(err, store.ErrBudget):
				default:
					t.Error(err)
					return
				}
			}
			t.Errorf("worker %d gave up", w)
		}()
	}
	wg.Wait()
	total := 0
	for w := range workers {
		total += wins[w]
		if u := used(t, s2, fmt.Sprintf("w%d", w)); u != float64(wins[w]) {
			t.Errorf("worker %d drew %d times, its budget says %v", w, wins[w], u)
		}
	}
	if total != limit {
		t.Errorf("%d draws of 1 committed under a cap of %d", total, limit)
	}
	if u := used(t, s1, "root"); u != limit {
		t.Errorf("the shared budget stands at %v, want %d", u, limit)
	}
}
