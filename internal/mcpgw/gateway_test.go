package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
)

var gatewayAdmin = auth.Principal{TokenID: "gateway", Role: auth.RoleAdmin, Name: "test gateway"}

// sharedApp is one in-memory Mandate for the package's tests: opening one
// compiles the policy pack, which is most of a fixture's cost. Tests are
// isolated by their sessions.
var sharedApp struct {
	once sync.Once
	a    *app.App
	err  error
}

func openApp(t testing.TB) *app.App {
	t.Helper()
	sharedApp.once.Do(func() {
		sharedApp.a, sharedApp.err = app.Open(context.Background(), app.Config{Synchronous: "OFF"})
	})
	if sharedApp.err != nil {
		t.Fatal(sharedApp.err)
	}
	return sharedApp.a
}

type fixture struct {
	a      *app.App
	g      *Gateway
	cs     *mcp.ClientSession
	sid    string
	peer   func() *peer
	listCh chan struct{}
	ended  chan error // what Run returned
}

// newFixture runs a gateway over one in-process peer with an embedded
// engine and one client, as `mandate mcp stdio` does.
func newFixture(t *testing.T, intent string, mutate func(*Options)) *fixture {
	t.Helper()
	ctx := context.Background()
	a := openApp(t)
	be := &EngineBackend{Engine: a.Engine, Default: gatewayAdmin, Source: "user"}
	sid, err := be.EnsureSession(ctx, SessionSpec{AgentID: "tester", Intent: intent})
	if err != nil {
		t.Fatal(err)
	}
	up, last := inMemory("peer")
	opts := Options{Upstreams: []Upstream{up}, Backend: be, Sessions: StaticSession(sid), ForwardClientFeatures: true, CallTimeout: 5 * time.Second}
	if mutate != nil {
		mutate(&opts)
	}
	g, err := New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	f := &fixture{a: a, g: g, sid: sid, peer: last, listCh: make(chan struct{}, 16), ended: make(chan error, 1)}
	ct, st := mcp.NewInMemoryTransports()
	go func() { f.ended <- g.Run(ctx, st) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { f.listCh <- struct{}{} },
	})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	f.cs = cs
	return f
}

func (f *fixture) call(t *testing.T, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

func (f *fixture) list(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	res, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func decisionOf(t *testing.T, r *mcp.CallToolResult) (id, effect string) {
	t.Helper()
	m, _ := r.Meta[MetaDecision].(map[string]any)
	id, _ = m["id"].(string)
	effect, _ = m["effect"].(string)
	return id, effect
}

const summariseIntent = "Summarise the notes in /data/notes and write the summary to /data/notes/summary.md"

func TestDecideBeforeForwarding(t *testing.T) {
	t.Parallel()
	f := newFixture(t, summariseIntent, nil)
	tools := f.list(t)
	if g := tools["greet"]; g == nil || g.Annotations == nil || !g.Annotations.ReadOnlyHint || g.Annotations.OpenWorldHint == nil || *g.Annotations.OpenWorldHint {
		t.Fatalf("annotations not passed through: %+v", tools["greet"])
	}
	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		effect   string
		text     string // in the result
		upstream bool   // the call reached the upstream
	}{
		{"read-only tool", "greet", map[string]any{"name": "Ada"}, "allow", "Hello, Ada!", true},
		{"write inside the mandate's paths", "write_file", map[string]any{"path": "/data/notes/summary.md", "content": "x"}, "allow", "written", true},
		{"write outside: ask, not run", "write_file", map[string]any{"path": "/etc/cron.d/x", "content": "x"}, "ask", "awaits approval", false},
		{"write to a secret: ask, not run", "write_file", map[string]any{"path": "/home/u/.ssh/authorized_keys", "content": "x"}, "ask", "sensitive", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.peer().called())
			res := f.call(t, tt.tool, tt.args)
			id, effect := decisionOf(t, res)
			if effect != tt.effect || id == "" {
				t.Fatalf("decision %q %q, want effect %s: %s", id, effect, tt.effect, resultText(res))
			}
			if !strings.Contains(resultText(res), tt.text) {
				t.Errorf("result %q lacks %q", resultText(res), tt.text)
			}
			if res.IsError == (tt.effect == "allow") {
				t.Errorf("isError = %v for %s", res.IsError, tt.effect)
			}
			if tt.effect != "allow" && !strings.Contains(resultText(res), id) {
				t.Errorf("refusal does not name decision %s: %s", id, resultText(res))
			}
			reached := len(f.peer().called()) > before
			if reached != tt.upstream {
				t.Errorf("reached the upstream: %v, want %v (%v)", reached, tt.upstream, f.peer().called())
			}
			d, obs, err := f.a.Engine.GetDecision(context.Background(), gatewayAdmin, id)
			if err != nil {
				t.Fatal(err)
			}
			if d.Surface != "mcp" || d.Tool != tt.tool {
				t.Errorf("decision recorded as %s/%s", d.Surface, d.Tool)
			}
			if tt.upstream != (len(obs) == 1) {
				t.Fatalf("observations: %d", len(obs))
			}
			if tt.upstream && !strings.Contains(string(obs[0].Output), tt.text) {
				t.Errorf("observation lacks the result: %s", obs[0].Output)
			}
		})
	}
}

func TestReadOnlyMandateRefusesWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "Look through the notes in /data/notes. Read only, do not change anything.", nil)
	res := f.call(t, "write_file", map[string]any{"path": "/data/notes/a.md", "content": "x"})
	if _, effect := decisionOf(t, res); effect != "deny" || !res.IsError {
		t.Fatalf("write under a read-only mandate: %s %s", effect, resultText(res))
	}
	if !strings.Contains(resultText(res), "Read only") {
		t.Errorf("the refusal does not quote the user: %s", resultText(res))
	}
	if c := f.peer().called(); len(c) != 0 {
		t.Fatalf("reached the upstream: %v", c)
	}
}

func TestRugPullIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "Greet Ada.", nil)
	if tools := f.list(t); tools["greet"].Description != greetDescription {
		t.Fatalf("greet: %+v", tools["greet"])
	}
	if res := f.call(t, "greet", map[string]any{"name": "Ada"}); res.IsError {
		t.Fatalf("greet before the change: %s", resultText(res))
	}
	if res := f.call(t, "get_news", nil); res.IsError {
		t.Fatalf("get_news not run: %s", resultText(res))
	}
	select {
	case <-f.listCh:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed reached the client")
	}
	before := len(f.peer().called())
	res := f.call(t, "greet", map[string]any{"name": "Ada"})
	id, effect := decisionOf(t, res)
	if effect != "deny" || !res.IsError || !strings.Contains(resultText(res), "engine.tool-changed") || !strings.Contains(resultText(res), `"greet" changed`) {
		t.Fatalf("call after the change: %s %s", effect, resultText(res))
	}
	if len(f.peer().called()) != before {
		t.Fatal("the changed tool was run")
	}
	d, _, err := f.a.Engine.GetDecision(context.Background(), gatewayAdmin, id)
	if err != nil || d.Rules[0] != engine.RuleToolChanged {
		t.Fatalf("decision: %+v %v", d, err)
	}
	// The listing shows the pinned text, marked refused, never the new one.
	g := f.list(t)["greet"]
	if !strings.HasPrefix(g.Description, "[Mandate refuses calls to this tool") || strings.Contains(g.Description, "id_rsa") || !strings.Contains(g.Description, greetDescription) {
		t.Fatalf("listing after the change: %q", g.Description)
	}
	tools, err := f.a.Engine.Tools(context.Background(), gatewayAdmin, f.sid)
	if err != nil || len(tools.Changes) != 1 || tools.Changes[0].Tool != "greet" || !strings.Contains(string(tools.Changes[0].Definition), "id_rsa") {
		t.Fatalf("recorded changes: %+v %v", tools, err)
	}
}

// approveAll approves every ask, as a person clicking yes would.
type approveAll struct{}

func (approveAll) Approve(context.Context, ApprovalRequest) (Approval, error) {
	return Approval{Status: Approved}, nil
}

// TestUpstreamFailuresAreErrors forwards calls to tools that fail or time
// out. Mandate cannot tell what such tools do, so it asks; the approver says
// yes, so the calls run — whatever the policy answers, short of a deny, the
// failure path is exercised (a deny fails the test: it would be a change of
// policy this test must hear about).
func TestUpstreamFailuresAreErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "Greet Ada.", func(o *Options) { o.CallTimeout = 300 * time.Millisecond; o.Approver = approveAll{} })
	tests := []struct{ tool, text string }{
		{"fail", "the disk is on fire"},
		{"slow", "did not answer within 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := f.call(t, tt.tool, nil)
			id, effect := decisionOf(t, res)
			if effect != "allow" && effect != "ask" {
				t.Fatalf("%s: effect %s (%s), want allow or an approved ask", tt.tool, effect, resultText(res))
			}
			if !res.IsError || !strings.Contains(resultText(res), tt.text) {
				t.Fatalf("result: isError=%v %q", res.IsError, resultText(res))
			}
			_, obs, err := f.a.Engine.GetDecision(context.Background(), gatewayAdmin, id)
			if err != nil || len(obs) != 1 || !strings.Contains(string(obs[0].Output), tt.text) {
				t.Fatalf("failure not observed: %v %v", obs, err)
			}
		})
	}
}

func TestObservationsDigestBinaryAndCapSize(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "Show me the picture and the long text.", func(o *Options) { o.MaxObserveBytes = 64 << 10 })
	for _, tt := range []struct{ tool, want string }{{"image", `"omitted":"binary"`}, {"big", `"truncated":true`}} {
		res := f.call(t, tt.tool, nil)
		id, effect := decisionOf(t, res)
		if effect != "allow" {
			t.Fatalf("%s: %s", tt.tool, resultText(res))
		}
		_, obs, err := f.a.Engine.GetDecision(context.Background(), gatewayAdmin, id)
		if err != nil || len(obs) != 1 {
			t.Fatal(obs, err)
		}
		if !strings.Contains(string(obs[0].Output), tt.want) || len(obs[0].Output) > 64<<10 {
			t.Errorf("%s observed as %d bytes: %.200s", tt.tool, len(obs[0].Output), obs[0].Output)
		}
	}
	// The client still gets the whole result.
	if res := f.call(t, "big", nil); len(resultText(res)) != 200<<10 {
		t.Errorf("client got %d bytes", len(resultText(res)))
	}
}

func TestPromptsAndResourcesPassThrough(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "Greet Ada.", nil)
	ctx := context.Background()
	p, err := f.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "hello"})
	if err != nil || len(p.Messages) != 1 {
		t.Fatalf("prompt: %+v %v", p, err)
	}
	r, err := f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "peer://readme"})
	if err != nil || r.Contents[0].Text != "read me" {
		t.Fatalf("resource: %+v %v", r, err)
	}
	if in := f.cs.InitializeResult().Instructions; in != "A test peer." {
		t.Errorf("instructions: %q", in)
	}
}

// failing wraps a backend and fails one of its methods.
type failing struct {
	Backend
	evaluate, observe, pin bool
}

func (f *failing) Evaluate(ctx context.Context, sid, tool string, args json.RawMessage) (*api.Decision, error) {
	if f.evaluate {
		return nil, errors.New("connection refused")
	}
	return f.Backend.Evaluate(ctx, sid, tool, args)
}

func (f *failing) Observe(ctx context.Context, id string, out json.RawMessage) error {
	if f.observe {
		return errors.New("disk full")
	}
	return f.Backend.Observe(ctx, id, out)
}

func (f *failing) PinTools(ctx context.Context, sid string, tools []action.ToolDef) (*api.PinReport, error) {
	if f.pin {
		return nil, errors.New("connection refused")
	}
	return f.Backend.PinTools(ctx, sid, tools)
}

func TestFailClosed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fail     failing
		text     string
		upstream bool
	}{
		{"mandate unreachable", failing{evaluate: true}, "Mandate could not decide this call, so it was not run: connection refused", false},
		{"result not recorded", failing{observe: true}, "The tool ran, but Mandate could not record its result, so the result is withheld: disk full", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "Greet Ada.", func(o *Options) {
				fb := tt.fail
				fb.Backend = o.Backend
				o.Backend = &fb
			})
			res := f.call(t, "greet", map[string]any{"name": "Ada"})
			if !res.IsError || !strings.Contains(resultText(res), tt.text) || strings.Contains(resultText(res), "Hello") {
				t.Fatalf("result: %v %q", res.IsError, resultText(res))
			}
			if reached := len(f.peer().called()) > 0; reached != tt.upstream {
				t.Fatalf("reached the upstream: %v", reached)
			}
		})
	}
	t.Run("pinning fails", func(t *testing.T) {
		f := newFixture(t, "Greet Ada.", func(o *Options) { o.Backend = &failing{Backend: o.Backend, pin: true} })
		if _, err := f.cs.ListTools(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "could not pin") {
			t.Fatalf("tools/list with pinning down: %v", err)
		}
	})
}

func TestApprover(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status   ApprovalStatus
		upstream bool
		text     string
	}{
		{Pending, false, "awaits approval"},
		{Rejected, false, "The user rejected this call: not today"},
		{Approved, true, "written"},
	} {
		t.Run(string(tt.status), func(t *testing.T) {
			ap := &fixedApprover{a: Approval{Status: tt.status, Reason: "not today"}}
			f := newFixture(t, summariseIntent, func(o *Options) { o.Approver = ap })
			res := f.call(t, "write_file", map[string]any{"path": "/etc/x", "content": "x"})
			if !strings.Contains(resultText(res), tt.text) {
				t.Fatalf("result: %q", resultText(res))
			}
			if reached := len(f.peer().called()) > 0; reached != tt.upstream {
				t.Fatalf("reached the upstream: %v", reached)
			}
			if ap.got.DecisionID == "" || ap.got.Tool != "write_file" || ap.got.SessionID != f.sid {
				t.Fatalf("approver asked with %+v", ap.got)
			}
		})
	}
}

type fixedApprover struct {
	a   Approval
	got ApprovalRequest
}

func (f *fixedApprover) Approve(_ context.Context, r ApprovalRequest) (Approval, error) {
	f.got = r
	return f.a, nil
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	if _, err := callArgs(json.RawMessage(`[1]`)); err == nil {
		t.Fatal("an array was accepted as arguments")
	}
	for _, ok := range []string{``, `null`, ` {"a":1}`} {
		if _, err := callArgs(json.RawMessage(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	up, _ := inMemory("peer")
	a := openApp(t)
	be := &EngineBackend{Engine: a.Engine, Default: gatewayAdmin}
	tests := []struct {
		name string
		opts Options
		msg  string
	}{
		{"no upstreams", Options{Backend: be, Sessions: StaticSession("s")}, "no upstream"},
		{"two without namespace", Options{Upstreams: []Upstream{up, up}, Backend: be, Sessions: StaticSession("s")}, "namespaced"},
		{"no backend", Options{Upstreams: []Upstream{up}, Sessions: StaticSession("s")}, "required"},
		{"dotted name", Options{Upstreams: []Upstream{{Name: "a.b", Command: "x"}}, Backend: be, Sessions: StaticSession("s")}, "no dots"},
		{"command that does not exist", Options{Upstreams: []Upstream{{Name: "x", Command: "/nonexistent/mcp-server"}}, Backend: be, Sessions: StaticSession("s")}, `upstream "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want %q", err, tt.msg)
			}
		})
	}
}

func TestProgressIsRouted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "Count to three.", nil)
	got := make(chan *mcp.ProgressNotificationParams, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "progress-client"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { got <- req.Params },
	})
	ct, st := mcp.NewInMemoryTransports()
	go f.g.Run(context.Background(), st)
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "count"}
	params.SetProgressToken("client-token-7")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("count: %v %s", err, resultText(res))
	}
	for i := 1; i <= 3; i++ {
		select {
		case p := <-got:
			if p.ProgressToken != "client-token-7" || p.Progress != float64(i) {
				t.Fatalf("progress %d: %+v", i, p)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("progress %d did not arrive", i)
		}
	}
}

func TestLostUpstream(t *testing.T) {
	t.Parallel()
	t.Run("stdio: Run ends", func(t *testing.T) {
		f := newFixture(t, "Greet Ada.", nil)
		f.peer().hangUp()
		select {
		case err := <-f.ended:
			if err == nil || !strings.Contains(err.Error(), `upstream "peer" ended`) {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(30 * time.Second): // generous: CI's two cores are shared under -race
			t.Fatal("Run did not end when the upstream went away")
		}
	})
	t.Run("serve: dialled again", func(t *testing.T) {
		f := newFixture(t, "Greet Ada.", func(o *Options) { o.Reconnect = true; o.ForwardClientFeatures = false })
		first := f.peer()
		first.hangUp()
		deadline := time.Now().Add(10 * time.Second)
		for {
			res := f.call(t, "greet", map[string]any{"name": "Ada"})
			if !res.IsError {
				break
			}
			if !strings.Contains(resultText(res), `upstream "peer"`) {
				t.Fatalf("while the upstream is down: %s", resultText(res))
			}
			if time.Now().After(deadline) {
				t.Fatalf("not reconnected: %s", resultText(res))
			}
			time.Sleep(200 * time.Millisecond)
		}
		if f.peer() == first {
			t.Fatal("the call succeeded without a new connection")
		}
	})
}

// An upstream that crashes while a call is in flight: the client gets an
// error result for that call, naming the upstream, before the stdio gateway
// ends — not a connection that closes without an answer.
func TestCrashedUpstreamAnswersTheCallInFlight(t *testing.T) {
	t.Parallel()
	// slow is a tool Mandate cannot classify, so it asks; a person says yes.
	f := newFixture(t, "Wait for the slow job to finish.", func(o *Options) { o.Approver = approveAll{} })
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow"})
		got <- answer{res, err}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(f.peer().called(), "slow {}") {
		if time.Now().After(deadline) {
			select {
			case a := <-got:
				t.Fatalf("slow never reached the upstream: %v %s", a.err, resultText(a.res))
			default:
				t.Fatal("slow never reached the upstream")
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.peer().hangUp()
	select {
	case a := <-got:
		if a.err != nil {
			t.Fatalf("the call in flight got no answer: %v", a.err)
		}
		if !a.res.IsError || !strings.Contains(resultText(a.res), `upstream "peer"`) {
			t.Fatalf("result: isError=%v %q", a.res.IsError, resultText(a.res))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the call in flight")
	}
	select {
	case err := <-f.ended:
		if err == nil || !strings.Contains(err.Error(), `upstream "peer" ended`) {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end when the upstream went away")
	}
}
