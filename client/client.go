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
)

// Effects of a decision.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
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

// Agent identifies an agent and its version.
type Agent struct {
	ID               string `json:"id"`
	Model            string `json:"model,omitempty"`
	SystemPromptHash string `json:"system_prompt_hash,omitempty"`
	ToolsetHash      string `json:"toolset_hash,omitempty"`
	RetrievalSource  string `json:"retrieval_source,omitempty"`
}

// Tool is an MCP-style tool definition.
type Tool struct {
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	InputSchema any            `json:"inputSchema,omitempty"`
	Annotations map[string]any `json:"annotations,omitempty"`
}

// SessionRequest creates a session.
type SessionRequest struct {
	SessionID        string          `json:"session_id,omitempty"`
	AgentID          string          `json:"agent_id"`
	Agent            *Agent          `json:"agent,omitempty"`
	Intent           string          `json:"intent,omitempty"`
	Mandate          json.RawMessage `json:"mandate,omitempty"`
	Tools            []Tool          `json:"tools,omitempty"`
	WorkingDirectory string          `json:"working_directory,omitempty"`
	HomeDirectory    string          `json:"home_directory,omitempty"`
	ParentSessionID  string          `json:"parent_session_id,omitempty"`
}

// Session is a created or fetched session.
type Session struct {
	SessionID string          `json:"session_id"`
	Mandate   json.RawMessage `json:"mandate"`
	Session   json.RawMessage `json:"session"`
	Draft     json.RawMessage `json:"draft,omitempty"`
}

// MandateVersion is the version number in a session's mandate.
func (s *Session) MandateVersion() int {
	var m struct {
		Version int `json:"version"`
	}
	json.Unmarshal(s.Mandate, &m)
	return m.Version
}

// Decision is a verdict on one call.
type Decision struct {
	DecisionID     string   `json:"decision_id"`
	SessionID      string   `json:"session_id"`
	Seq            int      `json:"seq"`
	Effect         string   `json:"effect"`
	Rules          []string `json:"rules"`
	Reasons        []string `json:"reasons"`
	Action         Action   `json:"action"`
	MandateVersion int      `json:"mandate_version"`
	PolicyHash     string   `json:"policy_hash"`
	LatencyMicros  int64    `json:"latency_us"`
}

// Action is the classification summary a decision carries; Raw keeps every
// field the server sent.
type Action struct {
	Kind        string   `json:"kind"`
	Kinds       []string `json:"kinds"`
	Sensitive   bool     `json:"sensitive"`
	Destructive bool     `json:"destructive"`
	Notes       []string `json:"notes"`
}

// Reason joins the decision's reasons for display.
func (d *Decision) Reason() string { return strings.Join(d.Reasons, "; ") }

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
	return &s, c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/mandate", map[string]string{"intent": intent}, &s)
}

// SetStatus changes a session's lifecycle status.
func (c *Client) SetStatus(ctx context.Context, id, status string) error {
	return c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/status", map[string]string{"status": status}, nil)
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
}

// EvaluateCall asks whether a call may run, with the harness's call id.
// Any error means it may not.
func (c *Client) EvaluateCall(ctx context.Context, call Call) (*Decision, error) {
	args := call.Args
	if args == nil {
		args = map[string]any{}
	}
	body := map[string]any{"session_id": call.SessionID, "tool": call.Tool, "args": args}
	if call.CallID != "" {
		body["call_id"] = call.CallID
	}
	if call.Surface != "" {
		body["surface"] = call.Surface
	}
	var d Decision
	if err := c.do(ctx, http.MethodPost, "/v1/evaluate", body, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Observe reports a tool's result for a decision.
func (c *Client) Observe(ctx context.Context, decisionID string, output any) error {
	return c.do(ctx, http.MethodPost, "/v1/observe", map[string]any{"decision_id": decisionID, "output": output}, nil)
}

// Observation is a recorded tool result.
type Observation struct {
	ObservationID string `json:"observation_id"`
	// DecisionID is the decision the result belongs to; empty for a call
	// Mandate never decided.
	DecisionID string `json:"decision_id"`
	SessionID  string `json:"session_id"`
	// Gap is true when the call ran without Mandate's allow: it was never
	// decided, was decided for another tool, or was denied. GapReason says
	// which.
	Gap       bool   `json:"gap"`
	GapReason string `json:"gap_reason,omitempty"`
}

// ObserveCall reports a tool's result by the harness's call id (see
// Call.CallID), for harnesses that do not keep decision ids between the
// call and its result. Tool and Args describe the call, so that a call
// Mandate never decided is recorded as a gap with what it was.
func (c *Client) ObserveCall(ctx context.Context, call Call, output any) (*Observation, error) {
	args := call.Args
	if args == nil {
		args = map[string]any{}
	}
	body := map[string]any{"session_id": call.SessionID, "call_id": call.CallID, "tool": call.Tool, "args": args, "output": output}
	var o Observation
	if err := c.do(ctx, http.MethodPost, "/v1/observe", body, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// Gap is a tool call that ran without Mandate's allow, as recorded.
type Gap struct {
	ObservationID string          `json:"observation_id"`
	DecisionID    string          `json:"decision_id,omitempty"`
	SessionID     string          `json:"session_id"`
	CallID        string          `json:"call_id,omitempty"`
	Tool          string          `json:"tool"`
	Args          json.RawMessage `json:"args,omitempty"`
	Output        json.RawMessage `json:"output"`
	GapReason     string          `json:"gap_reason"`
	CreatedAt     time.Time       `json:"created_at"`
}

// Gaps lists the recorded gaps, newest first; sessionID "" lists every
// session's (needs a user or admin token).
func (c *Client) Gaps(ctx context.Context, sessionID string, limit int) ([]Gap, error) {
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
	var out struct {
		Gaps []Gap `json:"gaps"`
	}
	if err := c.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return out.Gaps, nil
}

// SubagentRequest starts a sub-agent's session under the session that
// launched it.
type SubagentRequest struct {
	// SessionID is the sub-agent's own session id.
	SessionID string `json:"session_id"`
	AgentID   string `json:"agent_id"`
	// LaunchPrefix selects the launch sessions the sub-agent may claim:
	// children of the parent whose ids start with it, created with the
	// launch's words when the launching call was decided. The oldest
	// unclaimed one with the same agent id becomes the sub-agent's parent,
	// so its mandate is the parent's narrowed by those words. With none to
	// claim, the sub-agent starts under the parent itself.
	LaunchPrefix     string `json:"launch_prefix,omitempty"`
	WorkingDirectory string `json:"working_directory,omitempty"`
}

// Subagent is a started sub-agent session.
type Subagent struct {
	Session
	// LaunchID is the claimed launch session, or "" if none was.
	LaunchID string `json:"launch_id,omitempty"`
}

// StartSubagent starts a sub-agent's session under parentID (needs a hook,
// user or admin token). A session that already exists is a conflict
// (IsConflict).
func (c *Client) StartSubagent(ctx context.Context, parentID string, req SubagentRequest) (*Subagent, error) {
	var s Subagent
	return &s, c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(parentID)+"/subagents", req, &s)
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

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
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
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("mandate: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("mandate: read response: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		ae := &APIError{Status: resp.StatusCode, Code: http.StatusText(resp.StatusCode), Message: strings.TrimSpace(string(data))}
		var eb struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &eb) == nil && eb.Error.Code != "" {
			ae.Code, ae.Message = eb.Error.Code, eb.Error.Message
		}
		return ae
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("mandate: decode %s response: %w", path, err)
	}
	return nil
}
