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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/hook"
	"github.com/mandate-dev/mandate/internal/server"
	"github.com/mandate-dev/mandate/internal/servetest"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// mandateBin is cmd/mandate, built once for the package's tests.
var mandateBin servetest.Shared

// wireErrors are answers of the shared server that do not match the
// OpenAPI document; any fails the run.
var wireErrors errorList

type errorList struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorList) add(err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err)
	l.mu.Unlock()
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, err := range wireErrors.errs {
		fmt.Fprintln(os.Stderr, "FAIL: the server's answer does not match the OpenAPI document:", err)
		code = 1
	}
	for _, f := range cleanups {
		f()
	}
	mandateBin.Remove()
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

// sharedServer is the one server of the end-to-end tests: opening one
// compiles the policy. The tests keep apart by their Claude Code sessions.
var sharedServer struct {
	once sync.Once
	s    *testServer
	err  error
}

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	sharedServer.once.Do(func() { sharedServer.s, sharedServer.err = startTestServer() })
	if sharedServer.err != nil {
		t.Fatal(sharedServer.err)
	}
	return sharedServer.s
}

func startTestServer() (*testServer, error) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	dir, err := os.MkdirTemp("", "mandate-hook-server-")
	if err != nil {
		return nil, err
	}
	a, err := app.Open(ctx, app.Config{DataDir: filepath.Join(dir, "data"), Synchronous: "OFF", Listen: addr})
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(server.ValidateResponses(server.New(server.Options{Engine: a.Engine, Version: "test"}), wireErrors.add))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	cleanups = append(cleanups, srv.Close, func() { a.Close() }, func() { os.RemoveAll(dir) })

	tok, rec, err := auth.Issue("hook", "", "claude-code", time.Now())
	if err != nil {
		return nil, err
	}
	if err := a.Store.CreateToken(ctx, rec); err != nil {
		return nil, err
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	tokenFile := filepath.Join(home, "hook.token")
	if err := os.WriteFile(tokenFile, []byte(tok+"\n"), 0o600); err != nil {
		return nil, err
	}
	return &testServer{app: a, url: srv.URL, addr: addr, tokenFile: tokenFile, home: home}, nil
}

// cleanups run after all tests.
var cleanups []func()

// payload reads a recorded event, pointing addresses of Mandate's default
// listen address at the test server's.
func (s *testServer) payload(t testing.TB, name string) []byte {
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
func run(t testing.TB, env []string, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(mandateBin.Binary(t), append([]string{"hook", "claude-code"}, args...)...)
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
	testpeer.Slow(t)
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
	testpeer.Slow(t)
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

// TestInstallCommand runs `mandate hook install|uninstall claude-code` on a
// settings file with the user's own hooks, then runs the installed command
// line through a shell as Claude Code would.
func TestInstallCommand(t *testing.T) {
	testpeer.Slow(t)
	s := newTestServer(t)
	bin := mandateBin.Binary(t)
	dir := t.TempDir()
	orig, err := os.ReadFile(filepath.Join("testdata", "settings", "user_hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(dir, "proj", ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, orig, 0o640); err != nil {
		t.Fatal(err)
	}
	mandate := func(wd string, env []string, args ...string) result {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = wd, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code, stdout.String(), stderr.String()}
	}
	env := []string{"HOME=" + s.home, "PATH=" + os.Getenv("PATH")}
	install := []string{"hook", "install", "claude-code", "--project", "--server", s.url, "--token-file", s.tokenFile}

	r := mandate(filepath.Join(dir, "proj"), env, install...)
	if r.code != 0 || !strings.Contains(r.stdout, "installed Mandate's hooks for 7 events in "+settings) {
		t.Fatalf("install: %+v", r)
	}
	once, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o640 {
		t.Errorf("install changed the file's mode to %v", fi.Mode().Perm())
	}
	if r := mandate(filepath.Join(dir, "proj"), env, install...); r.code != 0 || !strings.Contains(r.stdout, "already installed") {
		t.Fatalf("second install: %+v", r)
	}
	if again, _ := os.ReadFile(settings); !bytes.Equal(again, once) {
		t.Fatal("a second install changed the file")
	}

	// The installed command works as Claude Code runs it: through a shell.
	var parsed struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command   string `json:"command"`
				Timeout   int    `json:"timeout"`
				OnFailure string `json:"onFailure"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(once, &parsed); err != nil {
		t.Fatal(err)
	}
	pre := parsed.Hooks["PreToolUse"]
	h := pre[len(pre)-1].Hooks[0]
	if h.Timeout != 30 || h.OnFailure != "block" || !strings.Contains(h.Command, bin+" hook claude-code --server "+s.url+" --token-file "+s.tokenFile) {
		t.Fatalf("installed handler: %+v", h)
	}
	sh := exec.Command("sh", "-c", h.Command)
	sh.Env = []string{"HOME=" + s.home, "PATH=" + os.Getenv("PATH")}
	sh.Stdin = bytes.NewReader(bytes.ReplaceAll(s.payload(t, "pre_tool_use_read"), []byte(ccSession), []byte("install-test-session")))
	out, err := sh.Output()
	if err != nil || !strings.Contains(string(out), `"permissionDecision"`) {
		t.Fatalf("the installed command: %v, %s", err, out)
	}

	// Token files and servers that must not be used.
	adminTok := filepath.Join(dir, "admin.token")
	loose := filepath.Join(dir, "loose.token")
	os.WriteFile(adminTok, []byte("mdt_x\n"), 0o600)
	os.WriteFile(loose, []byte("mdt_x\n"), 0o644)
	renamed := filepath.Join(dir, "hook.token") // an admin token under a hook token's name
	agentTok := filepath.Join(dir, "agent.token")
	otherHook := filepath.Join(dir, "mailer-hook.token") // a hook token for another agent
	for _, f := range []struct{ path, role, agent string }{{renamed, "admin", ""}, {agentTok, "agent", "a1"}, {otherHook, "hook", "mailer"}} {
		tok, rec, err := auth.Issue(f.role, f.agent, "install-test", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.app.Store.CreateToken(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(f.path, []byte(tok+"\n"), 0o600)
	}
	for _, tc := range []struct {
		file, server, want string
	}{
		{adminTok, s.url, "is the admin token"},
		{loose, s.url, "readable by others"},
		{filepath.Join(dir, "missing.token"), s.url, "no such file"},
		{renamed, s.url, "holds an admin token"},
		{agentTok, s.url, "holds an agent token"},
		{otherHook, s.url, `bound to agent "mailer"`},
		{s.tokenFile, s.addr, "give the scheme too, e.g. http://" + s.addr},
		{s.tokenFile, "http://127.0.0.1:1", "cannot check the token"},
	} {
		r := mandate(dir, env, "hook", "install", "claude-code", "--settings", filepath.Join(dir, "other.json"), "--token-file", tc.file, "--server", tc.server)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("install with %s at %s: %+v", filepath.Base(tc.file), tc.server, r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "other.json")); err == nil {
		t.Error("a refused install wrote the settings file")
	}
	if r := mandate(dir, env, "hook", "install", "cursor"); r.code == 0 || !strings.Contains(r.stderr, "claude-code") {
		t.Errorf("install for another runtime: %+v", r)
	}
	if r := mandate(dir, env, "hook", "install", "claude-code", "--user", "--project"); r.code == 0 {
		t.Errorf("--user with --project: %+v", r)
	}

	// Uninstall takes out exactly what install put in.
	r = mandate(filepath.Join(dir, "proj"), env, "hook", "uninstall", "claude-code", "--settings", settings)
	if r.code != 0 || !strings.Contains(r.stdout, "removed Mandate's hooks") {
		t.Fatalf("uninstall: %+v", r)
	}
	back, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	var c, want bytes.Buffer
	json.Compact(&c, orig)
	json.Indent(&want, c.Bytes(), "", "  ")
	want.WriteByte('\n')
	if !bytes.Equal(back, want.Bytes()) {
		t.Fatalf("after uninstall:\n%s\nwant\n%s", back, want.Bytes())
	}
	if r := mandate(dir, env, "hook", "uninstall", "claude-code", "--settings", settings); r.code != 0 || !strings.Contains(r.stdout, "no Mandate hooks") {
		t.Fatalf("second uninstall: %+v", r)
	}

	// --user writes $CLAUDE_CONFIG_DIR/settings.json when set, else
	// ~/.claude/settings.json, creating it.
	cfgDir := filepath.Join(dir, "claude-config")
	if r := mandate(dir, append(env, "CLAUDE_CONFIG_DIR="+cfgDir, "MANDATE_URL="+s.url), "hook", "install", "claude-code", "--user", "--token-file", s.tokenFile); r.code != 0 {
		t.Fatalf("install --user with CLAUDE_CONFIG_DIR: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(cfgDir, "settings.json")); err != nil {
		t.Fatal(err)
	}
	if r := mandate(dir, append(env, "MANDATE_URL="+s.url), "hook", "install", "claude-code", "--token-file", s.tokenFile); r.code != 0 {
		t.Fatalf("install (user by default): %+v", r)
	}
	if _, err := os.Stat(filepath.Join(s.home, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkHookProcess is what Claude Code waits for on every tool call:
// start `mandate hook claude-code`, which reads the event, asks the server
// and answers.
func BenchmarkHookProcess(b *testing.B) {
	s := newTestServer(b)
	event := bytes.ReplaceAll(s.payload(b, "pre_tool_use_read"), []byte(ccSession), []byte("bench-process"))
	run(b, s.env(), bytes.ReplaceAll(s.payload(b, "user_prompt_submit"), []byte(ccSession), []byte("bench-process")))
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if r := run(b, s.env(), event); r.code != 0 || !strings.Contains(r.stdout, `"allow"`) {
			b.Fatalf("%+v", r)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Milliseconds()), "p99-ms")
}
