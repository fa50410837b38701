package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/openapi"
)

type fixture struct {
	srv    *httptest.Server
	a      *app.App
	tokens map[string]string // role or agent:ID -> token
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{Synchronous: "OFF", Metrics: true, MaxArgsBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	f := &fixture{a: a, tokens: map[string]string{}}
	f.issue(t, tokenSpec{"admin", "admin", ""}, tokenSpec{"user", "user", ""}, tokenSpec{"hook", "hook", ""}, tokenSpec{"hook:mailer", "hook", "mailer"}, tokenSpec{"agent:mailer", "agent", "mailer"}, tokenSpec{"agent:other", "agent", "other"})
	h := New(Options{Engine: a.Engine, Store: a.Store, Evidence: a.Evidence, Gatherer: a.Registry, MaxArgsBytes: 64 << 10, Version: "test"})
	f.srv = httptest.NewServer(validating(h, testValidator(t), func(err error) { t.Error(err) }, exercised.add))
	t.Cleanup(f.srv.Close)
	return f
}

// tokenSpec is a token a fixture holds, under key in its tokens.
type tokenSpec struct{ key, role, agent string }

// issue stores a token for each spec and keeps its secret in f.tokens.
func (f *fixture) issue(t testing.TB, specs ...tokenSpec) {
	t.Helper()
	for _, spec := range specs {
		tok, rec, err := auth.Issue(spec.role, spec.agent, spec.key, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := f.a.Store.CreateToken(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		f.tokens[spec.key] = tok
	}
}

func (f *fixture) do(t testing.TB, method, path, who, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, rd)
	if who != "" {
		req.Header.Set("Authorization", "Bearer "+f.tokens[who])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(bytes.TrimSpace(data)) > 0 && json.Unmarshal(data, &out) != nil {
		t.Fatalf("%s %s: response is not JSON: %s", method, path, data)
	}
	return resp.StatusCode, out
}

func (f *fixture) session(t testing.TB, agent, intent string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"agent_id": agent, "intent": intent})
	code, out := f.do(t, "POST", "/v1/sessions", "user", string(body))
	if code != http.StatusCreated {
		t.Fatalf("create session: %d %v", code, out)
	}
	return out["session_id"].(string)
}

// codingSession creates, as the hook, session id: Claude Code fixing a
// test in /home/dev/api.
func (f *fixture) codingSession(t testing.TB, id string) {
	t.Helper()
	body := `{"session_id":"` + id + `","agent_id":"claude-code","intent":"Fix the failing test in ./pkg/auth","working_directory":"/home/dev/api"}`
	if code, out := f.do(t, "POST", "/v1/sessions", "hook", body); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, out)
	}
}

func TestEvaluateFlow(t *testing.T) {
	f := newFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	code, out := f.do(t, "POST", "/v1/evaluate", "agent:mailer", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"eve@competitor.example","attachments":["/home/s/salaries.xlsx"]}}`)
	if code != 200 || out["effect"] == "allow" {
		t.Fatalf("seed 1 over HTTP: %d %v", code, out)
	}
	for _, k := range []string{"decision_id", "effect", "rules", "reasons", "action"} {
		if _, ok := out[k]; !ok {
			t.Errorf("evaluate response lacks %q: %v", k, out)
		}
	}
	if out["action"].(map[string]any)["kind"] != "send" {
		t.Errorf("action.kind %v", out["action"])
	}
	did := out["decision_id"].(string)
	code, out = f.do(t, "POST", "/v1/observe", "agent:mailer", `{"decision_id":"`+did+`","output":{"content":[{"type":"text","text":"not sent"}]}}`)
	if code != 200 || out["observation_id"] == nil {
		t.Fatalf("observe: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v1/decisions/"+did, "user", "")
	if code != 200 || len(out["observations"].([]any)) != 1 {
		t.Fatalf("get decision: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v1/decisions?session_id="+sid, "user", "")
	if code != 200 || len(out["decisions"].([]any)) != 1 {
		t.Fatalf("list decisions: %d %v", code, out)
	}
	code, out = f.do(t, "POST", "/v1/sessions/"+sid+"/mandate", "user", `{"intent":"Also send it to eve@competitor.example"}`)
	if code != 200 || out["mandate"].(map[string]any)["version"].(float64) != 2 {
		t.Fatalf("amend: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v1/sessions/"+sid+"/mandates", "user", "")
	if code != 200 || len(out["versions"].([]any)) != 2 {
		t.Fatalf("versions: %d %v", code, out)
	}
	code, out = f.do(t, "POST", "/v1/evaluate", "agent:mailer", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"eve@competitor.example","subject":"Q3"}}`)
	if code != 200 || out["effect"] != "allow" {
		t.Fatalf("after the user named eve: %d %v", code, out)
	}
}

func TestErrors(t *testing.T) {
	f := newFixture(t)
	sid := f.session(t, "mailer", "Summarise my mail")
	big := `{"session_id":"` + sid + `","tool":"Write","args":{"content":"` + strings.Repeat("a", 200<<10) + `"}}`
	nearCap := `{"session_id":"` + sid + `","tool":"Write","args":{"content":"` + strings.Repeat("a", 70<<10) + `"}}`
	tests := []struct {
		name, method, path, who, body string
		code                          int
		errCode                       string
		mention                       string
	}{
		{"no token", "POST", "/v1/evaluate", "", `{}`, 401, "unauthorized", "bearer"},
		{"malformed JSON", "POST", "/v1/evaluate", "admin", `{"session_id":`, 400, "invalid_request", "JSON"},
		{"not an object", "POST", "/v1/evaluate", "admin", `[1,2]`, 400, "invalid_request", ""},
		{"empty body", "POST", "/v1/evaluate", "admin", ``, 400, "invalid_request", "empty"},
		{"unknown field", "POST", "/v1/evaluate", "admin", `{"session_id":"x","tool":"t","argz":{}}`, 400, "invalid_request", "argz"},
		{"trailing data", "POST", "/v1/evaluate", "admin", `{"session_id":"x","tool":"t"} {}`, 400, "invalid_request", "after"},
		{"args not an object", "POST", "/v1/evaluate", "admin", `{"session_id":"` + sid + `","tool":"t","args":"rm -rf /"}`, 400, "invalid_request", "args"},
		{"wrong type", "POST", "/v1/evaluate", "admin", `{"session_id":7,"tool":"t"}`, 400, "invalid_request", "session_id"},
		{"oversized body", "POST", "/v1/evaluate", "admin", big, 413, "too_large", "bytes"},
		{"args over the cap", "POST", "/v1/evaluate", "admin", nearCap, 400, "invalid_request", "limit"},
		{"unknown session", "POST", "/v1/evaluate", "admin", `{"session_id":"nope","tool":"Read","args":{}}`, 404, "not_found", "nope"},
		{"unknown surface", "POST", "/v1/evaluate", "admin", `{"session_id":"` + sid + `","tool":"Read","args":{},"surface":"telepathy"}`, 400, "invalid_request", "surface"},
		{"missing tool", "POST", "/v1/evaluate", "admin", `{"session_id":"` + sid + `","args":{}}`, 400, "invalid_request", "tool"},
		{"agent of another session", "POST", "/v1/evaluate", "agent:other", `{"session_id":"` + sid + `","tool":"Read","args":{}}`, 403, "forbidden", "mailer"},
		{"agent creating a session", "POST", "/v1/sessions", "agent:mailer", `{"agent_id":"mailer","intent":"x"}`, 403, "forbidden", ""},
		{"agent amending its mandate", "POST", "/v1/sessions/" + sid + "/mandate", "agent:mailer", `{"intent":"send everything to everyone"}`, 403, "forbidden", ""},
		{"agent reading", "GET", "/v1/sessions/" + sid, "agent:mailer", ``, 403, "forbidden", ""},
		{"bad mandate", "POST", "/v1/sessions", "user", `{"agent_id":"a","mandate":{"allow":["teleport"]}}`, 400, "invalid_request", "teleport"},
		{"unknown mandate field", "POST", "/v1/sessions", "user", `{"agent_id":"a","mandate":{"alow":["read"]}}`, 400, "invalid_request", "alow"},
		{"bad status", "POST", "/v1/sessions/" + sid + "/status", "user", `{"status":"paused"}`, 400, "invalid_request", "paused"},
		{"user making tokens", "POST", "/v1/tokens", "user", `{"role":"admin"}`, 403, "forbidden", ""},
		{"agent token without agent", "POST", "/v1/tokens", "admin", `{"role":"agent"}`, 400, "invalid_request", "agent"},
		{"bad limit", "GET", "/v1/decisions?limit=-3", "user", ``, 400, "invalid_request", "limit"},
		{"no route", "GET", "/v1/nope", "user", ``, 404, "not_found", "openapi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := f.do(t, tt.method, tt.path, tt.who, tt.body)
			if code != tt.code {
				t.Fatalf("status %d, want %d: %v", code, tt.code, out)
			}
			e, _ := out["error"].(map[string]any)
			if e == nil || e["code"] != tt.errCode {
				t.Fatalf("error body %v, want code %s", out, tt.errCode)
			}
			if !strings.Contains(strings.ToLower(e["message"].(string)), strings.ToLower(tt.mention)) {
				t.Errorf("message %q should mention %q", e["message"], tt.mention)
			}
			if tt.path == "/v1/evaluate" && code != 401 && out["effect"] != nil && out["effect"] != "deny" {
				t.Errorf("a failed evaluate must say deny: %v", out)
			}
		})
	}
}

func TestTokensAndRevocation(t *testing.T) {
	f := newFixture(t)
	code, out := f.do(t, "POST", "/v1/tokens", "admin", `{"role":"agent","agent_id":"bot","name":"ci"}`)
	if code != 201 {
		t.Fatalf("create token: %d %v", code, out)
	}
	f.tokens["bot"] = out["token"].(string)
	code, _ = f.do(t, "POST", "/v1/evaluate", "bot", `{"session_id":"nope","tool":"Read"}`)
	if code != 404 {
		t.Fatalf("new token should authenticate: %d", code)
	}
	code, out = f.do(t, "GET", "/v1/tokens", "admin", "")
	if code != 200 || strings.Contains(toJSON(out), "hash") {
		t.Fatalf("token list must not expose hashes: %v", out)
	}
	id := ""
	for _, tk := range out["tokens"].([]any) {
		if tk.(map[string]any)["agent_id"] == "bot" {
			id = tk.(map[string]any)["id"].(string)
		}
	}
	if code, _ := f.do(t, "DELETE", "/v1/tokens/"+id, "admin", ""); code != 204 {
		t.Fatalf("revoke: %d", code)
	}
}

func TestPublicEndpoints(t *testing.T) {
	f := newFixture(t)
	code, out := f.do(t, "GET", "/healthz", "", "")
	if code != 200 || out["status"] != "ok" {
		t.Fatalf("healthz: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v1/openapi.json", "", "")
	if code != 200 || out["openapi"] != "3.1.0" {
		t.Fatalf("openapi: %d", code)
	}
	paths := out["paths"].(map[string]any)
	for _, p := range []string{"/v1/sessions", "/v1/evaluate", "/v1/observe", "/v1/decisions"} {
		if paths[p] == nil {
			t.Errorf("openapi lacks %s", p)
		}
	}
	sid := f.session(t, "mailer", "Summarise my mail")
	f.do(t, "POST", "/v1/evaluate", "agent:mailer", `{"session_id":"`+sid+`","tool":"list_emails","args":{}}`)
	resp, err := http.Get(f.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `mandate_decisions_total{effect="allow",surface="api"} 1`) {
		t.Errorf("metrics lack the decision counter:\n%s", body)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// FuzzEvaluateBody feeds arbitrary bodies to /v1/evaluate: never a panic,
// never a 5xx, never an allow for something that is not a valid call.
func FuzzEvaluateBody(f *testing.F) {
	fx := newFixture(f)
	sid := fx.session(f, "mailer", "Summarise my mail")
	for _, s := range []string{
		`{"session_id":"` + sid + `","tool":"list_emails","args":{}}`,
		`{"session_id":"` + sid + `","tool":"Bash","args":{"command":"rm -rf /"}}`,
		`{"session_id":` + "\x00" + `}`, `{"tool":"x","args":{"a":[1,{"b":null}]}}`, `null`, `{"args":{}}`, `{"session_id":"` + sid + `","tool":"","args":{}}`,
	} {
		f.Add(s)
	}
	h := New(Options{Engine: fx.a.Engine, MaxArgsBytes: 64 << 10})
	v, err := openapi.NewValidator(Spec(nil), Operations())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", "/v1/evaluate", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fx.tokens["admin"])
		rec := httptest.NewRecorder()
		validating(h, v, func(err error) { t.Error(err) }, nil).ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("5xx for %q: %s", body, rec.Body)
		}
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("non-JSON response for %q: %s", body, rec.Body)
		}
		if rec.Code != 200 && out["effect"] == "allow" {
			t.Fatalf("error response with allow for %q", body)
		}
		if rec.Code == 200 {
			var call struct {
				SessionID string         `json:"session_id"`
				Tool      string         `json:"tool"`
				Args      map[string]any `json:"args"`
			}
			if err := json.Unmarshal([]byte(body), &call); err != nil || call.Tool == "" || call.SessionID != sid {
				t.Fatalf("200 for an invalid call %q: %s", body, rec.Body)
			}
		}
	})
}
