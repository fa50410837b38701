package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/store"
)

func TestObserveCall(t *testing.T) {
	ctx := context.Background()
	e, st, sid := engineSession(t, SessionRequest{AgentID: "claude-code", Intent: "Fix the failing test in ./pkg/auth", WorkingDir: "/home/dev/api"})
	decide := func(tool, callID string, args map[string]any) *Decision {
		t.Helper()
		d, err := e.Evaluate(ctx, hook, EvaluateRequest{SessionID: sid, Tool: tool, Args: args, CallID: callID, Surface: "hook"})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	read := decide("Read", "toolu_read", map[string]any{"file_path": "pkg/auth/auth.go"})
	denied := decide("Bash", "toolu_rm", map[string]any{"command": "rm -rf /home/dev"})
	if read.Effect != "allow" || denied.Effect != "deny" {
		t.Fatalf("setup: read %s, rm %s", read.Effect, denied.Effect)
	}
	stored, err := st.GetDecision(ctx, read.ID)
	if err != nil || stored.CallID != "toolu_read" {
		t.Fatalf("call id not stored with the decision: %+v, %v", stored, err)
	}

	tests := []struct {
		name       string
		callID     string
		tool       string
		wantGap    string // "" for a matched result
		wantDecide string
	}{
		{"matched", "toolu_read", "Read", "", read.ID},
		{"never decided", "toolu_sub", "Bash", GapNeverDecided, ""},
		{"no call id", "", "Bash", GapNoCallID, ""},
		{"another tool", "toolu_read", "Write", GapOtherTool, read.ID},
		{"denied but ran", "toolu_rm", "Bash", GapDenied, denied.ID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := e.ObserveCall(ctx, hook, ObserveCallRequest{
				SessionID: sid, CallID: tc.callID, Tool: tc.tool,
				Args: json.RawMessage(`{"command":"ls"}`), Output: json.RawMessage(`{"stdout":"ok"}`),
			})
			if err != nil {
				t.Fatal(err)
			}
			if o.Gap != (tc.wantGap != "") || !strings.HasPrefix(o.GapReason, tc.wantGap) || o.DecisionID != tc.wantDecide {
				t.Fatalf("got gap=%v reason=%q decision=%q, want gap reason %q decision %q", o.Gap, o.GapReason, o.DecisionID, tc.wantGap, tc.wantDecide)
			}
			if o.Gap && (o.Tool != tc.tool || string(o.Args) != `{"command":"ls"}`) {
				t.Fatalf("a gap must keep the call: tool %q args %s", o.Tool, o.Args)
			}
		})
	}
	gaps, err := e.Gaps(ctx, user, store.GapFilter{SessionID: sid})
	if err != nil || len(gaps) != 4 {
		t.Fatalf("Gaps: %d, %v", len(gaps), err)
	}
	if _, err := e.Gaps(ctx, hook, store.GapFilter{}); !errors.Is(err, ErrForbidden) {
		t.Fatalf("a hook token must not read gaps: %v", err)
	}
	obs, err := st.ListObservations(ctx, read.ID)
	if err != nil || len(obs) != 2 || obs[0].Gap || !obs[1].Gap {
		t.Fatalf("observations of the read decision: %+v, %v", obs, err)
	}
}

func TestObserveCallBadInput(t *testing.T) {
	ctx := context.Background()
	e, _, sid := engineSession(t, SessionRequest{AgentID: "a", Intent: "Read the README"})
	big := json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`)
	tests := []struct {
		name string
		req  ObserveCallRequest
		want error
	}{
		{"no session", ObserveCallRequest{Tool: "Read", CallID: "c"}, ErrInvalid},
		{"no tool", ObserveCallRequest{SessionID: sid, CallID: "c"}, ErrInvalid},
		{"unknown session", ObserveCallRequest{SessionID: "nope", Tool: "Read", CallID: "c"}, ErrNotFound},
		{"args not an object", ObserveCallRequest{SessionID: sid, Tool: "Read", CallID: "c", Args: json.RawMessage(`[1]`)}, ErrInvalid},
		{"output not JSON", ObserveCallRequest{SessionID: sid, Tool: "Read", CallID: "c", Output: json.RawMessage(`{`)}, ErrInvalid},
		{"output too large", ObserveCallRequest{SessionID: sid, Tool: "Read", CallID: "c", Output: big}, ErrInvalid},
		{"control characters in call id", ObserveCallRequest{SessionID: sid, Tool: "Read", CallID: "a\nb"}, ErrInvalid},
		{"bad origin", ObserveCallRequest{SessionID: sid, Tool: "Read", CallID: "c", Origin: "rumour"}, ErrInvalid},
		{"agent of another session", ObserveCallRequest{SessionID: sid, Tool: "Read", CallID: "c"}, ErrForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := hook
			if tc.name == "agent of another session" {
				p = agentP("other")
			}
			if _, err := e.ObserveCall(ctx, p, tc.req); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := e.Evaluate(ctx, hook, EvaluateRequest{SessionID: sid, Tool: "Read", CallID: strings.Repeat("x", 300)}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an overlong call id must be refused: %v", err)
	}
}

func TestStartSubagentClaimsLaunches(t *testing.T) {
	ctx := context.Background()
	e, st := newEngine(t, "")
	info, err := e.CreateSession(ctx, hook, SessionRequest{ID: "cc:s1", AgentID: "claude-code", WorkingDir: "/home/dev/api"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AmendMandate(ctx, hook, "cc:s1", AmendRequest{Intent: "Fix the failing test in ./pkg/auth and send the summary to alice@example.com"}); err != nil {
		t.Fatal(err)
	}
	parent := info.Session.ID
	launch := func(id, agent, prompt string) {
		t.Helper()
		if _, err := e.CreateSession(ctx, hook, SessionRequest{ID: id, AgentID: agent, Intent: prompt, ParentID: parent}); err != nil {
			t.Fatal(err)
		}
	}
	// Two launches of Explore agents, one of another type, and a child of
	// the parent that is no launch (its id lacks the prefix).
	launch("cc:s1:task:t1", "claude-code:Explore", "Read pkg/auth and find where tokens are parsed")
	launch("cc:s1:task:t2", "claude-code:Explore", "Read the tests in pkg/auth")
	launch("cc:s1:task:t3", "claude-code:Plan", "Read the README")
	launch("cc:s1:other", "claude-code:Explore", "")

	start := func(id, agent string) *SubagentInfo {
		t.Helper()
		si, err := e.StartSubagent(ctx, hook, SubagentRequest{ParentID: parent, ID: id, AgentID: agent, LaunchPrefix: "cc:s1:task:"})
		if err != nil {
			t.Fatal(err)
		}
		return si
	}
	a := start("cc:s1:agent:a", "claude-code:Explore")
	b := start("cc:s1:agent:b", "claude-code:Explore")
	c := start("cc:s1:agent:c", "claude-code:Explore")
	if a.LaunchID != "cc:s1:task:t1" || b.LaunchID != "cc:s1:task:t2" || c.LaunchID != "" {
		t.Fatalf("claims: a %q, b %q, c %q; want t1, t2, none", a.LaunchID, b.LaunchID, c.LaunchID)
	}
	if a.Session.ParentID != "cc:s1:task:t1" || c.Session.ParentID != parent {
		t.Fatalf("parents: a %q, c %q", a.Session.ParentID, c.Session.ParentID)
	}
	// The sub-agent works within its launch's words: reading is granted,
	// sending (which the parent grants) is not.
	if !slices.Contains(a.Mandate.Allow, action.Read) || slices.Contains(a.Mandate.Allow, action.Send) {
		t.Fatalf("sub-agent mandate allows %v; want read narrowed from the launch prompt", a.Mandate.Allow)
	}
	if !slices.Contains(c.Mandate.Allow, action.Send) {
		t.Fatalf("a sub-agent with no launch works under the parent's mandate, got %v", c.Mandate.Allow)
	}
	if d := eval(t, e, hook, a.Session.ID, "send_email", map[string]any{"to": "alice@example.com", "body": "hi"}); d.Effect == "allow" {
		t.Fatalf("the sub-agent's send was allowed although its launch only reads")
	}
	if _, err := e.StartSubagent(ctx, hook, SubagentRequest{ParentID: parent, ID: "cc:s1:agent:a", AgentID: "claude-code:Explore"}); !errors.Is(err, ErrConflict) {
		t.Fatalf("starting the same sub-agent twice: %v", err)
	}
	plan := start("cc:s1:agent:p", "claude-code:Plan")
	if plan.LaunchID != "cc:s1:task:t3" {
		t.Fatalf("a Plan agent claims the Plan launch, got %q", plan.LaunchID)
	}
	kids, err := st.ListSessions(ctx, store.SessionFilter{ParentID: "cc:s1:task:t1"})
	if err != nil || len(kids) != 1 {
		t.Fatalf("launch t1 children: %v, %v", kids, err)
	}
}

func TestStartSubagentConcurrentClaimsAreDistinct(t *testing.T) {
	ctx := context.Background()
	e, _, parent := engineSession(t, SessionRequest{ID: "cc:p", AgentID: "claude-code", Intent: "Read the docs"})
	const n = 8
	for i := range n {
		if _, err := e.CreateSession(ctx, hook, SessionRequest{ID: fmt.Sprintf("cc:p:task:%d", i), AgentID: "claude-code:Explore", ParentID: parent}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	claims := make([]string, n)
	for i := range n {
		wg.Go(func() {
			si, err := e.StartSubagent(ctx, hook, SubagentRequest{ParentID: parent, ID: fmt.Sprintf("cc:p:agent:%d", i), AgentID: "claude-code:Explore", LaunchPrefix: "cc:p:task:"})
			if err != nil {
				t.Error(err)
				return
			}
			claims[i] = si.LaunchID
		})
	}
	wg.Wait()
	slices.Sort(claims)
	if len(slices.Compact(slices.Clone(claims))) != n || claims[0] == "" {
		t.Fatalf("concurrent starts claimed %v; want %d distinct launches", claims, n)
	}
}

func TestStartSubagentBadInput(t *testing.T) {
	ctx := context.Background()
	e, _, parent := engineSession(t, SessionRequest{AgentID: "a", Intent: "Read the docs"})
	tests := []struct {
		name string
		p    bool // as an agent
		req  SubagentRequest
		want error
	}{
		{"no parent", false, SubagentRequest{ID: "x", AgentID: "a"}, ErrInvalid},
		{"no id", false, SubagentRequest{ParentID: parent, AgentID: "a"}, ErrInvalid},
		{"bad id", false, SubagentRequest{ParentID: parent, ID: "a b", AgentID: "a"}, ErrInvalid},
		{"unknown parent", false, SubagentRequest{ParentID: "nope", ID: "x", AgentID: "a"}, ErrNotFound},
		{"agent token", true, SubagentRequest{ParentID: parent, ID: "x", AgentID: "a"}, ErrForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := hook
			if tc.p {
				p = agentP("a")
			}
			if _, err := e.StartSubagent(ctx, p, tc.req); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}
