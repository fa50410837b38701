package security

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/apptest"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/cli"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/mcpgw"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/server"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// Concurrency and slow clients (issue 10.7): a client that gives up
// mid-decision, a request body dripped a byte at a time, a hook whose stdin
// never closes, an MCP upstream that crashes with a call in flight, and
// settings files install must not leave uninstall unable to read.

// helperEnv makes the test binary an MCP server whose "crash" tool kills it.
const helperEnv = "MANDATE_SECURITY_MCP_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		crashingServer()
		return
	}
	os.Exit(m.Run())
}

func crashingServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "crasher", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "crash", Description: "Do the job.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			time.Sleep(50 * time.Millisecond)
			os.Exit(3) // dies with the call in flight
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// slowStore holds each submission back before the real store sees it, as a
// busy disk would — in submission order, as store.Store promises: a delay
// per change in its own goroutine reordered them under a loaded CI, and
// the reordered change failed its guard.
type slowStore struct {
	store.Store
	delay time.Duration

	mu   sync.Mutex
	prev chan struct{} // closed once the previous change reached the store
}

func (s *slowStore) Submit(c *store.Change) <-chan error {
	out := make(chan error, 1)
	mine := make(chan struct{})
	s.mu.Lock()
	prev := s.prev
	s.prev = mine
	s.mu.Unlock()
	go func() {
		time.Sleep(s.delay)
		if prev != nil {
			<-prev
		}
		ch := s.Store.Submit(c)
		close(mine)
		out <- <-ch
	}()
	return out
}

func slowEngine(t *testing.T, delay time.Duration) (*engine.Engine, store.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"), sqlite.Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cls := must(action.NewClassifier())
	pol := must(policy.Builtin())
	e := must(engine.New(engine.Options{Store: &slowStore{Store: st, delay: delay}, Classifier: cls, Policy: pol}))
	return e, st
}

var admin = auth.Principal{TokenID: "tok_admin", Role: auth.RoleAdmin}

// A client that gives up while its decision commits must not make the next
// decision in the session fail, and the session's decisions stay numbered
// without gaps or repeats — also after a restart.
func TestSlowClientsGiveUpMidDecision(t *testing.T) {
	testpeer.Slow(t) // clients give up after delays, then a restart
	tests := []struct {
		name    string
		delay   time.Duration
		giveUp  []time.Duration // per attempt, cycled
		workers int
	}{
		{"at once", 10 * time.Millisecond, []time.Duration{0}, 1},
		{"half way", 10 * time.Millisecond, []time.Duration{5 * time.Millisecond}, 1},
		{"mixed", 10 * time.Millisecond, []time.Duration{0, time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond, 20 * time.Millisecond}, 1},
		{"concurrent", 5 * time.Millisecond, []time.Duration{0, 2 * time.Millisecond, 6 * time.Millisecond}, 8},
		{"slow disk", 40 * time.Millisecond, []time.Duration{10 * time.Millisecond, 30 * time.Millisecond}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, st := slowEngine(t, tc.delay)
			ctx := context.Background()
			info := must(e.CreateSession(ctx, admin, engine.SessionRequest{AgentID: "a", Intent: "read the docs"}))
			sid := info.Session.ID
			var (
				wg     sync.WaitGroup
				mu     sync.Mutex
				failed []error
				ok     int
			)
			for w := range tc.workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 10 {
						gctx, cancel := context.WithTimeout(ctx, tc.giveUp[(w+i)%len(tc.giveUp)])
						e.Evaluate(gctx, admin, engine.EvaluateRequest{SessionID: sid, Tool: "Read", Args: readDocs})
						cancel()
						_, err := e.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: sid, Tool: "Read", Args: readDocs})
						mu.Lock()
						if err != nil {
							failed = append(failed, err)
						} else {
							ok++
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(failed) > 0 {
				t.Fatalf("%d of %d decisions after a client gave up failed; first: %v", len(failed), len(failed)+ok, failed[0])
			}
			// Let the abandoned commits settle, then read the store.
			time.Sleep(3 * tc.delay)
			if err := store.Apply(ctx, st, &store.Change{}); err != nil {
				t.Fatal(err)
			}
			ds := must(st.ListDecisions(ctx, store.DecisionFilter{SessionID: sid, Limit: 1000}))
			for i, d := range ds {
				if d.Seq != i+1 {
					t.Fatalf("decision %d has seq %d", i+1, d.Seq)
				}
			}
			if len(ds) < ok {
				t.Fatalf("%d decisions stored, %d acknowledged", len(ds), ok)
			}
			// A fresh engine on the store continues the numbering.
			e2 := must(engine.New(engine.Options{Store: st, Classifier: must(action.NewClassifier()), Policy: must(policy.Builtin())}))
			d := must(e2.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: sid, Tool: "Read", Args: readDocs}))
			if d.Seq != len(ds)+1 {
				t.Fatalf("after a restart the next decision is seq %d, want %d", d.Seq, len(ds)+1)
			}
		})
	}
}

// The same over HTTP against the real server with every commit fsynced:
// clients hang up after a fraction of a millisecond to a few milliseconds.
func TestSlowClientsHangUpOverHTTP(t *testing.T) {
	dir := t.TempDir()
	a := must(app.Open(context.Background(), app.Config{DataDir: dir}))
	defer a.Close()
	tok, rec := must2(auth.Issue("admin", "", "t", time.Now()))
	if err := a.Store.CreateToken(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Options{Engine: a.Engine, Evidence: a.Evidence}))
	defer srv.Close()
	in := &instance{&apptest.Instance{T: t, Dir: dir, App: a, Srv: srv, Tokens: map[string]string{"admin": tok}}}
	sid := in.sessionAs("admin", map[string]any{"agent_id": "a", "intent": "read the docs"})
	body := fmt.Sprintf(`{"session_id":%q,"tool":"Read","args":{"file_path":"/home/dev/docs/guide.md"}}`, sid)
	fails := 0
	for i := range 60 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(100+i*50)*time.Microsecond)
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/evaluate", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		cancel()
		if r := in.do("POST", "/v1/evaluate", "admin", body); r.code != 200 {
			fails++
			t.Errorf("attempt %d: the decision after a hang-up failed: %d %s", i, r.code, r.raw)
		}
	}
	if fails > 0 {
		t.Fatalf("%d of 60 decisions after a hang-up failed", fails)
	}
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

// A request body that arrives a byte at a time, or not at all, is cut off
// after the body timeout with 408, and its connection closed; a body that
// arrives in time is decided, even when the decision itself takes longer
// than the body timeout.
func TestSlowClientsDripBodies(t *testing.T) {
	testpeer.Slow(t) // waits out body timeouts
	const ttl = 300 * time.Millisecond
	in := start(t, "", func(o *server.Options) { o.BodyTimeout = ttl })
	sid := in.session("a", "read the docs")
	full := fmt.Sprintf(`{"session_id":%q,"tool":"Read","args":{"file_path":"/home/dev/docs/guide.md"}}`, sid)
	tests := []struct {
		name   string
		path   string
		send   func(w io.Writer) // after the headers
		length int               // Content-Length; -1 for chunked
		want   int
	}{
		{"evaluate, a byte every 100ms", "/v1/evaluate", drip(full, 100*time.Millisecond), len(full), 408},
		{"evaluate, stalls half way", "/v1/evaluate", stall(full[:len(full)/2]), len(full), 408},
		{"evaluate, nothing after the headers", "/v1/evaluate", stall(""), len(full), 408},
		{"session, dripped", "/v1/sessions", drip(`{"agent_id":"a","intent":"read"}`, 100*time.Millisecond), 32, 408},
		{"observe, dripped", "/v1/observe", drip(`{"decision_id":"x","output":"y"}`, 100*time.Millisecond), 32, 408},
		{"chunked, dripped", "/v1/evaluate", dripChunked(full, 100*time.Millisecond), -1, 408},
		{"a body in time", "/v1/evaluate", drip(full, 0), len(full), 200},
		{"a body in time, sent slowly", "/v1/evaluate", dripN(full, 16, 20*time.Millisecond), len(full), 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, closed := rawRequest(t, in, tc.path, tc.length, tc.send)
			took := time.Since(start)
			if code != tc.want {
				t.Fatalf("status %d, want %d", code, tc.want)
			}
			if tc.want == 408 {
				if took > 5*ttl {
					t.Fatalf("the server held the request %s; its body timeout is %s", took, ttl)
				}
				if !closed {
					t.Fatal("the connection stayed open after the timeout")
				}
			}
		})
	}
	t.Run("200 dripping connections are all released", func(t *testing.T) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		held := 0
		for range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, _ := rawRequest(t, in, "/v1/evaluate", len(full), drip(full, 150*time.Millisecond))
				if code != 408 {
					mu.Lock()
					held++
					mu.Unlock()
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * ttl):
			t.Fatal("dripping connections are still held")
		}
		if held > 0 {
			t.Fatalf("%d of 200 dripping requests were not cut off", held)
		}
		if r := in.do("POST", "/v1/evaluate", "user", full); r.code != 200 {
			t.Fatalf("the server after the drip: %d %s", r.code, r.raw)
		}
	})
}

func drip(s string, every time.Duration) func(io.Writer) { return dripN(s, 1, every) }

// dripN writes s n bytes at a time, pausing between writes; it gives up
// quietly when the server has closed the connection.
func dripN(s string, n int, every time.Duration) func(io.Writer) {
	return func(w io.Writer) {
		for i := 0; i < len(s); i += n {
			if _, err := io.WriteString(w, s[i:min(len(s), i+n)]); err != nil {
				return
			}
			time.Sleep(every)
		}
	}
}

func stall(prefix string) func(io.Writer) {
	return func(w io.Writer) {
		io.WriteString(w, prefix)
		time.Sleep(2 * time.Second)
	}
}

func dripChunked(s string, every time.Duration) func(io.Writer) {
	return func(w io.Writer) {
		for i := range len(s) {
			if _, err := fmt.Fprintf(w, "1\r\n%s\r\n", s[i:i+1]); err != nil {
				return
			}
			time.Sleep(every)
		}
		io.WriteString(w, "0\r\n\r\n")
	}
}

// rawRequest sends a POST by hand, so the body can be paced, and returns
// the status and whether the server closed the connection after it.
func rawRequest(t *testing.T, in *instance, path string, length int, send func(io.Writer)) (int, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(in.Srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hdr := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n", path, in.Tokens["user"])
	if length >= 0 {
		hdr += fmt.Sprintf("Content-Length: %d\r\n", length)
	} else {
		hdr += "Transfer-Encoding: chunked\r\n"
	}
	if _, err := io.WriteString(conn, hdr+"\r\n"); err != nil {
		t.Fatal(err)
	}
	go send(conn)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = br.ReadByte()
	closed := errors.Is(err, io.EOF) || err != nil && !isTimeout(err)
	return resp.StatusCode, closed || resp.Close
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// A decision that takes longer than the body timeout, after the body
// arrived, is not cut off by it.
func TestSlowClientsSlowDecisionOutlivesTheBodyTimeout(t *testing.T) {
	e, st := slowEngine(t, 400*time.Millisecond)
	srv := httptest.NewServer(server.New(server.Options{Engine: e, BodyTimeout: 100 * time.Millisecond}))
	defer srv.Close()
	ctx := context.Background()
	tok, rec := must2(auth.Issue("admin", "", "t", time.Now()))
	if err := st.CreateToken(ctx, rec); err != nil {
		t.Fatal(err)
	}
	info := must(e.CreateSession(ctx, admin, engine.SessionRequest{AgentID: "a", Intent: "read the docs"}))
	for _, body := range []string{
		fmt.Sprintf(`{"session_id":%q,"tool":"Read","args":{"file_path":"/home/dev/docs/guide.md"}}`, info.Session.ID),
		fmt.Sprintf(`{"session_id":%q,"tool":"Bash","args":{"command":"rm -rf /"}}`, info.Session.ID),
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/evaluate", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"decision_id"`)) {
			t.Fatalf("a slow decision was cut off: %d %s", resp.StatusCode, b)
		}
	}
}

// The hook's --timeout covers reading its event: a stdin that never closes,
// or closes late, blocks the call (exit 2) within the timeout.
func TestSlowClientsHookStdin(t *testing.T) {
	in := start(t, "")
	tests := []struct {
		name    string
		feed    func(w *io.PipeWriter)
		timeout string
		code    int
		stderr  string
	}{
		{"stdin never closes", func(w *io.PipeWriter) {}, "300ms", 2, "no complete hook event arrived on stdin within 300ms"},
		{"half an event, then nothing", func(w *io.PipeWriter) { io.WriteString(w, `{"hook_event_name":"PreToolUse",`) }, "300ms", 2, "no complete hook event"},
		{"a byte at a time, too slowly", func(w *io.PipeWriter) {
			drip(`{"hook_event_name":"Stop","session_id":"s"}`, 50*time.Millisecond)(w)
		}, "300ms", 2, "no complete hook event"},
		{"an event in time", func(w *io.PipeWriter) {
			io.WriteString(w, `{"hook_event_name":"Stop","session_id":"s","cwd":"/tmp"}`)
			w.Close()
		}, "2s", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, w := io.Pipe()
			defer w.Close()
			go tc.feed(w)
			var out, errb bytes.Buffer
			start := time.Now()
			code := cli.Main(context.Background(), []string{"hook", "claude-code", "--server", in.Srv.URL, "--token", in.Tokens["hook"], "--timeout", tc.timeout},
				cli.Env{Stdin: r, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
			if code != tc.code || !strings.Contains(errb.String(), tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errb.String(), tc.code, tc.stderr)
			}
			if took := time.Since(start); tc.code == 2 && took > 3*time.Second {
				t.Fatalf("the hook took %s to give up", took)
			}
		})
	}
}

// An MCP upstream (a real process) that crashes while a call to it is in
// flight: the client gets an error result for the call, and the stdio
// gateway then ends, saying why.
func TestSlowClientsCrashedUpstream(t *testing.T) {
	testpeer.Slow(t) // real upstream processes that crash
	self := must(os.Executable())
	for _, tc := range []struct {
		name   string
		calls  []string // echo calls before the crash
		inside string
	}{
		{"first call crashes", nil, `upstream "crasher"`},
		{"after a good call", []string{"echo"}, `upstream "crasher"`},
		{"after several", []string{"echo", "echo", "echo"}, `upstream "crasher"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := must(app.Open(context.Background(), app.Config{}))
			defer a.Close()
			be := &mcpgw.EngineBackend{Engine: a.Engine, Default: admin, Source: "user"}
			ctx := context.Background()
			sid := must(be.EnsureSession(ctx, mcpgw.SessionSpec{AgentID: "a", Intent: "Do the job with the crasher."}))
			g := must(mcpgw.New(ctx, mcpgw.Options{
				Upstreams: []mcpgw.Upstream{{Name: "crasher", Command: self, Env: map[string]string{helperEnv: "1"}}},
				Backend:   be, Sessions: mcpgw.StaticSession(sid), Approver: approveAll{}, CallTimeout: 10 * time.Second,
			}))
			defer g.Close()
			ct, st := mcp.NewInMemoryTransports()
			ended := make(chan error, 1)
			go func() { ended <- g.Run(ctx, st) }()
			cs := must(mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil))
			defer cs.Close()
			for _, name := range tc.calls {
				if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name}); err != nil || res.IsError {
					t.Fatalf("%s: %v %v", name, err, res)
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crash"})
			if err != nil {
				t.Fatalf("the call in flight got no answer: %v", err)
			}
			if !res.IsError || !strings.Contains(text(res), tc.inside) {
				t.Fatalf("result: isError=%v %q", res.IsError, text(res))
			}
			select {
			case err := <-ended:
				if err == nil || !strings.Contains(err.Error(), `upstream "crasher" ended`) {
					t.Fatalf("Run: %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the gateway did not end after its upstream crashed")
			}
		})
	}
}

type approveAll struct{}

func (approveAll) Approve(context.Context, mcpgw.ApprovalRequest) (mcpgw.Approval, error) {
	return mcpgw.Approval{Status: mcpgw.Approved}, nil
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// `mandate hook install` never writes a settings file that `uninstall`
// refuses: it refuses such a file itself, naming the entry, and leaves it
// as it was.
func TestSlowClientsHookInstallRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		install  bool // whether install accepts it
	}{
		{"empty", ``, true},
		{"no hooks", `{"model":"opus"}`, true},
		{"other hooks", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}}`, true},
		{"our old entry", `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/usr/local/bin/mandate hook claude-code","timeout":5}]}]}}`, true},
		{"an event that is not a list", `{"hooks":{"X":1}}`, false},
		{"a group that is not an object", `{"hooks":{"Stop":[1]}}`, false},
		{"a group whose hooks are not a list", `{"hooks":{"Stop":[{"hooks":{}}]}}`, false},
		{"a duplicate key in a group", `{"hooks":{"Stop":[{"a":1,"a":2}]}}`, false},
		{"hooks not an object", `{"hooks":[]}`, false},
		{"not JSON", `{"hooks":`, false},
	}
	// install asks the server whose token the file holds: a real server,
	// and a real hook token.
	a := must(app.Open(context.Background(), app.Config{Synchronous: "OFF"}))
	t.Cleanup(func() { a.Close() })
	srv := httptest.NewServer(server.New(server.Options{Engine: a.Engine, Store: a.Store}))
	t.Cleanup(srv.Close)
	hookTok, hookRec := must2(auth.Issue("hook", "", "install-test", time.Now()))
	if err := a.Store.CreateToken(context.Background(), hookRec); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			if tc.settings != "" {
				if err := os.WriteFile(path, []byte(tc.settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string {
				if k == "HOME" {
					return t.TempDir()
				}
				return ""
			}}
			tokenFile := filepath.Join(t.TempDir(), "hook.token")
			os.WriteFile(tokenFile, []byte(hookTok+"\n"), 0o600)
			code := cli.Main(context.Background(), []string{"hook", "install", "claude-code", "--settings", path, "--token-file", tokenFile, "--server", srv.URL, "--command", "/usr/local/bin/mandate"}, env)
			if (code == 0) != tc.install {
				t.Fatalf("install exit %d, want success=%v", code, tc.install)
			}
			if !tc.install {
				got, _ := os.ReadFile(path)
				if string(got) != tc.settings {
					t.Fatalf("a refused install changed the file: %s", got)
				}
				return
			}
			if code := cli.Main(context.Background(), []string{"hook", "uninstall", "claude-code", "--settings", path}, env); code != 0 {
				got, _ := os.ReadFile(path)
				t.Fatalf("uninstall refused what install wrote (exit %d):\n%s", code, got)
			}
			got, _ := os.ReadFile(path)
			if bytes.Contains(got, []byte("mandate hook claude-code")) {
				t.Fatalf("uninstall left Mandate's entries:\n%s", got)
			}
		})
	}
}
