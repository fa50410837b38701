package security

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/apptest"
	"github.com/mandate-dev/mandate/internal/server"
)

// instance is a Mandate instance on a data directory of its own, served over
// HTTP with a token for each principal the suite needs.
type instance struct{ *apptest.Instance }

// tokenSpecs are the tokens every instance has.
var tokenSpecs = []apptest.Token{
	{Key: "admin", Role: "admin"},
	{Key: "user", Role: "user"},
	{Key: "hook", Role: "hook"}, // serves claude-code, the default
	{Key: "hook:mailer", Role: "hook", Agent: "mailer"},
	{Key: "agent:mailer", Role: "agent", Agent: "mailer"},
	{Key: "agent:other", Role: "agent", Agent: "other"},
}

// start opens an instance on a fresh directory (or dir, if given).
func start(t testing.TB, dir string, adjust ...func(*server.Options)) *instance {
	t.Helper()
	in := &instance{apptest.New(t, dir)}
	for _, f := range adjust {
		f(&in.Opts)
	}
	in.open()
	return in
}

func (in *instance) open() {
	in.T.Helper()
	in.Open().Serve(tokenSpecs...)
}

// restart closes the instance and opens it again on the same directory.
func (in *instance) restart() {
	in.T.Helper()
	in.Close()
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
	in.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			in.T.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	code, data := in.Do(method, path, who, rd)
	r := reply{code: code, raw: data}
	if len(bytes.TrimSpace(data)) > 0 && data[0] == '{' {
		if err := json.Unmarshal(data, &r.body); err != nil {
			in.T.Fatalf("%s %s: response is not JSON: %s", method, path, data)
		}
	}
	return r
}

// must fails the test unless the request answered want.
func (in *instance) must(want int, method, path, who string, body any) reply {
	in.T.Helper()
	r := in.do(method, path, who, body)
	if r.code != want {
		in.T.Fatalf("%s %s as %s: %d %s, want %d", method, path, who, r.code, r.raw, want)
	}
	return r
}

// session creates a session for agent with the user's words, as the user.
func (in *instance) session(agent, intent string) string {
	in.T.Helper()
	return in.sessionAs("user", map[string]any{"agent_id": agent, "intent": intent})
}

func (in *instance) sessionAs(who string, req map[string]any) string {
	in.T.Helper()
	return in.must(http.StatusCreated, "POST", "/v1/sessions", who, req).str("session_id")
}

// evaluate decides one call as who and returns the answer.
func (in *instance) evaluate(who, sid, tool string, args map[string]any, extra ...map[string]any) reply {
	in.T.Helper()
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
	in.T.Helper()
	r := in.evaluate(who, sid, tool, args, extra...)
	if r.code != http.StatusOK {
		in.T.Fatalf("evaluate %s: %d %s", tool, r.code, r.raw)
	}
	return r.str("decision_id"), r.str("effect")
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
