package hook_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/mandate-dev/mandate/internal/hook"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/server"
	"github.com/mandate-dev/mandate/internal/store"
)

var admin = auth.Principal{TokenID: "tok_test", Role: auth.RoleAdmin}

// shared is one Mandate server for the in-process tests: opening one
// compiles the policy, which would dominate each test. Tests keep apart by
// their session ids (see event).
var shared struct {
	once  sync.Once
	app   *app.App
	url   string
	token string
	err   error
}

// inProcess returns a ClaudeCode handler that talks to the shared server
// with a hook token, and the server's app.
func inProcess(t testing.TB) (*hook.ClaudeCode, *app.App) {
	t.Helper()
	shared.once.Do(func() {
		ctx := context.Background()
		a, err := app.Open(ctx, app.Config{Synchronous: "OFF"})
		if err != nil {
			shared.err = err
			return
		}
		srv := httptest.NewServer(server.New(server.Options{Engine: a.Engine}))
		tok, rec, err := auth.Issue("hook", "", "test", time.Now())
		if err == nil {
			err = a.Store.CreateToken(ctx, rec)
		}
		shared.app, shared.url, shared.token, shared.err = a, srv.URL, tok, err
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return &hook.ClaudeCode{Client: client.New(shared.url, shared.token), HomeDir: "/home/dev"}, shared.app
}

// event makes an event of the test's own Claude Code session (sid(t, "s1")
// unless fields say otherwise).
func event(t *testing.T, name string, fields map[string]any) *hook.Event {
	m := map[string]any{"session_id": sid(t, "s1"), "cwd": "/home/dev/api", "hook_event_name": name}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	ev, err := hook.ParseEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// sid is a Claude Code session id of the test's own.
func sid(t *testing.T, name string) string {
	return strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + "-" + name
}

func answer(t *testing.T, h *hook.ClaudeCode, ev *hook.Event) *hook.Output {
	t.Helper()
	out, err := h.Answer(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s: %v", ev.HookEventName, err)
	}
	return out
}

func TestSessionStartTakesUpSessions(t *testing.T) {
	h, a := inProcess(t)
	ctx := context.Background()
	id := hook.MainSessionID(sid(t, "s1"))
	if out := answer(t, h, event(t, hook.EventSessionStart, map[string]any{"source": "startup"})); out != nil {
		t.Fatalf("startup answered %+v", out)
	}
	answer(t, h, event(t, hook.EventSessionEnd, map[string]any{"reason": "clear"}))
	if s, _ := a.Store.GetSession(ctx, id); s.Status != store.StatusCompleted {
		t.Fatalf("after SessionEnd: %s", s.Status)
	}
	// Resuming an ended session makes it active again.
	if out := answer(t, h, event(t, hook.EventSessionStart, map[string]any{"source": "resume"})); out != nil {
		t.Fatalf("resume answered %+v", out)
	}
	if s, _ := a.Store.GetSession(ctx, id); s.Status != store.StatusActive {
		t.Fatalf("after resume: %s", s.Status)
	}
	// A suspended one stays suspended: the hook may not lift that, and
	// says so; ending it leaves it suspended too.
	if _, err := a.Engine.SetStatus(ctx, admin, id, store.StatusSuspended); err != nil {
		t.Fatal(err)
	}
	out := answer(t, h, event(t, hook.EventSessionStart, map[string]any{"source": "compact"}))
	if out == nil || !strings.Contains(out.SystemMessage, "stays stopped") {
		t.Fatalf("resume of a suspended session: %+v", out)
	}
	answer(t, h, event(t, hook.EventSessionEnd, map[string]any{"reason": "other"}))
	if s, _ := a.Store.GetSession(ctx, id); s.Status != store.StatusSuspended {
		t.Fatalf("a suspended session was ended by the hook: %s", s.Status)
	}
	d := preToolUse(t, h, map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "/home/dev/api/a.go"}, "tool_use_id": "t1"})
	if d.PermissionDecision != "deny" || !strings.Contains(d.PermissionDecisionReason, "suspended") {
		t.Fatalf("a call in a suspended session: %+v", d)
	}
}

func preToolUse(t *testing.T, h *hook.ClaudeCode, fields map[string]any) hook.EventOutput {
	t.Helper()
	out := answer(t, h, event(t, hook.EventPreToolUse, fields))
	if out == nil || out.HookSpecificOutput == nil {
		t.Fatalf("no PreToolUse answer: %+v", out)
	}
	return *out.HookSpecificOutput
}

func TestEventsWithoutSessionStart(t *testing.T) {
	// A hook installed mid-session sees events of a session it never saw
	// start: the session is made on the way.
	h, a := inProcess(t)
	ctx := context.Background()
	answer(t, h, event(t, hook.EventUserPromptSubmit, map[string]any{"prompt": "   "}))
	if _, err := a.Store.GetSession(ctx, hook.MainSessionID(sid(t, "s1"))); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an empty prompt made a session: %v", err)
	}
	answer(t, h, event(t, hook.EventUserPromptSubmit, map[string]any{"prompt": "Summarise README.md"}))
	mv, err := a.Store.GetMandate(ctx, hook.MainSessionID(sid(t, "s1")), 0)
	if err != nil || mv.Version != 1 || mv.Source != "hook" || mv.Mandate.Instructions[0].Text != "Summarise README.md" {
		t.Fatalf("first prompt without SessionStart: %+v %v", mv, err)
	}
	answer(t, h, event(t, hook.EventUserPromptSubmit, map[string]any{"prompt": "Also fix the typos in it"}))
	if mv, _ := a.Store.GetMandate(ctx, hook.MainSessionID(sid(t, "s1")), 0); mv.Version != 2 || len(mv.Mandate.Instructions) != 2 {
		t.Fatalf("second prompt: %+v", mv)
	}

	// Another session's first event is a tool call.
	d := preToolUse(t, h, map[string]any{"session_id": sid(t, "s2"), "tool_name": "Read", "tool_input": map[string]any{"file_path": "/home/dev/api/README.md"}, "tool_use_id": "t1"})
	if d.PermissionDecision == "" {
		t.Fatalf("no decision: %+v", d)
	}
	if s, err := a.Store.GetSession(ctx, hook.MainSessionID(sid(t, "s2"))); err != nil || s.WorkingDir != "/home/dev/api" || s.HomeDir != "/home/dev" {
		t.Fatalf("session made by PreToolUse: %+v %v", s, err)
	}

	// A sub-agent's call before its SubagentStart was seen: the sub-agent
	// session is started under the main session.
	sub := map[string]any{"agent_id": "ag1", "agent_type": "Explore", "tool_name": "Glob", "tool_input": map[string]any{"pattern": "**/*.go"}, "tool_use_id": "t2"}
	preToolUse(t, h, sub)
	s, err := a.Store.GetSession(ctx, hook.SubagentSessionID(hook.MainSessionID(sid(t, "s1")), "ag1"))
	if err != nil || s.ParentID != hook.MainSessionID(sid(t, "s1")) || s.Agent.ID != "claude-code:Explore" {
		t.Fatalf("lazily started sub-agent: %+v %v", s, err)
	}
	// A sub-agent of a session never seen at all: both are made.
	preToolUse(t, h, map[string]any{"session_id": sid(t, "s3"), "agent_id": "ag3", "agent_type": "Plan", "tool_name": "Read",
		"tool_input": map[string]any{"file_path": "/home/dev/api/README.md"}, "tool_use_id": "t3"})
	if s, err := a.Store.GetSession(ctx, hook.SubagentSessionID(hook.MainSessionID(sid(t, "s3")), "ag3")); err != nil || s.ParentID != hook.MainSessionID(sid(t, "s3")) {
		t.Fatalf("sub-agent of an unseen session: %+v %v", s, err)
	}
	// Its SubagentStart arriving late changes nothing.
	answer(t, h, event(t, hook.EventSubagentStart, map[string]any{"agent_id": "ag1", "agent_type": "Explore"}))
	// A SubagentStop or SessionEnd of something never seen is no error.
	answer(t, h, event(t, hook.EventSubagentStop, map[string]any{"agent_id": "never", "agent_type": "Explore"}))
	answer(t, h, event(t, hook.EventSessionEnd, map[string]any{"session_id": sid(t, "s9"), "reason": "other"}))
}

func TestDeniedLaunchMakesNoLaunchSession(t *testing.T) {
	h, a := inProcess(t)
	ctx := context.Background()
	answer(t, h, event(t, hook.EventSessionStart, nil))
	if _, err := a.Engine.SetStatus(ctx, admin, hook.MainSessionID(sid(t, "s1")), store.StatusSuspended); err != nil {
		t.Fatal(err)
	}
	d := preToolUse(t, h, map[string]any{"tool_name": "Task", "tool_use_id": "tt", "tool_input": map[string]any{"prompt": "Read the docs", "subagent_type": "Explore"}})
	if d.PermissionDecision != "deny" {
		t.Fatalf("Task in a suspended session: %+v", d)
	}
	if _, err := a.Store.GetSession(ctx, hook.LaunchSessionID(hook.MainSessionID(sid(t, "s1")), "tt")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a denied launch made a launch session: %v", err)
	}
}

func TestLargeOutputIsSummarised(t *testing.T) {
	h, a := inProcess(t)
	h.MaxOutputBytes = 64 << 10
	ctx := context.Background()
	answer(t, h, event(t, hook.EventUserPromptSubmit, map[string]any{"prompt": "Read the logs in /var/log/app"}))
	preToolUse(t, h, map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "/var/log/app/big.log"}, "tool_use_id": "t1"})
	resp, _ := json.Marshal(map[string]any{"type": "text", "file": map[string]any{"content": strings.Repeat("é log line\n", 20000)}})
	if out := answer(t, h, event(t, hook.EventPostToolUse, map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "/var/log/app/big.log"},
		"tool_use_id": "t1", "tool_response": json.RawMessage(resp)})); out != nil {
		t.Fatalf("a matched result answered %+v", out)
	}
	d, err := a.Store.DecisionByCall(ctx, hook.MainSessionID(sid(t, "s1")), "t1")
	if err != nil {
		t.Fatal(err)
	}
	obs, err := a.Store.ListObservations(ctx, d.ID)
	if err != nil || len(obs) != 1 {
		t.Fatalf("observations: %v %v", obs, err)
	}
	var got struct {
		Truncated bool   `json:"truncated"`
		Bytes     int    `json:"bytes"`
		SHA256    string `json:"sha256"`
		Head      string `json:"head"`
	}
	if err := json.Unmarshal(obs[0].Output, &got); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(resp)
	if !got.Truncated || got.Bytes != len(resp) || got.SHA256 != hex.EncodeToString(sum[:]) || !bytes.HasPrefix(resp, []byte(got.Head)) || len(got.Head) > 32<<10 {
		t.Fatalf("summary: truncated %v bytes %d sha %s head %d bytes", got.Truncated, got.Bytes, got.SHA256, len(got.Head))
	}
}

func TestStrangeServerAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/evaluate":
			w.Write([]byte(`{"decision_id":"d1","effect":"maybe"}`))
		case "/v1/observe":
			w.Write([]byte(`not json`))
		default:
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	h := &hook.ClaudeCode{Client: client.New(srv.URL, "t")}
	_, err := h.Answer(context.Background(), event(t, hook.EventPreToolUse, map[string]any{"tool_name": "Read"}))
	if err == nil || !strings.Contains(err.Error(), `effect "maybe"`) {
		t.Errorf("unknown effect: %v", err)
	}
	_, err = h.Answer(context.Background(), event(t, hook.EventPostToolUse, map[string]any{"tool_name": "Read"}))
	if err == nil || !strings.Contains(err.Error(), "decode") {
		t.Errorf("garbled observe answer: %v", err)
	}
	if _, err := (&hook.ClaudeCode{}).Answer(context.Background(), event(t, hook.EventStop, nil)); err == nil {
		t.Error("no client configured must be an error")
	}
}

func TestHandleWritesOneAnswer(t *testing.T) {
	h, _ := inProcess(t)
	var out bytes.Buffer
	in := `{"session_id":"` + sid(t, "s1") + `","cwd":"/home/dev/api","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/etc/passwd"},"tool_use_id":"x"}`
	if err := h.Handle(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	var o hook.Output
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil || o.HookSpecificOutput == nil || dec.More() {
		t.Fatalf("answer: %q %v", out.String(), err)
	}
	out.Reset()
	if err := h.Handle(context.Background(), strings.NewReader(`{"hook_event_name":"Notification","message":"x"}`), &out); err != nil || out.Len() != 0 {
		t.Fatalf("Notification: %q %v", out.String(), err)
	}
}

func TestGapsAreRedacted(t *testing.T) {
	h, a := inProcess(t)
	ctx := context.Background()
	secret := "AKIAIOSFODNN7EXAMPLE"
	out := answer(t, h, event(t, hook.EventPostToolUse, map[string]any{"tool_name": "Bash", "tool_use_id": "never",
		"tool_input":    map[string]any{"command": "aws configure set aws_access_key_id " + secret},
		"tool_response": map[string]any{"stdout": "key " + secret}}))
	if out == nil || !strings.Contains(out.SystemMessage, "gap") {
		t.Fatalf("no gap reported: %+v", out)
	}
	gaps, err := a.Store.ListGaps(ctx, store.GapFilter{SessionID: hook.MainSessionID(sid(t, "s1"))})
	if err != nil || len(gaps) != 1 {
		t.Fatalf("gaps: %v %v", gaps, err)
	}
	if strings.Contains(string(gaps[0].Args), secret) || strings.Contains(string(gaps[0].Output), secret) {
		t.Fatalf("a secret was stored with the gap: args %s output %s", gaps[0].Args, gaps[0].Output)
	}
}
