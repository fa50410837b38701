package api

import "encoding/json"

// CreateSessionRequest is POST /v1/sessions: a session for an agent, with
// the user's words (Intent), a structured grant (Mandate), both or neither
// (nothing granted).
type CreateSessionRequest struct {
	// SessionID is optional: surfaces that correlate their own sessions
	// (hooks, gateways) may choose it.
	SessionID string `json:"session_id,omitempty"`
	AgentID   string `json:"agent_id"`
	// Agent is the agent's version fingerprint; its id must equal AgentID.
	Agent *Agent `json:"agent,omitempty"`
	// Intent is the user's words, kept verbatim and compiled into the
	// mandate.
	Intent string `json:"intent,omitempty"`
	// Mandate is a structured grant (a Mandate object), parsed strictly.
	Mandate json.RawMessage `json:"mandate,omitempty" openapi:"Mandate"`
	// Tools is the agent's tool list, used to classify tools the catalog
	// does not know.
	Tools []ToolDef `json:"tools,omitempty"`
	// WorkingDirectory and HomeDirectory are absolute; paths under the
	// working directory count as in scope.
	WorkingDirectory string `json:"working_directory,omitempty"`
	HomeDirectory    string `json:"home_directory,omitempty"`
	// ParentSessionID makes this a sub-agent's session: its mandate is the
	// parent's, narrowed.
	ParentSessionID string `json:"parent_session_id,omitempty"`
	// Source labels where the words came from (admins only: user, admin,
	// file, operator).
	Source string `json:"source,omitempty"`
	// ApprovalTimeout is the deadline of this session's approvals ("5m";
	// default: the server's approvals.timeout, 10m). A policy rule's own
	// approval_timeout wins.
	ApprovalTimeout string `json:"approval_timeout,omitempty"`
}

// SessionResponse is a session with its effective mandate (narrowed by its
// parents), and the draft when plain words were compiled.
type SessionResponse struct {
	SessionID string   `json:"session_id"`
	Mandate   *Mandate `json:"mandate"`
	Session   *Session `json:"session"`
	// Draft explains a mandate compiled from plain words.
	Draft *Draft `json:"draft,omitempty"`
}

// MandateVersion is the version number of the effective mandate, or 0.
func (s *SessionResponse) MandateVersion() int {
	if s == nil || s.Mandate == nil {
		return 0
	}
	return s.Mandate.Version
}

// Draft is what the compiler recognised in the user's words.
type Draft struct {
	// Languages are the detected languages (ISO 639-1), most likely first.
	Languages  []string      `json:"languages"`
	Recognised []Recognition `json:"recognised"`
	// NotUnderstood lists the phrases the compiler did not use, with their
	// clause and what the draft did without them; nothing in it is granted.
	NotUnderstood []Unrecognised `json:"not_understood"`
}

// SessionList is GET /v1/sessions, newest first.
type SessionList struct {
	Sessions []*Session `json:"sessions"`
}

// MandateVersionList is GET /v1/sessions/{id}/mandates, oldest first.
type MandateVersionList struct {
	Versions []*MandateVersion `json:"versions"`
}

// AmendMandateRequest is POST /v1/sessions/{id}/mandate: the user's further
// words (merged into the current mandate) or a whole grant (replacing it).
type AmendMandateRequest struct {
	Intent  string          `json:"intent,omitempty"`
	Mandate json.RawMessage `json:"mandate,omitempty" openapi:"Mandate"`
	// Source labels the words (admins only).
	Source string `json:"source,omitempty"`
}

// SetStatusRequest is POST /v1/sessions/{id}/status.
type SetStatusRequest struct {
	// Status is active, idle, completed, suspended or terminated.
	Status string `json:"status"`
}

// CompileRequest is POST /v1/intent/compile.
type CompileRequest struct {
	Intent string `json:"intent"`
}

// CompileResponse is a mandate drafted from plain words; nothing is stored.
type CompileResponse struct {
	Mandate    *Mandate      `json:"mandate"`
	Languages  []string      `json:"languages"`
	Recognised []Recognition `json:"recognised"`
	// NotUnderstood lists the phrases the compiler did not use, with their
	// clause and what the draft did without them; nothing in it is granted.
	NotUnderstood []Unrecognised `json:"not_understood"`
}

// SubagentRequest is POST /v1/sessions/{id}/subagents: the session of a
// sub-agent that the session {id} launched.
type SubagentRequest struct {
	// SessionID is the sub-agent's own session id (required).
	SessionID string `json:"session_id"`
	AgentID   string `json:"agent_id"`
	// LaunchPrefix selects the launch sessions the sub-agent may claim:
	// children of the parent whose ids start with it, created with the
	// launch's words when the launching call was decided. The oldest
	// unclaimed one becomes the sub-agent's parent; with none, the
	// sub-agent starts under the parent itself.
	LaunchPrefix     string `json:"launch_prefix,omitempty"`
	WorkingDirectory string `json:"working_directory,omitempty"`
}

// SubagentResponse is a started sub-agent session.
type SubagentResponse struct {
	SessionResponse
	// LaunchID is the claimed launch session, or absent if none was.
	LaunchID string `json:"launch_id,omitempty"`
}
