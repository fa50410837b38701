package api

import (
	"encoding/json"
	"strings"
)

// Effect is a verdict: allow, deny or ask.
type Effect string

// The effects.
const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
	Ask   Effect = "ask"
)

// Surfaces a call can come through (EvaluateRequest.Surface).
const (
	SurfaceAPI  = "api"
	SurfaceMCP  = "mcp"
	SurfaceHook = "hook"
	SurfaceSDK  = "sdk"
)

// EvaluateRequest is POST /v1/evaluate: one tool call to decide before it
// runs.
type EvaluateRequest struct {
	SessionID string `json:"session_id"`
	Tool      string `json:"tool"`
	// Args are the call's arguments, a JSON object (absent or null: {}).
	Args json.RawMessage `json:"args,omitempty" openapi:"object"`
	// CallID is the harness's id for the call; the result can then be
	// observed by it (ObserveRequest without decision_id).
	CallID string `json:"call_id,omitempty"`
	// Reported is the agent's own account of the call (its stated
	// reasoning, say), any JSON value. It is kept as reported evidence and
	// plays no part in the decision.
	Reported json.RawMessage `json:"reported,omitempty"`
	// Surface names the integration the call came through: api, mcp, hook
	// or sdk (default: hook for a hook token, else api). It labels the
	// record and does not affect the decision.
	Surface string `json:"surface,omitempty"`
	// Wait ("30s", at most 15m) makes an ask wait for its approval's
	// answer: approved → decided again and allowed once (rule
	// approval.granted); denied, expired or withdrawn → effect deny;
	// still pending → effect ask with approval_id.
	Wait string `json:"wait,omitempty"`
}

// Decision is the verdict on one call, returned once it is durable. Any
// error instead of a Decision means the call must not run.
type Decision struct {
	ID        string `json:"decision_id"`
	SessionID string `json:"session_id"`
	// Seq numbers the session's decisions from 1.
	Seq    int    `json:"seq"`
	Effect Effect `json:"effect"`
	// Rules are the rules that fired; Reasons say why, for a person.
	Rules   []string `json:"rules"`
	Reasons []string `json:"reasons"`
	// Action is what the call really does.
	Action         *Action `json:"action"`
	MandateVersion int     `json:"mandate_version"`
	PolicyHash     string  `json:"policy_hash"`
	// LatencyMicros is how long deciding and recording took, in µs.
	LatencyMicros int64 `json:"latency_us"`
	// ApprovalID is, for an ask, the pending approval a person answers
	// (GET/POST /v1/approvals/{id}); for rules approval.granted,
	// approval.denied and judge.*, the approval that decided the call.
	ApprovalID string `json:"approval_id,omitempty"`
	// Approval is that approval's state when the decision was returned.
	Approval *ApprovalStatus `json:"approval,omitempty"`
	// Judge is the judge model's opinion, when one was asked.
	Judge *JudgeOpinion `json:"judge,omitempty"`
	// Signals compare the call with its agent's own history
	// (docs/behaviour.md): recorded on every decision, whether or not
	// they changed the verdict.
	Signals []Signal `json:"signals,omitempty"`
}

// Reason joins the decision's reasons for display.
func (d *Decision) Reason() string { return strings.Join(d.Reasons, "; ") }

// ObserveRequest is POST /v1/observe: a tool's result, for a decision
// (DecisionID), or by the call id it was evaluated with (SessionID, CallID,
// Tool and Args) for surfaces that cannot carry the decision id from the call
// to its result. A result that matches no allow is recorded as a gap.
type ObserveRequest struct {
	DecisionID string `json:"decision_id,omitempty"`
	// Output is the tool's result, any JSON value.
	Output json.RawMessage `json:"output"`
	// Origin is observed (seen at the tool boundary; default) or reported
	// (a client's claim).
	Origin    string `json:"origin,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	// Tool and Args describe the call, kept with a gap.
	Tool string          `json:"tool,omitempty"`
	Args json.RawMessage `json:"args,omitempty" openapi:"object"`
}

// ObserveResponse is a recorded result.
type ObserveResponse struct {
	ID string `json:"observation_id"`
	// DecisionID is the decision the result belongs to; empty for a call
	// Mandate never decided.
	DecisionID string `json:"decision_id"`
	SessionID  string `json:"session_id"`
	// Gap is true when the call ran without Mandate's allow: never
	// decided, decided for another tool, or denied. GapReason says which.
	Gap       bool   `json:"gap"`
	GapReason string `json:"gap_reason,omitempty"`
}

// DecisionList is GET /v1/decisions: a session's in order, else newest first.
type DecisionList struct {
	Decisions []*DecisionRecord `json:"decisions"`
}

// DecisionDetail is GET /v1/decisions/{id}: a decision with its observations.
type DecisionDetail struct {
	Decision     *DecisionRecord `json:"decision"`
	Observations []*Observation  `json:"observations"`
	// Provenance is where each of the call's values came from, as the
	// verdict was reached on it (the decision record's own; empty for a
	// call with no values, or one decided before provenance was kept).
	Provenance []Provenance `json:"provenance"`
}

// GapList is GET /v1/gaps: results of calls that ran without Mandate's
// allow, newest first.
type GapList struct {
	Gaps []*Observation `json:"gaps"`
}
