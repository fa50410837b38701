package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// The approvals section: rows written with their decision, read back
// whole, listed and found by call, updated only from the revision they
// replace (of two answers one wins), and — on a shared backend — every
// change announced to the other replicas.

func approvals(t *testing.T, s store.Store) store.Approvals {
	t.Helper()
	return kept[store.Approvals](t, s, "every ask would stay a dead end")
}

// Approval is a pending approval of session sess, asked by decision
// decision, for a call with args hash hash, created at epoch + n.
func Approval(id, sess, decision, hash string, n int) *store.Approval {
	at := epoch.Add(time.Duration(n) * time.Second)
	return &store.Approval{
		ID: id, SessionID: sess, DecisionID: decision, Tool: "send_email", ArgsHash: hash,
		Args: json.RawMessage(`{"to":"eve@x.example"}`), Kind: "send",
		Like:  &store.Likeness{Tool: "send_email", Kinds: []string{"send"}, Resources: []string{"eve@x.example"}},
		Rules: []string{"builtin.recipient-outside"}, Reasons: []string{"recipient eve@x.example was never named"},
		AnswerableBy: []string{"user", "approver", "admin"}, State: store.ApprovalPending,
		Deadline: at.Add(10 * time.Minute), Rev: 1, CreatedAt: at,
	}
}

// asked is a change recording decision seq of sess as an ask with its
// approval, as the engine commits it.
func asked(sess string, seq int, ap *store.Approval) *store.Change {
	c := Decision(sess, seq)
	c.Decision.Effect, c.Decision.ApprovalID = "ask", ap.ID
	c.Decision.Judge = &store.JudgeOpinion{Model: "m", Decision: "ask", Reason: "unsure", LatencyMS: 12, Mode: "advisory"}
	ap.DecisionID = c.Decision.ID
	c.Approvals = []*store.Approval{ap}
	c.JudgeExchanges = []*store.JudgeExchange{{ID: "j-" + ap.ID, SessionID: sess, ApprovalID: ap.ID, Model: "m", PromptHash: "ab", CreatedAt: epoch}}
	return c
}

// answer is ap answered (approved unless state says otherwise), one
// revision on.
func answer(ap *store.Approval, state, by string) *store.ApprovalChange {
	cp := *ap
	cp.State, cp.Scope, cp.Rev = state, store.ScopeOnce, ap.Rev+1
	at := epoch.Add(time.Minute)
	cp.AnsweredAt, cp.AnsweredBy, cp.AnswererRole, cp.Via, cp.Origin, cp.Note = &at, by, "approver", "api", "observed", "fine by "+by
	return &store.ApprovalChange{Approval: &cp, From: ap.State}
}

func testApprovals(t *testing.T, b Backend) {
	ctx := context.Background()
	loc := b.New(t)
	s := open(t, b, loc, nil)
	st := approvals(t, s)

	sess := NewSession("s")
	sess.Session.ApprovalTimeout = "5m"
	apply(t, s, sess)
	apply(t, s, NewSession("other"))
	a1 := Approval("ap-01", "s", "", "h1", 1)
	apply(t, s, asked("s", 1, a1))
	a2 := Approval("ap-02", "s", "", "h2", 2)
	a2.Deadline = epoch.Add(time.Minute) // the earliest
	apply(t, s, asked("s", 2, a2))
	a3 := Approval("ap-03", "other", "", "h1", 3)
	apply(t, s, asked("other", 1, a3))

	// Read back whole, and the decision and session keep their parts.
	got, err := st.GetApproval(ctx, "ap-01")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a1) {
		t.Errorf("round trip\n got %+v\nwant %+v", got, a1)
	}
	if _, err := st.GetApproval(ctx, "ap-nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown approval: %v, want ErrNotFound", err)
	}
	d, err := s.GetDecision(ctx, "s-d1")
	if err != nil {
		t.Fatal(err)
	}
	if d.ApprovalID != "ap-01" || d.Judge == nil || d.Judge.Reason != "unsure" || d.Judge.LatencyMS != 12 {
		t.Errorf("decision's approval and judge: %q %+v", d.ApprovalID, d.Judge)
	}
	if ss, err := s.GetSession(ctx, "s"); err != nil || ss.ApprovalTimeout != "5m" {
		t.Errorf("session's approval timeout: %+v %v", ss, err)
	}

	// Listing: newest first, by session, state and cursor.
	ids := func(list []*store.Approval, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, a := range list {
			out += a.ID + " "
		}
		return out
	}
	for _, tc := range []struct {
		f    store.ApprovalFilter
		want string
	}{
		{store.ApprovalFilter{}, "ap-03 ap-02 ap-01 "},
		{store.ApprovalFilter{SessionID: "s"}, "ap-02 ap-01 "},
		{store.ApprovalFilter{State: store.ApprovalApproved}, ""},
		{store.ApprovalFilter{Before: "ap-03", Limit: 1}, "ap-02 "},
	} {
		if got := ids(st.ListApprovals(ctx, tc.f)); got != tc.want {
			t.Errorf("list %+v = %q, want %q", tc.f, got, tc.want)
		}
	}
	if got := ids(st.CallApprovals(ctx, "s", "send_email", "h1")); got != "ap-01 " {
		t.Errorf("call approvals = %q", got)
	}
	if got := ids(st.CallApprovals(ctx, "s", "Read", "h1")); got != "" {
		t.Errorf("another tool's approvals = %q", got)
	}
	if next, err := st.NextDeadline(ctx); err != nil || !next.Equal(a2.Deadline) {
		t.Errorf("next deadline %v %v, want %v", next, err, a2.Deadline)
	}
	if got := ids(st.DueApprovals(ctx, epoch.Add(2*time.Minute), 10)); got != "ap-02 " {
		t.Errorf("due = %q", got)
	}

	// An answer from the revision it replaces commits, with its record.
	size0 := size(t, s)
	ch := answer(a1, store.ApprovalApproved, "alice")
	apply(t, s, &store.Change{ApprovalChanges: []*store.ApprovalChange{ch}})
	if got, _ := st.GetApproval(ctx, "ap-01"); got.State != store.ApprovalApproved || got.Rev != 2 || got.AnsweredBy != "alice" {
		t.Errorf("answered: %+v", got)
	}
	// The same revision again — a second answer read before the first
	// committed — fails as a conflict, and nothing of its change is
	// written.
	late := answer(a1, store.ApprovalDenied, "bob")
	err = store.Apply(ctx, s, &store.Change{ApprovalChanges: []*store.ApprovalChange{late}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second answer from the same revision: %v, want ErrConflict", err)
	}
	if got, _ := st.GetApproval(ctx, "ap-01"); got.State != store.ApprovalApproved || got.AnsweredBy != "alice" {
		t.Errorf("the losing answer changed the row: %+v", got)
	}
	Sync(ctx, t, s)
	if n := size(t, s); n != size0+1 {
		t.Errorf("evidence grew by %d, want 1: the failed answer's record was written", n-size0)
	}
	// An update of an approval that does not exist fails.
	ghost := answer(Approval("ap-ghost", "s", "x", "h", 9), store.ApprovalApproved, "alice")
	if err := store.Apply(ctx, s, &store.Change{ApprovalChanges: []*store.ApprovalChange{ghost}}); err == nil {
		t.Error("answering an approval that does not exist succeeded")
	}

	// Session-scoped answers are the session's grants, oldest first;
	// pending and once-scoped ones are not.
	g := answer(a2, store.ApprovalDenied, "carol")
	g.Approval.Scope = store.ScopeSession
	apply(t, s, &store.Change{ApprovalChanges: []*store.ApprovalChange{g}})
	if got := ids(st.SessionGrants(ctx, "s")); got != "ap-02 " {
		t.Errorf("session grants = %q", got)
	}
	if got := ids(st.ListApprovals(ctx, store.ApprovalFilter{State: store.ApprovalPending})); got != "ap-03 " {
		t.Errorf("pending = %q", got)
	}
	// None pending: no next deadline.
	apply(t, s, &store.Change{ApprovalChanges: []*store.ApprovalChange{answer(a3, store.ApprovalExpired, "")}})
	if _, err := st.NextDeadline(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("next deadline with none pending: %v, want ErrNotFound", err)
	}

	// A duplicate approval id fails its change whole.
	dup := asked("s", 3, Approval("ap-01", "s", "", "h9", 4))
	if err := store.Apply(ctx, s, dup); !errors.Is(err, store.ErrConflict) {
		t.Errorf("duplicate approval id: %v, want ErrConflict", err)
	}
	if _, err := s.GetDecision(ctx, "s-d3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the decision of a failed change was written: %v", err)
	}

	// Reopened, everything is still there: a restart loses no pending
	// approval and no answer.
	if b.Shared {
		s = open(t, b, loc, nil)
	} else {
		s.Close()
		s = open(t, b, loc, nil)
	}
	st = approvals(t, s)
	if got := ids(st.ListApprovals(ctx, store.ApprovalFilter{})); got != "ap-03 ap-02 ap-01 " {
		t.Errorf("after reopening: %q", got)
	}
	if got, _ := st.GetApproval(ctx, "ap-01"); got == nil || got.State != store.ApprovalApproved || got.Note != "fine by alice" {
		t.Errorf("the answer after reopening: %+v", got)
	}
}

// testApprovalRace: many answers to one approval at once, through every
// store open on it; exactly one commits.
func testApprovalRace(t *testing.T, b Backend) {
	ctx := context.Background()
	loc := b.New(t)
	stores := []store.Store{open(t, b, loc, nil)}
	if b.Shared {
		stores = append(stores, open(t, b, loc, nil))
	}
	s := stores[0]
	apply(t, s, NewSession("s"))
	ap := Approval("ap-race", "s", "", "h", 1)
	apply(t, s, asked("s", 1, ap))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		won  []string
		errs []error
	)
	for i := range 12 {
		wg.Go(func() {
			by := fmt.Sprintf("person-%d", i)
			state := store.ApprovalApproved
			if i%2 == 1 {
				state = store.ApprovalDenied
			}
			err := store.Apply(ctx, stores[i%len(stores)], &store.Change{ApprovalChanges: []*store.ApprovalChange{answer(ap, state, by)}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, by)
			case !errors.Is(err, store.ErrConflict):
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		t.Errorf("an answer failed with something other than a conflict: %v", err)
	}
	if len(won) != 1 {
		t.Fatalf("%d answers won (%v), want exactly 1", len(won), won)
	}
	for _, st := range stores {
		got, err := approvals(t, st).GetApproval(ctx, "ap-race")
		if err != nil || got.AnsweredBy != won[0] || got.Rev != 2 {
			t.Errorf("the row: %+v %v, want answered by %s at rev 2", got, err, won[0])
		}
	}
}

// testApprovalWatch: on a shared backend, a change to an approval committed
// through one replica is announced to the watchers of the others.
func testApprovalWatch(t *testing.T, b Backend) {
	if !b.Shared {
		t.Skip("the backend is not shared between processes")
	}
	ctx := context.Background()
	loc := b.New(t)
	s1, s2 := open(t, b, loc, nil), open(t, b, loc, nil)
	w, ok := Unwrap(s2).(store.ApprovalWatcher)
	if !ok {
		t.Fatalf("%T is shared but announces no approval changes (store.ApprovalWatcher): a wait on one replica would miss an answer given through another", s2)
	}
	apply(t, s1, NewSession("s"))
	ap := Approval("ap-watch", "s", "", "h", 1)
	apply(t, s1, asked("s", 1, ap))

	wctx, cancel := context.WithCancel(ctx)
	seen := make(chan string, 16)
	done := make(chan error, 1)
	notices := make(chan store.ApprovalNotice, 16)
	go func() {
		done <- w.WatchApprovals(wctx, func(n store.ApprovalNotice) {
			notices <- n
			seen <- n.ID
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watch: %v", err)
		}
	}()
	// The watcher says "" once it listens (read everything again).
	select {
	case id := <-seen:
		if id != "" {
			t.Fatalf("first call %q, want \"\" (listening)", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher never started listening")
	}
	<-notices
	apply(t, s1, &store.Change{ApprovalChanges: []*store.ApprovalChange{answer(ap, store.ApprovalApproved, "alice")}})
	select {
	case id := <-seen:
		n := <-notices
		if id != "ap-watch" || n.Event != "approval.answered" || n.Mine {
			t.Errorf("announced %+v, want ap-watch, approval.answered, from another replica", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an answer through one replica was never announced to the other")
	}
	// A new approval through the watching replica itself: announced as
	// its own, with its event.
	apply(t, s2, asked("s", 2, Approval("ap-mine", "s", "", "h2", 2)))
	select {
	case <-seen:
		n := <-notices
		if n.ID != "ap-mine" || n.Event != "approval" || !n.Mine {
			t.Errorf("announced %+v, want ap-mine, approval, mine", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a new approval was never announced")
	}
	// A failed change announces nothing.
	if err := store.Apply(ctx, s1, &store.Change{ApprovalChanges: []*store.ApprovalChange{answer(ap, store.ApprovalDenied, "bob")}}); err == nil {
		t.Fatal("a stale answer committed")
	}
	select {
	case id := <-seen:
		t.Errorf("a failed change was announced: %q", id)
		<-notices
	case <-time.After(300 * time.Millisecond):
	}
}
