package mcpgw

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/store"
)

var person = auth.Principal{TokenID: "tok_person", Role: auth.RoleApprover}

// askArgs is a write outside the mandate's scope: an ask.
func askArgs(n string) map[string]any {
	return map[string]any{"path": "/etc/cron.d/" + n, "content": "x"}
}

// connect opens another client on the fixture's gateway.
func (f *fixture) connect(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "asks-client", Version: "1"}, opts)
	ct, st := mcp.NewInMemoryTransports()
	go f.g.Run(context.Background(), st)
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// pending waits until the session has a pending approval nobody answered
// and returns it.
func (f *fixture) pending(t *testing.T, not map[string]bool) *store.Approval {
	t.Helper()
	for range 500 {
		list, err := f.a.Engine.ListApprovals(context.Background(), person, store.ApprovalFilter{SessionID: f.sid, State: store.ApprovalPending})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range list {
			if !not[a.ID] {
				return a
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no pending approval appeared")
	return nil
}

func (f *fixture) answer(t *testing.T, id, decision string) {
	t.Helper()
	if _, err := f.a.Engine.Answer(context.Background(), person, id, engine.AnswerRequest{Answer: approval.Answer{Decision: decision, Note: "from the test"}}); err != nil {
		t.Fatal(err)
	}
}

func ran(p *peer, path string) bool {
	for _, c := range p.called() {
		if strings.Contains(c, path) {
			return true
		}
	}
	return false
}

func TestAskWaitsForAPerson(t *testing.T) {
	t.Parallel()
	f := newFixture(t, summariseIntent, func(o *Options) { o.ApprovalWait = 10 * time.Second })
	var mu sync.Mutex
	var progress []string
	cs := f.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Message)
		mu.Unlock()
	}})
	seen := map[string]bool{}
	for _, tc := range []struct {
		answer  string
		runs    bool
		message string
	}{
		{"approve", true, "written"},
		{"deny", false, "denied by approver:tok_person"},
	} {
		path := "/etc/cron.d/" + tc.answer
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			params := &mcp.CallToolParams{Name: "write_file", Arguments: askArgs(tc.answer)}
			params.SetProgressToken("tok-" + tc.answer)
			res, err := cs.CallTool(context.Background(), params)
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		a := f.pending(t, seen)
		seen[a.ID] = true
		if ran(f.peer(), path) {
			t.Fatal("the call ran before anyone answered")
		}
		// The client hears which approval it waits on.
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			n := len(progress) > 0 && strings.Contains(progress[len(progress)-1], a.ID)
			mu.Unlock()
			if n || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		if len(progress) == 0 || !strings.Contains(progress[len(progress)-1], a.ID) {
			t.Errorf("progress %q does not name approval %s", progress, a.ID)
		}
		mu.Unlock()
		f.answer(t, a.ID, tc.answer)
		res := <-done
		if res == nil {
			continue
		}
		if res.IsError == tc.runs || !strings.Contains(resultText(res), tc.message) || ran(f.peer(), path) != tc.runs {
			t.Errorf("%s: isError=%v %q ran=%v", tc.answer, res.IsError, resultText(res), ran(f.peer(), path))
		}
		if _, effect := decisionOf(t, res); tc.runs && effect != "allow" {
			t.Errorf("%s: ran under a %s decision", tc.answer, effect)
		}
	}
}

func TestAskNotAnsweredInTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t, summariseIntent, func(o *Options) { o.ApprovalWait = 150 * time.Millisecond })
	res := f.call(t, "write_file", askArgs("later"))
	a := f.pending(t, nil)
	if !res.IsError || !strings.Contains(resultText(res), a.ID) || !strings.Contains(resultText(res), "call the tool again once it is approved") || ran(f.peer(), "/etc/cron.d/later") {
		t.Fatalf("unanswered: %q", resultText(res))
	}
	// Answered later: the same call again runs, once.
	f.answer(t, a.ID, "approve")
	if res := f.call(t, "write_file", askArgs("later")); res.IsError || !ran(f.peer(), "/etc/cron.d/later") {
		t.Fatalf("after approval: %q", resultText(res))
	}
}

func TestAskThroughElicitation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, summariseIntent, func(o *Options) { o.Elicit, o.ApprovalWait = true, 200*time.Millisecond; o.Logger = testLogger(t) })
	answers := make(chan *mcp.ElicitResult, 4)
	var asked []string
	var mu sync.Mutex
	cs := f.connect(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, r.Params.Message)
		mu.Unlock()
		return <-answers, nil
	}})
	call := func(n string) *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: askArgs(n)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve", "note": "ok, the cron job is mine"}}
	if res := call("yes"); res.IsError || !ran(f.peer(), "/etc/cron.d/yes") {
		t.Fatalf("accepted: %q", resultText(res))
	}
	answers <- &mcp.ElicitResult{Action: "decline"}
	if res := call("no"); !res.IsError || ran(f.peer(), "/etc/cron.d/no") {
		t.Fatalf("declined: %q", resultText(res))
	}
	answers <- &mcp.ElicitResult{Action: "cancel"}
	if res := call("later"); !res.IsError || !strings.Contains(resultText(res), "waiting for an answer") {
		t.Fatalf("cancelled: %q", resultText(res))
	}
	mu.Lock()
	if len(asked) != 3 || !strings.Contains(asked[0], "write_file") || !strings.Contains(asked[0], "/etc/cron.d/yes") {
		t.Errorf("the person was asked %q", asked)
	}
	mu.Unlock()
	list, _ := f.a.Engine.ListApprovals(context.Background(), person, store.ApprovalFilter{SessionID: f.sid})
	states := map[string]int{}
	for _, a := range list {
		states[a.State]++
		if a.State != store.ApprovalPending && (a.Via != approval.ViaElicitation || a.Origin != "reported") {
			t.Errorf("an answer from the form recorded as via %s, origin %s", a.Via, a.Origin)
		}
	}
	if states["approved"] != 1 || states["denied"] != 1 || states["pending"] != 1 {
		t.Errorf("approvals %v", states)
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}
