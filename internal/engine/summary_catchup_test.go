package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
)

// TestRecordMissingSummaries: a process that stopped between a session's
// completion and its summary's commit (two commits) left a completed
// session without its record; the next start records it, once, and leaves
// alone the sessions whose summary is recorded and those not completed.
func TestRecordMissingSummaries(t *testing.T) {
	ctx := context.Background()
	e, st := newEngine(t, filepath.Join(t.TempDir(), "m.db"))
	sessionOf := func(ds []*Decision) string { return ds[0].SessionID }
	gap := sessionOf(coder(t, e, "coder", "m-1"))
	done := sessionOf(coder(t, e, "coder", "m-1"))
	open := sessionOf(coder(t, e, "coder", "m-1"))

	// The crash gap: the status change commits, the summary does not.
	changed := false
	if _, err := e.setStatus(ctx, admin, gap, store.StatusCompleted, &changed); err != nil || !changed {
		t.Fatalf("complete without the summary: %v (changed %v)", err, changed)
	}
	if _, err := e.SetStatus(ctx, admin, done, store.StatusCompleted); err != nil {
		t.Fatal(err)
	}
	recorded := func(e *Engine, id string) bool {
		t.Helper()
		sum, err := e.SessionSummary(ctx, admin, id)
		if err != nil {
			t.Fatal(err)
		}
		return sum.Recorded != nil
	}
	if recorded(e, gap) || !recorded(e, done) {
		t.Fatalf("before the restart: gap recorded %v, completed recorded %v", recorded(e, gap), recorded(e, done))
	}

	e2 := restarted(t, st)
	n, err := e2.RecordMissingSummaries(ctx)
	if err != nil || n != 1 {
		t.Fatalf("catch-up recorded %d, %v; want the one session left without its summary", n, err)
	}
	if !recorded(e2, gap) || recorded(e2, open) {
		t.Fatalf("after the catch-up: gap recorded %v, an active session recorded %v", recorded(e2, gap), recorded(e2, open))
	}
	if n, err := e2.RecordMissingSummaries(ctx); err != nil || n != 0 {
		t.Fatalf("a second catch-up recorded %d, %v; want none", n, err)
	}
	recs, err := st.SessionEvidence(ctx, gap)
	if err != nil {
		t.Fatal(err)
	}
	summaries := 0
	for _, r := range recs {
		if r.Type == "behaviour" {
			summaries++
		}
	}
	if summaries != 1 {
		t.Fatalf("%d behaviour records of the session; want its one summary", summaries)
	}
}
