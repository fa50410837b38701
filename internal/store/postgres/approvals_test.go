package postgres_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
	"github.com/mandate-dev/mandate/internal/store/storecopy"
)

// TestCopyKeepsApprovals: moving up from the embedded store keeps the
// approval queue — a pending approval can still be answered through the
// shared store and then allows its call once, an answered one still
// answers its call — and the copied log, approval records included,
// verifies.
func TestCopyKeepsApprovals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	person := auth.Principal{TokenID: "tok_p", Role: auth.RoleApprover}
	eve := func(subject string) map[string]any {
		return map[string]any{"to": "eve@auditors.example", "subject": subject, "body": "numbers"}
	}
	a, err := app.Open(ctx, app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Engine.CreateSession(ctx, admin, engine.SessionRequest{ID: "m", AgentID: "mailer", Intent: "Send the Q3 summary to alice@example.com"}); err != nil {
		t.Fatal(err)
	}
	ask := func(a *app.App, subject string) *engine.Decision {
		t.Helper()
		d, err := a.Engine.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: "m", Tool: "send_email", Args: eve(subject)})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	pending, denied := ask(a, "Q3"), ask(a, "Q4")
	if pending.Effect != policy.Ask || denied.Effect != policy.Ask {
		t.Fatalf("asks: %s %s", pending.Effect, denied.Effect)
	}
	if _, err := a.Engine.Answer(ctx, person, denied.ApprovalID, engine.AnswerRequest{Answer: approval.Answer{Decision: approval.Deny, Note: "not Q4"}}); err != nil {
		t.Fatal(err)
	}
	vkey := a.Evidence.Key().VerifierKey()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	dsn := pgtest.DSN(t)
	rep, err := storecopy.Copy(ctx, filepath.Join(dir, app.DatabaseFile), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows["approvals"] != 2 {
		t.Fatalf("copied %d approvals, want 2", rep.Rows["approvals"])
	}
	b, err := app.Open(ctx, app.Config{DataDir: dir, Store: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if d := ask(b, "Q4"); d.Effect != policy.Deny || d.Rules[0] != approval.RuleDenied {
		t.Errorf("the denied call after the copy: %s %v", d.Effect, d.Rules)
	}
	if _, err := b.Engine.Answer(ctx, person, pending.ApprovalID, engine.AnswerRequest{Answer: approval.Answer{Decision: approval.Approve}}); err != nil {
		t.Fatalf("answering a pending approval after the copy: %v", err)
	}
	if d := ask(b, "Q3"); d.Effect != policy.Allow || d.ApprovalID != pending.ApprovalID {
		t.Errorf("the approved call after the copy: %s %v", d.Effect, d.Rules)
	}
	stored, err := b.Store.GetDecision(ctx, pending.ID)
	if err != nil || stored.ApprovalID != pending.ApprovalID {
		t.Errorf("the asking decision's approval id after the copy: %+v %v", stored, err)
	}
	if sy, ok := b.Store.(interface{ SyncEvidence(context.Context) error }); ok {
		if err := sy.SyncEvidence(ctx); err != nil {
			t.Fatal(err)
		}
	}
	v, err := evidence.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := postgres.OpenReadOnly(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := evidence.VerifyStore(ctx, ro, v, nil); err != nil {
		t.Errorf("the log after the copy and the answers: %v", err)
	}
	var states []string
	list, _ := b.Store.(store.Approvals).ListApprovals(ctx, store.ApprovalFilter{SessionID: "m"})
	for _, ap := range list {
		states = append(states, ap.State)
	}
	if len(states) != 2 || states[0] != store.ApprovalDenied || states[1] != store.ApprovalApproved {
		t.Errorf("approvals after the copy: %v", states)
	}
}
