package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mandate-dev/mandate/internal/cputime"
	"github.com/mandate-dev/mandate/internal/store"
)

// BenchmarkWriter measures the durable writer as `mandate serve` drives it:
// a file store with the WAL fsynced before each answer, 64 sessions each
// submitting its decisions from its own goroutine (the engine's callers),
// and, in "folds", the baseline fold the engine runs for every session that
// decided — here one per session every 32 of its decisions, about what a
// fold round a second amounts to at 2,000 decisions/s. It reports the
// process's CPU per decision (the records are made before the clock
// starts) and the group-commit batch size.
//
//	go test -run '^$' -bench BenchmarkWriter -benchtime 8000x ./internal/store/sqlite/
func BenchmarkWriter(b *testing.B) {
	for _, folds := range []bool{false, true} {
		name := "decisions"
		if folds {
			name = "folds"
		}
		b.Run(name, func(b *testing.B) { benchWriter(b, folds) })
	}
}

func benchWriter(b *testing.B, folds bool) {
	const sessions = 64
	ctx := context.Background()
	s := open(b, filepath.Join(b.TempDir(), "m.db"), Options{})
	per := (b.N + sessions - 1) / sessions
	changes := make([][]*store.Change, sessions)
	for i := range sessions {
		id := fmt.Sprintf("s%02d", i)
		applyAll(b, s, newSession(id))
		for seq := 1; seq <= per; seq++ {
			changes[i] = append(changes[i], decision(id, seq))
		}
	}
	st0 := s.Stats()
	b.ResetTimer()
	cpu0 := cputime.Total()
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			for n, c := range changes[i] {
				if err := store.Apply(ctx, s, c); err != nil {
					b.Error(err)
					return
				}
				if folds && (n+1)%32 == 0 {
					if err := s.FoldBaseline(ctx, countFold(c.Decision.SessionID, n+1, store.BaselineKey{Agent: "a1"})); err != nil {
						b.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	total := per * sessions
	b.ReportMetric(float64((cputime.Total()-cpu0).Nanoseconds())/float64(total)/1000, "cpu-µs/decision")
	st := s.Stats()
	if c := st.Commits - st0.Commits; c > 0 {
		b.ReportMetric(float64(st.Changes-st0.Changes)/float64(c), "changes/commit")
	}
}
