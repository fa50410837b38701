package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/events"
)

// newApprovalFixture is newFixture with an event bus and an approver token.
func newApprovalFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	bus := events.New(events.Options{})
	a, err := app.Open(ctx, app.Config{Synchronous: "OFF", MaxArgsBytes: 64 << 10, Approvals: engine.ApprovalOptions{Events: bus}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	f := &fixture{a: a, tokens: map[string]string{}}
	f.issue(t, tokenSpec{"admin", "admin", ""}, tokenSpec{"user", "user", ""}, tokenSpec{"hook", "hook", ""}, tokenSpec{"approver", "approver", ""}, tokenSpec{"agent:mailer", "agent", "mailer"})
	h := New(Options{Engine: a.Engine, Events: bus, Webhooks: fakeWebhooks{}, Version: "test"})
	f.srv = httptest.NewServer(validating(h, testValidator(t), func(err error) { t.Error(err) }, exercised.add))
	t.Cleanup(f.srv.Close)
	return f
}

type fakeWebhooks struct{}

func (fakeWebhooks) Status() []api.WebhookStatus {
	return []api.WebhookStatus{{URL: "http://127.0.0.1:9000/mandate", Format: "json", Events: []string{"approval"}, Signed: true, Delivered: 1,
		Deliveries: []api.WebhookDelivery{{EventID: "x-1", Type: "approval", Status: "delivered", Attempts: 1, Code: 200, At: time.Now()}}}}
}

func TestWebhookStatusRoute(t *testing.T) {
	f := newApprovalFixture(t)
	code, out := f.do(t, "GET", "/v1/webhooks", "admin", "")
	if code != 200 || len(out["webhooks"].([]any)) != 1 {
		t.Errorf("admin: %d %v", code, out)
	}
	for _, who := range []string{"user", "approver", "hook"} {
		if code, _ := f.do(t, "GET", "/v1/webhooks", who, ""); code != http.StatusForbidden {
			t.Errorf("%s saw the webhooks: %d", who, code)
		}
	}
}

const eveCall = `"tool":"send_email","args":{"to":"eve@competitor.example","subject":"Q3","body":"numbers"}`

func (f *fixture) askEve(t *testing.T, sid string) map[string]any {
	t.Helper()
	code, out := f.do(t, "POST", "/v1/evaluate", "agent:mailer", `{"session_id":"`+sid+`",`+eveCall+`}`)
	if code != 200 || out["effect"] != "ask" || out["approval_id"] == nil {
		t.Fatalf("evaluate: %d %v", code, out)
	}
	return out
}

func TestApprovalRoutes(t *testing.T) {
	f := newApprovalFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	d := f.askEve(t, sid)
	id := d["approval_id"].(string)

	code, out := f.do(t, "GET", "/v1/approvals?state=pending&session_id="+sid, "approver", "")
	if code != 200 || len(out["approvals"].([]any)) != 1 {
		t.Fatalf("list: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v1/approvals/"+id, "approver", "")
	if code != 200 || out["state"] != "pending" || out["tool"] != "send_email" || out["decision_id"] != d["decision_id"] {
		t.Fatalf("get: %d %v", code, out)
	}
	// Who may not.
	for _, who := range []string{"agent:mailer", "hook"} {
		if code, out := f.do(t, "POST", "/v1/approvals/"+id, who, `{"decision":"approve"}`); code != http.StatusForbidden {
			t.Errorf("%s answered its own approval: %d %v", who, code, out)
		}
		if code, _ := f.do(t, "GET", "/v1/approvals", who, ""); code != http.StatusForbidden {
			t.Errorf("%s listed approvals: %d", who, code)
		}
	}
	// An approver can do nothing else.
	for _, probe := range []struct{ method, path, body string }{
		{"POST", "/v1/evaluate", `{"session_id":"` + sid + `",` + eveCall + `}`},
		{"GET", "/v1/sessions/" + sid, ""},
		{"GET", "/v1/decisions", ""},
		{"POST", "/v1/sessions", `{"agent_id":"x","intent":"buy everything"}`},
		{"POST", "/v1/sessions/" + sid + "/mandate", `{"intent":"send to everyone"}`},
		{"GET", "/v1/tokens", ""},
	} {
		if code, out := f.do(t, probe.method, probe.path, "approver", probe.body); code != http.StatusForbidden {
			t.Errorf("approver %s %s: %d %v", probe.method, probe.path, code, out)
		}
	}
	// Bad input.
	for _, bad := range []string{`{"decision":"maybe"}`, `{}`, `{"decision":"approve","scope":"forever"}`, `{"decision":"approve","extra":1}`, `not json`} {
		if code, out := f.do(t, "POST", "/v1/approvals/"+id, "approver", bad); code != http.StatusBadRequest {
			t.Errorf("answer %s: %d %v", bad, code, out)
		}
	}
	if code, out := f.do(t, "POST", "/v1/approvals/no-such-approval", "approver", `{"decision":"approve"}`); code != http.StatusNotFound || !strings.Contains(out["error"].(map[string]any)["message"].(string), "no-such-approval") {
		t.Errorf("unknown approval: %d %v", code, out)
	}
	code, out = f.do(t, "POST", "/v1/approvals/"+id, "approver", `{"decision":"approve","note":"ok this once"}`)
	if code != 200 || out["state"] != "approved" || !strings.HasPrefix(out["answered_by"].(string), "approver:tok_") || out["answerer_role"] != "approver" {
		t.Fatalf("answer: %d %v", code, out)
	}
	code, out = f.do(t, "POST", "/v1/approvals/"+id, "admin", `{"decision":"deny"}`)
	if code != http.StatusConflict || !strings.Contains(out["error"].(map[string]any)["message"].(string), "already answered") {
		t.Errorf("second answer: %d %v", code, out)
	}
	code, out = f.do(t, "POST", "/v1/evaluate", "agent:mailer", `{"session_id":"`+sid+`",`+eveCall+`}`)
	if code != 200 || out["effect"] != "allow" || out["approval_id"] != id || out["rules"].([]any)[0] != "approval.granted" {
		t.Errorf("re-evaluated: %d %v", code, out)
	}
	// Every state change is in the evidence log, naming who answered.
	recs, err := f.a.Store.SessionEvidence(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, r := range recs {
		switch r.Type {
		case "approval":
			states = append(states, "created")
		case "approval_state":
			var env struct {
				Content struct {
					From     string `json:"from"`
					Approval struct {
						State        string `json:"state"`
						AnsweredBy   string `json:"answered_by"`
						AnswererRole string `json:"answerer_role"`
					} `json:"approval"`
				} `json:"content"`
			}
			if err := json.Unmarshal(r.Body, &env); err != nil {
				t.Fatal(err)
			}
			a := env.Content.Approval
			states = append(states, env.Content.From+"→"+a.State)
			if !strings.HasPrefix(a.AnsweredBy, "approver:tok_") || a.AnswererRole != "approver" {
				t.Errorf("the record does not name the approver: %s", r.Body)
			}
		}
	}
	if strings.Join(states, ",") != "created,pending→approved,approved→approved" {
		t.Errorf("approval records: %v", states)
	}
}

func TestEvaluateWaitAndLongPoll(t *testing.T) {
	f := newApprovalFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	// Nobody answers: ask, still pending.
	start := time.Now()
	code, out := f.do(t, "POST", "/v1/evaluate", "agent:mailer", `{"session_id":"`+sid+`","wait":"200ms",`+eveCall+`}`)
	if code != 200 || out["effect"] != "ask" || out["approval"].(map[string]any)["state"] != "pending" || time.Since(start) < 200*time.Millisecond {
		t.Fatalf("unanswered wait: %d %v after %s", code, out, time.Since(start))
	}
	id := out["approval_id"].(string)
	if code, out := f.do(t, "POST", "/v1/evaluate", "agent:mailer", `{"session_id":"`+sid+`","wait":"1h",`+eveCall+`}`); code != 400 {
		t.Errorf("wait over the maximum: %d %v", code, out)
	}
	// Long-poll and a waiting evaluate, both woken by the answer.
	var wg sync.WaitGroup
	var polled, evaluated map[string]any
	wg.Go(func() { _, polled = f.do(t, "GET", "/v1/approvals/"+id+"?wait=5s", "approver", "") })
	wg.Go(func() {
		_, evaluated = f.do(t, "POST", "/v1/evaluate", "agent:mailer", `{"session_id":"`+sid+`","wait":"5s",`+eveCall+`}`)
	})
	for f.a.Engine.Hub().Waiting(id) < 2 {
		time.Sleep(2 * time.Millisecond)
	}
	if code, out := f.do(t, "POST", "/v1/approvals/"+id, "user", `{"decision":"approve"}`); code != 200 {
		t.Fatalf("answer: %d %v", code, out)
	}
	wg.Wait()
	if polled["state"] != "approved" {
		t.Errorf("long-poll: %v", polled)
	}
	if evaluated["effect"] != "allow" || evaluated["approval_id"] != id {
		t.Errorf("waiting evaluate: %v", evaluated)
	}
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	id, typ string
	data    map[string]any
}

func readEvents(t *testing.T, resp *http.Response, n int, out chan<- sseEvent) {
	sc := bufio.NewScanner(resp.Body)
	var cur sseEvent
	for sc.Scan() && n > 0 {
		line := sc.Text()
		switch {
		case line == "":
			if cur.typ != "" {
				out <- cur
				n--
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &cur.data); err != nil {
				t.Errorf("event data is not JSON: %s", line)
			}
		}
	}
	close(out)
}

func (f *fixture) stream(t *testing.T, who, query, last string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+"/v1/events"+query, nil)
	req.Header.Set("Authorization", "Bearer "+f.tokens[who])
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestEventStream(t *testing.T) {
	f := newApprovalFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	all := f.stream(t, "user", "", "")
	if ct := all.Header.Get("Content-Type"); all.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("stream: %d %s", all.StatusCode, ct)
	}
	appr := f.stream(t, "approver", "", "")
	onlyAnswers := f.stream(t, "user", "?types=approval.answered", "")
	for _, bad := range []struct{ who, q string }{{"agent:mailer", ""}, {"hook", ""}, {"approver", "?types=decision"}, {"user", "?types=nonsense"}} {
		if r := f.stream(t, bad.who, bad.q, ""); r.StatusCode == 200 {
			t.Errorf("%s %s: stream opened", bad.who, bad.q)
		}
	}
	allc, apprc, ansc := make(chan sseEvent, 8), make(chan sseEvent, 8), make(chan sseEvent, 8)
	go readEvents(t, all, 3, allc)
	go readEvents(t, appr, 2, apprc)
	go readEvents(t, onlyAnswers, 1, ansc)

	d := f.askEve(t, sid) // decision + approval
	id := d["approval_id"].(string)
	if code, out := f.do(t, "POST", "/v1/approvals/"+id, "approver", `{"decision":"deny","note":"not her"}`); code != 200 {
		t.Fatalf("answer: %d %v", code, out)
	}
	want := func(name string, ch <-chan sseEvent, types ...string) []sseEvent {
		var got []sseEvent
		timeout := time.After(5 * time.Second)
		for range types {
			select {
			case ev, ok := <-ch:
				if !ok {
					t.Fatalf("%s: stream ended after %v", name, got)
				}
				got = append(got, ev)
			case <-timeout:
				t.Fatalf("%s: got %v, want %v", name, got, types)
			}
		}
		for i, ev := range got {
			if ev.typ != types[i] {
				t.Errorf("%s: event %d is %s, want %s", name, i, ev.typ, types[i])
			}
		}
		return got
	}
	evs := want("reader", allc, "decision", "approval", "approval.answered")
	if evs[0].data["decision_id"] != d["decision_id"] || evs[1].data["approval_id"] != id || evs[2].data["state"] != "denied" || evs[2].data["note"] != "not her" {
		t.Errorf("event data: %+v", evs)
	}
	want("approver", apprc, "approval", "approval.answered")
	want("filtered", ansc, "approval.answered")

	// Reconnecting with the last id seen replays what came after it.
	replay := f.stream(t, "user", "", evs[0].id)
	rc := make(chan sseEvent, 8)
	go readEvents(t, replay, 2, rc)
	want("replay", rc, "approval", "approval.answered")
	// An id from another run cannot be replayed: the stream says so.
	stale := f.stream(t, "user", "", "zzz-12")
	sc := make(chan sseEvent, 1)
	go readEvents(t, stale, 1, sc)
	want("stale id", sc, "reset")
}
