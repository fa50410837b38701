package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/server"
)

// demo starts a real Mandate server in memory, as `mandate serve` would run
// it, and returns its URL and tokens by role. The examples talk to it over
// HTTP like any harness would.
func demo() (url string, tokens map[string]string, stop func()) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{Synchronous: "OFF"})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(server.New(server.Options{Engine: a.Engine}))
	tokens = map[string]string{}
	for _, spec := range []struct{ role, agent string }{{"user", ""}, {"hook", ""}, {"agent", "mailer"}} {
		tok, rec, err := auth.Issue(spec.role, spec.agent, "example", time.Now())
		if err != nil {
			panic(err)
		}
		if err := a.Store.CreateToken(ctx, rec); err != nil {
			panic(err)
		}
		tokens[spec.role] = tok
	}
	return srv.URL, tokens, func() { srv.Close(); a.Close() }
}

// A harness puts Mandate in its agent's tool path: a session with the
// user's words, a decision before each call, the result after it.
func Example() {
	url, tokens, stop := demo()
	defer stop()
	ctx := context.Background()

	// The user (or the harness on the user's behalf) states the task.
	user := client.New(url, tokens["user"])
	s, err := user.CreateSession(ctx, client.SessionRequest{AgentID: "mailer", Intent: "Send the Q3 summary to alice@example.com"})
	if err != nil {
		panic(err)
	}

	// The agent's harness asks before each tool call, with the agent's
	// own token; anything but allow, or any error, means: do not run it.
	agent := client.New(url, tokens["agent"])
	for _, to := range []string{"alice@example.com", "eve@competitor.example"} {
		d, err := agent.Evaluate(ctx, s.SessionID, "send_email", map[string]any{"to": to, "subject": "Q3", "body": "Summary attached."})
		if err != nil {
			panic(err)
		}
		fmt.Printf("send_email to %s: %s\n", to, d.Effect)
		if d.Effect == client.Allow {
			// … run the tool, then report what it returned.
			if err := agent.Observe(ctx, d.ID, map[string]any{"status": "sent"}); err != nil {
				panic(err)
			}
		}
	}
	// Output:
	// send_email to alice@example.com: allow
	// send_email to eve@competitor.example: ask
}

// Harnesses whose call and result are seen by different processes (Claude
// Code runs its hooks as a new process per event) evaluate with their own
// call id and observe by it. A result of a call Mandate never decided is
// recorded as a gap.
func ExampleClient_ObserveCall() {
	url, tokens, stop := demo()
	defer stop()
	ctx := context.Background()
	hook := client.New(url, tokens["hook"])
	s, err := hook.CreateSession(ctx, client.SessionRequest{SessionID: "claude-code:demo", AgentID: "claude-code",
		Intent: "Fix the failing test in ./pkg/auth", WorkingDirectory: "/home/dev/api"})
	if err != nil {
		panic(err)
	}
	read := client.Call{SessionID: s.SessionID, Tool: "Read", Args: map[string]any{"file_path": "pkg/auth/token.go"}, CallID: "toolu_01"}
	d, err := hook.EvaluateCall(ctx, read)
	if err != nil {
		panic(err)
	}
	fmt.Println("Read:", d.Effect)

	o, err := hook.ObserveCall(ctx, read, map[string]any{"content": "package auth"})
	if err != nil {
		panic(err)
	}
	fmt.Println("observed as a gap:", o.Gap)

	// A call that was never evaluated.
	skipped := client.Call{SessionID: s.SessionID, Tool: "Bash", Args: map[string]any{"command": "rm -rf build"}, CallID: "toolu_02"}
	o, err = hook.ObserveCall(ctx, skipped, map[string]any{"stdout": ""})
	if err != nil {
		panic(err)
	}
	fmt.Println("observed as a gap:", o.Gap, "-", o.GapReason)

	// Reading gaps needs a user (or admin) token.
	gaps, err := client.New(url, tokens["user"]).Gaps(ctx, s.SessionID, 10)
	if err != nil {
		panic(err)
	}
	fmt.Println("gaps:", len(gaps), gaps[0].Tool, string(gaps[0].Args))
	// Output:
	// Read: allow
	// observed as a gap: false
	// observed as a gap: true - never decided
	// gaps: 1 Bash {"command":"rm -rf build"}
}

// A sub-agent works under a launch session that holds the words it was
// launched with, so its grant is its parent's narrowed by them.
func ExampleClient_StartSubagent() {
	url, tokens, stop := demo()
	defer stop()
	ctx := context.Background()
	hook := client.New(url, tokens["hook"])
	parent, err := hook.CreateSession(ctx, client.SessionRequest{SessionID: "cc:p", AgentID: "claude-code",
		Intent: "Fix the failing test in ./pkg/auth", WorkingDirectory: "/home/dev/api"})
	if err != nil {
		panic(err)
	}
	// When the launching call is decided: the launch, with its words.
	if _, err := hook.CreateSession(ctx, client.SessionRequest{SessionID: "cc:p:task:t1", AgentID: "claude-code:Explore",
		ParentSessionID: parent.SessionID, Intent: "Read pkg/auth and list where tokens are parsed"}); err != nil {
		panic(err)
	}
	// When the sub-agent starts.
	sub, err := hook.StartSubagent(ctx, parent.SessionID, client.SubagentRequest{
		SessionID: "cc:p:agent:a1", AgentID: "claude-code:Explore", LaunchPrefix: "cc:p:task:",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("launch claimed:", sub.LaunchID)
	for _, call := range []client.Call{
		{SessionID: sub.SessionID, Tool: "Grep", Args: map[string]any{"pattern": "ParseToken", "path": "/home/dev/api/pkg/auth"}},
		{SessionID: sub.SessionID, Tool: "Write", Args: map[string]any{"file_path": "/home/dev/api/pkg/auth/token.go", "content": "x"}},
	} {
		d, err := hook.EvaluateCall(ctx, call)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s\n", call.Tool, d.Effect)
	}
	// Output:
	// launch claimed: cc:p:task:t1
	// Grep: allow
	// Write: ask
}
