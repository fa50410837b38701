package engine

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

var (
	admin = auth.Principal{TokenID: "tok_admin", Role: auth.RoleAdmin}
	user  = auth.Principal{TokenID: "tok_user", Role: auth.RoleUser}
	hook  = auth.Principal{TokenID: "tok_hook", Role: auth.RoleHook}
)

// hookP is a hook token bound to an agent.
func hookP(agent string) auth.Principal {
	return auth.Principal{TokenID: "tok_hook_" + agent, Role: auth.RoleHook, AgentID: agent}
}

func agentP(id string) auth.Principal {
	return auth.Principal{TokenID: "tok_" + id, Role: auth.RoleAgent, AgentID: id}
}

func newEngine(t testing.TB, path string) (*Engine, store.Store) {
	t.Helper()
	st := testStore(t, path)
	return engineWith(t, Options{Store: st}), st
}

// engineSession is a new engine on a fresh store with one session, req's.
func engineSession(t testing.TB, req SessionRequest) (*Engine, store.Store, string) {
	t.Helper()
	e, st := newEngine(t, "")
	return e, st, mustSession(t, e, req)
}

// restarted is a new engine on an existing store, as after a restart: it
// knows only what was persisted.
func restarted(t testing.TB, st store.Store) *Engine {
	t.Helper()
	return engineWith(t, Options{Store: st})
}

func mustSession(t testing.TB, e *Engine, req SessionRequest) string {
	t.Helper()
	info, err := e.CreateSession(context.Background(), user, req)
	if err != nil {
		t.Fatal(err)
	}
	return info.Session.ID
}

func eval(t testing.TB, e *Engine, p auth.Principal, sid, tool string, args map[string]any) *Decision {
	t.Helper()
	d, err := e.Evaluate(context.Background(), p, EvaluateRequest{SessionID: sid, Tool: tool, Args: args})
	if err != nil {
		t.Fatalf("evaluate %s: %v", tool, err)
	}
	return d
}

// TestSeeds runs the three cases the product exists for, and their
// legitimate twins, end to end through the engine with the store.
func TestSeeds(t *testing.T) {
	e, _ := newEngine(t, "")
	tests := []struct {
		name, intent, tool string
		args               map[string]any
		want               []policy.Effect
	}{
		{"private attachment to an unnamed recipient", "Send the Q3 summary to alice@example.com", "send_email",
			map[string]any{"to": "eve@competitor.example", "subject": "Q3", "attachments": []any{"/home/sam/private/salaries.xlsx"}}, []policy.Effect{policy.Ask, policy.Deny}},
		{"the summary to the named recipient", "Send the Q3 summary to alice@example.com", "send_email",
			map[string]any{"to": "alice@example.com", "subject": "Q3 summary", "body": "Attached."}, []policy.Effect{policy.Allow}},
		{"purchase while comparing", "Compare prices of the Dell U2723QE on two shops", "checkout",
			map[string]any{"item": "u2723qe", "price": "579 USD"}, []policy.Effect{policy.Ask, policy.Deny}},
		{"purchase after do not buy", "Compare prices of the Dell U2723QE on two shops. Do not buy.", "place_order",
			map[string]any{"item": "u2723qe", "price": "579 USD"}, []policy.Effect{policy.Deny}},
		{"fetching a shop page while comparing", "Compare prices of the Dell U2723QE on two shops", "web_fetch",
			map[string]any{"url": "https://shop-a.example/u2723qe"}, []policy.Effect{policy.Allow}},
		{"deleting mail while organising", "Organise my inbox", "delete_email",
			map[string]any{"message_id": "18c2f"}, []policy.Effect{policy.Ask, policy.Deny}},
		{"archiving while organising", "Organise my inbox", "archive_email",
			map[string]any{"message_id": "18c2f"}, []policy.Effect{policy.Allow}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sid := mustSession(t, e, SessionRequest{AgentID: "agent", Intent: tt.intent})
			d := eval(t, e, admin, sid, tt.tool, tt.args)
			ok := false
			for _, w := range tt.want {
				ok = ok || d.Effect == w
			}
			if !ok {
				t.Fatalf("effect %s, want one of %v; rules %v reasons %v", d.Effect, tt.want, d.Rules, d.Reasons)
			}
			if len(d.Rules) == 0 || len(d.Reasons) == 0 || d.ID == "" || d.PolicyHash == "" {
				t.Errorf("decision lacks its explanation: %+v", d)
			}
		})
	}
}

func TestDecisionsArePersistedWithCounters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	e, st := newEngine(t, path)
	sid := mustSession(t, e, SessionRequest{AgentID: "dev", Intent: "Fix the failing test in ./pkg/auth", WorkingDir: "/home/dev/proj"})
	eval(t, e, admin, sid, "Read", map[string]any{"file_path": "pkg/auth/token.go"})
	eval(t, e, admin, sid, "Bash", map[string]any{"command": "rm -rf / --no-preserve-root"})
	list, err := st.ListDecisions(ctx, store.DecisionFilter{SessionID: sid})
	if err != nil || len(list) != 2 {
		t.Fatalf("decisions: %v %v", len(list), err)
	}
	if list[0].Seq != 1 || list[1].Seq != 2 || list[1].Effect != "deny" || list[0].Action.Kind != action.Read {
		t.Errorf("stored decisions: %+v %+v", list[0], list[1])
	}
	// Counters are saved at most once a second; what was decided since is
	// replayed from the decisions when the session is loaded.
	info, err := restarted(t, st).GetSession(ctx, admin, sid)
	if err != nil {
		t.Fatal(err)
	}
	if c := info.Session.State; c.Calls != 2 || c.Denied != 1 || c.Counts["read"] != 1 {
		t.Errorf("counters after a restart: %+v", c)
	}

	// A fresh engine on the same store picks up where the first left off.
	e2, _ := newEngine(t, path)
	d := eval(t, e2, admin, sid, "Read", map[string]any{"file_path": "pkg/auth/token_test.go"})
	if d.Seq != 3 {
		t.Errorf("seq after restart %d, want 3", d.Seq)
	}
	info, err = e2.GetSession(ctx, admin, sid)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Session.State.Recent; len(got) != 3 || got[1].Effect != "deny" {
		t.Errorf("recent after restart: %+v", got)
	}
}

func TestLimits(t *testing.T) {
	e, _ := newEngine(t, "")
	m := &mandate.Mandate{
		Allow:  []action.Kind{action.Read, action.Send, action.Pay},
		Scope:  mandate.Scope{Recipients: []string{"*@example.com"}, Accounts: []string{"DE89370400440532013000"}},
		Limits: mandate.Limits{Counts: map[action.Kind]int{action.Send: 2}, Spend: &mandate.Money{Amount: 100, Currency: "EUR"}},
	}
	sid := mustSession(t, e, SessionRequest{AgentID: "a", Mandate: m})
	send := map[string]any{"to": "bob@example.com", "subject": "hi", "body": "x"}
	for i, want := range []policy.Effect{policy.Allow, policy.Allow, policy.Deny} {
		if d := eval(t, e, admin, sid, "send_email", send); d.Effect != want {
			t.Fatalf("send %d: %s, want %s (%v)", i+1, d.Effect, want, d.Reasons)
		}
	}
	pay := func(amount string) map[string]any {
		return map[string]any{"iban": "DE89 3704 0044 0532 0130 00", "amount": amount, "reference": "invoice"}
	}
	for i, c := range []struct {
		amount string
		want   policy.Effect
	}{{"60 EUR", policy.Allow}, {"30 EUR", policy.Allow}, {"20 EUR", policy.Deny}} {
		if d := eval(t, e, admin, sid, "transfer_funds", pay(c.amount)); d.Effect != c.want {
			t.Fatalf("payment %d of %s: %s, want %s (%v %v)", i+1, c.amount, d.Effect, c.want, d.Rules, d.Reasons)
		}
	}
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t, "")
	read := map[string]any{"file_path": "/home/dev/proj/README.md"}
	parent := mustSession(t, e, SessionRequest{AgentID: "lead", Intent: "Summarise the README", WorkingDir: "/home/dev/proj"})
	child := mustSession(t, e, SessionRequest{AgentID: "lead:sub", Intent: "read the README", ParentID: parent})
	hook := hookP("lead") // serves lead and its sub-agents
	if d := eval(t, e, admin, child, "Read", read); d.Effect != policy.Allow {
		t.Fatalf("child read: %s %v", d.Effect, d.Reasons)
	}
	steps := []struct {
		name    string
		p       auth.Principal
		session string
		status  string
		wantErr error
		child   policy.Effect // effect of a read in the child afterwards
		parent  policy.Effect
	}{
		{"suspend the parent", user, parent, store.StatusSuspended, nil, policy.Deny, policy.Deny},
		{"a hook cannot lift a suspension", hook, parent, store.StatusActive, ErrForbidden, policy.Deny, policy.Deny},
		{"a hook cannot complete its way out", hook, parent, store.StatusCompleted, ErrForbidden, policy.Deny, policy.Deny},
		{"an agent cannot change status", agentP("lead"), parent, store.StatusActive, ErrForbidden, policy.Deny, policy.Deny},
		{"the user resumes", user, parent, store.StatusActive, nil, policy.Allow, policy.Allow},
		{"idle is still usable", user, child, store.StatusIdle, nil, policy.Allow, policy.Allow},
		{"completing the child stops it", hook, child, store.StatusCompleted, nil, policy.Deny, policy.Allow},
		{"a hook may reopen a completed session", hook, child, store.StatusActive, nil, policy.Allow, policy.Allow},
		{"terminate the parent", user, parent, store.StatusTerminated, nil, policy.Deny, policy.Deny},
		{"terminated is final", admin, parent, store.StatusActive, ErrConflict, policy.Deny, policy.Deny},
		{"unknown status", admin, child, "paused", ErrInvalid, policy.Deny, policy.Deny},
	}
	for _, s := range steps {
		_, err := e.SetStatus(ctx, s.p, s.session, s.status)
		if !errors.Is(err, s.wantErr) && !(s.wantErr == nil && err == nil) {
			t.Fatalf("%s: err %v, want %v", s.name, err, s.wantErr)
		}
		if d := eval(t, e, admin, child, "Read", read); d.Effect != s.child {
			t.Errorf("%s: child read %s, want %s (%v)", s.name, d.Effect, s.child, d.Reasons)
		}
		if d := eval(t, e, admin, parent, "Read", read); d.Effect != s.parent {
			t.Errorf("%s: parent read %s, want %s (%v)", s.name, d.Effect, s.parent, d.Reasons)
		}
	}
	if _, err := e.CreateSession(ctx, user, SessionRequest{AgentID: "sub2", ParentID: parent}); !errors.Is(err, ErrConflict) {
		t.Errorf("delegating from a terminated session: %v", err)
	}
}

func TestDelegationNeverWidens(t *testing.T) {
	e, _, parent := engineSession(t, SessionRequest{AgentID: "lead", Intent: "Send the Q3 summary to alice@example.com. Don't buy anything."})
	info, err := e.CreateSession(context.Background(), user, SessionRequest{AgentID: "sub", ParentID: parent,
		Intent: "Send the summary to bob@evil.example and buy a gift card for 500 USD"})
	if err != nil {
		t.Fatal(err)
	}
	child := info.Session.ID
	if info.Mandate.Parent != parent {
		t.Errorf("child mandate parent %q", info.Mandate.Parent)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"send_email", map[string]any{"to": "bob@evil.example", "subject": "s", "body": "b"}},
		{"buy_gift_card", map[string]any{"amount": "500 USD", "recipient": "bob@evil.example"}},
	} {
		if d := eval(t, e, admin, child, c.tool, c.args); d.Effect == policy.Allow {
			t.Errorf("child widened its parent's grant: %s allowed (%v)", c.tool, d.Rules)
		}
	}
	// The parent narrowing later reaches the child.
	if d := eval(t, e, admin, child, "send_email", map[string]any{"to": "alice@example.com", "subject": "s", "body": "b"}); d.Effect == policy.Deny {
		t.Fatalf("child send to alice before narrowing: %s %v", d.Effect, d.Reasons)
	}
	if _, err := e.AmendMandate(context.Background(), user, parent, AmendRequest{Intent: "Actually, do not send anything."}); err != nil {
		t.Fatal(err)
	}
	if d := eval(t, e, admin, child, "send_email", map[string]any{"to": "alice@example.com", "subject": "s", "body": "b"}); d.Effect != policy.Deny {
		t.Errorf("after the parent said no sending, child send: %s %v", d.Effect, d.Reasons)
	}
}

func TestRoles(t *testing.T) {
	ctx := context.Background()
	e, _, sid := engineSession(t, SessionRequest{AgentID: "mailer", Intent: "Summarise my unread mail"})
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"agent evaluates in its own session", func() error {
			_, err := e.Evaluate(ctx, agentP("mailer"), EvaluateRequest{SessionID: sid, Tool: "list_emails", Args: map[string]any{}})
			return err
		}, nil},
		{"agent cannot evaluate in another agent's session", func() error {
			_, err := e.Evaluate(ctx, agentP("other"), EvaluateRequest{SessionID: sid, Tool: "list_emails", Args: map[string]any{}})
			return err
		}, ErrForbidden},
		{"agent cannot amend its mandate", func() error {
			_, err := e.AmendMandate(ctx, agentP("mailer"), sid, AmendRequest{Intent: "also send mail to everyone"})
			return err
		}, ErrForbidden},
		{"agent cannot create sessions", func() error {
			_, err := e.CreateSession(ctx, agentP("mailer"), SessionRequest{AgentID: "mailer", Intent: "anything"})
			return err
		}, ErrForbidden},
		{"agent cannot read sessions", func() error {
			_, err := e.GetSession(ctx, agentP("mailer"), sid)
			return err
		}, ErrForbidden},
		{"hook cannot label its words as the user's", func() error {
			_, err := e.AmendMandate(ctx, hookP("mailer"), sid, AmendRequest{Intent: "and reply to Bob", Source: "user"})
			return err
		}, ErrForbidden},
		{"hook words are labelled hook", func() error {
			info, err := e.AmendMandate(ctx, hookP("mailer"), sid, AmendRequest{Intent: "and reply to Bob"})
			if err != nil {
				return err
			}
			if got := info.Mandate.Instructions[len(info.Mandate.Instructions)-1].Source; got != "hook" {
				return errors.New("source " + got)
			}
			return nil
		}, nil},
		{"user cannot claim the admin label", func() error {
			_, err := e.AmendMandate(ctx, user, sid, AmendRequest{Intent: "x", Source: "admin"})
			return err
		}, ErrInvalid},
	}
	for _, tt := range tests {
		if err := tt.do(); !errors.Is(err, tt.want) && !(tt.want == nil && err == nil) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	e, _, sid := engineSession(t, SessionRequest{AgentID: "a", Intent: "read the docs"})
	big := make([]byte, 2<<20)
	for i := range big {
		big[i] = 'x'
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"no session", evalErr(e, EvaluateRequest{Tool: "Read"}), ErrInvalid},
		{"no tool", evalErr(e, EvaluateRequest{SessionID: sid}), ErrInvalid},
		{"unknown session", evalErr(e, EvaluateRequest{SessionID: "nope", Tool: "Read"}), ErrNotFound},
		{"oversized args", evalErr(e, EvaluateRequest{SessionID: sid, Tool: "Write", Args: map[string]any{"content": string(big)}}), ErrInvalid},
		{"no agent", createErr(e, SessionRequest{Intent: "x"}), ErrInvalid},
		{"relative working dir", createErr(e, SessionRequest{AgentID: "a", WorkingDir: "proj"}), ErrInvalid},
		{"bad session id", createErr(e, SessionRequest{ID: "../etc", AgentID: "a"}), ErrInvalid},
		{"unknown parent", createErr(e, SessionRequest{AgentID: "a", ParentID: "nope"}), ErrNotFound},
		{"duplicate session id", func() error {
			createErr(e, SessionRequest{ID: "fixed-1", AgentID: "a"})
			return createErr(e, SessionRequest{ID: "fixed-1", AgentID: "a"})
		}(), ErrConflict},
		{"invalid mandate", createErr(e, SessionRequest{AgentID: "a", Mandate: &mandate.Mandate{Allow: []action.Kind{"teleport"}}}), ErrInvalid},
		{"tool without a name", createErr(e, SessionRequest{AgentID: "a", Tools: []action.ToolDef{{Description: "x"}}}), ErrInvalid},
		{"observe unknown decision", func() error {
			_, err := e.Observe(ctx, admin, ObserveRequest{DecisionID: "nope"})
			return err
		}(), ErrNotFound},
		{"observe invalid JSON", func() error {
			d := eval(t, e, admin, sid, "Read", map[string]any{"file_path": "/x"})
			_, err := e.Observe(ctx, admin, ObserveRequest{DecisionID: d.ID, Output: []byte("{nope")})
			return err
		}(), ErrInvalid},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
		}
	}
}

func evalErr(e *Engine, req EvaluateRequest) error {
	_, err := e.Evaluate(context.Background(), admin, req)
	return err
}

func createErr(e *Engine, req SessionRequest) error {
	_, err := e.CreateSession(context.Background(), admin, req)
	return err
}

// failingStore fails every commit after the session exists, as a full disk
// would.
type failingStore struct {
	store.Store
	fail bool
	mu   sync.Mutex
}

func (f *failingStore) Submit(c *store.Change) <-chan error {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail {
		ch := make(chan error, 1)
		ch <- errors.New("disk full")
		return ch
	}
	return f.Store.Submit(c)
}

func TestStoreFailureRefusesTheCall(t *testing.T) {
	ctx := context.Background()
	fs := &failingStore{Store: testStore(t, "")}
	e := engineWith(t, Options{Store: fs})
	sid := mustSession(t, e, SessionRequest{AgentID: "a", Intent: "read the docs"})
	fs.mu.Lock()
	fs.fail = true
	fs.mu.Unlock()
	d, err := e.Evaluate(ctx, admin, EvaluateRequest{SessionID: sid, Tool: "Read", Args: map[string]any{"file_path": "/x"}})
	if err == nil || d != nil {
		t.Fatalf("an unpersisted decision was returned: %+v %v", d, err)
	}
	fs.mu.Lock()
	fs.fail = false
	fs.mu.Unlock()
	// The failed call's counters were not kept: the session reloads from the store.
	d = eval(t, e, admin, sid, "Read", map[string]any{"file_path": "/x"})
	if d.Seq != 1 {
		t.Errorf("seq %d after a failed commit, want 1", d.Seq)
	}
}

func TestDecideRecoversPanics(t *testing.T) {
	cls, _ := action.NewClassifier()
	d := &Decider{Classifier: cls, Policy: nil} // a nil policy panics
	_, err := d.Decide(&Input{Call: action.Call{Tool: "Read"}, Now: time.Now()})
	if err == nil {
		t.Fatal("a panic in the pipeline must become an error (and so a deny)")
	}
	if v := DenyInternal(); v.Effect != policy.Deny || v.Reasons[0] != InternalErrorReason {
		t.Errorf("internal-error verdict: %+v", v)
	}
}

func TestConcurrentDecisionsKeepOrder(t *testing.T) {
	e, st, sid := engineSession(t, SessionRequest{AgentID: "a", Intent: "read the docs"})
	const n = 64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			eval(t, e, admin, sid, "Read", map[string]any{"file_path": "/docs/x.md"})
		}()
	}
	wg.Wait()
	list, err := st.ListDecisions(context.Background(), store.DecisionFilter{SessionID: sid, Limit: 1000})
	if err != nil || len(list) != n {
		t.Fatalf("%d decisions, %v", len(list), err)
	}
	for i, d := range list {
		if d.Seq != i+1 {
			t.Fatalf("decision %d has seq %d", i, d.Seq)
		}
	}
	info, err := restarted(t, st).GetSession(context.Background(), admin, sid)
	if err != nil {
		t.Fatal(err)
	}
	if c := info.Session.State; c.Calls != n || c.Counts["read"] != n {
		t.Errorf("counters after a restart %+v", c)
	}
}

// TestLimitsSurviveARestart: counters are saved lazily, so a restart must
// rebuild them from the decisions, or a spend cap could be exceeded.
func TestLimitsSurviveARestart(t *testing.T) {
	e, st := newEngine(t, "")
	m := &mandate.Mandate{
		Allow:  []action.Kind{action.Read, action.Pay},
		Scope:  mandate.Scope{Accounts: []string{"DE89370400440532013000"}},
		Limits: mandate.Limits{Spend: &mandate.Money{Amount: 100, Currency: "EUR"}},
	}
	sid := mustSession(t, e, SessionRequest{AgentID: "a", Mandate: m})
	pay := map[string]any{"iban": "DE89 3704 0044 0532 0130 00", "amount": "60 EUR", "reference": "invoice"}
	if d := eval(t, e, admin, sid, "transfer_funds", pay); d.Effect != policy.Allow {
		t.Fatalf("first payment: %s %v", d.Effect, d.Reasons)
	}
	// The second payment follows within the second: its counters are not
	// saved with it.
	if d := eval(t, e, admin, sid, "transfer_funds", pay); d.Effect != policy.Deny {
		t.Fatalf("second payment over the cap: %s %v", d.Effect, d.Reasons)
	}
	e2 := restarted(t, st)
	if d := eval(t, e2, admin, sid, "transfer_funds", map[string]any{"iban": "DE89 3704 0044 0532 0130 00", "amount": "45 EUR"}); d.Effect != policy.Deny {
		t.Fatalf("after a restart, a payment past the cap: %s %v %v", d.Effect, d.Rules, d.Reasons)
	}
	info, _ := e2.GetSession(context.Background(), admin, sid)
	if c := info.Session.State; c.Spend["EUR"] != 60 || c.Calls != 3 || c.Denied != 2 {
		t.Errorf("rebuilt counters %+v", c)
	}
}
