package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/policy/policytest"
)

// TestOneInput: `mandate check`, `mandate policy test` and the server build
// the same engine input for the same call — mandate, session facts, agent,
// Mandate's own footprint (from --data and --listen, as serve's), flow —
// so they give the same verdict (issue 12.7).
func TestOneInput(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 4, 9, 30, 0, 0, time.UTC)
	data := t.TempDir()
	const listen = "127.0.0.1:7499"
	a, err := app.Open(ctx, app.Config{DataDir: data, Listen: listen, Synchronous: "OFF", Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	user := auth.Principal{Role: auth.RoleUser, TokenID: "tok_test"}
	inst := instanceSelf{data: data, listen: listen}
	off, err := inst.offline(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cls, err := action.NewClassifier()
	if err != nil {
		t.Fatal(err)
	}
	pol := a.Engine.Policy()

	const grantYAML = "allow: [read, send]\nscope:\n  recipients: [bob@example.com]\n"
	grant := filepath.Join(t.TempDir(), "grant.yaml")
	if err := os.WriteFile(grant, []byte(grantYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	given, err := mandate.Parse([]byte(grantYAML))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name        string
		intent      string
		mandateFile string
		agent       string
		cwd, home   string
		tool        string
		args        map[string]any
		effect      policy.Effect
	}{
		{"a read in the working directory", "Summarise the docs in this folder. Do not delete anything.", "", "claude-code", "/home/dev/docs", "/home/dev", "Read", map[string]any{"file_path": "guide.md"}, policy.Allow},
		{"a curl to Mandate's own API", "Fix the failing test in ./pkg/auth and run the tests", "", "claude-code", "/home/dev/p", "/home/dev", "Bash", map[string]any{"command": "curl -s http://localhost:7499/v1/sessions"}, policy.Deny},
		{"a read of Mandate's data directory", "Summarise the docs in this folder.", "", "claude-code", "/home/dev/docs", "/home/dev", "Read", map[string]any{"file_path": filepath.Join(data, app.AdminTokenFile)}, policy.Deny},
		{"a send to the recipient the words name", "Send the Q3 summary to alice@example.com", "", "mailer", "", "", "send_email", map[string]any{"to": "alice@example.com", "subject": "Q3"}, policy.Allow},
		{"a send to someone else", "Send the Q3 summary to alice@example.com", "", "mailer", "", "", "send_email", map[string]any{"to": "eve@competitor.example"}, policy.Ask},
		{"a structured grant with words beside it", "and mind the tone", grant, "mailer", "/home/dev", "/home/dev", "send_email", map[string]any{"to": "bob@example.com"}, policy.Allow},
		{"a path under ~", "Tidy up my notes in ~/notes, do not delete anything", "", "claude-code", "/home/dev", "/home/dev", "Bash", map[string]any{"command": "rm ~/notes/todo.md"}, policy.Deny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The server: a session created by a user with these words.
			req := engine.SessionRequest{AgentID: tc.agent, Intent: tc.intent, WorkingDir: tc.cwd, HomeDir: tc.home}
			var fileMandate *mandate.Mandate
			if tc.mandateFile != "" {
				cp := *given
				req.Mandate, fileMandate = &cp, given
			}
			info, err := a.Engine.CreateSession(ctx, user, req)
			if err != nil {
				t.Fatal(err)
			}
			server, err := a.Engine.Input(ctx, user, engine.EvaluateRequest{SessionID: info.Session.ID, Tool: tc.tool, Args: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			// mandate check with the same flags.
			f := checkFlags{intent: tc.intent, mandateFile: tc.mandateFile, cwd: tc.cwd, home: tc.home, agent: tc.agent, inst: inst}
			check, err := f.input(&callSpec{Tool: tc.tool, Args: tc.args}, t0)
			if err != nil {
				t.Fatal(err)
			}
			// mandate policy test with the same case.
			c := &policytest.Case{
				Intent: tc.intent, Mandate: fileMandate, WorkingDirectory: tc.cwd, HomeDirectory: tc.home,
				Agent: policy.AgentFacts{ID: tc.agent}, Call: policy.CallFacts{Tool: tc.tool, Args: tc.args},
			}
			fixture, err := fixtureInput(off, c, t0)
			if err != nil {
				t.Fatal(err)
			}

			want := inputView(t, cls, server, info.Session.ID)
			for name, in := range map[string]*engine.Input{"mandate check": check, "mandate policy test": fixture} {
				if got := inputView(t, cls, in, ""); got != want {
					t.Errorf("%s builds another input than the server:\n%s\nserver:\n%s", name, got, want)
				}
			}
			d := &engine.Decider{Classifier: cls, Policy: pol}
			for name, in := range map[string]*engine.Input{"server": server, "mandate check": check, "mandate policy test": fixture} {
				res, err := d.Decide(in)
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict.Effect != tc.effect {
					t.Errorf("%s: %s %v, want %s", name, res.Verdict.Effect, res.Verdict.Reasons, tc.effect)
				}
			}
			if m := server.Missing(); tc.cwd != "" && !slices.Equal(m, []string{engine.MissingBaseline}) {
				t.Errorf("the server's input lacks %v", m)
			}
		})
	}
}

// inputView is an input as JSON, with the flow facts the call gets, and
// without the session's id (which only the server's session has).
func inputView(t *testing.T, cls *action.Classifier, in *engine.Input, sessionID string) string {
	t.Helper()
	if in.Session.ID != sessionID {
		t.Fatalf("session id %q, want %q", in.Session.ID, sessionID)
	}
	s := in.Session
	s.ID = ""
	var facts any
	if in.Flow != nil {
		act := cls.Classify(in.Call)
		facts = in.Flow.Facts(&act)
	}
	b, err := json.MarshalIndent(map[string]any{
		"call": in.Call, "tools": in.Call.Tools, "mandate": in.Mandate, "session": s, "agent": in.Agent,
		"self": in.Self, "flow": facts, "now": in.Now,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
