package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/hook"
	"github.com/mandate-dev/mandate/internal/server"
	"github.com/mandate-dev/mandate/internal/store"
)

// The mandate binary, built once for the package's tests.
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func mandateBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mandate-hook-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "mandate")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/mandate-dev/mandate/cmd/mandate")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// testServer is a real Mandate server (app.Open, server.New) on a loopback
// port, with a hook token in a file.
type testServer struct {
	app       *app.App
	url, addr string
	tokenFile string
	home      string
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	a, err := app.Open(ctx, app.Config{DataDir: t.TempDir(), Synchronous: "OFF", Listen: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	srv := httptest.NewUnstartedServer(server.New(server.Options{Engine: a.Engine, Version: "test"}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)

	tok, rec, err := auth.Issue("hook", "", "claude-code", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Store.CreateToken(ctx, rec); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	tokenFile := filepath.Join(home, "hook.token")
	if err := os.WriteFile(tokenFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &testServer{app: a, url: srv.URL, addr: addr, tokenFile: tokenFile, home: home}
}

// payload reads a recorded event, pointing addresses of Mandate's default
// listen address at the test server's.
func (s *testServer) payload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "claude-code", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(b, []byte("127.0.0.1:7410"), []byte(s.addr))
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs `mandate hook claude-code` as Claude Code does: the event on
// stdin, server and token from the environment.
func run(t *testing.T, env []string, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(mandateBinary(t), append([]string{"hook", "claude-code"}, args...)...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func (s *testServer) env() []string {
	return []string{"HOME=" + s.home, "PATH=" + os.Getenv("PATH"), "MANDATE_URL=" + s.url, "MANDATE_TOKEN_FILE=" + s.tokenFile}
}

func (s *testServer) hook(t *testing.T, event string) result {
	t.Helper()
	return run(t, s.env(), s.payload(t, event))
}

// decision decodes a PreToolUse answer.
func decision(t *testing.T, r result) hook.EventOutput {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var out hook.Output
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil || out.HookSpecificOutput == nil {
		t.Fatalf("stdout is not a PreToolUse answer: %q (%v)", r.stdout, err)
	}
	return *out.HookSpecificOutput
}

const (
	ccSession = "7f3e2a1c-9b4d-4e6f-8a2b-1c3d5e7f9a0b"
	mainID    = "claude-code:" + ccSession
	launchID  = mainID + ":task:toolu_01Task7GhJ2kP9sXqW3mN5vB"
	subID     = mainID + ":agent:a3f9c2e1b7d04e58"
)

// TestClaudeCodeSession plays a whole recorded Claude Code session through
// the real binary against a real server, checking each answer and what the
// server ends up with: sessions, mandate versions, decisions, observations
// and gaps.
func TestClaudeCodeSession(t *testing.T) {
	s := newTestServer(t)
	ctx := context.Background()
	st := s.app.Store
	empty := func(event string) {
		t.Helper()
		r := s.hook(t, event)
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want exit 0 and no output", event, r.code, r.stdout, r.stderr)
		}
	}
	want := func(event, effect, reason string) hook.EventOutput {
		t.Helper()
		d := decision(t, s.hook(t, event))
		if d.HookEventName != "PreToolUse" || d.PermissionDecision != effect || !strings.Contains(d.PermissionDecisionReason, reason) {
			t.Fatalf("%s: got %+v, want %s with reason containing %q", event, d, effect, reason)
		}
		return d
	}

	empty("session_start")
	sess, err := st.GetSession(ctx, mainID)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Agent.ID != "claude-code" || sess.WorkingDir != "/home/dev/api" || sess.HomeDir != s.home || sess.Status != "active" {
		t.Fatalf("session after SessionStart: %+v", sess)
	}

	empty("user_prompt_submit")
	mv, err := st.GetMandate(ctx, mainID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if mv.Version != 2 || mv.Source != "hook" || len(mv.Mandate.Instructions) != 1 ||
		mv.Mandate.Instructions[0].Text != "Fix the failing test in ./pkg/auth. Do not push anything." {
		t.Fatalf("mandate after the first prompt: v%d %s %+v", mv.Version, mv.Source, mv.Mandate.Instructions)
	}

	read := want("pre_tool_use_read", "allow", "Mandate allowed")
	empty("post_tool_use_read")
	want("pre_tool_use_bash_test", "allow", "building and testing")
	want("pre_tool_use_bash_rm", "deny", "destroy data irreversibly")
	want("pre_tool_use_bash_push", "deny", `"Do not push anything"`)
	self := want("pre_tool_use_mandate_api", "deny", "Mandate's own API")

	// A sub-agent: its launch is decided in the main session and holds its
	// prompt; the sub-agent's calls are decided in its own session, within
	// that prompt (it may read, not write).
	want("pre_tool_use_task", "allow", "Mandate allowed")
	empty("subagent_start")
	want("pre_tool_use_subagent_grep", "allow", "Mandate allowed")
	want("pre_tool_use_subagent_write", "ask", "Mandate asks")
	// A sub-agent call whose PreToolUse never came: a gap, and the user
	// is told.
	r := s.hook(t, "post_tool_use_subagent_bash")
	var out hook.Output
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || !strings.Contains(out.SystemMessage, "recorded as gap") {
		t.Fatalf("gap: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	empty("subagent_stop")
	empty("post_tool_use_task")

	for _, ev := range []string{"notification", "stop", "pre_compact"} {
		empty(ev)
	}
	empty("session_start_resume")
	empty("session_end")
	// After the end, nothing more is allowed.
	want("pre_tool_use_read", "deny", "is completed")

	// What the server holds.
	sessions := map[string]struct{ parent, agent, status string }{
		mainID:   {"", "claude-code", "completed"},
		launchID: {mainID, "claude-code:Explore", "completed"},
		subID:    {launchID, "claude-code:Explore", "completed"},
	}
	for id, w := range sessions {
		got, err := st.GetSession(ctx, id)
		if err != nil {
			t.Fatalf("session %s: %v", id, err)
		}
		if got.ParentID != w.parent || got.Agent.ID != w.agent || got.Status != w.status {
			t.Errorf("session %s: parent %q agent %q status %q; want %+v", id, got.ParentID, got.Agent.ID, got.Status, w)
		}
	}
	sub, err := st.GetMandate(ctx, launchID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(sub.Mandate.Instructions) != 1 || !strings.Contains(sub.Mandate.Instructions[0].Text, "list every place where tokens are parsed") {
		t.Errorf("the launch holds the sub-agent's prompt: %+v", sub.Mandate.Instructions)
	}
	decisions, err := st.ListDecisions(ctx, store.DecisionFilter{SessionID: mainID})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range decisions {
		if d.Surface != "hook" {
			t.Errorf("decision %s has surface %q, want hook", d.ID, d.Surface)
		}
		got = append(got, d.Tool+":"+d.Effect+":"+d.CallID)
	}
	wantDecisions := []string{
		"Read:allow:toolu_01Read8FqLm2Nc4Rt6Vx9Za1",
		"Bash:allow:toolu_01Bash3JkW7pQs2Hd5Ty8Ub4",
		"Bash:deny:toolu_01Rm9sXc4Vb7Nm2Lk5Jh8Gf3",
		"Bash:deny:toolu_01Push2Mn8Bv5Cx3Zl7Kj4Hg6",
		"Bash:deny:toolu_01Self4Qw8Er2Ty6Ui9Op3As5",
		"Task:allow:toolu_01Task7GhJ2kP9sXqW3mN5vB",
		"Read:deny:toolu_01Read8FqLm2Nc4Rt6Vx9Za1",
	}
	if strings.Join(got, "\n") != strings.Join(wantDecisions, "\n") {
		t.Errorf("main session decisions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantDecisions, "\n"))
	}
	selfDecision, err := st.GetDecision(ctx, self.PermissionDecisionReason[strings.LastIndex(self.PermissionDecisionReason, " ")+1:len(self.PermissionDecisionReason)-1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(selfDecision.Rules, ","), "builtin.self-") {
		t.Errorf("the call to Mandate's API was denied by %v, not a self-protection rule", selfDecision.Rules)
	}
	subDecisions, err := st.ListDecisions(ctx, store.DecisionFilter{SessionID: subID})
	if err != nil || len(subDecisions) != 2 || subDecisions[0].Tool != "Grep" || subDecisions[1].Effect != "ask" {
		t.Fatalf("sub-agent decisions: %+v %v", subDecisions, err)
	}
	readID := read.PermissionDecisionReason[strings.LastIndex(read.PermissionDecisionReason, " ")+1 : len(read.PermissionDecisionReason)-1]
	obs, err := st.ListObservations(ctx, readID)
	if err != nil || len(obs) != 1 || obs[0].Gap || !strings.Contains(string(obs[0].Output), "ParseToken") {
		t.Fatalf("observation of the Read: %+v %v", obs, err)
	}
	gaps, err := st.ListGaps(ctx, store.GapFilter{})
	if err != nil || len(gaps) != 1 {
		t.Fatalf("gaps: %+v %v", gaps, err)
	}
	if g := gaps[0]; g.SessionID != subID || g.Tool != "Bash" || g.CallID != "toolu_01Skip8Qa4Ws7Ed1Rf5Tg9Yh2" || g.GapReason != "never decided" || !strings.Contains(string(g.Args), "grep -rn ParseToken") {
		t.Fatalf("gap record: %+v", g)
	}
	mandates, err := st.ListMandates(ctx, mainID)
	if err != nil || len(mandates) != 2 {
		t.Fatalf("main session mandate versions: %d %v", len(mandates), err)
	}
}

// TestClaudeCodeFailsClosed checks that every failure exits 2 with one
// line on stderr and nothing on stdout.
func TestClaudeCodeFailsClosed(t *testing.T) {
	s := newTestServer(t)
	// A server that answers too late.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	read := s.payload(t, "pre_tool_use_read")
	base := []string{"HOME=" + s.home, "PATH=" + os.Getenv("PATH")}
	tests := []struct {
		name   string
		env    []string
		stdin  []byte
		args   []string
		stderr string
	}{
		{"unknown event", s.env(), s.payload(t, "unknown_event"), nil, `unknown hook event "PermissionRequest"`},
		{"malformed event", s.env(), s.payload(t, "malformed"), nil, "malformed event"},
		{"empty stdin", s.env(), nil, nil, "no event on stdin"},
		{"not an object", s.env(), []byte(`["PreToolUse"]`), nil, "expected a JSON object"},
		{"no session id", s.env(), []byte(`{"hook_event_name":"PreToolUse","tool_name":"Read"}`), nil, "has no session_id"},
		{"server unreachable", append(base, "MANDATE_URL="+closed.URL, "MANDATE_TOKEN_FILE="+s.tokenFile), read, nil, "connection refused"},
		{"server too slow", append(base, "MANDATE_URL="+slow.URL, "MANDATE_TOKEN_FILE="+s.tokenFile), read, []string{"--timeout", "300ms"}, "within 300ms"},
		{"bad token", append(base, "MANDATE_URL="+s.url, "MANDATE_TOKEN=mdt_nope"), read, nil, "unknown or revoked token"},
		{"no token", append(base, "MANDATE_URL="+s.url), read, nil, "no token"},
		{"unknown flag", s.env(), read, []string{"--bogus"}, "unknown flag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.env, tc.stdin, tc.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2; stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want none", r.stdout)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tc.stderr) {
				t.Errorf("stderr %q: want one line containing %q", r.stderr, tc.stderr)
			}
		})
	}
}
