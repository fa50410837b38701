// Package client is a small Go client for Mandate's HTTP API, for harnesses
// that put Mandate in their agent's tool path: create a session with the
// user's words, ask before each tool call, report each result.
//
//	c := client.New("http://127.0.0.1:7410", os.Getenv("MANDATE_TOKEN"))
//	s, _ := c.CreateSession(ctx, client.SessionRequest{AgentID: "mailer", Intent: "Send the Q3 summary to alice@example.com"})
//	d, err := c.Evaluate(ctx, s.SessionID, "send_email", map[string]any{"to": "alice@example.com"})
//	if err != nil || d.Effect != client.Allow { /* do not run the tool */ }
//
// Errors from the server come back as *APIError. Any error from Evaluate
// means the call must not run: Mandate fails closed.
//
// Requests and responses are the wire types of package
// github.com/mandate-dev/mandate/api; this package names the ones it uses.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/api"
)

// Effects of a decision.
const (
	Allow = api.Allow
	Deny  = api.Deny
	Ask   = api.Ask
)

// The wire types this package's methods take and return (package api).
type (
	// Agent identifies an agent and its version.
	Agent = api.Agent
	// Tool is an MCP-style tool definition.
	Tool = api.ToolDef
	// SessionRequest creates a session.
	SessionRequest = api.CreateSessionRequest
	// Session is a created or fetched session with its effective mandate.
	Session = api.SessionResponse
	// Decision is a verdict on one call.
	Decision = api.Decision
	// Observation is a recorded tool result.
	Observation = api.ObserveResponse
	// Gap is a tool call that ran without Mandate's allow, as recorded.
	Gap = api.Observation
	// SubagentRequest starts a sub-agent's session under the session that
	// launched it.
	SubagentRequest = api.SubagentRequest
	// Subagent is a started sub-agent session.
	Subagent = api.SubagentResponse
	// PinReport says what a tools listing did to a session's pins.
	PinReport = api.PinReport
	// ToolChange is a listed tool whose definition differs from its pin.
	ToolChange = api.ToolChangeInfo
)

// Client talks to one Mandate server. It is safe for concurrent use.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient replaces the default HTTP client (30 s timeout).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New returns a client for the server at baseURL using a bearer token.
func New(baseURL, token string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: strings.TrimSpace(token), http: &http.Client{Timeout: 30 * time.Second}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// APIError is an error response from the server.
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("mandate: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsNotFound reports whether err is a 404 from the server.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// IsConflict reports whether err is a 409 from the server.
func IsConflict(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusConflict
}

// CreateSession creates a session (needs a user, hook or admin token).
func (c *Client) CreateSession(ctx context.Context, req SessionRequest) (*Session, error) {
	var s Session
	return &s, c.do(ctx, http.MethodPost, "/v1/sessions", req, &s)
}

// GetSession fetches a session and its effective mandate.
func (c *Client) GetSession(ctx context.Context, id string) (*Session, error) {
	var s Session
	return &s, c.do(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(id), nil, &s)
}

// AmendIntent adds the user's further words to a session's mandate.
func (c *Client) AmendIntent(ctx context.Context, id, intent string) (*Session, error) {
	var s Session
	return &s, c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/mandate", api.AmendMandateRequest{Intent: intent}, &s)
}

// SetStatus changes a session's lifecycle status.
func (c *Client) SetStatus(ctx context.Context, id, status string) error {
	return c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/status", api.SetStatusRequest{Status: status}, nil)
}

// Evaluate asks whether a call may run. Any error means it may not.
func (c *Client) Evaluate(ctx context.Context, sessionID, tool string, args any) (*Decision, error) {
	return c.EvaluateCall(ctx, Call{SessionID: sessionID, Tool: tool, Args: args})
}

// Call is one tool call to decide or observe.
type Call struct {
	SessionID string
	Tool      string
	// Args are the call's arguments: anything that encodes as a JSON
	// object (a map, a struct, a json.RawMessage); nil means none.
	Args any
	// CallID is the harness's own id for the call (Claude Code's
	// tool_use_id, an MCP request id). Mandate stores it with the decision
	// so the result can be observed by it later, from another process.
	CallID string
	// Surface names the integration the call came through ("api", "mcp",
	// "hook", "sdk"); empty lets the server choose from the token's role.
	Surface string
	// Wait, above 0, makes an ask wait up to this long (at most 15m) for
	// a person's answer: approved comes back as allow (rule
	// approval.granted), denied or expired as deny, still pending as ask
	// with ApprovalID. The HTTP timeout grows by it.
	Wait time.Duration
}

// EvaluateCall asks whether a call may run, with the harness's call id.
// Any error means it may not.
func (c *Client) EvaluateCall(ctx context.Context, call Call) (*Decision, error) {
	args, err := encodeArgs(call.Args)
	if err != nil {
		return nil, err
	}
	body := api.EvaluateRequest{SessionID: call.SessionID, Tool: call.Tool, Args: args, CallID: call.CallID, Surface: call.Surface}
	if call.Wait > 0 {
		body.Wait = call.Wait.String()
	}
	var d Decision
	if err := c.doWaiting(ctx, http.MethodPost, "/v1/evaluate", body, &d, call.Wait); err != nil {
		return nil, err
	}
	return &d, nil
}

// encodeArgs encodes a call's arguments (nil: none) as the JSON object the
// server expects.
func encodeArgs(args any) (json.RawMessage, error) {
	if args == nil {
		return json.RawMessage("{}"), nil
	}
	return encodeJSON(args, "args")
}

// encodeOutput encodes a tool's result, any JSON value.
func encodeOutput(output any) (json.RawMessage, error) {
	return encodeJSON(output, "output")
}

// encodeJSON is v as JSON (a json.RawMessage as it is); what names it in
// the error.
func encodeJSON(v any, what string) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("mandate: encode %s: %w", what, err)
	}
	return b, nil
}

// getJSON is a GET of path, its answer decoded into a new T.
func getJSON[T any](ctx context.Context, c *Client, path string) (*T, error) {
	var out T
	return &out, c.do(ctx, http.MethodGet, path, nil, &out)
}

// Observe reports a tool's result for a decision.
func (c *Client) Observe(ctx context.Context, decisionID string, output any) error {
	out, err := encodeOutput(output)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, "/v1/observe", api.ObserveRequest{DecisionID: decisionID, Output: out}, nil)
}

// ObserveCall reports a tool's result by the harness's call id (see
// Call.CallID), for harnesses that do not keep decision ids between the
// call and its result. Tool and Args describe the call, so that a call
// Mandate never decided is recorded as a gap with what it was.
func (c *Client) ObserveCall(ctx context.Context, call Call, output any) (*Observation, error) {
	args, err := encodeArgs(call.Args)
	if err != nil {
		return nil, err
	}
	out, err := encodeOutput(output)
	if err != nil {
		return nil, err
	}
	body := api.ObserveRequest{SessionID: call.SessionID, CallID: call.CallID, Tool: call.Tool, Args: args, Output: out}
	var o Observation
	if err := c.do(ctx, http.MethodPost, "/v1/observe", body, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// Gaps lists the recorded gaps, newest first; sessionID "" lists every
// session's (needs a user or admin token).
func (c *Client) Gaps(ctx context.Context, sessionID string, limit int) ([]*Gap, error) {
	q := url.Values{}
	if sessionID != "" {
		q.Set("session_id", sessionID)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	path := "/v1/gaps"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out api.GapList
	if err := c.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return out.Gaps, nil
}

// StartSubagent starts a sub-agent's session under parentID (needs a hook,
// user or admin token). A session that already exists is a conflict
// (IsConflict).
func (c *Client) StartSubagent(ctx context.Context, parentID string, req SubagentRequest) (*Subagent, error) {
	var s Subagent
	return &s, c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(parentID)+"/subagents", req, &s)
}

// Whoami says which token the client carries: its id, role and agent.
func (c *Client) Whoami(ctx context.Context) (*api.Whoami, error) {
	var w api.Whoami
	if err := c.do(ctx, http.MethodGet, "/v1/whoami", nil, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// Health checks that the server is up; it needs no token.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/healthz", nil, nil)
}

// Do sends a request to any API path and decodes the JSON response into
// out (if non-nil); for routes this package has no method for.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	return c.do(ctx, method, path, in, out)
}

// apiError builds an *APIError from an error response.
func apiError(status int, data []byte) *APIError {
	ae := &APIError{Status: status, Code: http.StatusText(status), Message: strings.TrimSpace(string(data))}
	var eb api.Error
	if json.Unmarshal(data, &eb) == nil && eb.Error.Code != "" {
		ae.Code, ae.Message = eb.Error.Code, eb.Error.Message
	}
	return ae
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	return c.doWaiting(ctx, method, path, in, out, 0)
}

// doWaiting is do for a request the server may hold up to wait: the HTTP
// client's timeout is extended by it.
func (c *Client) doWaiting(ctx context.Context, method, path string, in, out any, wait time.Duration) error {
	hc := c.http
	if wait > 0 && hc.Timeout > 0 {
		cp := *hc
		cp.Timeout += wait
		hc = &cp
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("mandate: encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("mandate: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("mandate: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("mandate: read response: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return apiError(resp.StatusCode, data)
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("mandate: decode %s response: %w", path, err)
	}
	return nil
}
