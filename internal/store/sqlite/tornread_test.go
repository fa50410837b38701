package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// TestSessionReadAcrossACommit: a session's row and its log are read by two
// statements, so a status change that commits between them shows the row
// older than its log. That torn read must load the session as it now is,
// not report the store edited (CI once failed a gateway test this way: a
// poll of GetSession met the completion's commit). A row edited behind the
// log's back is still reported.
func TestSessionReadAcrossACommit(t *testing.T) {
	ctx := context.Background()
	s, _ := seeded(t, Options{}, newSession("s1"))
	old, err := sqlstore.ScanSession(s.queryRow(ctx, getSessionQuery(), "s1"))
	if err != nil {
		t.Fatal(err)
	}
	// The commit that lands between the row's read and its log's.
	done := *old.Session
	done.Status, done.UpdatedAt = store.StatusCompleted, done.UpdatedAt.Add(time.Second)
	applyAll(t, s, recorded(&store.Change{Session: &done}))

	got, err := s.checkSession(ctx, old)
	if err != nil {
		t.Fatalf("a row read before a commit its log was read after: %v", err)
	}
	if got.Status != store.StatusCompleted {
		t.Fatalf("loaded as %q, want the row as it now is (completed)", got.Status)
	}

	// Edited behind the log's back: the row does not move between reads.
	edit(t, s.path, `UPDATE sessions SET status = 'active' WHERE id = 's1'`)
	if _, err := s.GetSession(ctx, "s1"); !errors.Is(err, store.ErrTampered) {
		t.Fatalf("a status edited in the table: %v, want %v", err, store.ErrTampered)
	}
}
