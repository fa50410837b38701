package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestSessionAndDecisionPages(t *testing.T) {
	f := newFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	dec := f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"alice@example.com","subject":"Q3"}}`)
	f.api(t, "POST", "/v1/sessions/"+sid+"/mandate", "user", `{"intent":"Also send it to bob@example.com"}`)
	b := f.browser(t)
	b.signIn("user")

	tests := []struct {
		path string
		code int
		want []string
	}{
		{"/ui/sessions", 200, []string{sid, "mailer", "1 calls"}},
		{"/ui/sessions?status=active&agent=mailer", 200, []string{sid}},
		{"/ui/sessions?agent=nobody", 200, []string{"No sessions match"}},
		{"/ui/sessions?status=bogus", 400, []string{"want one of active"}},
		{"/ui/sessions/" + sid, 200, []string{"Send the Q3 summary to alice@example.com", "Also send it to bob@example.com", "Version 2", "Changes from the version before", `class="add"`, "send_email", "Suspend", "No gaps"}},
		{"/ui/sessions/" + sid + "?after=1", 200, []string{"No decisions yet", "← earlier"}},
		{"/ui/sessions/" + sid + "?after=5", 404, []string{"no calls past number 1"}},
		{"/ui/sessions/" + sid + "?after=-1", 400, []string{"want a call number"}},
		{"/ui/sessions/nope", 404, []string{"There is no session"}},
		{"/ui/decisions/" + dec["decision_id"].(string), 200, []string{"send_email", "alice@example.com", "allow", "No result recorded"}},
		{"/ui/decisions/dec_nope", 404, []string{"There is no decision"}},
		{"/ui/approvals/apr_nope", 404, []string{"There is no approval"}},
		{"/ui/agents", 200, []string{"/ui/agents/mailer"}},
		{"/ui/agents/mailer", 200, []string{"model=-", "<svg", "send", sid}},
		{"/ui/agents/nobody", 404, []string{"No session of an agent"}},
		{"/ui/nowhere", 404, []string{"no page at /ui/nowhere"}},
		{"/ui/?effect=allow", 200, []string{"send_email"}},
		{"/ui/?effect=deny", 200, []string{"No decisions yet"}},
		{"/ui/?effect=maybe", 400, []string{"want allow, deny or ask"}},
		{"/ui/?agent=other", 200, []string{"No decisions yet"}},
		{"/ui/?session=" + sid, 200, []string{"send_email", `data-live="/ui/events?`}},
		{"/ui/static/htmx-" + "2.0.11" + ".min.js", 200, []string{"htmx"}},
		{"/ui/static/htmx-LICENSE", 200, []string{"Zero-Clause BSD"}},
	}
	for _, tt := range tests {
		p := b.get(tt.path)
		if p.code != tt.code {
			t.Errorf("GET %s: %d, want %d: %s", tt.path, p.code, tt.code, p.body)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(p.body, w) {
				t.Errorf("GET %s lacks %q", tt.path, w)
			}
		}
	}

	// Suspend from the page: the form needs the CSRF token.
	if p := b.post("/ui/sessions/"+sid+"/status", url.Values{"status": {"suspended"}}); p.code != http.StatusForbidden {
		t.Errorf("suspend without CSRF: %d", p.code)
	}
	b.get("/ui/sessions/" + sid)
	if p := b.post("/ui/sessions/"+sid+"/status", url.Values{"status": {"terminated"}, "csrf": {b.csrf}}); p.code != http.StatusBadRequest {
		t.Errorf("terminate from the page: %d", p.code)
	}
	if p := b.post("/ui/sessions/"+sid+"/status", url.Values{"status": {"suspended"}, "csrf": {b.csrf}}); p.code != http.StatusSeeOther {
		t.Fatalf("suspend: %d %s", p.code, p.body)
	}
	if st := f.api(t, "GET", "/v1/sessions/"+sid, "user", "")["session"].(map[string]any)["status"]; st != "suspended" {
		t.Errorf("status after suspend: %v", st)
	}
	if p := b.get("/ui/sessions/" + sid); !strings.Contains(p.body, "Resume") {
		t.Errorf("a suspended session offers no resume")
	}
	// A cross-site form is refused even with a token it could not have.
	if p := b.post("/ui/sessions/"+sid+"/status", url.Values{"status": {"active"}, "csrf": {b.csrf}}, "Sec-Fetch-Site", "cross-site"); p.code != http.StatusForbidden {
		t.Errorf("cross-site post: %d", p.code)
	}
}

func TestApproverSeesOnlyApprovals(t *testing.T) {
	f := newFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	f.ask(t, sid)
	b := f.browser(t)
	p := b.post("/ui/login", url.Values{"token": {f.tokens["approver"]}})
	if p.code != http.StatusSeeOther || p.h.Get("Location") != "/ui/approvals" {
		t.Fatalf("approver sign-in: %d %q", p.code, p.h.Get("Location"))
	}
	if p := b.get("/ui/approvals"); p.code != 200 || !strings.Contains(p.body, "eve@competitor.example") || strings.Contains(p.body, `href="/ui/sessions`) {
		t.Errorf("approver's queue: %d %s", p.code, p.body)
	}
	for _, path := range []string{"/ui/sessions", "/ui/sessions/" + sid, "/ui/agents"} {
		if p := b.get(path); p.code != http.StatusForbidden {
			t.Errorf("approver GET %s: %d", path, p.code)
		}
	}
	if p := b.get("/ui/"); p.code != http.StatusSeeOther || p.h.Get("Location") != "/ui/approvals" {
		t.Errorf("approver's home: %d %q", p.code, p.h.Get("Location"))
	}
}

func TestAnswerFromThePage(t *testing.T) {
	f := newFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	id := f.ask(t, sid)["approval_id"].(string)
	b := f.browser(t)
	b.signIn("approver")
	p := b.get("/ui/approvals/" + id)
	if p.code != 200 || !strings.Contains(p.body, "Approve once") || !strings.Contains(p.body, "pending") {
		t.Fatalf("approval page: %d %s", p.code, p.body)
	}
	// Refused: no CSRF token, a wrong one, a cross-site post, a bad answer.
	for _, bad := range []struct {
		form   url.Values
		header []string
		code   int
	}{
		{url.Values{"answer": {"approve"}}, nil, http.StatusForbidden},
		{url.Values{"answer": {"approve"}, "csrf": {"forged"}}, nil, http.StatusForbidden},
		{url.Values{"answer": {"approve"}, "csrf": {b.csrf}}, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{url.Values{"answer": {"approve-forever"}, "csrf": {b.csrf}}, nil, http.StatusBadRequest},
		{url.Values{"answer": {"approve"}, "csrf": {b.csrf}, "note": {strings.Repeat("n", 3000)}}, nil, http.StatusBadRequest},
	} {
		if p := b.post("/ui/approvals/"+id, bad.form, bad.header...); p.code != bad.code {
			t.Errorf("answer %v %v: %d, want %d", bad.form, bad.header, p.code, bad.code)
		}
	}
	if st := f.api(t, "GET", "/v1/approvals/"+id, "approver", "")["state"]; st != "pending" {
		t.Fatalf("a refused form answered: %v", st)
	}
	// An agent's and a hook's credential cannot sign in, so cannot answer
	// from here: their cookie-less post is sent to sign in.
	anon := f.browser(t)
	for _, who := range []string{"agent", "hook"} {
		anon.post("/ui/login", url.Values{"token": {f.tokens[who]}})
		if p := anon.post("/ui/approvals/"+id, url.Values{"answer": {"approve"}}); p.code != http.StatusUnauthorized {
			t.Errorf("%s answered: %d", who, p.code)
		}
	}
	p = b.post("/ui/approvals/"+id, url.Values{"answer": {"approve"}, "csrf": {b.csrf}, "note": {"fine, once"}})
	if p.code != http.StatusSeeOther || p.h.Get("Location") != "/ui/approvals/"+id {
		t.Fatalf("approve: %d %s", p.code, p.body)
	}
	got := f.api(t, "GET", "/v1/approvals/"+id, "approver", "")
	if got["state"] != "approved" || got["via"] != "dashboard" || got["note"] != "fine, once" || !strings.HasPrefix(got["answered_by"].(string), "approver:") {
		t.Errorf("answered: %v", got)
	}
	// The first answer wins: a second, over htmx, shows the card as it is.
	p = b.post("/ui/approvals/"+id, url.Values{"answer": {"deny"}, "csrf": {b.csrf}}, "HX-Request", "true")
	if p.code != 200 || !strings.Contains(p.body, `class="card approval state-approved"`) || !strings.Contains(p.body, `role="alert"`) || strings.Contains(p.body, "<html") {
		t.Errorf("second answer: %d %s", p.code, p.body)
	}
	if p := b.get("/ui/approvals"); !strings.Contains(p.body, "Nothing is waiting") || !strings.Contains(p.body, "fine, once") {
		t.Errorf("queue after the answer: %s", p.body)
	}

	// A user answers for the session over htmx: the card comes back.
	id2 := f.ask(t, f.session(t, "mailer", "Send the Q3 summary to alice@example.com"))["approval_id"].(string)
	u := f.browser(t)
	u.signIn("user")
	u.get("/ui/approvals")
	p = u.post("/ui/approvals/"+id2, url.Values{"answer": {"approve-session"}, "csrf": {u.csrf}}, "HX-Request", "true")
	if p.code != 200 || !strings.Contains(p.body, "state-approved") || !strings.Contains(p.body, "session") {
		t.Errorf("approve for the session: %d %s", p.code, p.body)
	}
}

func TestEvidencePage(t *testing.T) {
	f := newFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"alice@example.com"}}`)
	b := f.browser(t)
	b.signIn("user")
	p := b.get("/ui/evidence")
	if p.code != 200 || !strings.Contains(p.body, "Verify the store now") || !strings.Contains(p.body, "Verifier key") {
		t.Fatalf("evidence page: %d %s", p.code, p.body)
	}
	if p := b.post("/ui/evidence/verify", url.Values{}); p.code != http.StatusForbidden {
		t.Errorf("verify without CSRF: %d", p.code)
	}
	p = b.post("/ui/evidence/verify", url.Values{"csrf": {b.csrf}})
	if p.code != 200 || !strings.Contains(p.body, "The store verifies") {
		t.Errorf("verify: %d %s", p.code, p.body)
	}
	p = b.get("/ui/sessions/" + sid + "/bundle")
	if p.code != 200 || !strings.Contains(p.h.Get("Content-Disposition"), "attachment") || !strings.Contains(p.body, `"checkpoint"`) {
		t.Errorf("bundle: %d %q %.200s", p.code, p.h.Get("Content-Disposition"), p.body)
	}
	if p := b.get("/ui/sessions/nope/bundle"); p.code != 404 {
		t.Errorf("bundle of no session: %d", p.code)
	}
	a := f.browser(t)
	a.signIn("approver")
	if p := a.get("/ui/evidence"); p.code != http.StatusForbidden {
		t.Errorf("approver's evidence page: %d", p.code)
	}
	if p := a.get("/ui/sessions/" + sid + "/bundle"); p.code != http.StatusForbidden {
		t.Errorf("approver's bundle: %d", p.code)
	}
}

// The agent page draws on the learned baselines: versions with their
// state, drift from the version before, and the charts.
func TestAgentBaselines(t *testing.T) {
	f := newFixture(t)
	for _, model := range []string{"m-1", "m-1", "m-2"} {
		sid := f.api(t, "POST", "/v1/sessions", "user", `{"agent_id":"mailer","agent":{"id":"mailer","model":"`+model+`"},"intent":"Send the Q3 summary to alice@example.com"}`)["session_id"].(string)
		f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"alice@example.com","subject":"Q3"}}`)
	}
	if err := f.a.Engine.FlushBaselines(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	b.signIn("user")
	p := b.get("/ui/agents/mailer")
	if p.code != 200 {
		t.Fatalf("agent page: %d %s", p.code, p.body)
	}
	for _, want := range []string{"<h2>Baselines</h2>", "learning", "model m-1", "model m-2", "first version", "divergence", `aria-label="Jensen–Shannon divergence`, "send_email", "Destinations first seen", "Review across sessions", "Baseline: <strong>"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("agent page lacks %q", want)
		}
	}
	if p := b.get("/ui/agents"); !strings.Contains(p.body, "<h2>Baselines</h2>") || !strings.Contains(p.body, `href="/ui/agents/mailer"`) {
		t.Errorf("agents page lacks the learned baselines: %s", p.body)
	}
	// A trace highlights its first departure; the session summary names it.
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"alice@example.com","subject":"Q3"}}`)
	askd := f.ask(t, sid)["decision_id"].(string)
	later := f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"alice@example.com","subject":"again"}}`)["decision_id"].(string)
	if p := b.get("/ui/decisions/" + later); !strings.Contains(p.body, `hx-get="/ui/decisions/`+later+`/trace"`) {
		t.Errorf("the decision page does not load its trace")
	}
	if p := b.get("/ui/decisions/nope/trace"); p.code != 404 {
		t.Errorf("trace of no decision: %d", p.code)
	}
	p = b.get("/ui/decisions/" + later + "/trace")
	if !strings.Contains(p.body, "First departure") || !strings.Contains(p.body, `<tr id="t-`+askd+`" class="effect-ask departure">`) {
		t.Errorf("trace without its first departure: %s", p.body)
	}
	if p := b.get("/ui/sessions/" + sid); !strings.Contains(p.body, `hx-get="/ui/sessions/`+sid+`/summary"`) {
		t.Errorf("the session page does not load its summary: %s", p.body)
	}
	if p := b.get("/ui/sessions/" + sid + "/summary"); p.code != 200 || !strings.Contains(p.body, "<html") || !strings.Contains(p.body, "First departure") || !strings.Contains(p.body, "→ pending") {
		t.Errorf("session summary page: %d %s", p.code, p.body)
	}
	req, _ := http.NewRequest("GET", f.srv.URL+"/ui/sessions/"+sid+"/summary", nil)
	req.Header.Set("HX-Request", "true")
	if p := b.do(req); p.code != 200 || strings.Contains(p.body, "<html") || !strings.Contains(p.body, "First departure") {
		t.Errorf("session summary fragment: %d %s", p.code, p.body)
	}
	if p := b.get("/ui/sessions/nope/summary"); p.code != 404 {
		t.Errorf("summary of no session: %d", p.code)
	}
	// A decision shows its signals.
	list := f.api(t, "GET", "/v1/decisions?limit=1", "user", "")["decisions"].([]any)
	dec := list[0].(map[string]any)
	p = b.get("/ui/decisions/" + dec["decision_id"].(string))
	if sig, ok := dec["signals"].([]any); ok && len(sig) > 0 {
		name := sig[0].(map[string]any)["name"].(string)
		if !strings.Contains(p.body, "<code>"+name+"</code>") {
			t.Errorf("decision page lacks signal %s", name)
		}
	} else if !strings.Contains(p.body, "No baseline signals") {
		t.Errorf("decision page says nothing of signals")
	}
}

func TestPolicyPage(t *testing.T) {
	f := newFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	b := f.browser(t)
	b.signIn("user")
	p := b.get("/ui/policy")
	if p.code != 200 || !strings.Contains(p.body, "<code>builtin.") || !strings.Contains(p.body, ".yaml:") {
		t.Fatalf("policy page: %d %s", p.code, p.body)
	}
	for _, tt := range []struct {
		query url.Values
		want  string
	}{
		{url.Values{"session": {sid}, "tool": {"send_email"}, "args": {`{"to":"eve@competitor.example"}`}}, `<span class="effect">ask</span>`},
		{url.Values{"session": {sid}, "tool": {"send_email"}, "args": {`{"to":"alice@example.com"}`}}, `<span class="effect">allow</span>`},
		{url.Values{"session": {sid}, "tool": {"send_email"}, "args": {`[1]`}}, "not a JSON object"},
		{url.Values{"session": {"nope"}, "tool": {"x"}}, "not found"},
		{url.Values{"session": {sid}}, "Name a session and a tool"},
	} {
		p := b.get("/ui/policy?" + tt.query.Encode())
		if p.code != 200 || !strings.Contains(p.body, tt.want) {
			t.Errorf("check %v: %d, lacks %q", tt.query, p.code, tt.want)
		}
	}
	// Checking stores nothing.
	if n := len(f.api(t, "GET", "/v1/decisions?session_id="+sid, "user", "")["decisions"].([]any)); n != 0 {
		t.Errorf("the console stored %d decisions", n)
	}
	a := f.browser(t)
	a.signIn("approver")
	if p := a.get("/ui/policy"); p.code != http.StatusForbidden {
		t.Errorf("approver's policy page: %d", p.code)
	}
}
