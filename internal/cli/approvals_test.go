package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/judge/judgetest"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// served is a `mandate serve` running in this process, with a config file.
type served struct {
	url, data, admin string
	stop             func()
}

func serveWithConfig(t *testing.T, config string, env map[string]string) *served {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mandate.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServe(t, filepath.Join(dir, "data"), env, "--config", cfg)
}

// startServe runs `mandate serve` in this process on a loopback port, with
// data directory data, environment env and the extra arguments, until the
// test ends; it returns once the server says where it listens.
func startServe(t *testing.T, data string, env map[string]string, extra ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	getenv := func(k string) string { return env[k] }
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data", data, "--log-level", "error"}, extra...)
	go func() {
		done <- Main(ctx, args, Env{Stdin: strings.NewReader(""), Stdout: pw, Stderr: os.Stderr, Getenv: getenv})
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	url := ""
	deadline := time.Now().Add(30 * time.Second)
	for url == "" && time.Now().Before(deadline) && lines.Scan() {
		if _, u, ok := strings.Cut(lines.Text(), "listening on "); ok {
			url = strings.TrimSpace(u)
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("serve did not start (exit %v)", <-done)
	}
	go io.Copy(io.Discard, pr)
	tok, err := os.ReadFile(filepath.Join(data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	s := &served{url: url, data: data, admin: strings.TrimSpace(string(tok))}
	s.stop = sync.OnceFunc(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("serve did not shut down")
		}
	})
	t.Cleanup(s.stop)
	return s
}

func (s *served) token(t *testing.T, role string) string {
	t.Helper()
	code, out, errs := run(t, "", "token", "create", "--role", role, "--name", "test "+role, "--data", s.data)
	if code != 0 {
		t.Fatalf("token create --role %s: %d %s", role, code, errs)
	}
	return strings.TrimSpace(out)
}

// mailer is an admin client and a new session of agent "mailer" whose
// mandate sends the Q3 summary to alice@example.com only.
func (s *served) mailer(t *testing.T) (*client.Client, *client.Session) {
	t.Helper()
	admin := client.New(s.url, s.admin)
	sess, err := admin.CreateSession(context.Background(), client.SessionRequest{AgentID: "mailer", Intent: "Send the Q3 summary to alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return admin, sess
}

func (s *served) ask(t *testing.T, c *client.Client, sid, to string) *client.Decision {
	t.Helper()
	d, err := c.Evaluate(context.Background(), sid, "send_email", map[string]any{"to": to, "subject": "Q3", "body": "numbers"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Effect != client.Ask || d.ApprovalID == "" {
		t.Fatalf("want an ask: %+v", d)
	}
	return d
}

// runAs runs the command line with a server and token in its environment.
func runAs(t *testing.T, s *served, tok string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	env := map[string]string{"MANDATE_URL": s.url, "MANDATE_TOKEN": tok}
	code := Main(context.Background(), args, Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }})
	return code, out.String(), errb.String()
}

type hookReceiver struct {
	mu   sync.Mutex
	got  [][]byte
	sigs []string
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.got, h.sigs = append(h.got, b), append(h.sigs, r.Header.Get(client.WebhookHeader))
	h.mu.Unlock()
}

// TestServeWithApprovalsConfig runs `mandate serve --config` with the
// issue's sections — a deadline, a webhook, a judge — and answers an ask
// with `mandate approvals`.
func TestServeWithApprovalsConfig(t *testing.T) {
	hooks := &hookReceiver{}
	rcv := httptest.NewServer(hooks)
	defer rcv.Close()
	jsrv := judgetest.Start(t, []judgetest.Rule{{Match: "recipient auditor@", Content: `{"decision":"allow","reason":"the auditor was named in the ticket"}`}})
	config := fmt.Sprintf(`approvals:
  timeout: 10m
  link: https://mandate.example/approvals/{id}
notify:
  - url: %s/mandate
    secret_env: MANDATE_WEBHOOK_SECRET
    events: [approval]
judge:
  url: %s
  model: qwen2.5-7b-instruct
  api_key_env: MANDATE_JUDGE_KEY
  mode: advisory
  eligible: all
  timeout: 5s
`, rcv.URL, jsrv.URL)
	const secret = "webhook-secret-for-the-test"
	s := serveWithConfig(t, config, map[string]string{"MANDATE_WEBHOOK_SECRET": secret, "MANDATE_JUDGE_KEY": "sk-local"})
	ctx := context.Background()
	admin, sess := s.mailer(t)
	d := s.ask(t, admin, sess.SessionID, "auditor@example.com")
	if d.Judge == nil || d.Judge.Decision != "allow" || d.Judge.Applied {
		t.Errorf("advisory judge: %+v", d.Judge)
	}
	approver := s.token(t, "approver")
	code, out, errs := runAs(t, s, approver, "approvals", "list")
	if code != 0 || !strings.Contains(out, d.ApprovalID) || !strings.Contains(out, "send_email") || !strings.Contains(out, "auditor@example.com") {
		t.Fatalf("approvals list: %d\n%s%s", code, out, errs)
	}
	// An agent's token cannot answer.
	agent := s.token(t, "hook")
	if code, _, errs := runAs(t, s, agent, "approvals", "approve", d.ApprovalID); code == 0 || !strings.Contains(errs, "forbidden") {
		t.Errorf("a hook token approved: %d %s", code, errs)
	}
	suffix := d.ApprovalID[len(d.ApprovalID)-6:]
	code, out, errs = runAs(t, s, approver, "approvals", "approve", suffix, "--note", "the auditor is fine")
	if code != 0 || !strings.Contains(out, "approved "+d.ApprovalID) {
		t.Fatalf("approve: %d %s %s", code, out, errs)
	}
	code, _, errs = runAs(t, s, approver, "approvals", "deny", d.ApprovalID)
	if code == 0 || !strings.Contains(errs, "already answered") {
		t.Errorf("second answer: %d %s", code, errs)
	}
	again, err := admin.Evaluate(ctx, sess.SessionID, "send_email", map[string]any{"to": "auditor@example.com", "subject": "Q3", "body": "numbers"})
	if err != nil || again.Effect != client.Allow || again.Rules[0] != "approval.granted" {
		t.Fatalf("after approval: %+v %v", again, err)
	}
	// The webhook got the new approval, signed, with its link.
	deadline := time.Now().Add(5 * time.Second)
	for {
		hooks.mu.Lock()
		n := len(hooks.got)
		hooks.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	if len(hooks.got) != 1 {
		t.Fatalf("webhook deliveries: %d", len(hooks.got))
	}
	if err := client.VerifyWebhook([]byte(secret), hooks.sigs[0], hooks.got[0], time.Now(), 0); err != nil {
		t.Errorf("the delivery does not verify: %v", err)
	}
	var p struct {
		Type, Link string
		Data       struct {
			ApprovalID string `json:"approval_id"`
		}
	}
	json.Unmarshal(hooks.got[0], &p)
	if p.Type != "approval" || p.Link != "https://mandate.example/approvals/"+d.ApprovalID || p.Data.ApprovalID != d.ApprovalID {
		t.Errorf("delivery %s", hooks.got[0])
	}
	// The delivery is visible to an admin.
	var wh struct {
		Webhooks []struct {
			Delivered int `json:"delivered"`
		} `json:"webhooks"`
	}
	if err := admin.Do(ctx, "GET", "/v1/webhooks", nil, &wh); err != nil || len(wh.Webhooks) != 1 {
		t.Errorf("webhook status: %+v %v", wh, err)
	}
}

func TestApprovalsNeedAServerAndToken(t *testing.T) {
	code, _, errs := run(t, "", "approvals", "list")
	if code == 0 || !strings.Contains(errs, "no token") {
		t.Errorf("no token: %d %s", code, errs)
	}
	code, _, errs = run(t, "", "approvals", "list", "--server", "http://127.0.0.1:1", "--token", "mdt_x")
	if code == 0 || !strings.Contains(errs, "127.0.0.1:1") {
		t.Errorf("no server: %d %s", code, errs)
	}
}

// TestWatchHelper is the watch process the tmux test runs; it does nothing
// in a normal test run.
func TestWatchHelper(t *testing.T) {
	if os.Getenv("MANDATE_WATCH_HELPER") != "1" {
		t.Skip("helper process for TestWatchUnderTmux")
	}
	code := Main(context.Background(), []string{"approvals", "watch"}, Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv})
	os.Exit(code)
}

// TestWatchUnderTmux runs `mandate approvals watch` in a real terminal —
// tmux — and answers with key presses, as a person would.
func TestWatchUnderTmux(t *testing.T) {
	testpeer.Slow(t)
	tmux := testpeer.Program(t, "tmux", "MANDATE_TEST_TMUX", "apt-get install tmux (.ci/run does)")
	s := serveWithConfig(t, "approvals:\n  timeout: 10m\n", nil)
	ctx := context.Background()
	admin, sess := s.mailer(t)
	first := s.ask(t, admin, sess.SessionID, "eve@competitor.example")
	second := s.ask(t, admin, sess.SessionID, "mallory@elsewhere.example")
	approver := s.token(t, "approver")

	sock := fmt.Sprintf("mandate-test-%d", os.Getpid())
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	self, _ := os.Executable()
	cmd := fmt.Sprintf("env MANDATE_WATCH_HELPER=1 MANDATE_URL=%s MANDATE_TOKEN=%s %s -test.run=^TestWatchHelper$", s.url, approver, self)
	tm("new-session", "-d", "-s", "watch", "-x", "180", "-y", "50", cmd)
	t.Cleanup(func() { exec.Command(tmux, "-L", sock, "kill-server").Run() })
	screen := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		var last string
		for time.Now().Before(deadline) {
			last = tm("capture-pane", "-p", "-t", "watch")
			if strings.Contains(last, want) {
				return last
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("the screen never showed %q:\n%s", want, last)
		return ""
	}
	scr := screen("2 pending")
	if !strings.Contains(scr, "mallory@elsewhere.example") || !strings.Contains(scr, "never named by the user") {
		t.Errorf("the list does not show the calls and why:\n%s", scr)
	}
	// Newest first: 1 is mallory's. Move down to eve's and deny it.
	tm("send-keys", "-t", "watch", "j")
	tm("send-keys", "-t", "watch", "d")
	screen("denied")
	screen("1 pending")
	// Approve the other with one key press.
	tm("send-keys", "-t", "watch", "a")
	screen("nothing is waiting")
	// A new ask appears without a key press.
	third := s.ask(t, admin, sess.SessionID, "trent@elsewhere.example")
	screen("trent@elsewhere.example")
	tm("send-keys", "-t", "watch", "q")

	for id, want := range map[string]string{first.ApprovalID: "denied", second.ApprovalID: "approved", third.ApprovalID: "pending"} {
		a, err := admin.GetApproval(ctx, id)
		if err != nil || a.State != want {
			t.Errorf("approval %s: %v %v, want %s", id, a.State, err, want)
		}
		if want != "pending" && (a.Via != "cli" || !strings.HasPrefix(a.AnsweredBy, "approver:")) {
			t.Errorf("approval %s answered via %s by %s", id, a.Via, a.AnsweredBy)
		}
	}
}
