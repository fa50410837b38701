package store

import (
	"context"
	"encoding/json"
	"time"
)

// Approval states. Pending is the only state an approval leaves; the others
// are final. Expired counts as denied wherever a surface waits.
const (
	ApprovalPending   = "pending"
	ApprovalApproved  = "approved"
	ApprovalDenied    = "denied"
	ApprovalExpired   = "expired"
	ApprovalWithdrawn = "withdrawn"
)

// Approval scopes: the exact call, once; or calls like it for the rest of
// the session (recorded as a mandate amendment).
const (
	ScopeOnce    = "once"
	ScopeSession = "session"
)

// Approval is one ask put to a person (or a judge): the call it is bound
// to, why it was asked, who may answer, until when, and what became of it.
// Rows are updated only through Change.ApprovalChanges, each update
// conditional on the row's revision, so two answers cannot both win.
type Approval struct {
	ID        string `json:"approval_id"`
	SessionID string `json:"session_id"`
	// DecisionID is the decision that asked.
	DecisionID string `json:"decision_id"`
	// Tool and ArgsHash bind the approval to the exact call: the hex
	// SHA-256 of the canonical JSON of its (redacted) arguments.
	Tool     string `json:"tool"`
	ArgsHash string `json:"args_hash"`
	// Args are the call's arguments as stored (redacted), so the person
	// who answers sees what they answer; Kind is what the call does.
	Args json.RawMessage `json:"args,omitempty"`
	Kind string          `json:"kind,omitempty"`
	// Like describes "calls like this one" for a session-scoped answer:
	// the call's kinds and the resources it touches.
	Like    *Likeness `json:"like,omitempty"`
	Rules   []string  `json:"rules"`
	Reasons []string  `json:"reasons"`
	// AnswerableBy are the roles that may answer.
	AnswerableBy []string `json:"answerable_by"`
	State        string   `json:"state"`
	// Scope is how far an answer reaches (once, session); set on answer.
	Scope    string    `json:"scope,omitempty"`
	Deadline time.Time `json:"deadline"`
	// Rev counts the row's updates; an update names the revision it
	// replaces.
	Rev       int       `json:"rev"`
	CreatedAt time.Time `json:"created_at"`

	// The answer. AnsweredBy is the principal ("approver:tok_…"),
	// AnswererRole its role; Via says through what it came (api, cli,
	// claude-code, mcp-elicitation, judge, deadline); Origin is observed
	// when Mandate received the answer itself, reported when a surface
	// relayed what a person did elsewhere (Claude Code's own prompt).
	AnsweredAt   *time.Time `json:"answered_at,omitempty"`
	AnsweredBy   string     `json:"answered_by,omitempty"`
	AnswererRole string     `json:"answerer_role,omitempty"`
	Via          string     `json:"via,omitempty"`
	Origin       string     `json:"origin,omitempty"`
	// Note is the answerer's words, verbatim.
	Note string `json:"note,omitempty"`
	// UsedBy is the decision that ran the approved call (scope once).
	UsedBy string `json:"used_by,omitempty"`
	// MandateVersion is the version a session-scoped approval amended
	// the mandate to.
	MandateVersion int `json:"mandate_version,omitempty"`
	// Judge is the judge model's opinion, when one was asked.
	Judge *JudgeOpinion `json:"judge,omitempty"`
}

// Final reports whether the approval has left pending.
func (a *Approval) Final() bool { return a.State != ApprovalPending }

// Likeness is what "calls like this one" means for a session-scoped answer:
// the same tool, kinds among these, and every resource among these.
type Likeness struct {
	Tool      string   `json:"tool"`
	Kinds     []string `json:"kinds"`
	Resources []string `json:"resources"`
}

// JudgeOpinion is what a judge model answered about an ask, as decision
// and approval records show it.
type JudgeOpinion struct {
	Model string `json:"model"`
	// Decision is allow, deny or ask; empty when the judge gave no usable
	// answer (Error says why).
	Decision  string `json:"decision,omitempty"`
	Reason    string `json:"reason,omitempty"`
	LatencyMS int64  `json:"latency_ms"`
	// Mode is the judge's mode when it answered (advisory, auto).
	Mode string `json:"mode"`
	// Applied is true when the opinion resolved the ask (auto mode).
	Applied bool   `json:"applied"`
	Error   string `json:"error,omitempty"`
}

// JudgeExchange is one request to a judge model and what came back, kept in
// the evidence log (labelled judge). The prompt is kept by hash: it holds
// only redacted content, and its hash lets a holder of the prompt prove it.
type JudgeExchange struct {
	ID         string `json:"exchange_id"`
	SessionID  string `json:"session_id"`
	DecisionID string `json:"decision_id,omitempty"`
	ApprovalID string `json:"approval_id,omitempty"`
	Model      string `json:"model"`
	URL        string `json:"url"`
	// PromptHash is the hex SHA-256 of the request body sent.
	PromptHash string `json:"prompt_hash"`
	// Answer is the model's message content as received (bounded).
	Answer    string    `json:"answer"`
	Decision  string    `json:"decision,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Error     string    `json:"error,omitempty"`
	LatencyMS int64     `json:"latency_ms"`
	CreatedAt time.Time `json:"created_at"`
}

// ApprovalChange updates one approval row: Approval is the row as it is to
// be, with Rev one more than the revision it replaces. A row whose revision
// moved on meanwhile fails the change with ErrConflict.
type ApprovalChange struct {
	Approval *Approval
	// From is the state the row had, for the evidence record.
	From string
}

// ApprovalFilter selects approvals to list, newest first.
type ApprovalFilter struct {
	SessionID string
	State     string
	Limit     int
	// Before is a cursor: approvals created before this id.
	Before string
}

// Approvals is what a backend keeps of approvals, beside Store. Rows are
// written through Store.Submit (Change.Approvals, Change.ApprovalChanges).
//
// A backend shared by several servers (PostgreSQL) also implements
// ApprovalWatcher, so that a waiter on one server wakes when another
// answers.
type Approvals interface {
	GetApproval(ctx context.Context, id string) (*Approval, error)
	ListApprovals(ctx context.Context, f ApprovalFilter) ([]*Approval, error)
	// CallApprovals returns a session's approvals for one exact call
	// (tool and args hash), newest first.
	CallApprovals(ctx context.Context, sessionID, tool, argsHash string) ([]*Approval, error)
	// SessionGrants returns a session's approved session-scoped
	// approvals, oldest first.
	SessionGrants(ctx context.Context, sessionID string) ([]*Approval, error)
	// DueApprovals returns up to limit pending approvals whose deadline is
	// at or before t, earliest first.
	DueApprovals(ctx context.Context, t time.Time, limit int) ([]*Approval, error)
	// NextDeadline returns the earliest deadline of a pending approval, or
	// ErrNotFound when none is pending.
	NextDeadline(ctx context.Context) (time.Time, error)
}

// ApprovalWatcher is implemented by backends shared by several servers: it
// calls fn for every approval a server (this one included) created or
// changed, until ctx ends (PostgreSQL: LISTEN/NOTIFY); with an empty ID
// when it may have missed some (the feed was interrupted), so that waiters
// read their approvals again. A single-process backend (SQLite owns its
// data directory alone) has no need of it: the engine wakes its own
// waiters.
type ApprovalWatcher interface {
	WatchApprovals(ctx context.Context, fn func(ApprovalNotice)) error
}

// ApprovalNotice is one approval change as a shared backend announces it.
type ApprovalNotice struct {
	// ID is the approval's; "" means read every approval again.
	ID string
	// Event is what the change was for a person following events:
	// "approval" (a new pending approval), "approval.answered" (it left
	// pending), or "" (another change: used by the call it approved).
	Event string
	// Mine is true for changes this store instance committed itself: the
	// process has published their events already.
	Mine bool
}
