package engine

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

var (
	approver = auth.Principal{TokenID: "tok_appr", Role: auth.RoleApprover}
	// mailHook is a hook token serving the mailer agent.
	mailHook = auth.Principal{TokenID: "tok_mailhook", Role: auth.RoleHook, AgentID: "mailer"}
)

// clock is a settable clock for deadlines.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

type recordedEvent struct {
	typ, session string
	data         any
}

type eventLog struct {
	mu  sync.Mutex
	evs []recordedEvent
}

func (l *eventLog) Publish(typ, session string, data any) {
	l.mu.Lock()
	l.evs = append(l.evs, recordedEvent{typ, session, data})
	l.mu.Unlock()
}

func (l *eventLog) types() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.evs {
		out = append(out, e.typ)
	}
	return out
}

type approvalRig struct {
	e      *Engine
	st     store.Store
	clock  *clock
	events *eventLog
}

func newApprovalRig(t testing.TB, path string, opts ApprovalOptions) *approvalRig {
	t.Helper()
	r := &approvalRig{st: testStore(t, path), clock: newClock(), events: &eventLog{}}
	r.e = r.engine(t, opts)
	return r
}

func (r *approvalRig) engine(t testing.TB, opts ApprovalOptions) *Engine {
	t.Helper()
	if opts.Events == nil {
		opts.Events = r.events
	}
	return engineWith(t, Options{Store: r.st, Now: r.clock.now, Approvals: opts})
}

var (
	toEve   = map[string]any{"to": "eve@competitor.example", "subject": "Q3", "body": "the numbers"}
	toEve2  = map[string]any{"to": "eve@competitor.example", "subject": "Q3 again", "body": "other words"}
	toMallo = map[string]any{"to": "mallory@elsewhere.example", "subject": "Q3", "body": "the numbers"}
)

func (r *approvalRig) session(t testing.TB) string {
	return mustSession(t, r.e, SessionRequest{AgentID: "mailer", Intent: "Send the Q3 summary to alice@example.com"})
}

func (r *approvalRig) ask(t testing.TB, sid string, args map[string]any) *Decision {
	t.Helper()
	d := eval(t, r.e, admin, sid, "send_email", args)
	if d.Effect != policy.Ask || d.ApprovalID == "" {
		t.Fatalf("want an ask with an approval, got %s %v %v approval %q", d.Effect, d.Rules, d.Reasons, d.ApprovalID)
	}
	return d
}

// askEve starts a session and asks its send of the Q3 numbers to Eve,
// whom the mandate does not name: the ask most tests here answer.
func (r *approvalRig) askEve(t testing.TB) (string, *Decision) {
	t.Helper()
	sid := r.session(t)
	return sid, r.ask(t, sid, toEve)
}

// answer has p answer the approval id; the answer must be taken.
func (r *approvalRig) answer(t testing.TB, p auth.Principal, id string, a approval.Answer) *store.Approval {
	t.Helper()
	got, err := r.e.Answer(context.Background(), p, id, AnswerRequest{Answer: a})
	if err != nil {
		t.Fatalf("answer %s %+v: %v", id, a, err)
	}
	return got
}

func TestAskBecomesPendingApproval(t *testing.T) {
	r := newApprovalRig(t, "", ApprovalOptions{})
	ctx := context.Background()
	sid, d := r.askEve(t)
	a, err := r.e.GetApproval(ctx, approver, d.ApprovalID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.State != store.ApprovalPending || a.DecisionID != d.ID || a.Tool != "send_email" || a.ArgsHash == "" || a.SessionID != sid {
		t.Errorf("approval %+v", a)
	}
	if !slices.Contains(a.Rules, "builtin.recipient-outside") || len(a.Reasons) == 0 {
		t.Errorf("approval lacks why it was asked: %v %v", a.Rules, a.Reasons)
	}
	if got := a.Deadline.Sub(r.clock.now()); got != approval.DefaultTimeout {
		t.Errorf("deadline in %s, want the default %s", got, approval.DefaultTimeout)
	}
	if !slices.Equal(a.AnswerableBy, []string{"user", "approver", "admin"}) {
		t.Errorf("answerable by %v", a.AnswerableBy)
	}
	stored, err := r.st.GetDecision(ctx, d.ID)
	if err != nil || stored.ApprovalID != a.ID {
		t.Errorf("the decision row names approval %q (%v), want %s", stored.ApprovalID, err, a.ID)
	}
	// The same call again: the same approval, not a second question.
	d2 := r.ask(t, sid, toEve)
	if d2.ApprovalID != d.ApprovalID {
		t.Errorf("a repeated ask made approval %s beside %s", d2.ApprovalID, d.ApprovalID)
	}
	// Another call: another approval.
	d3 := r.ask(t, sid, toMallo)
	if d3.ApprovalID == d.ApprovalID {
		t.Error("a different call shares the approval")
	}
	list, err := r.e.ListApprovals(ctx, approver, store.ApprovalFilter{SessionID: sid, State: store.ApprovalPending})
	if err != nil || len(list) != 2 {
		t.Fatalf("pending approvals: %d %v", len(list), err)
	}
	if got := r.events.types(); slices.Index(got, EventApproval) < 0 || slices.Index(got, EventDecision) < 0 {
		t.Errorf("events %v", got)
	}
}

func TestApprovedCallIsAllowedOnce(t *testing.T) {
	r := newApprovalRig(t, "", ApprovalOptions{})
	ctx := context.Background()
	sid, d := r.askEve(t)
	a := r.answer(t, approver, d.ApprovalID, approval.Answer{Decision: "approve", Note: "fine, she is our auditor"})
	if a.State != store.ApprovalApproved || a.AnsweredBy != "approver:tok_appr" || a.AnswererRole != "approver" || a.Scope != store.ScopeOnce || a.Note != "fine, she is our auditor" {
		t.Errorf("answered approval %+v", a)
	}
	// A different call is not approved by it.
	if other := r.ask(t, sid, toEve2); other.ApprovalID == d.ApprovalID {
		t.Error("an approval of one call answered another")
	}
	g := eval(t, r.e, admin, sid, "send_email", toEve)
	if g.Effect != policy.Allow || g.Rules[0] != approval.RuleGranted || g.ApprovalID != d.ApprovalID {
		t.Fatalf("re-evaluated approved call: %s %v approval %q", g.Effect, g.Rules, g.ApprovalID)
	}
	used, _ := r.e.GetApproval(ctx, approver, d.ApprovalID, 0)
	if used.UsedBy != g.ID {
		t.Errorf("approval used by %q, want %s", used.UsedBy, g.ID)
	}
	// Once: the same call again asks again, with a new approval.
	again := r.ask(t, sid, toEve)
	if again.ApprovalID == d.ApprovalID {
		t.Error("a used approval allowed a second call")
	}
}

func TestAnsweringIsForPeopleOnly(t *testing.T) {
	r := newApprovalRig(t, "", ApprovalOptions{})
	ctx := context.Background()
	sid, d := r.askEve(t)
	ans := AnswerRequest{Answer: approval.Answer{Decision: "approve"}}
	for _, p := range []auth.Principal{agentP("mailer"), hook, {TokenID: "tok_x", Role: "nobody"}} {
		if _, err := r.e.Answer(ctx, p, d.ApprovalID, ans); !errors.Is(err, ErrForbidden) {
			t.Errorf("%s answered: %v", p.Role, err)
		}
		if _, err := r.e.ListApprovals(ctx, p, store.ApprovalFilter{}); p.Role != auth.RoleHook && !errors.Is(err, ErrForbidden) {
			t.Errorf("%s listed approvals: %v", p.Role, err)
		}
	}
	if _, err := r.e.Answer(ctx, approver, "01-no-such", ans); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown approval: %v", err)
	}
	for _, bad := range []approval.Answer{{Decision: "yes"}, {Decision: ""}, {Decision: "approve", Scope: "forever"}} {
		if _, err := r.e.Answer(ctx, approver, d.ApprovalID, AnswerRequest{Answer: bad}); !errors.Is(err, ErrInvalid) {
			t.Errorf("answer %+v: %v", bad, err)
		}
	}
	for _, p := range []auth.Principal{user, admin} {
		_, d := r.askEve(t)
		if _, err := r.e.Answer(ctx, p, d.ApprovalID, AnswerRequest{Answer: approval.Answer{Decision: "deny"}}); err != nil {
			t.Errorf("%s could not answer: %v", p.Role, err)
		}
	}
	r.answer(t, approver, d.ApprovalID, approval.Answer{Decision: "deny", Note: "no"})
	_, err := r.e.Answer(ctx, admin, d.ApprovalID, ans)
	if !errors.Is(err, ErrConflict) || !errors.Is(err, approval.ErrAnswered) {
		t.Fatalf("second answer: %v", err)
	}
	// The denied call stays denied.
	dd := eval(t, r.e, admin, sid, "send_email", toEve)
	if dd.Effect != policy.Deny || dd.Rules[0] != approval.RuleDenied {
		t.Errorf("denied call again: %s %v", dd.Effect, dd.Rules)
	}
}

func TestFirstAnswerWins(t *testing.T) {
	r := newApprovalRig(t, "", ApprovalOptions{})
	ctx := context.Background()
	d := r.ask(t, r.session(t), toEve)
	const n = 16
	var wins, conflicts atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			dec := "approve"
			if i%2 == 1 {
				dec = "deny"
			}
			_, err := r.e.Answer(ctx, approver, d.ApprovalID, AnswerRequest{Answer: approval.Answer{Decision: dec}})
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, ErrConflict):
				conflicts.Add(1)
			default:
				t.Errorf("answer: %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 || conflicts.Load() != n-1 {
		t.Errorf("%d answers won and %d conflicted, want 1 and %d", wins.Load(), conflicts.Load(), n-1)
	}
}

func TestExpiredIsDenied(t *testing.T) {
	r := newApprovalRig(t, "", ApprovalOptions{Timeout: time.Minute})
	ctx := context.Background()
	sid, d := r.askEve(t)
	r.clock.advance(2 * time.Minute)
	// Shown as expired before the expiry loop records it…
	a, _ := r.e.GetApproval(ctx, approver, d.ApprovalID, 0)
	if a.State != store.ApprovalExpired {
		t.Errorf("past its deadline it shows %s", a.State)
	}
	// …and an answer is refused and records it.
	_, err := r.e.Answer(ctx, approver, d.ApprovalID, AnswerRequest{Answer: approval.Answer{Decision: "approve"}})
	if !errors.Is(err, ErrConflict) || !errors.Is(err, approval.ErrExpired) {
		t.Fatalf("answer after the deadline: %v", err)
	}
	stored, _ := r.st.(store.Approvals).GetApproval(ctx, d.ApprovalID)
	if stored.State != store.ApprovalExpired {
		t.Errorf("stored state %s", stored.State)
	}
	// An expired approval answers nothing: the call asks again.
	if again := r.ask(t, sid, toEve); again.ApprovalID == d.ApprovalID {
		t.Error("an expired approval was reused")
	}
	// The expiry loop's own pass.
	d2 := r.ask(t, sid, toMallo)
	r.clock.advance(2 * time.Minute)
	n, err := r.e.ExpireDue(ctx, r.clock.now())
	if err != nil || n != 2 {
		t.Errorf("expired %d (%v), want 2", n, err)
	}
	if a, _ := r.e.GetApproval(ctx, approver, d2.ApprovalID, 0); a.State != store.ApprovalExpired || a.Via != approval.ViaDeadline {
		t.Errorf("after ExpireDue: %+v", a)
	}
}

func TestDeadlineBySessionAndRule(t *testing.T) {
	r := newApprovalRig(t, "", ApprovalOptions{Timeout: time.Hour})
	sid := mustSession(t, r.e, SessionRequest{AgentID: "mailer", Intent: "Send the Q3 summary to alice@example.com", ApprovalTimeout: "90s"})
	d := r.ask(t, sid, toEve)
	if got := d.Approval.Deadline.Sub(r.clock.now()); got != 90*time.Second {
		t.Errorf("session deadline %s, want 90s", got)
	}
	if _, err := r.e.CreateSession(context.Background(), user, SessionRequest{AgentID: "x", ApprovalTimeout: "soon"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad approval_timeout: %v", err)
	}
	if got := approval.Deadline(r.clock.now(), []time.Duration{5 * time.Minute, 2 * time.Minute}, 90*time.Second, time.Hour).Sub(r.clock.now()); got != 2*time.Minute {
		t.Errorf("rule deadline %s, want the shortest rule's 2m", got)
	}
}

func TestSessionScopeAmendsTheMandate(t *testing.T) {
	r := newApprovalRig(t, "", ApprovalOptions{})
	ctx := context.Background()
	sid, d := r.askEve(t)
	a := r.answer(t, user, d.ApprovalID, approval.Answer{Decision: "approve", Scope: "session", Note: "Eve may get the Q3 numbers this week"})
	if a.MandateVersion != 2 {
		t.Errorf("approval amended to version %d, want 2", a.MandateVersion)
	}
	vs, err := r.e.Mandates(ctx, user, sid)
	if err != nil || len(vs) != 2 {
		t.Fatalf("versions %d %v", len(vs), err)
	}
	v2 := vs[1]
	if v2.Source != "approver" || v2.CreatedBy != "user:tok_user" {
		t.Errorf("version 2 made by %s/%s", v2.Source, v2.CreatedBy)
	}
	last := v2.Mandate.Instructions[len(v2.Mandate.Instructions)-1]
	if last.Text != "Eve may get the Q3 numbers this week" || last.Source != "approver" {
		t.Errorf("the note is not kept verbatim: %+v", last)
	}
	if !slices.Contains(v2.Mandate.Scope.Recipients, "eve@competitor.example") || len(v2.Mandate.Notes) == 0 {
		t.Errorf("amended scope %+v notes %v", v2.Mandate.Scope, v2.Mandate.Notes)
	}
	// Calls like it are allowed; the version says why.
	like := eval(t, r.e, admin, sid, "send_email", toEve2)
	if like.Effect != policy.Allow || like.MandateVersion != 2 {
		t.Errorf("a call like the approved one: %s %v v%d", like.Effect, like.Rules, like.MandateVersion)
	}
	// Others are not.
	if other := eval(t, r.e, admin, sid, "send_email", toMallo); other.Effect == policy.Allow {
		t.Errorf("an unlike call was allowed: %v", other.Rules)
	}
}

func TestApprovalsSurviveARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	r := newApprovalRig(t, path, ApprovalOptions{})
	ctx := context.Background()
	sid, d := r.askEve(t)

	e2 := r.engine(t, ApprovalOptions{})
	a, err := e2.GetApproval(ctx, approver, d.ApprovalID, 0)
	if err != nil || a.State != store.ApprovalPending {
		t.Fatalf("after a restart: %+v %v", a, err)
	}
	if _, err := e2.Answer(ctx, approver, d.ApprovalID, AnswerRequest{Answer: approval.Answer{Decision: "approve"}}); err != nil {
		t.Fatal(err)
	}
	e3 := r.engine(t, ApprovalOptions{})
	g := eval(t, e3, admin, sid, "send_email", toEve)
	if g.Effect != policy.Allow || g.ApprovalID != d.ApprovalID {
		t.Errorf("after another restart the answer is lost: %s %v", g.Effect, g.Rules)
	}
}

func TestEvaluateWaitsForTheAnswer(t *testing.T) {
	r := newApprovalRig(t, "", ApprovalOptions{})
	ctx := context.Background()
	sid := r.session(t)
	cases := []struct {
		answer     string
		wantEffect policy.Effect
		wantRule   string
	}{
		{"approve", policy.Allow, approval.RuleGranted},
		{"deny", policy.Deny, approval.RuleDenied},
		{"", policy.Ask, "builtin.recipient-outside"},
	}
	for i, tc := range cases {
		args := map[string]any{"to": "eve@competitor.example", "subject": "case", "body": string(rune('a' + i))}
		done := make(chan *Decision, 1)
		go func() {
			d, err := r.e.Evaluate(ctx, admin, EvaluateRequest{SessionID: sid, Tool: "send_email", Args: args, Wait: 300 * time.Millisecond})
			if err != nil {
				t.Error(err)
			}
			done <- d
		}()
		if tc.answer != "" {
			id := waitForPending(t, r, sid, i+1)
			r.answer(t, approver, id, approval.Answer{Decision: tc.answer})
		}
		d := <-done
		if d == nil {
			continue
		}
		if d.Effect != tc.wantEffect || !slices.Contains(d.Rules, tc.wantRule) || d.ApprovalID == "" {
			t.Errorf("%q: %s %v approval %q", tc.answer, d.Effect, d.Rules, d.ApprovalID)
		}
	}
}

// waitForPending waits until the session has n approvals and returns the
// newest pending one.
func waitForPending(t *testing.T, r *approvalRig, sid string, n int) string {
	t.Helper()
	for range 200 {
		list, err := r.e.ListApprovals(context.Background(), approver, store.ApprovalFilter{SessionID: sid})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) >= n && list[0].State == store.ApprovalPending && r.e.Hub().Waiting(list[0].ID) > 0 {
			return list[0].ID
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no waiting approval appeared")
	return ""
}

func TestHookResultMeansClaudeCodeApproved(t *testing.T) {
	r := newApprovalRig(t, "", ApprovalOptions{})
	ctx := context.Background()
	sid := r.session(t)
	d, err := r.e.Evaluate(ctx, mailHook, EvaluateRequest{SessionID: sid, Tool: "send_email", Args: toEve, CallID: "toolu_1", Surface: "hook"})
	if err != nil || d.Effect != policy.Ask {
		t.Fatalf("%v %v", d, err)
	}
	o, err := r.e.ObserveCall(ctx, mailHook, ObserveCallRequest{SessionID: sid, CallID: "toolu_1", Tool: "send_email", Output: []byte(`"sent"`)})
	if err != nil {
		t.Fatal(err)
	}
	if o.Gap {
		t.Errorf("the result of a call the user approved in Claude Code is a gap: %s", o.GapReason)
	}
	a, _ := r.e.GetApproval(ctx, approver, d.ApprovalID, 0)
	if a.State != store.ApprovalApproved || a.Via != approval.ViaClaudeCode || a.Origin != "reported" || a.UsedBy != d.ID || a.AnswererRole != "hook" {
		t.Errorf("approval after PostToolUse: %+v", a)
	}
	// A reported approval allows nothing more.
	if again := eval(t, r.e, admin, sid, "send_email", toEve); again.Effect == policy.Allow {
		t.Error("a reported approval granted another call")
	}
	// An agent reporting the result of its asked call does not approve it.
	d2, _ := r.e.Evaluate(ctx, admin, EvaluateRequest{SessionID: sid, Tool: "send_email", Args: toMallo, CallID: "toolu_2"})
	o2, err := r.e.ObserveCall(ctx, admin, ObserveCallRequest{SessionID: sid, CallID: "toolu_2", Tool: "send_email", Output: []byte(`"sent"`)})
	if err != nil || !o2.Gap {
		t.Errorf("an unapproved asked call's result: gap=%v %v", o2.Gap, err)
	}
	if a, _ := r.e.GetApproval(ctx, approver, d2.ApprovalID, 0); a.State != store.ApprovalPending {
		t.Errorf("the unapproved approval became %s", a.State)
	}
}
