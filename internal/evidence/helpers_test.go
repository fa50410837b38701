package evidence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/apptest"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
)

// instance is a Mandate instance on a data directory, driven through the
// engine and, when serving, through the HTTP API.
type instance struct {
	*apptest.Instance
	admin auth.Principal
}

func open(t testing.TB, dir string) *instance {
	t.Helper()
	return &instance{Instance: apptest.New(t, dir).Open(), admin: auth.Principal{Role: auth.RoleAdmin, TokenID: "tok_test"}}
}

// serve starts the HTTP API with tokens for every role.
func (in *instance) serve() *instance {
	in.T.Helper()
	in.Serve(apptest.Token{Key: "admin", Role: "admin"}, apptest.Token{Key: "user", Role: "user"},
		apptest.Token{Key: "hook", Role: "hook"}, apptest.Token{Key: "agent", Role: "agent", Agent: "mailer"})
	return in
}

func (in *instance) do(method, path, who, body string) (int, []byte) {
	in.T.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	return in.Do(method, path, who, rd)
}

func (in *instance) doJSON(method, path, who, body string, want int) map[string]any {
	in.T.Helper()
	code, b := in.do(method, path, who, body)
	if code != want {
		in.T.Fatalf("%s %s as %s: %d %s, want %d", method, path, who, code, b, want)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		in.T.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	return out
}

// session creates a session through the engine.
func (in *instance) session(agent, intent string) string {
	in.T.Helper()
	info, err := in.App.Engine.CreateSession(context.Background(), in.admin, engine.SessionRequest{AgentID: agent, Intent: intent})
	if err != nil {
		in.T.Fatal(err)
	}
	return info.Session.ID
}

// calls decides n calls in a session, observing each result.
func (in *instance) calls(session string, n int) []string {
	in.T.Helper()
	ctx := context.Background()
	tools := []struct {
		tool string
		args map[string]any
	}{
		{"Read", map[string]any{"file_path": "/srv/app/README.md"}},
		{"send_email", map[string]any{"to": "eve@elsewhere.example", "subject": "notes"}},
		{"Bash", map[string]any{"command": "ls -la /srv/app && git status"}},
	}
	var ids []string
	for i := range n {
		c := tools[i%len(tools)]
		d, err := in.App.Engine.Evaluate(ctx, in.admin, engine.EvaluateRequest{SessionID: session, Tool: c.tool, Args: c.args})
		if err != nil {
			in.T.Fatal(err)
		}
		ids = append(ids, d.ID)
		if _, err := in.App.Engine.Observe(ctx, in.admin, engine.ObserveRequest{DecisionID: d.ID, Output: json.RawMessage(fmt.Sprintf(`{"ok":true,"n":%d}`, i))}); err != nil {
			in.T.Fatal(err)
		}
	}
	return ids
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !bytes.Contains([]byte(s), []byte(sub)) {
			return false
		}
	}
	return true
}
