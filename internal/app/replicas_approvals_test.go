package app

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

var approver = auth.Principal{TokenID: "tok_person", Role: auth.RoleApprover, Name: "person"}

// runApprovals runs each replica's approval loop (deadlines, and the feed
// of the other replicas' answers), as `mandate serve` does.
func runApprovals(t *testing.T, apps []*App) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, a := range apps {
		wg.Go(func() {
			if err := a.Engine.RunApprovals(ctx); err != nil {
				t.Errorf("RunApprovals: %v", err)
			}
		})
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	// Each replica's feed must listen before the test acts: an approval
	// created before would never be announced to it, and its stream
	// would see the answer without the approval.
	for i, a := range apps {
		f, ok := a.Store.(interface{ Following() <-chan struct{} })
		if !ok {
			t.Fatalf("replica %d's store (%T) does not announce approvals", i+1, a.Store)
		}
		select {
		case <-f.Following():
		case <-time.After(30 * time.Second):
			t.Fatalf("replica %d never listened for the approvals of the others", i+1)
		}
	}
}

// approvalReplicas is three replicas running their approval loops, with
// the mail session sid created through the first.
func approvalReplicas(t *testing.T, sid string) []*App {
	t.Helper()
	_, apps := replicas(t, 3)
	runApprovals(t, apps)
	mailSession(t, apps[0], sid)
	return apps
}

func mailSession(t *testing.T, a *App, id string) {
	t.Helper()
	if _, err := a.Engine.CreateSession(context.Background(), admin, engine.SessionRequest{ID: id, AgentID: "mailer",
		Intent: "Send the Q3 summary to alice@example.com"}); err != nil {
		t.Fatal(err)
	}
}

func eveArgs() map[string]any {
	return map[string]any{"to": "eve@auditors.example", "subject": "Q3", "body": "the numbers"}
}

func sendEve(t *testing.T, a *App, sid string, wait time.Duration) *engine.Decision {
	t.Helper()
	d, err := a.Engine.Evaluate(context.Background(), admin, engine.EvaluateRequest{SessionID: sid, Tool: "send_email", Args: eveArgs(), Wait: wait})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestApprovalsAcrossReplicas: an approval made through one replica takes
// effect on the next call through any other — the approval rows are read
// from the database on every ask, never cached — and is used up once,
// whichever replica uses it.
func TestApprovalsAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	apps := approvalReplicas(t, "m")

	d := sendEve(t, apps[0], "m", 0)
	if d.Effect != policy.Ask || d.ApprovalID == "" {
		t.Fatalf("first call: %s %v", d.Effect, d.Rules)
	}
	// Every replica sees the pending approval; the same call through
	// another replica names the same one (nobody is asked twice).
	if again := sendEve(t, apps[2], "m", 0); again.ApprovalID != d.ApprovalID || again.Effect != policy.Ask {
		t.Errorf("the same call through replica 3: %s approval %s, want ask on %s", again.Effect, again.ApprovalID, d.ApprovalID)
	}
	if _, err := apps[1].Engine.Answer(ctx, approver, d.ApprovalID, engine.AnswerRequest{Answer: approval.Answer{Decision: approval.Approve, Note: "Eve audits us"}}); err != nil {
		t.Fatal(err)
	}
	// The next call through the third replica is allowed, once.
	got := sendEve(t, apps[2], "m", 0)
	if got.Effect != policy.Allow || got.Rules[0] != approval.RuleGranted || got.ApprovalID != d.ApprovalID {
		t.Fatalf("after the answer through replica 2, replica 3 decided %s %v (approval %s)", got.Effect, got.Rules, got.ApprovalID)
	}
	if next := sendEve(t, apps[0], "m", 0); next.Effect != policy.Ask || next.ApprovalID == d.ApprovalID {
		t.Errorf("the approval was used twice: replica 1 decided %s on %s", next.Effect, next.ApprovalID)
	}

	// A second answer through another replica is a conflict.
	_, err := apps[0].Engine.Answer(ctx, approver, d.ApprovalID, engine.AnswerRequest{Answer: approval.Answer{Decision: approval.Deny}})
	if !errors.Is(err, engine.ErrConflict) {
		t.Errorf("answering an answered approval through another replica: %v, want a conflict", err)
	}

	// A session-scoped answer through one replica amends the mandate;
	// a call like it, through another, is allowed by it.
	mailSession(t, apps[0], "m2")
	d = sendEve(t, apps[0], "m2", 0)
	if _, err := apps[1].Engine.Answer(ctx, approver, d.ApprovalID, engine.AnswerRequest{Answer: approval.Answer{Decision: approval.Approve, Scope: store.ScopeSession, Note: "Eve may get the Q3 numbers"}}); err != nil {
		t.Fatal(err)
	}
	like, err := apps[2].Engine.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: "m2", Tool: "send_email",
		Args: map[string]any{"to": "eve@auditors.example", "subject": "Q3, corrected", "body": "the right numbers"}})
	if err != nil {
		t.Fatal(err)
	}
	if like.Effect != policy.Allow || like.MandateVersion < 2 {
		t.Errorf("a call like the approved one through replica 3: %s %v mandate v%d", like.Effect, like.Rules, like.MandateVersion)
	}
}

// TestApprovalUsedOnceUnderRace: after an approval, the same call arrives
// at every replica at once; exactly one is allowed by it — the others lost
// the approval's revision to it, were decided again and ask anew.
func TestApprovalUsedOnceUnderRace(t *testing.T) {
	ctx := context.Background()
	_, apps := replicas(t, 3)
	mailSession(t, apps[0], "r")
	d := sendEve(t, apps[0], "r", 0)
	if _, err := apps[1].Engine.Answer(ctx, approver, d.ApprovalID, engine.AnswerRequest{Answer: approval.Answer{Decision: approval.Approve}}); err != nil {
		t.Fatal(err)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		granted  int
		effects  []policy.Effect
		failures []error
	)
	start := make(chan struct{})
	for i := range 9 {
		wg.Go(func() {
			<-start
			d, err := apps[i%3].Engine.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: "r", Tool: "send_email", Args: eveArgs()})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, err)
				return
			}
			effects = append(effects, d.Effect)
			if d.Effect == policy.Allow {
				granted++
			}
		})
	}
	close(start)
	wg.Wait()
	t.Logf("effects %v, failures %d", effects, len(failures))
	for _, err := range failures {
		t.Errorf("a call failed instead of being decided: %v", err)
	}
	if granted != 1 {
		t.Fatalf("%d calls allowed by one approval of scope once, want exactly 1", granted)
	}
	ap, err := apps[2].Engine.GetApproval(ctx, approver, d.ApprovalID, 0)
	if err != nil || ap.UsedBy == "" {
		t.Errorf("the approval is not marked used: %+v %v", ap, err)
	}
}

// TestWaitWokenByAnotherReplica: POST /v1/evaluate waiting on replica 1 is
// woken by an answer given through replica 2 (LISTEN/NOTIFY), and a
// long-poll on replica 3 likewise; neither waits out its wait.
func TestWaitWokenByAnotherReplica(t *testing.T) {
	ctx := context.Background()
	apps := approvalReplicas(t, "w")
	d := sendEve(t, apps[0], "w", 0)

	const wait = 60 * time.Second
	var (
		wg     sync.WaitGroup
		waited *engine.Decision
		polled *store.Approval
		errs   [2]error
	)
	wg.Go(func() {
		waited, errs[0] = apps[0].Engine.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: "w", Tool: "send_email", Args: eveArgs(), Wait: wait})
	})
	wg.Go(func() { polled, errs[1] = apps[2].Engine.GetApproval(ctx, approver, d.ApprovalID, wait) })
	for apps[0].Engine.Hub().Waiting(d.ApprovalID) < 1 || apps[2].Engine.Hub().Waiting(d.ApprovalID) < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	if _, err := apps[1].Engine.Answer(ctx, approver, d.ApprovalID, engine.AnswerRequest{Answer: approval.Answer{Decision: approval.Approve}}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("both waiters answered %s after the answer through another replica", took)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Had no notification woken them, both would have returned only when
	// their wait ran out (reading the answer then).
	if waited.Effect != policy.Allow || waited.Rules[0] != approval.RuleGranted {
		t.Errorf("the waiting evaluate on replica 1: %s %v", waited.Effect, waited.Rules)
	}
	if polled.State != store.ApprovalApproved {
		t.Errorf("the long-poll on replica 3: %s", polled.State)
	}
	if took >= wait {
		t.Errorf("the waiters waited out their wait (%s)", took)
	}
}
