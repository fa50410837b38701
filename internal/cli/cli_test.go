package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/app"
)

func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	return code, out.String(), errb.String()
}

func TestCheckExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"allow", []string{"check", "--intent", "Send the Q3 summary to alice@example.com", "--call", `{"tool":"send_email","args":{"to":"alice@example.com","subject":"Q3"}}`}, 0, "ALLOW"},
		{"ask", []string{"check", "--intent", "Send the Q3 summary to alice@example.com", "--call", `{"tool":"send_email","args":{"to":"eve@competitor.example"}}`}, 3, "never named"},
		{"deny", []string{"check", "--intent", "Compare prices of the Dell U2723QE on two shops. Do not buy.", "--call", `{"tool":"checkout","args":{"item":"u2723qe"}}`}, 4, "DENY"},
		{"bad call JSON", []string{"check", "--intent", "x", "--call", `{"tool":`}, 1, "--call"},
		{"unknown call field", []string{"check", "--intent", "x", "--call", `{"tool":"Read","argz":{}}`}, 1, "argz"},
		{"no intent or mandate", []string{"check", "--call", `{"tool":"Read","args":{}}`}, 1, "--intent"},
		{"missing mandate file", []string{"check", "--mandate", "/nonexistent.yaml", "--call", `{"tool":"Read","args":{}}`}, 1, "nonexistent"},
		{"bad policy dir", []string{"check", "--intent", "x", "--policy", "/nonexistent-dir", "--call", `{"tool":"Read","args":{}}`}, 1, "nonexistent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(t, "", tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errs)
			}
			if !strings.Contains(out+errs, tt.contains) {
				t.Errorf("output lacks %q:\n%s%s", tt.contains, out, errs)
			}
		})
	}
}

func TestCheckJSONAndStdin(t *testing.T) {
	code, out, errs := run(t, `{"tool":"Bash","args":{"command":"rm -rf /"}}`, "check", "--intent", "fix the failing test", "--cwd", "/home/dev/p", "--call", "-", "--json")
	if code != 4 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	var v struct {
		Effect  string   `json:"effect"`
		Rules   []string `json:"rules"`
		Reasons []string `json:"reasons"`
		Action  struct {
			Kind string `json:"kind"`
		} `json:"action"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if v.Effect != "deny" || len(v.Rules) == 0 || len(v.Reasons) == 0 || v.Action.Kind != "delete" {
		t.Errorf("json verdict %+v", v)
	}
}

func TestMandateFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "m.yaml")
	os.WriteFile(f, []byte("allow: [read, send]\nscope:\n  recipients: [\"*@example.com\"]\n"), 0o600)
	code, out, errs := run(t, "", "check", "--mandate", f, "--call", `{"tool":"send_email","args":{"to":"bob@example.com","subject":"hi"}}`)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	os.WriteFile(f, []byte("allow: [read]\nscop: {}\n"), 0o600)
	code, _, errs = run(t, "", "check", "--mandate", f, "--call", `{"tool":"Read","args":{}}`)
	if code != 1 || !strings.Contains(errs, "scop") {
		t.Fatalf("bad mandate file: exit %d, %s", code, errs)
	}
}

func TestIntentCompile(t *testing.T) {
	code, out, errs := run(t, "", "intent", "compile", "Räum mein Postfach auf, aber lösch nichts.")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"deny:", "- delete", "lösch nichts", "recognised:", "languages:"} {
		if !strings.Contains(out, want) {
			t.Errorf("draft lacks %q:\n%s", want, out)
		}
	}
	if code, _, _ := run(t, "", "intent", "compile", "   "); code != 1 {
		t.Errorf("empty intent: exit %d", code)
	}
}

// TestIntentCompileJSON: --json prints the body /v1/intent/compile
// answers, with the phrases the compiler did not use.
func TestIntentCompileJSON(t *testing.T) {
	code, out, errs := run(t, "", "intent", "compile", "--json", "Clean up my Downloads folder, only delete files older than a year.")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var resp api.CompileResponse
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if !slices.Contains(resp.Mandate.Ask, action.Delete) || slices.Contains(resp.Mandate.Allow, action.Delete) {
		t.Errorf("allow %v ask %v: the condition on the files must put deleting to a person", resp.Mandate.Allow, resp.Mandate.Ask)
	}
	if len(resp.NotUnderstood) == 0 || resp.NotUnderstood[0].Phrase != "files" || resp.NotUnderstood[0].Effect == "" {
		t.Errorf("not_understood = %+v, want \"files\" first, with its effect", resp.NotUnderstood)
	}
	if !strings.Contains(out, `"not_understood"`) {
		t.Errorf("no not_understood field:\n%s", out)
	}
}

func TestPolicyTest(t *testing.T) {
	if code, out, errs := run(t, "", "policy", "test"); code != 0 || !strings.Contains(out, "passed") {
		t.Fatalf("built-in fixtures: exit %d\n%s%s", code, out, errs)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(`rules:
  - name: no-friday-deploys
    when: action.commands.exists(c, c.name == "kubectl" && "apply" in c.argv)
    effect: deny
    reason: no deploys
`), 0o600)
	os.WriteFile(filepath.Join(dir, "rules_test.yaml"), []byte(`cases:
  - name: deploy is denied
    intent: deploy the new version
    call: {tool: Bash, args: {command: "kubectl apply -f deploy.yaml"}}
    expect: deny
    expect_rules: [no-friday-deploys]
  - name: this expectation is wrong on purpose
    intent: deploy the new version
    call: {tool: Bash, args: {command: "kubectl apply -f deploy.yaml"}}
    expect: allow
`), 0o600)
	code, out, errs := run(t, "", "policy", "test", dir)
	if code != 1 || !strings.Contains(out, "FAIL") || !strings.Contains(errs, "1 of 2") {
		t.Fatalf("a failing case must fail the run: exit %d\n%s%s", code, out, errs)
	}
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte("rules:\n  - name: broken\n    when: action.kindd == 1\n    effect: deny\n"), 0o600)
	code, _, errs = run(t, "", "policy", "test", dir)
	if code != 1 || !strings.Contains(errs, "rules.yaml") || !strings.Contains(errs, "broken") {
		t.Fatalf("a compile error must name the file and rule: exit %d %s", code, errs)
	}
}

func TestTokenCreate(t *testing.T) {
	dir := t.TempDir()
	// A directory without a store is refused, not filled with a new one.
	if code, _, errs := run(t, "", "token", "create", "--role", "hook", "--data", dir); code != 1 || !strings.Contains(errs, "holds no Mandate store") {
		t.Fatalf("empty --data: exit %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, app.DatabaseFile)); err == nil {
		t.Fatal("a refused token create made a store")
	}
	a, err := app.Open(context.Background(), app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	code, out, errs := run(t, "", "token", "create", "--role", "agent", "--agent", "mailer", "--data", dir)
	if code != 0 || !strings.HasPrefix(out, "mdt_") {
		t.Fatalf("exit %d: %q %s", code, out, errs)
	}
	if code, _, errs := run(t, "", "token", "create", "--role", "agent", "--data", dir); code != 1 || !strings.Contains(errs, "agent") {
		t.Errorf("agent token without --agent: exit %d %s", code, errs)
	}
	if code, _, errs := run(t, "", "token", "create", "--role", "root", "--data", dir); code != 1 || !strings.Contains(errs, "root") {
		t.Errorf("unknown role: exit %d %s", code, errs)
	}
}

// TestLogFlags: the global log flags are checked before any command runs,
// and --log-format json writes one JSON object per line.
func TestLogFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--log-level", "verbose", "version"}, 1, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"--log-format", "xml", "version"}, 1, `--log-format "xml": want text or json`},
		// The hook must block (2) on a bad flag, never fail open.
		{[]string{"hook", "claude-code", "--log-level", "loud"}, 2, `--log-level "loud"`},
	} {
		code, _, errs := run(t, "", tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errs, tt.code, tt.want)
		}
	}
	var buf bytes.Buffer
	lf := logFlags{level: "debug", format: "json"}
	lf.logger(&buf, slog.LevelDebug).Info("decision", "effect", "deny")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["effect"] != "deny" || line["msg"] != "decision" {
		t.Fatalf("json log line %q: %v", buf.String(), err)
	}
}

// TestServe starts the real service on a loopback port, as the README says,
// and checks what it prints and that the token it created works.
func TestServe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--data", dir, "--log-level", "error"}, Env{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var url string
	var printed []string
	deadline := time.After(30 * time.Second)
	lines := make(chan string)
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for url == "" || len(printed) < 5 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited early: %v", printed)
			}
			printed = append(printed, l)
			if i := strings.Index(l, "listening on http://"); i >= 0 {
				url = strings.TrimSpace(l[i+len("listening on "):])
			}
		case <-deadline:
			t.Fatalf("serve printed %v", printed)
		}
	}
	go func() {
		for range lines {
		}
	}()
	all := strings.Join(printed, "\n")
	if !strings.Contains(all, "admin token created in") || !strings.Contains(url, "127.0.0.1:") {
		t.Errorf("serve output:\n%s", all)
	}
	info, err := os.Stat(filepath.Join(dir, "admin.token"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("admin token file: %v %v", info, err)
	}
	tok, _ := os.ReadFile(filepath.Join(dir, "admin.token"))
	req, _ := http.NewRequest("POST", url+"/v1/sessions", strings.NewReader(`{"agent_id":"a","intent":"read the docs"}`))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create session with the printed token: %d", resp.StatusCode)
	}
	// The dashboard: / leads a browser to the sign-in page.
	if resp, err := http.Get(url + "/"); err != nil || resp.StatusCode != 200 || resp.Request.URL.Path != "/ui/login" {
		t.Errorf("GET / with the dashboard on: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if !strings.Contains(all, "dashboard: "+url+"/ui/") {
		t.Errorf("serve does not print the dashboard's address:\n%s", all)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exit %d after shutdown", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

func TestServeRefusesBadPolicy(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("rules:\n  - name: x\n    when: 'action.kind =='\n    effect: deny\n"), 0o600)
	code, _, errs := run(t, "", "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--policy", dir)
	if code != 1 || !strings.Contains(errs, "bad.yaml") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestServeWithoutUI(t *testing.T) {
	url := startServe(t, t.TempDir(), nil, "--ui=false").url
	for _, path := range []string{"/", "/ui/", "/ui/login"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s with --ui=false: %d", path, resp.StatusCode)
		}
	}
}
