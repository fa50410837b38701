package evidence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/server"
)

// instance is a Mandate instance on a data directory, driven through the
// engine and, when serving, through the HTTP API.
type instance struct {
	t      testing.TB
	dir    string
	a      *app.App
	srv    *httptest.Server
	tokens map[string]string
	admin  auth.Principal
}

func open(t testing.TB, dir string) *instance {
	t.Helper()
	a, err := app.Open(context.Background(), app.Config{DataDir: dir, Synchronous: "OFF", CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{t: t, dir: dir, a: a, tokens: map[string]string{}, admin: auth.Principal{Role: auth.RoleAdmin, TokenID: "tok_test"}}
	t.Cleanup(func() { in.close() })
	return in
}

// serve starts the HTTP API with tokens for every role.
func (in *instance) serve() *instance {
	in.t.Helper()
	for _, spec := range []struct{ key, role, agent string }{
		{"admin", "admin", ""}, {"user", "user", ""}, {"hook", "hook", ""}, {"agent", "agent", "mailer"},
	} {
		tok, rec, err := auth.Issue(spec.role, spec.agent, spec.key, time.Now())
		if err != nil {
			in.t.Fatal(err)
		}
		if err := in.a.Store.CreateToken(context.Background(), rec); err != nil {
			in.t.Fatal(err)
		}
		in.tokens[spec.key] = tok
	}
	in.srv = httptest.NewServer(server.New(server.Options{Engine: in.a.Engine, Evidence: in.a.Evidence}))
	return in
}

func (in *instance) close() {
	if in.srv != nil {
		in.srv.Close()
		in.srv = nil
	}
	if in.a != nil {
		if err := in.a.Close(); err != nil {
			in.t.Errorf("close: %v", err)
		}
		in.a = nil
	}
}

func (in *instance) do(method, path, who, body string) (int, []byte) {
	in.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, in.srv.URL+path, rd)
	if who != "" {
		req.Header.Set("Authorization", "Bearer "+in.tokens[who])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (in *instance) doJSON(method, path, who, body string, want int) map[string]any {
	in.t.Helper()
	code, b := in.do(method, path, who, body)
	if code != want {
		in.t.Fatalf("%s %s as %s: %d %s, want %d", method, path, who, code, b, want)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		in.t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	return out
}

// session creates a session through the engine.
func (in *instance) session(agent, intent string) string {
	in.t.Helper()
	info, err := in.a.Engine.CreateSession(context.Background(), in.admin, engine.SessionRequest{AgentID: agent, Intent: intent})
	if err != nil {
		in.t.Fatal(err)
	}
	return info.Session.ID
}

// calls decides n calls in a session, observing each result.
func (in *instance) calls(session string, n int) []string {
	in.t.Helper()
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
		d, err := in.a.Engine.Evaluate(ctx, in.admin, engine.EvaluateRequest{SessionID: session, Tool: c.tool, Args: c.args})
		if err != nil {
			in.t.Fatal(err)
		}
		ids = append(ids, d.ID)
		if _, err := in.a.Engine.Observe(ctx, in.admin, engine.ObserveRequest{DecisionID: d.ID, Output: json.RawMessage(fmt.Sprintf(`{"ok":true,"n":%d}`, i))}); err != nil {
			in.t.Fatal(err)
		}
	}
	return ids
}

// copyDir copies a closed data directory.
func copyDir(t testing.TB, from string) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		info, _ := e.Info()
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !bytes.Contains([]byte(s), []byte(sub)) {
			return false
		}
	}
	return true
}
