package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

// TestApprovalWatchSurvivesConnectionLoss: the LISTEN connection is killed
// under the watcher; it says so ("" — read everything again), listens
// anew, and the next answer through another replica is announced.
func TestApprovalWatchSurvivesConnectionLoss(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s1 := openTest(t, dsn, Options{ReplicaID: "r1"})
	s2 := openTest(t, dsn, Options{ReplicaID: "r2", Poll: 20 * time.Millisecond})
	if err := store.Apply(ctx, s1, storetest.NewSession("s")); err != nil {
		t.Fatal(err)
	}
	ap := storetest.Approval("ap-w", "s", "s-d1", "h", 1)
	d := storetest.Decision("s", 1)
	d.Approvals = []*store.Approval{ap}
	if err := store.Apply(ctx, s1, d); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	seen := make(chan string, 64)
	done := make(chan error, 1)
	go func() { done <- s2.WatchApprovals(wctx, func(n store.ApprovalNotice) { seen <- n.ID }) }()
	defer func() { cancel(); <-done }()
	next := func(what string) string {
		t.Helper()
		select {
		case id := <-seen:
			return id
		case <-time.After(15 * time.Second):
			t.Fatalf("nothing announced: %s", what)
		}
		return ""
	}
	if id := next("listening"); id != "" {
		t.Fatalf("first call %q, want \"\"", id)
	}
	admin := pgtest.Conn(t, pgtest.Server(t))
	tag, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE 'LISTEN %' AND query LIKE '%' || $1 || '%'`, s2.channel(chanApproval))
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("kill the listener: %v (%d)", err, tag.RowsAffected())
	}
	// Lost ("" — read again), then listening again ("").
	for range 2 {
		if id := next("after the connection was killed"); id != "" {
			t.Fatalf("got %q, want \"\" (waiters read again)", id)
		}
	}
	cp := *ap
	cp.State, cp.Rev, cp.AnsweredBy = store.ApprovalApproved, 2, "approver:tok_p"
	if err := store.Apply(ctx, s1, &store.Change{ApprovalChanges: []*store.ApprovalChange{{Approval: &cp, From: store.ApprovalPending}}}); err != nil {
		t.Fatal(err)
	}
	for {
		id := next("the answer after reconnecting")
		if id == "ap-w" {
			break
		}
		if id != "" {
			t.Fatalf("announced %q", id)
		}
	}
}
