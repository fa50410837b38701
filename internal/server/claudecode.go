package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/hook"
	"github.com/mandate-dev/mandate/internal/openapi"
	"github.com/mandate-dev/mandate/internal/store"
)

// ClaudeCodeHookPath is where Claude Code's http hook handlers POST their
// events (`mandate hook install claude-code --http` writes it).
const ClaudeCodeHookPath = hook.HTTPPath

// claudeCodeHookTimeout is how long one event may take, before an ask's
// wait: the command form's default --timeout, well inside the 30 s the
// installer gives each handler, so Mandate answers with its own refusal
// rather than Claude Code timing out.
const claudeCodeHookTimeout = 10 * time.Second

// maxHookWait caps ?wait= as the command's --wait is capped: Claude Code
// gives a PreToolUse hook at most 600 s.
const maxHookWait = 10 * time.Minute

// claudeCodeRoute registers POST /v1/hooks/claude-code: Claude Code's http
// hook handler type, served in this process instead of a `mandate hook
// claude-code` process per event. The event is answered by the same
// hook.ClaudeCode the command runs — the same requests to the same routes,
// made in memory with the caller's token — so both forms give the same
// answers. Every failure, authentication included, is answered 200 with
// the event's refusal (hook.Refusal): Claude Code reads a non-2xx answer
// as a non-blocking error, so a status code alone would let the call run.
func (s *Server) claudeCodeRoute() {
	op := openapi.Operation{
		Method: "POST", Path: ClaudeCodeHookPath, Roles: []string{"hook", "user", "admin"},
		Summary: "Answer one Claude Code hook event (Claude Code's http hook handler): the JSON Claude Code would pipe to `mandate hook claude-code` in, its hook answer out",
		Description: "Authenticated by a hook token in the Authorization header Claude Code sends. Every failure — a missing, empty or unknown token, a malformed " +
			"or unknown event, a server error, a timeout — is answered 200 with the event's refusal (a PreToolUse deny; a block for PostToolUse, " +
			"UserPromptSubmit, Stop and SubagentStop; a systemMessage for events Claude Code cannot block), because Claude Code treats a non-2xx " +
			"answer as a non-blocking error. An event with nothing to answer gets {}.",
		Params: []openapi.Param{
			{Name: "agent", Description: "agent id of the main agent's sessions (default claude-code; sub-agents get AGENT:TYPE)"},
			{Name: "home", Description: "the user's home directory, given to new sessions so ~ in paths resolves"},
			{Name: "wait", Description: "on an ask, first wait this long (a Go duration, at most 10m) for an answer through Mandate before leaving it to Claude Code's own prompt"},
		},
		Request:   hook.Event{},
		Responses: []openapi.Response{{Status: 200, Body: hook.Output{}, Description: "The hook's answer, as Claude Code reads it"}},
		Errors:    []int{http.StatusRequestEntityTooLarge},
	}
	s.ops = append(s.ops, op)
	s.mux.Handle(op.Method+" "+op.Path, http.HandlerFunc(s.claudeCodeHook))
}

func (s *Server) claudeCodeHook(w http.ResponseWriter, r *http.Request) {
	// The event's kind, for the refusal, as soon as the body says it.
	event := ""
	refuse := func(err error) {
		s.log.Warn("claude code hook refused", "event", event, "err", err)
		writeJSON(w, http.StatusOK, hook.Refusal(event, err))
	}
	// "Bearer $MANDATE_TOKEN" with the variable empty arrives as "Bearer"
	// (header values lose trailing spaces).
	authz := strings.TrimSpace(r.Header.Get("Authorization"))
	token, _ := strings.CutPrefix(authz, "Bearer ")
	if token = strings.TrimSpace(token); token == "" || authz == "Bearer" {
		// Claude Code sends an empty string for a $VAR in a header that is
		// not listed in allowedEnvVars, or not set in its environment.
		event = peekEvent(r, 64<<10)
		refuse(errors.New("the request has no bearer token: Claude Code sends the header's $MANDATE_TOKEN only when the hook entry lists it in allowedEnvVars and it is set in Claude Code's environment (mandate hook install claude-code --http)"))
		return
	}
	p, err := s.principal(r.Context(), token)
	if err != nil {
		event = peekEvent(r, 64<<10)
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, errRevoked) {
			refuse(errors.New("unknown or revoked token"))
			return
		}
		s.log.Error("token lookup failed", "err", err)
		refuse(errors.New("token lookup failed"))
		return
	}
	if !slices.Contains([]auth.Role{auth.RoleHook, auth.RoleUser, auth.RoleAdmin}, p.Role) {
		event = peekEvent(r, 64<<10)
		refuse(fmt.Errorf("a %s token cannot answer hook events: use a hook token (mandate token create --role hook)", p.Role))
		return
	}
	q := r.URL.Query()
	agent := q.Get("agent")
	if agent == "" {
		agent = hook.DefaultAgentID
	}
	var wait time.Duration
	if v := q.Get("wait"); v != "" {
		if wait, err = time.ParseDuration(v); err != nil || wait < 0 || wait > maxHookWait {
			event = peekEvent(r, 64<<10)
			refuse(fmt.Errorf("query parameter wait=%q: want a duration from 0s to 10m", v))
			return
		}
	}
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.bodyTTL))
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, hook.MaxEventBytes))
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	var tooBig *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("hook event over %d bytes", tooBig.Limit))
		return
	case errors.As(err, &netErr) && netErr.Timeout():
		event = eventName(data)
		w.Header().Set("Connection", "close")
		refuse(fmt.Errorf("the event did not arrive within %s", s.bodyTTL))
		return
	case err != nil:
		event = eventName(data)
		refuse(fmt.Errorf("read the event: %w", err))
		return
	}
	event = eventName(data)
	ev, err := hook.ParseEvent(data)
	if err != nil {
		refuse(err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), claudeCodeHookTimeout+wait)
	defer cancel()
	h := &hook.ClaudeCode{
		Client:  client.New("http://mandate.in-process", token, client.WithHTTPClient(&http.Client{Transport: inProcess{s}})),
		AgentID: agent,
		HomeDir: q.Get("home"),
		Wait:    wait,
	}
	ans, err := h.Answer(ctx, ev)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s: %w", claudeCodeHookTimeout+wait, err)
		}
		refuse(err)
		return
	}
	if ans == nil {
		ans = &hook.Output{}
	}
	writeJSON(w, http.StatusOK, ans)
}

// eventName is the hook_event_name of an event's JSON, or "" when it has
// none that can be read.
func eventName(data []byte) string {
	var ev struct {
		Name string `json:"hook_event_name"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return ""
	}
	return ev.Name
}

// peekEvent reads the event's name from the start of a request refused
// before its body was read, so the refusal has the event's shape.
func peekEvent(r *http.Request, limit int64) string {
	data, _ := io.ReadAll(io.LimitReader(r.Body, limit))
	return eventName(data)
}

// inProcess is an http.RoundTripper that serves requests with the server's
// own handler, in memory: the hook route's client reaches the same routes a
// `mandate hook claude-code` process reaches over TCP, without the TCP.
type inProcess struct{ s *Server }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	// The handler may replace the body (MaxBytesReader) and read the URL;
	// a RoundTripper must not change the caller's request.
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "in-process"
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := &memResponse{header: http.Header{}}
	t.s.ServeHTTP(rec, in)
	if req.Body != nil {
		req.Body.Close()
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status:     strconv.Itoa(rec.status) + " " + http.StatusText(rec.status),
		StatusCode: rec.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rec.header, Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()), Request: req,
	}, nil
}

// memResponse collects a handler's answer.
type memResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (m *memResponse) Header() http.Header { return m.header }

func (m *memResponse) WriteHeader(status int) {
	if m.status == 0 {
		m.status = status
	}
}

func (m *memResponse) Write(b []byte) (int, error) {
	if m.status == 0 {
		m.status = http.StatusOK
	}
	return m.body.Write(b)
}
