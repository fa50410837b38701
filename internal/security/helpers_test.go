package security

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/mandate-dev/mandate/internal/server"
)

// instance is a Mandate instance on a data directory of its own, served over
// HTTP with a token for each principal the suite needs.
type instance struct {
	t   testing.TB
	dir string
	// store is a shared store's address (PostgreSQL); empty means the
	// embedded store in dir.
	store  string
	a      *app.App
	srv    *httptest.Server
	tokens map[string]string
	// opts adjust the server before it starts.
	opts server.Options
}

// tokenSpecs are the tokens every instance has: key, role, agent.
var tokenSpecs = []struct{ key, role, agent string }{
	{"admin", "admin", ""},
	{"user", "user", ""},
	{"hook", "hook", ""}, // serves claude-code, the default
	{"hook:mailer", "hook", "mailer"},
	{"agent:mailer", "agent", "mailer"},
	{"agent:other", "agent", "other"},
}

// start opens an instance on a fresh directory (or dir, if given).
func start(t testing.TB, dir string, adjust ...func(*server.Options)) *instance {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	in := &instance{t: t, dir: dir, tokens: map[string]string{}}
	for _, f := range adjust {
		f(&in.opts)
	}
	in.open()
	t.Cleanup(in.close)
	return in
}

func (in *instance) open() {
	in.t.Helper()
	a, err := app.Open(context.Background(), app.Config{DataDir: in.dir, Store: in.store, Synchronous: "OFF", CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		in.t.Fatal(err)
	}
	in.a = a
	if len(in.tokens) == 0 {
		for _, spec := range tokenSpecs {
			tok, rec, err := auth.Issue(spec.role, spec.agent, spec.key, time.Now())
			if err != nil {
				in.t.Fatal(err)
			}
			if err := a.Store.CreateToken(context.Background(), rec); err != nil {
				in.t.Fatal(err)
			}
			in.tokens[spec.key] = tok
		}
	}
	o := in.opts
	o.Engine, o.Evidence = a.Engine, a.Evidence
	in.srv = httptest.NewServer(server.New(o))
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

// restart closes the instance and opens it again on the same directory.
func (in *instance) restart() {
	in.t.Helper()
	in.close()
	in.open()
}

// reply is an API answer.
type reply struct {
	code int
	body map[string]any
	raw  []byte
}

func (r reply) str(key string) string {
	s, _ := r.body[key].(string)
	return s
}

// errMsg is the error message of a failed request.
func (r reply) errMsg() string {
	if e, ok := r.body["error"].(map[string]any); ok {
		s, _ := e["message"].(string)
		return s
	}
	return ""
}

func (in *instance) do(method, path, who string, body any) reply {
	in.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			in.t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, in.srv.URL+path, rd)
	if err != nil {
		in.t.Fatal(err)
	}
	if who != "" {
		tok, ok := in.tokens[who]
		if !ok {
			tok = who // a raw token
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r := reply{code: resp.StatusCode, raw: data}
	if len(bytes.TrimSpace(data)) > 0 && data[0] == '{' {
		if err := json.Unmarshal(data, &r.body); err != nil {
			in.t.Fatalf("%s %s: response is not JSON: %s", method, path, data)
		}
	}
	return r
}

// must fails the test unless the request answered want.
func (in *instance) must(want int, method, path, who string, body any) reply {
	in.t.Helper()
	r := in.do(method, path, who, body)
	if r.code != want {
		in.t.Fatalf("%s %s as %s: %d %s, want %d", method, path, who, r.code, r.raw, want)
	}
	return r
}

// session creates a session for agent with the user's words, as the user.
func (in *instance) session(agent, intent string) string {
	in.t.Helper()
	return in.sessionAs("user", map[string]any{"agent_id": agent, "intent": intent})
}

func (in *instance) sessionAs(who string, req map[string]any) string {
	in.t.Helper()
	return in.must(http.StatusCreated, "POST", "/v1/sessions", who, req).str("session_id")
}

// evaluate decides one call as who and returns the answer.
func (in *instance) evaluate(who, sid, tool string, args map[string]any, extra ...map[string]any) reply {
	in.t.Helper()
	req := map[string]any{"session_id": sid, "tool": tool, "args": args}
	for _, e := range extra {
		for k, v := range e {
			req[k] = v
		}
	}
	return in.do("POST", "/v1/evaluate", who, req)
}

// decide is evaluate that must succeed; it returns the decision id and effect.
func (in *instance) decide(who, sid, tool string, args map[string]any, extra ...map[string]any) (string, string) {
	in.t.Helper()
	r := in.evaluate(who, sid, tool, args, extra...)
	if r.code != http.StatusOK {
		in.t.Fatalf("evaluate %s: %d %s", tool, r.code, r.raw)
	}
	return r.str("decision_id"), r.str("effect")
}

// copyDir copies a closed data directory.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		info, _ := e.Info()
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// Calls the suite makes, with the effect the built-in pack gives them under
// the intents used below.
var (
	readDocs = map[string]any{"file_path": "/home/dev/docs/guide.md"}
	rmRoot   = map[string]any{"command": "rm -rf /"}
)

// must returns v, and fails (panics, which fails the test) on an error: for
// setup steps that cannot fail unless the machine is broken.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
