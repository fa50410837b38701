package engine

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

// countingStore counts the approval reads of the ask path.
type countingStore struct {
	*sqlite.Store
	calls, grants atomic.Int64
}

func (c *countingStore) CallApprovals(ctx context.Context, session, tool, hash string) ([]*store.Approval, error) {
	c.calls.Add(1)
	return c.Store.CallApprovals(ctx, session, tool, hash)
}

func (c *countingStore) SessionGrants(ctx context.Context, session string) ([]*store.Approval, error) {
	c.grants.Add(1)
	return c.Store.SessionGrants(ctx, session)
}

// sharedStore is a countingStore that says other servers share it.
type sharedStore struct{ *countingStore }

func (sharedStore) WatchApprovals(ctx context.Context, _ func(store.ApprovalNotice)) error {
	<-ctx.Done()
	return nil
}

func newCountingRig(t *testing.T, shared bool) (*approvalRig, *countingStore) {
	t.Helper()
	cs := &countingStore{Store: testStore(t, "")}
	r := &approvalRig{st: cs, clock: newClock(), events: &eventLog{}}
	if shared {
		r.st = sharedStore{cs}
	}
	r.e = r.engine(t, ApprovalOptions{})
	return r, cs
}

// TestAskReadsApprovalsOnce: repeated asks of one call reuse its pending
// approval from the cache; every change of the session's approvals (an
// answer, the use of a grant, a new approval) is seen by the next ask.
func TestAskReadsApprovalsOnce(t *testing.T) {
	r, cs := newCountingRig(t, false)
	sid, d := r.askEve(t)
	first := cs.calls.Load()
	for range 5 {
		if again := r.ask(t, sid, toEve); again.ApprovalID != d.ApprovalID {
			t.Fatalf("a repeated ask made approval %s beside %s", again.ApprovalID, d.ApprovalID)
		}
	}
	// The first repeat reads (the new approval's commit dropped the
	// cache); the other four do not.
	if got := cs.calls.Load() - first; got != 1 {
		t.Fatalf("5 repeated asks read the call's approvals %d times, want 1", got)
	}
	r.answer(t, approver, d.ApprovalID, approval.Answer{Decision: "approve"})
	if g := eval(t, r.e, admin, sid, "send_email", toEve); g.Effect != policy.Allow || g.ApprovalID != d.ApprovalID {
		t.Fatalf("after the answer: %s %v approval %q", g.Effect, g.Rules, g.ApprovalID)
	}
	if again := r.ask(t, sid, toEve); again.ApprovalID == d.ApprovalID {
		t.Fatal("a used approval allowed a second call from the cache")
	}
	// Denied: the cache does not keep the pending state.
	d2 := r.ask(t, sid, toMallo)
	r.answer(t, approver, d2.ApprovalID, approval.Answer{Decision: "deny"})
	if g := eval(t, r.e, admin, sid, "send_email", toMallo); g.Effect != policy.Deny || g.Rules[0] != approval.RuleDenied {
		t.Fatalf("after a denial: %s %v", g.Effect, g.Rules)
	}
}

// TestSharedStoreReadsEveryAsk: on a store other servers answer too, each
// ask reads the store.
func TestSharedStoreReadsEveryAsk(t *testing.T) {
	r, cs := newCountingRig(t, true)
	sid := r.session(t)
	for range 4 {
		r.ask(t, sid, toEve)
	}
	if got := cs.calls.Load(); got != 4 {
		t.Fatalf("4 asks read the call's approvals %d times, want 4", got)
	}
}
