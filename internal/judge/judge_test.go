package judge_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/judge"
	"github.com/mandate-dev/mandate/internal/judge/judgetest"
	"github.com/mandate-dev/mandate/internal/store"
)

const (
	allowJSON = `{"decision":"allow","reason":"the user named this report"}`
	denyJSON  = `{"decision":"deny","reason":"this sends the numbers to a competitor"}`
)

// script answers by the recipient in the call asked about (its reason
// names it; earlier calls in the question do not).
var script = []judgetest.Rule{
	{Match: "recipient auditor@", Content: allowJSON},
	{Match: "recipient eve@competitor", Content: denyJSON},
	{Match: "recipient notjson@", Content: "Sure! I think you should allow it."},
	{Match: "recipient extra@", Content: `{"decision":"allow","reason":"ok","confidence":0.9}`},
	{Match: "recipient maybe@", Content: `{"decision":"probably","reason":"hmm"}`},
	{Match: "recipient noreason@", Content: `{"decision":"allow","reason":"  "}`},
	{Match: "recipient twice@", Content: `{"decision":"allow","reason":"a"} {"decision":"deny","reason":"b"}`},
	{Match: "recipient slow@", DelayMS: 3000, Content: allowJSON},
	{Match: "recipient broken@", Status: 500},
	{Match: "recipient garbage@", Raw: "<html>502 Bad Gateway</html>"},
	{Match: "recipient unsure@", Content: `{"decision":"ask","reason":"the words do not say"}`},
}

func newJudge(t *testing.T, srv *judgetest.Server, mode string) *judge.Judge {
	t.Helper()
	j, err := judge.New(judge.Config{URL: srv.URL, Model: "test-model", Mode: mode, EligibleAll: true, Timeout: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func question(to string) *engine.JudgeQuestion {
	args, _ := json.Marshal(map[string]any{"to": to, "subject": "Q3"})
	return &engine.JudgeQuestion{SessionID: "s1", Words: []string{"Send the Q3 summary to alice@example.com"}, Tool: "send_email", Args: args,
		Rules: []string{"builtin.recipient-outside"}, Reasons: []string{"recipient " + to + " was never named by the user"}}
}

func TestAnswersAndFailures(t *testing.T) {
	srv := judgetest.Start(t, script)
	j := newJudge(t, srv, engine.JudgeAuto)
	ctx := context.Background()
	for _, tc := range []struct {
		to, decision, errPart string
	}{
		{"auditor@example.com", "allow", ""},
		{"eve@competitor.example", "deny", ""},
		{"unsure@example.com", "ask", ""},
		{"notjson@example.com", "", "not the JSON"},
		{"extra@example.com", "", "unknown field"},
		{"maybe@example.com", "", `"probably"`},
		{"noreason@example.com", "", "no reason"},
		{"twice@example.com", "", "more than one"},
		{"slow@example.com", "", "no answer within"},
		{"broken@example.com", "", "failed"},
		{"garbage@example.com", "", "failed"},
	} {
		t.Run(tc.to, func(t *testing.T) {
			start := time.Now()
			op, ex := j.Judge(ctx, question(tc.to))
			if op.Decision != tc.decision || !strings.Contains(op.Error, tc.errPart) || (tc.errPart == "") != (op.Error == "") {
				t.Fatalf("opinion %+v", op)
			}
			if time.Since(start) > 2*time.Second {
				t.Errorf("took %s: the timeout did not hold", time.Since(start))
			}
			if ex.Model != "test-model" || len(ex.PromptHash) != 64 || ex.LatencyMS != op.LatencyMS || ex.Error != op.Error {
				t.Errorf("exchange %+v", ex)
			}
		})
	}
	reqs := srv.Requests(t)
	if len(reqs) == 0 {
		t.Fatal("no requests reached the server")
	}
	rf, _ := reqs[0]["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["strict"] != true || js["schema"] == nil || reqs[0]["model"] != "test-model" {
		t.Errorf("request %v", reqs[0])
	}
}

func TestParse(t *testing.T) {
	for in, ok := range map[string]bool{
		allowJSON: true, ` ` + denyJSON + "\n": true, `{"decision":"ask","reason":"x"}`: true,
		``: false, `null`: false, `[]`: false, `{"decision":"allow"}`: false, `{"reason":"x"}`: false,
		`{"decision":"ALLOW","reason":"x"}`: false, `{"decision":"allow","reason":"x","extra":1}`: false,
		strings.Repeat("x", 5000): false,
	} {
		if _, err := judge.Parse(in); (err == nil) != ok {
			t.Errorf("Parse(%.40q) = %v, want ok=%v", in, err, ok)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(allowJSON)
	f.Add(`{"decision":"deny","reason":"` + strings.Repeat("é", 600) + `"}`)
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		v, err := judge.Parse(s)
		if time.Since(start) > 100*time.Millisecond {
			t.Fatalf("Parse took %s", time.Since(start))
		}
		if err == nil && (v.Reason == "" || (v.Decision != "allow" && v.Decision != "deny" && v.Decision != "ask") || len(v.Reason) > 1100) {
			t.Fatalf("accepted %+v", v)
		}
	})
}

// rig is an engine with the judge wired in, over the test server.
type rig struct {
	a   *app.App
	srv *judgetest.Server
	sid string
}

var admin = auth.Principal{TokenID: "tok_admin", Role: auth.RoleAdmin}

func newRig(t *testing.T, mode string) *rig {
	t.Helper()
	srv := judgetest.Start(t, script)
	a, err := app.Open(context.Background(), app.Config{Synchronous: "OFF", Approvals: engine.ApprovalOptions{Judge: newJudge(t, srv, mode)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	info, err := a.Engine.CreateSession(context.Background(), admin, engine.SessionRequest{AgentID: "mailer", Intent: "Send the Q3 summary to alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{a: a, srv: srv, sid: info.Session.ID}
}

func (r *rig) send(t *testing.T, to string, extra map[string]any) *engine.Decision {
	t.Helper()
	args := map[string]any{"to": to, "subject": "Q3", "body": "the numbers"}
	for k, v := range extra {
		args[k] = v
	}
	d, err := r.a.Engine.Evaluate(context.Background(), admin, engine.EvaluateRequest{SessionID: r.sid, Tool: "send_email", Args: args})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (r *rig) approval(t *testing.T, id string) *store.Approval {
	t.Helper()
	a, err := r.a.Engine.GetApproval(context.Background(), admin, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAutoModeResolvesEligibleAsks(t *testing.T) {
	r := newRig(t, engine.JudgeAuto)
	ctx := context.Background()

	d := r.send(t, "auditor@example.com", nil)
	if d.Effect != "allow" || d.Rules[0] != approval.RuleJudgeAllowed || d.Judge == nil || !d.Judge.Applied || d.Judge.Decision != "allow" || d.Judge.Model != "test-model" {
		t.Fatalf("judge allow: %s %v %+v", d.Effect, d.Rules, d.Judge)
	}
	a := r.approval(t, d.ApprovalID)
	if a.State != store.ApprovalApproved || a.AnsweredBy != "judge:test-model" || a.Via != approval.ViaJudge || a.UsedBy != d.ID {
		t.Errorf("approval %+v", a)
	}
	stored, _ := r.a.Store.GetDecision(ctx, d.ID)
	if stored.Judge == nil || stored.Judge.Decision != "allow" || stored.ApprovalID != d.ApprovalID {
		t.Errorf("the decision record does not show the judge: %+v", stored.Judge)
	}

	d = r.send(t, "eve@competitor.example", nil)
	if d.Effect != "deny" || d.Rules[0] != approval.RuleJudgeDenied {
		t.Errorf("judge deny: %s %v", d.Effect, d.Rules)
	}

	// Unusable answers change nothing: the ask stays with a person, with
	// the failure attached.
	for _, to := range []string{"notjson@example.com", "maybe@example.com", "slow@example.com", "broken@example.com", "unsure@example.com"} {
		d := r.send(t, to, nil)
		if d.Effect != "ask" || d.Judge == nil || d.Judge.Applied {
			t.Errorf("%s: %s %v judge %+v", to, d.Effect, d.Rules, d.Judge)
			continue
		}
		if a := r.approval(t, d.ApprovalID); a.State != store.ApprovalPending || a.Judge == nil {
			t.Errorf("%s: approval %+v", to, a)
		}
	}

	// Every exchange is an evidence record labelled judge.
	recs, err := r.a.Store.SessionEvidence(ctx, r.sid)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rec := range recs {
		if rec.Type == "judge" {
			n++
			if !strings.Contains(string(rec.Body), `"prompt_hash"`) || !strings.Contains(string(rec.Body), `"latency_ms"`) {
				t.Errorf("judge record %s", rec.Body)
			}
		}
	}
	if n != 7 {
		t.Errorf("%d judge records, want 7", n)
	}
}

func TestJudgeNeverSeesADenyOrASecret(t *testing.T) {
	r := newRig(t, engine.JudgeAuto)
	// A call policy denies never reaches the judge, whatever it would say.
	info, err := r.a.Engine.CreateSession(context.Background(), admin, engine.SessionRequest{AgentID: "shopper", Intent: "Compare prices of the Dell U2723QE. Do not buy."})
	if err != nil {
		t.Fatal(err)
	}
	before := len(r.srv.Requests(t))
	d, err := r.a.Engine.Evaluate(context.Background(), admin, engine.EvaluateRequest{SessionID: info.Session.ID, Tool: "checkout", Args: map[string]any{"item": "u2723qe", "note": "auditor@example.com"}})
	if err != nil || d.Effect != "deny" || d.Judge != nil {
		t.Fatalf("a denied call: %v %v %v", d.Effect, d.Judge, err)
	}
	if len(r.srv.Requests(t)) != before {
		t.Error("the judge was asked about a denied call")
	}
	// Secrets are redacted before the judge sees anything: in the user's
	// words, the mandate, the earlier calls.
	const key = "sk-proj-7fQ2pLx9Vb3nR8tK1mZc4WyHs6JdEaUo0GiTqNrXvBl5" // a provider key shape
	info, err = r.a.Engine.CreateSession(context.Background(), admin, engine.SessionRequest{AgentID: "mailer", Intent: "Send the Q3 summary to alice@example.com. The API key is " + key})
	if err != nil {
		t.Fatal(err)
	}
	r.sid = info.Session.ID
	if d := r.send(t, "alice@example.com", map[string]any{"body": "here is the key " + key}); d.Effect != "deny" {
		t.Fatalf("sending a key: %s", d.Effect)
	}
	d = r.send(t, "auditor@example.com", nil)
	if d.Judge == nil {
		t.Fatalf("the judge was not asked: %s %v %v", d.Effect, d.Rules, d.Reasons)
	}
	raw := r.srv.RawRequests(t)
	if strings.Contains(raw, key) || strings.Contains(raw, "7fQ2pLx9Vb3nR8tK1mZc4") {
		t.Error("the judge saw a secret")
	}
	if !strings.Contains(raw, "REDACTED") {
		t.Error("the judge's request shows no redaction marker")
	}
}

func TestAdvisoryModeAttachesTheOpinion(t *testing.T) {
	r := newRig(t, engine.JudgeAdvisory)
	d := r.send(t, "auditor@example.com", nil)
	if d.Effect != "ask" || d.Judge == nil || d.Judge.Decision != "allow" || d.Judge.Applied {
		t.Fatalf("advisory: %s %+v", d.Effect, d.Judge)
	}
	a := r.approval(t, d.ApprovalID)
	if a.State != store.ApprovalPending || a.Judge == nil || a.Judge.Reason != "the user named this report" {
		t.Errorf("approval %+v", a)
	}
	// The same call again reuses the approval without asking the judge again.
	n := len(r.srv.Requests(t))
	if d2 := r.send(t, "auditor@example.com", nil); d2.ApprovalID != d.ApprovalID || len(r.srv.Requests(t)) != n {
		t.Errorf("asked the judge again for a pending approval")
	}
	if !slices.Contains(a.Rules, "builtin.recipient-outside") {
		t.Errorf("rules %v", a.Rules)
	}
}
