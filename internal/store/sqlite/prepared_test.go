package sqlite

import (
	"context"
	"testing"

	"github.com/mandate-dev/mandate/internal/cputime"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// TestPreparedLookups: the prepared lookups answer as before, after the
// store is reopened too, and a missing row is still ErrNotFound.
func TestPreparedLookups(t *testing.T) {
	ctx := context.Background()
	s, path := seeded(t, Options{}, newSession("s1"))
	for range 3 {
		got, err := s.GetSession(ctx, "s1")
		if err != nil || got.ID != "s1" {
			t.Fatalf("GetSession: %+v %v", got, err)
		}
		if _, err := s.GetSession(ctx, "nope"); err == nil {
			t.Fatal("a missing session was found")
		}
		if n, err := s.EvidenceSize(ctx); err != nil || n != 2 { // the session and its mandate
			t.Fatalf("EvidenceSize: %d %v", n, err)
		}
	}
	n := 0
	s.stmts.Range(func(any, any) bool { n++; return true })
	// GetSession, its binding check (sessionLogQuery), EvidenceSize.
	if n != 3 {
		t.Errorf("%d prepared statements, want 3 (one per query text)", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, Options{})
	if got, err := s.GetSession(ctx, "s1"); err != nil || got.ID != "s1" {
		t.Fatalf("after reopening: %+v %v", got, err)
	}
}

// BenchmarkSessionLookup is one GetSession-shaped lookup on the read pool,
// unprepared (as every read was) and prepared (as the hot ones are now),
// in CPU per lookup.
func BenchmarkSessionLookup(b *testing.B) {
	ctx := context.Background()
	s, _ := seeded(b, Options{}, newSession("s1"))
	q := `SELECT ` + sqlstore.SessionCols + `, ` + sqlstore.Bound("sessions") + ` FROM sessions WHERE id = ?`
	for _, bc := range []struct {
		name string
		run  func() error
	}{
		{"unprepared", func() error { _, err := s.scanSession(ctx, s.pool.QueryRowContext(ctx, q, "s1")); return err }},
		{"prepared", func() error { _, err := s.scanSession(ctx, s.queryRow(ctx, q, "s1")); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Total()
			for b.Loop() {
				if err := bc.run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Total()-cpu0).Nanoseconds())/float64(b.N)/1000, "cpu-µs/op")
		})
	}
}
