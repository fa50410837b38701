package api

import (
	"encoding/json"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// Approvals: every ask is an approval bound to the exact call, answered by a
// person (user, approver or admin token) or, where the operator allows, a
// judge model.
type (
	// Approval is an approval as stored: the call it is bound to (tool,
	// args hash, redacted args), why it was asked, who may answer, its
	// deadline and state, and its answer.
	Approval = store.Approval
	// Likeness is what "calls like this one" means for a session-scoped
	// answer.
	Likeness = store.Likeness
	// JudgeOpinion is what the judge model answered about an ask.
	JudgeOpinion = store.JudgeOpinion
)

// Approval states.
const (
	ApprovalPending   = store.ApprovalPending
	ApprovalApproved  = store.ApprovalApproved
	ApprovalDenied    = store.ApprovalDenied
	ApprovalExpired   = store.ApprovalExpired
	ApprovalWithdrawn = store.ApprovalWithdrawn
)

// Answer scopes.
const (
	ScopeOnce    = store.ScopeOnce
	ScopeSession = store.ScopeSession
)

// ApprovalStatus is where the approval a decision names stood when the
// decision was returned.
type ApprovalStatus struct {
	// State is pending, approved, denied, expired or withdrawn.
	State    string    `json:"state"`
	Deadline time.Time `json:"deadline"`
	// Scope is once or session, once answered.
	Scope string `json:"scope,omitempty"`
	// AnsweredBy is the answerer's principal (role:token id).
	AnsweredBy string `json:"answered_by,omitempty"`
	// Via is how the answer came: api, cli, dashboard, claude-code,
	// mcp-elicitation, judge, deadline, session-ended.
	Via string `json:"via,omitempty"`
	// Note is the answerer's words, verbatim.
	Note string `json:"note,omitempty"`
}

// ApprovalList is GET /v1/approvals: newest first.
type ApprovalList struct {
	Approvals []*Approval `json:"approvals"`
}

// AnswerRequest is POST /v1/approvals/{id}: a person's answer.
type AnswerRequest struct {
	// Decision is approve or deny.
	Decision string `json:"decision"`
	// Note is kept verbatim; with scope session it becomes the approver's
	// words in the amended mandate.
	Note string `json:"note,omitempty"`
	// Scope is once (this exact call, one time; the default) or session
	// (calls like this one for the rest of the session; approving amends
	// the mandate).
	Scope string `json:"scope,omitempty"`
	// Via labels where the answer was given (api, cli, dashboard); it is
	// recorded and changes nothing else.
	Via string `json:"via,omitempty"`
}

// DecisionEvent is the data of a decision event on GET /v1/events: the
// decision as recorded (its arguments are at GET /v1/decisions/{id}).
type DecisionEvent struct {
	DecisionID string        `json:"decision_id"`
	SessionID  string        `json:"session_id"`
	Seq        int           `json:"seq"`
	Surface    string        `json:"surface"`
	Tool       string        `json:"tool"`
	Kind       string        `json:"kind"`
	Effect     string        `json:"effect"`
	Rules      []string      `json:"rules"`
	Reasons    []string      `json:"reasons"`
	ApprovalID string        `json:"approval_id,omitempty"`
	Judge      *JudgeOpinion `json:"judge,omitempty"`
	CreatedAt  time.Time     `json:"created_at"`
}

// WebhookList is GET /v1/webhooks: the notify: targets and their recent
// deliveries.
type WebhookList struct {
	Webhooks []WebhookStatus `json:"webhooks"`
}

// WebhookStatus is one webhook target.
type WebhookStatus struct {
	// URL is shown without user info, query or token-like path segments.
	URL    string   `json:"url"`
	Format string   `json:"format"`
	Events []string `json:"events"`
	// Signed is true when deliveries carry Mandate-Signature.
	Signed    bool `json:"signed"`
	Queued    int  `json:"queued"`
	Delivered int  `json:"delivered"`
	Failed    int  `json:"failed"`
	Dropped   int  `json:"dropped"`
	// Deliveries are the latest 100, newest first.
	Deliveries []WebhookDelivery `json:"deliveries"`
}

// WebhookDelivery is one event's delivery to one target.
type WebhookDelivery struct {
	EventID string `json:"event_id"`
	Type    string `json:"type"`
	// Status is queued, retrying, delivered, failed or dropped.
	Status   string    `json:"status"`
	Attempts int       `json:"attempts"`
	Code     int       `json:"last_status_code,omitempty"`
	Error    string    `json:"last_error,omitempty"`
	At       time.Time `json:"at"`
	Next     time.Time `json:"next_attempt,omitzero"`
}

// WebhookPayload is the JSON body of a webhook delivery (format json),
// signed Mandate-Signature: t=UNIX,v1=HEX(HMAC-SHA256(secret, "UNIX." + body)).
type WebhookPayload struct {
	// ID is the event's id: deduplicate on it (a delivery may be retried
	// after the receiver took it).
	ID string `json:"id"`
	// Type is approval, approval.answered, deny or gap.
	Type      string    `json:"type"`
	Time      time.Time `json:"time"`
	SessionID string    `json:"session_id,omitempty"`
	// Link is where a person answers the approval.
	Link string `json:"link,omitempty"`
	// Data is the event's data: an Approval, a DecisionEvent or an
	// Observation.
	Data json.RawMessage `json:"data"`
}
