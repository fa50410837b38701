package mcpgw

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mandate-dev/mandate/internal/servetest"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// End-to-end tests: the real mandate binary, real MCP servers from npm
// (installed by .ci/npm-mcp.sh into $MANDATE_TEST_MCP_DIR), and the SDK's
// client, over stdio and Streamable HTTP.

// npmServer returns the path of an npm MCP server's entry point, or skips —
// fails in CI, where the servers must have been installed.
func npmServer(t *testing.T, pkg string) string {
	t.Helper()
	dir := testpeer.Env(t, "MANDATE_TEST_MCP_DIR", "run `. .ci/npm-mcp.sh` to install @modelcontextprotocol/server-filesystem and server-everything for the gateway's end-to-end tests")
	path := filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("MANDATE_TEST_MCP_DIR=%s has no %s: %v", dir, pkg, err)
	}
	testpeer.Program(t, "node", "MANDATE_TEST_MCP_DIR", "install Node.js (apt-get install nodejs npm)")
	return path
}

// mandateBin is cmd/mandate, built once for the package's tests.
var mandateBin servetest.Shared

// workspace lays out a directory the mandate covers and one it does not.
type workspace struct {
	ws, outside, notes, target string
}

// newWorkspace makes it outside the system's temporary directories: writes
// there are scratch files that policy lets through, and the point here is a
// write that matters.
func newWorkspace(t *testing.T) workspace {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no user cache directory for the workspace: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(cache, "mandate-e2e"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp(filepath.Join(cache, "mandate-e2e"), "ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if root, err = filepath.EvalSymlinks(root); err != nil {
		t.Fatal(err)
	}
	w := workspace{ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	w.notes = filepath.Join(w.ws, "notes.txt")
	w.target = filepath.Join(w.outside, "target.txt")
	for _, d := range []string{w.ws, w.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(w.notes, []byte("Q3 plan: ship the gateway."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.target, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w workspace) assertUntouched(t *testing.T) {
	t.Helper()
	if b, err := os.ReadFile(w.target); err != nil || string(b) != "original" {
		t.Fatalf("the file outside the mandate changed: %q %v", b, err)
	}
	if _, err := os.Stat(w.notes); err != nil {
		t.Fatalf("the notes are gone: %v", err)
	}
}

// stdioGateway starts `mandate mcp stdio` around argv and connects the
// SDK's client to it.
func stdioGateway(t *testing.T, intent, data string, argv ...string) *mcp.ClientSession {
	cs, _ := stdioGatewayNotified(t, intent, data, nil, argv...)
	return cs
}

// stdioGatewayNotified is stdioGateway with a channel that receives the
// client's tools/list_changed notifications.
func stdioGatewayNotified(t *testing.T, intent, data string, env []string, argv ...string) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	return startStdio(t, []string{"--intent", intent, "--data", data}, env, argv)
}

// startStdio runs `mandate mcp stdio FLAGS -- ARGV`.
func startStdio(t *testing.T, flags, env, argv []string) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	args := append(append(append([]string{"mcp", "stdio", "--call-timeout", "20s"}, flags...), "--"), argv...)
	cmd := exec.Command(mandateBin.Binary(t), args...)
	cmd.Stderr = &testLog{t: t, prefix: "gateway: "}
	cmd.Env = append(append(os.Environ(), "MANDATE_URL=", "MANDATE_TOKEN="), env...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listChanged := make(chan struct{}, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-client", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged <- struct{}{} },
	})
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to the gateway: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, listChanged
}

type testLog struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
	done   bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done && testing.Verbose() {
		l.t.Log(l.prefix + strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func listTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		out[tool.Name] = tool
	}
	return out
}

func wantAllowed(t *testing.T, res *mcp.CallToolResult, contains string) {
	t.Helper()
	if _, effect := decisionOf(t, res); effect != "allow" || res.IsError || !strings.Contains(resultText(res), contains) {
		t.Fatalf("want an allowed result with %q; got effect %q isError %v: %s", contains, effect, res.IsError, resultText(res))
	}
}

func wantRefused(t *testing.T, res *mcp.CallToolResult, effect, contains string) {
	t.Helper()
	id, got := decisionOf(t, res)
	if got != effect || !res.IsError || !strings.Contains(resultText(res), contains) || !strings.Contains(resultText(res), id) {
		t.Fatalf("want %s naming %q and the decision; got %q (%s) isError %v: %s", effect, contains, got, id, res.IsError, resultText(res))
	}
}

func TestE2EStdioFilesystem(t *testing.T) {
	testpeer.Slow(t)
	t.Parallel()
	fs := npmServer(t, "server-filesystem")
	w := newWorkspace(t)
	data := t.TempDir()

	// The upstream may touch both directories: Mandate is what keeps the
	// agent inside the mandate.
	cs := stdioGateway(t, "Summarise the notes in "+w.ws+" and write the summary to "+w.ws+"/summary.md", data, "node", fs, w.ws, w.outside)
	tools := listTools(t, cs)
	if rt := tools["read_text_file"]; rt == nil || rt.Annotations == nil || !rt.Annotations.ReadOnlyHint {
		t.Fatalf("read_text_file and its annotations: %+v", rt)
	}
	wantAllowed(t, callTool(t, cs, "read_text_file", map[string]any{"path": w.notes}), "Q3 plan")
	wantRefused(t, callTool(t, cs, "write_file", map[string]any{"path": w.target, "content": "pwned"}), "ask", "awaits approval")
	w.assertUntouched(t)
	summary := filepath.Join(w.ws, "summary.md")
	wantAllowed(t, callTool(t, cs, "write_file", map[string]any{"path": summary, "content": "Ship the gateway."}), "")
	if b, err := os.ReadFile(summary); err != nil || string(b) != "Ship the gateway." {
		t.Fatalf("the allowed write did not happen: %q %v", b, err)
	}

	// A read-only mandate: moving (deleting the source) is refused.
	ro := stdioGateway(t, "Look through the notes in "+w.ws+". Read only, do not change or delete anything.", t.TempDir(), "node", fs, w.ws, w.outside)
	wantAllowed(t, callTool(t, ro, "read_text_file", map[string]any{"path": w.notes}), "Q3 plan")
	wantRefused(t, callTool(t, ro, "move_file", map[string]any{"source": w.notes, "destination": filepath.Join(w.ws, "gone.txt")}), "deny", "Mandate refused this call")
	wantRefused(t, callTool(t, ro, "write_file", map[string]any{"path": w.target, "content": "pwned"}), "deny", "Read only")
	w.assertUntouched(t)
}

func TestE2EStdioEverything(t *testing.T) {
	testpeer.Slow(t)
	t.Parallel()
	ev := npmServer(t, "server-everything")
	cs := stdioGateway(t, "Echo hello and add 2 and 3.", t.TempDir(), "node", ev, "stdio")
	tools := listTools(t, cs)
	echo := tools["echo"]
	if echo == nil || echo.Annotations == nil || !echo.Annotations.ReadOnlyHint || echo.Annotations.DestructiveHint == nil || *echo.Annotations.DestructiveHint {
		t.Fatalf("echo and its annotations: %+v", echo)
	}
	wantAllowed(t, callTool(t, cs, "echo", map[string]any{"message": "hello"}), "hello")
	wantAllowed(t, callTool(t, cs, "get-sum", map[string]any{"a": 2, "b": 3}), "5")
	// Binary content reaches the client intact.
	res := callTool(t, cs, "get-tiny-image", nil)
	if res.IsError {
		t.Fatalf("get-tiny-image: %s", resultText(res))
	}
	var images int
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok && len(img.Data) > 0 {
			images++
		}
	}
	if images != 1 {
		t.Fatalf("image not passed through: %+v", res.Content)
	}
}

// peerBinary is this test binary, which serves as the MCP peer when
// re-executed with helperEnv set (TestMain).
func peerBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// rugPull calls get_news, after which the peer changes greet's
// description: the client hears that the tools changed, and greet is
// refused from then on.
func rugPull(t *testing.T, cs *mcp.ClientSession, listChanged <-chan struct{}) {
	t.Helper()
	wantAllowed(t, callTool(t, cs, "get_news", nil), "no news")
	select {
	case <-listChanged:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed reached the client")
	}
	wantRefused(t, callTool(t, cs, "greet", map[string]any{"name": "Ada"}), "deny", "engine.tool-changed")
}

// TestE2EStdioRugPull runs the real binary in front of a peer that changes
// a tool's description mid-session (this test binary, re-executed).
func TestE2EStdioRugPull(t *testing.T) {
	testpeer.Slow(t)
	t.Parallel()
	self := peerBinary(t)
	// The variable reaches the peer through the gateway's environment.
	cs, listChanged := stdioGatewayNotified(t, "Greet Ada.", t.TempDir(), []string{helperEnv + "=1"}, self)
	if g := listTools(t, cs)["greet"]; g == nil || g.Description != greetDescription {
		t.Fatalf("greet: %+v", g)
	}
	wantAllowed(t, callTool(t, cs, "greet", map[string]any{"name": "Ada"}), "Hello, Ada!")
	rugPull(t, cs, listChanged)
	if g := listTools(t, cs)["greet"]; strings.Contains(g.Description, "id_rsa") {
		t.Fatalf("the changed description reached the client: %q", g.Description)
	}
}

// TestE2EStdioServerMode runs the stdio gateway against a running
// `mandate serve` with a hook token: sessions, pins, decisions and
// observations go over the HTTP API.
func TestE2EStdioServerMode(t *testing.T) {
	testpeer.Slow(t)
	t.Parallel()
	self := peerBinary(t)
	s := startServe(t, "mcp: {}\n")
	hook := s.api(t, "POST", "/v1/tokens", `{"role":"hook","name":"gateway","agent_id":"greeter"}`)["token"].(string)
	cs, listChanged := startStdio(t, []string{"--intent", "Greet Ada.", "--agent", "greeter", "--server", s.url, "--token", hook},
		[]string{helperEnv + "=1"}, []string{self})
	res := callTool(t, cs, "greet", map[string]any{"name": "Ada"})
	wantAllowed(t, res, "Hello, Ada!")
	id, _ := decisionOf(t, res)
	got := s.api(t, "GET", "/v1/decisions/"+id, "")
	d := got["decision"].(map[string]any)
	if obs := got["observations"].([]any); len(obs) != 1 || !strings.Contains(fmt.Sprint(obs[0]), "Hello, Ada!") {
		t.Fatalf("observation over the API: %v", obs)
	}
	sid := d["session_id"].(string)
	if sess := s.api(t, "GET", "/v1/sessions/"+sid, "")["session"].(map[string]any); sess["agent"].(map[string]any)["id"] != "greeter" {
		t.Fatalf("session: %v", sess)
	}
	rugPull(t, cs, listChanged)
	tools := s.api(t, "GET", "/v1/sessions/"+sid+"/tools", "")
	if ch := tools["changes"].([]any); len(ch) != 1 || ch[0].(map[string]any)["tool"] != "greet" {
		t.Fatalf("changes over the API: %v", tools["changes"])
	}
}

// serveProcess is `mandate serve` running as a subprocess.
type serveProcess struct {
	url, token string
}

func startServe(t *testing.T, config string) *serveProcess {
	t.Helper()
	data := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "mandate.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mandateBin.Binary(t), "serve", "--data", data, "--listen", "127.0.0.1:0", "--config", cfg)
	cmd.Stderr = &testLog{t: t, prefix: "serve: "}
	cmd.Env = append(os.Environ(), "MANDATE_URL=", "MANDATE_TOKEN=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on (http://\S+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	var url string
	select {
	case url = <-addr:
	case <-time.After(60 * time.Second):
		t.Fatal("mandate serve did not start")
	}
	tok, err := os.ReadFile(filepath.Join(data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return &serveProcess{url: url, token: strings.TrimSpace(string(tok))}
}

type headerRT struct {
	h    http.Header
	base http.RoundTripper
}

func (rt headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range rt.h {
		r.Header[k] = v
	}
	return rt.base.RoundTrip(r)
}

// connect opens an MCP session the way today's clients do (protocol
// 2025-11-25, with Mcp-Session-Id).
func (s *serveProcess) connect(t *testing.T, token string, h http.Header) (*mcp.ClientSession, error) {
	t.Helper()
	return s.connectVersion(t, token, h, "2025-11-25")
}

// connectVersion connects with a given protocol version; 2026-07-28 and
// later are stateless.
func (s *serveProcess) connectVersion(t *testing.T, token string, h http.Header, version string) (*mcp.ClientSession, error) {
	t.Helper()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Authorization", "Bearer "+token)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: &http.Client{Transport: headerRT{h: h, base: http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func (s *serveProcess) api(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
	}
	return out
}

func TestE2EStreamableHTTP(t *testing.T) {
	testpeer.Slow(t)
	t.Parallel()
	fs := npmServer(t, "server-filesystem")
	ev := npmServer(t, "server-everything")
	self := peerBinary(t)
	w := newWorkspace(t)
	// approval_wait: 0s — this test checks that an ask is refused at once with
	// its reason; waiting for a person's answer is asks_test.go's.
	s := startServe(t, fmt.Sprintf(`mcp:
  approval_wait: 0s
  upstreams:
    - name: filesystem
      command: node
      args: [%q, %q, %q]
    - name: everything
      command: node
      args: [%q, stdio]
    - name: peer
      command: %q
      env: {%s: "1"}
`, fs, w.ws, w.outside, ev, self, helperEnv))

	intent := "Summarise the notes in " + w.ws + " and write the summary to " + w.ws + "/summary.md"
	cs, err := s.connect(t, s.token, http.Header{HeaderIntent: {intentHeader(intent)}, HeaderAgent: {"http-agent"}})
	if err != nil {
		t.Fatal(err)
	}
	tools := listTools(t, cs)
	for _, name := range []string{"filesystem.read_text_file", "filesystem.write_file", "everything.echo", "peer.greet"} {
		if tools[name] == nil {
			t.Fatalf("%s not listed; have %d tools", name, len(tools))
		}
	}
	if a := tools["filesystem.read_text_file"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Fatalf("annotations not passed through: %+v", a)
	}
	wantAllowed(t, callTool(t, cs, "filesystem.read_text_file", map[string]any{"path": w.notes}), "Q3 plan")
	wantAllowed(t, callTool(t, cs, "everything.echo", map[string]any{"message": "hi"}), "hi")
	wantRefused(t, callTool(t, cs, "filesystem.write_file", map[string]any{"path": w.target, "content": "pwned"}), "ask", "awaits approval")
	w.assertUntouched(t)

	// Another MCP session is another Mandate session, with its own words.
	ro, err := s.connect(t, s.token, http.Header{HeaderIntent: {intentHeader("Read the notes in " + w.ws + ". Read only, do not change or delete anything.")}})
	if err != nil {
		t.Fatal(err)
	}
	wantRefused(t, callTool(t, ro, "filesystem.move_file", map[string]any{"source": w.notes, "destination": w.ws + "/gone.txt"}), "deny", "Read only")
	w.assertUntouched(t)
	res := callTool(t, ro, "filesystem.read_text_file", map[string]any{"path": w.notes})
	id1, _ := decisionOf(t, callTool(t, cs, "everything.echo", map[string]any{"message": "x"}))
	id2, _ := decisionOf(t, res)
	d1 := s.api(t, "GET", "/v1/decisions/"+id1, "")["decision"].(map[string]any)
	d2 := s.api(t, "GET", "/v1/decisions/"+id2, "")["decision"].(map[string]any)
	if d1["session_id"] == d2["session_id"] {
		t.Fatal("two MCP sessions share a Mandate session")
	}
	obs := s.api(t, "GET", "/v1/decisions/"+id2, "")["observations"].([]any)
	if len(obs) != 1 || !strings.Contains(fmt.Sprint(obs[0]), "Q3 plan") {
		t.Fatalf("the read's result was not observed: %v", obs)
	}

	// No intent and no session: the gateway refuses to guess.
	bare, err := s.connect(t, s.token, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.ListTools(context.Background(), nil); err == nil || !strings.Contains(err.Error(), HeaderIntent) {
		t.Fatalf("tools/list without an intent: %v", err)
	}
	// A session made beforehand through the API, named in a header.
	sess := s.api(t, "POST", "/v1/sessions", `{"agent_id":"pre","intent":"Echo hello."}`)
	named, err := s.connect(t, s.token, http.Header{HeaderSession: {sess["session_id"].(string)}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := decisionOf(t, callTool(t, named, "everything.echo", map[string]any{"message": "hello"}))
	if d := s.api(t, "GET", "/v1/decisions/"+id, "")["decision"].(map[string]any); d["session_id"] != sess["session_id"] {
		t.Fatalf("the call went to session %v, not the named %v", d["session_id"], sess["session_id"])
	}

	// A stateless client (protocol 2026-07-28) has no MCP session: it
	// names its Mandate session, which is created under that id.
	stateless, err := s.connectVersion(t, s.token, http.Header{HeaderSession: {"run-42"}, HeaderIntent: {intentHeader("Read the notes in " + w.ws + ". Read only.")}}, "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		id, _ := decisionOf(t, callTool(t, stateless, "filesystem.read_text_file", map[string]any{"path": w.notes}))
		if d := s.api(t, "GET", "/v1/decisions/"+id, "")["decision"].(map[string]any); d["session_id"] != "run-42" {
			t.Fatalf("stateless call went to session %v", d["session_id"])
		}
	}
	wantRefused(t, callTool(t, stateless, "filesystem.write_file", map[string]any{"path": w.notes, "content": "x"}), "deny", "Read only")
	w.assertUntouched(t)
	anonymous, err := s.connectVersion(t, s.token, http.Header{HeaderIntent: {"Echo."}}, "2026-07-28")
	if err == nil {
		if _, err = anonymous.ListTools(context.Background(), nil); err == nil || !strings.Contains(err.Error(), HeaderSession) {
			t.Fatalf("a stateless request without a session: %v", err)
		}
	}

	// Agent tokens may not use the gateway.
	agent := s.api(t, "POST", "/v1/tokens", `{"role":"agent","agent_id":"x"}`)["token"].(string)
	if _, err := s.connect(t, agent, http.Header{HeaderIntent: {"Echo."}}); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("an agent token connected: %v", err)
	}
	if _, err := s.connect(t, "mdt_wrong", http.Header{HeaderIntent: {"Echo."}}); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("a bad token connected: %v", err)
	}
}

// intentHeader percent-encodes words for HeaderIntent.
func intentHeader(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c == '%' || c < 0x20 || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
