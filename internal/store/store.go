// Package store defines what Mandate keeps — sessions, mandate versions,
// decisions, observations, tokens and evidence records — and the interface a
// backend implements. SQLite (package sqlite) is the embedded default.
//
// Writes go through Submit as one Change at a time: everything a decision
// touches (the decision row, the session's counters, its evidence record) is
// committed in one transaction, and the caller is acknowledged only once it is
// durable. Backends batch concurrent changes into one commit (group commit) so
// durability does not cost throughput.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// Errors a backend returns; callers test with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("already exists")
	ErrClosed   = errors.New("store closed")
	// ErrStale fails a change whose Guard no longer holds: the session
	// changed since the change was decided (through another replica of a
	// shared store). The caller reloads the session and decides again.
	ErrStale = fmt.Errorf("%w: the session changed since this was decided", ErrConflict)
	// ErrBudget fails a change whose Draws no longer hold: a budget of
	// the session's delegation tree moved since the change was decided
	// (another call of the tree drew from it, perhaps through another
	// replica), or the draw would take it past its cap. Nothing of the
	// change is written. It is a kind of ErrStale: the caller reloads
	// and decides again, against the budget as it now stands.
	ErrBudget = fmt.Errorf("%w (a delegation tree's budget moved or would pass its cap)", ErrStale)
)

// Session lifecycle states.
const (
	StatusActive     = "active"
	StatusIdle       = "idle"
	StatusCompleted  = "completed"
	StatusSuspended  = "suspended"
	StatusTerminated = "terminated"
)

// ValidStatus reports whether s is a lifecycle state.
func ValidStatus(s string) bool {
	switch s {
	case StatusActive, StatusIdle, StatusCompleted, StatusSuspended, StatusTerminated:
		return true
	}
	return false
}

// Agent is an agent's identity and version fingerprint, kept for baselines.
type Agent struct {
	ID               string `json:"id"`
	Model            string `json:"model,omitempty"`
	SystemPromptHash string `json:"system_prompt_hash,omitempty"`
	ToolsetHash      string `json:"toolset_hash,omitempty"`
	RetrievalSource  string `json:"retrieval_source,omitempty"`
}

// Session is one agent run under one mandate.
type Session struct {
	ID         string           `json:"session_id"`
	Agent      Agent            `json:"agent"`
	Tools      []action.ToolDef `json:"tools,omitempty"`
	WorkingDir string           `json:"working_directory,omitempty"`
	HomeDir    string           `json:"home_directory,omitempty"`
	ParentID   string           `json:"parent_session_id,omitempty"`
	Status     string           `json:"status"`
	// MandateVersion is the current version of the session's own mandate.
	MandateVersion int       `json:"mandate_version"`
	State          Counters  `json:"counters"`
	CreatedBy      string    `json:"created_by"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	// Head names the last change to the session's state (a decision, a
	// mandate version, a status change); Guard compares and sets it. It is
	// bookkeeping for concurrency, not part of the session's record.
	Head string `json:"-"`

	// ApprovalTimeout is the deadline of this session's pending approvals
	// (a Go duration, "5m"); empty means the server's default. A policy
	// rule's own approval_timeout wins over it.
	ApprovalTimeout string `json:"approval_timeout,omitempty"`
}

// Counters is a session's running state, updated with every decision.
type Counters struct {
	// Counts are the items allowed calls acted on, per kind (each call
	// its action.Items, at least 1).
	Counts map[string]int `json:"counts"`
	// Spend is money committed by allowed calls, per currency.
	Spend  map[string]float64 `json:"spend"`
	Calls  int                `json:"calls"`
	Denied int                `json:"denied"`
	Asked  int                `json:"asked"`
	// Recent are the latest decisions, oldest first, bounded by the engine.
	// Not stored with the counters: the decisions table has them.
	Recent []Recent `json:"-"`
}

// Recent summarises one earlier decision.
type Recent struct {
	Tool   string `json:"tool"`
	Kind   string `json:"kind"`
	Effect string `json:"effect"`
}

// MandateVersion is one stored version of a session's mandate.
type MandateVersion struct {
	SessionID string           `json:"session_id"`
	Version   int              `json:"version"`
	Mandate   *mandate.Mandate `json:"mandate"`
	// Source says who made this version: user, admin, hook, delegation.
	Source    string    `json:"source"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
}

// Decision is one evaluated call and its verdict, as persisted.
type Decision struct {
	ID             string          `json:"decision_id"`
	SessionID      string          `json:"session_id"`
	Seq            int             `json:"seq"`
	Surface        string          `json:"surface"`
	Tool           string          `json:"tool"`
	Args           json.RawMessage `json:"args"`
	Action         *action.Action  `json:"action"`
	MandateVersion int             `json:"mandate_version"`
	PolicyHash     string          `json:"policy_hash"`
	Effect         string          `json:"effect"`
	Rules          []string        `json:"rules"`
	Reasons        []string        `json:"reasons"`
	LatencyMicros  int64           `json:"latency_us"`
	// CallID is the harness's own id for the call (Claude Code's
	// tool_use_id), if it gave one; results are observed by it.
	CallID    string    `json:"call_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`

	// ApprovalID is the approval this decision asked for (effect ask), or
	// the one it was allowed or denied by (rules approval.granted,
	// approval.denied), or the one a judge resolved.
	ApprovalID string `json:"approval_id,omitempty"`
	// Judge is the judge model's opinion, when one was asked.
	Judge *JudgeOpinion `json:"judge,omitempty"`
	// Signals are how the call compares with its agent's baseline,
	// recorded whether or not they changed the verdict.
	Signals []baseline.Signal `json:"signals,omitempty"`
	// Provenance is where each of the call's consequential values came
	// from, as the flow facts the verdict was reached on had it.
	Provenance []Provenance `json:"provenance,omitempty"`
}

// Provenance is one value of a decided call and its first source: the
// user's words ("user"), the structured mandate ("mandate"), a tool's
// output ("output", with the observation and the decision it answered),
// the agent's own arguments ("call"), or "unknown" when the session's
// value table could not say (it evicted values, or an output was not
// examined in full). Trust is that source's: "user", "own" (the user's own
// data) or "open". Injected: it came from an instruction injected into an
// output, and never from the user's words. A secret value is only its
// redaction marker.
type Provenance struct {
	Value         string `json:"value"`
	Field         string `json:"field"`
	Origin        string `json:"origin"`
	Trust         string `json:"trust"`
	Injected      bool   `json:"injected"`
	ObservationID string `json:"observation_id,omitempty"`
	DecisionID    string `json:"decision_id,omitempty"`
}

// Observation is a tool's result as the surface saw it.
type Observation struct {
	ID         string          `json:"observation_id"`
	DecisionID string          `json:"decision_id,omitempty"`
	SessionID  string          `json:"session_id"`
	Output     json.RawMessage `json:"output"`
	// Origin is "observed" (seen at the tool boundary) or "reported" (a
	// client's claim).
	Origin string `json:"origin"`
	// CallID is the harness's id for the call, when it observed by one.
	CallID string `json:"call_id,omitempty"`
	// Gap is set for a result of a call that ran without Mandate's allow:
	// one it never decided (DecisionID is then empty), one decided for
	// another tool, or one it denied. GapReason says which; Tool and Args
	// describe the call as the surface reported it.
	Gap       bool            `json:"gap,omitempty"`
	GapReason string          `json:"gap_reason,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// Token is an API credential; only its hash is kept.
type Token struct {
	ID   string `json:"id"`
	Hash []byte `json:"-"`
	Role string `json:"role"`
	// AgentID binds agent tokens to one agent identity.
	AgentID   string     `json:"agent_id,omitempty"`
	Name      string     `json:"name,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// EvidenceRecord is one leaf of the evidence log. Body is the canonical
// record bytes and LeafHash their RFC 6962 leaf hash, both computed before
// submission; the backend assigns Index in commit order.
type EvidenceRecord struct {
	Index     uint64    `json:"index"`
	Type      string    `json:"type"`
	SessionID string    `json:"session_id,omitempty"`
	Origin    string    `json:"origin"`
	Body      []byte    `json:"body"`
	LeafHash  []byte    `json:"leaf_hash"`
	CreatedAt time.Time `json:"created_at"`
}

// ToolPin is a tool's definition as first listed to a session. Later
// listings are held against it: a tool whose description or schema changes
// mid-session ("rug pull") is refused.
type ToolPin struct {
	SessionID string `json:"session_id"`
	Tool      string `json:"tool"`
	// Hash is the hex SHA-256 of the definition's canonical JSON.
	Hash       string          `json:"hash"`
	Definition json.RawMessage `json:"definition"`
	CreatedAt  time.Time       `json:"created_at"`
}

// ToolChange records a listing of a pinned tool whose definition differs
// from its pin.
type ToolChange struct {
	ID         string `json:"change_id"`
	SessionID  string `json:"session_id"`
	Tool       string `json:"tool"`
	PinnedHash string `json:"pinned_hash"`
	// Hash and Definition are the changed definition's.
	Hash       string          `json:"hash"`
	Definition json.RawMessage `json:"definition"`
	CreatedAt  time.Time       `json:"created_at"`
}

// Reported is a statement an agent or client made about its own conduct,
// such as its stated reasoning for a call. Mandate cannot check it, so it is
// never mixed with what Mandate observed: it is recorded on its own, labelled
// as reported.
type Reported struct {
	SessionID  string `json:"session_id"`
	DecisionID string `json:"decision_id,omitempty"`
	// Kind says what was stated, e.g. "reasoning".
	Kind      string          `json:"kind"`
	Content   json.RawMessage `json:"content"`
	CreatedAt time.Time       `json:"created_at"`
}

// Checkpoint is a signed statement of the evidence log's size and root hash
// at one moment, in the signed-note format (package evidence makes and
// checks them). The store keeps every one it is given, in order.
type Checkpoint struct {
	// ID orders checkpoints as they were added; the backend assigns it.
	ID       int64  `json:"id"`
	Size     uint64 `json:"size"`
	RootHash []byte `json:"root_hash"`
	// Note is the signed note text: origin, size and root lines, then
	// signature lines.
	Note      []byte    `json:"note"`
	CreatedAt time.Time `json:"created_at"`
}

// Change is one unit of work committed atomically: a new or updated session,
// a mandate version, a decision, an observation and the evidence records that
// describe them. Nil fields are skipped.
type Change struct {
	// Actor is the principal that made the change (e.g. "user:tok_…"), for
	// the record of a lifecycle change; decisions name theirs elsewhere.
	Actor string
	// NewSession inserts Session; otherwise Session (if set) updates the
	// status, mandate version and counters of an existing row.
	NewSession  bool
	Session     *Session
	Mandate     *MandateVersion
	Decision    *Decision
	Observation *Observation
	// ToolPins are new pins; ToolChanges are listings that broke a pin.
	ToolPins    []*ToolPin
	ToolChanges []*ToolChange
	// Reported are statements an agent or client made; they are kept in
	// the evidence log only.
	Reported []*Reported
	Evidence []*EvidenceRecord
	// Guard, if set, is the state the change was decided on: the backend
	// commits the change only if it still holds, and fails it with
	// ErrStale otherwise (nothing of it is written).
	Guard *Guard

	// Approvals are new approval rows (an ask's, with its decision);
	// ApprovalChanges update existing ones (answers, expiry, use), each
	// conditional on the row's revision.
	Approvals       []*Approval
	ApprovalChanges []*ApprovalChange
	// JudgeExchanges are requests to a judge model and their answers.
	JudgeExchanges []*JudgeExchange
	// Behaviour are baseline events (a new agent version, a drift verdict,
	// a reset or freeze); they are kept in the evidence log only.
	Behaviour []*BehaviourRecord
	// Draws are what an allowed call takes from the budgets of its
	// delegation tree (budget.go); each commits with the change or fails
	// it with ErrBudget.
	Draws []*Draw
}

// Guard makes a change conditional on the state it was decided on, so that
// several processes sharing a store never commit a decision made on a stale
// copy of a session. It is checked before anything else in the change.
type Guard struct {
	// SessionID's head must still be Head (for a new session: the session
	// must not exist); the change sets it to NewHead.
	SessionID string
	Head      string
	NewHead   string
	// Sessions must still have these statuses and mandate versions: the
	// ancestors whose suspension or mandate bounds the change.
	Sessions []SessionState
}

// SessionState is a session's status and mandate version as a change was
// decided on them.
type SessionState struct {
	ID             string
	Status         string
	MandateVersion int
}

// SessionFilter selects sessions to list.
type SessionFilter struct {
	AgentID  string
	Status   string
	ParentID string
	Limit    int
	// Before is a cursor: sessions created before this id.
	Before string
}

// DecisionFilter selects decisions to list.
type DecisionFilter struct {
	SessionID string
	Effect    string
	Limit     int
	// AfterSeq lists a session's decisions after this sequence number.
	AfterSeq int
	// Tree lists the decisions of every session in the delegation tree
	// under this session (it included), and AgentID those of every session
	// of this agent: newest first, across sessions in commit order. They
	// are how the engine rebuilds the sequence state of a tree or an agent
	// after a restart.
	Tree    string
	AgentID string
}

// GapFilter selects gaps to list.
type GapFilter struct {
	SessionID string
	Limit     int
}

// Store is everything a backend implements. Its consumers do not take it
// whole: each declares the part it uses (engine.Store, server.Store, the
// evidence log's reads), so a consumer can be tested with, and a backend
// grown by, exactly what is needed.
type Store interface {
	// Submit queues c for commit and returns a channel that yields nil once
	// c is durable, or the error that prevented it. Changes commit in
	// submission order. The store may read c and what it points to until
	// the result is delivered; callers must not modify them meanwhile.
	Submit(c *Change) <-chan error

	GetSession(ctx context.Context, id string) (*Session, error)
	ListSessions(ctx context.Context, f SessionFilter) ([]*Session, error)
	GetMandate(ctx context.Context, sessionID string, version int) (*MandateVersion, error)
	ListMandates(ctx context.Context, sessionID string) ([]*MandateVersion, error)
	GetDecision(ctx context.Context, id string) (*Decision, error)
	ListDecisions(ctx context.Context, f DecisionFilter) ([]*Decision, error)
	ListObservations(ctx context.Context, decisionID string) ([]*Observation, error)
	// DecisionByCall returns the latest decision in a session made for a
	// call id, or ErrNotFound.
	DecisionByCall(ctx context.Context, sessionID, callID string) (*Decision, error)
	// ListGaps returns gap observations, newest first.
	ListGaps(ctx context.Context, f GapFilter) ([]*Observation, error)
	// ListToolPins returns a session's pins in the order they were made;
	// ListToolChanges its recorded changes, oldest first.
	ListToolPins(ctx context.Context, sessionID string) ([]*ToolPin, error)
	ListToolChanges(ctx context.Context, sessionID string) ([]*ToolChange, error)
	// GetBudget returns what the delegation tree under a session has
	// drawn on one capped dimension (Used 0 when nothing yet), held
	// against the latest draw the evidence log records for it.
	GetBudget(ctx context.Context, sessionID, dim string) (*Budget, error)

	CreateToken(ctx context.Context, t *Token) error
	TokenByHash(ctx context.Context, hash []byte) (*Token, error)
	ListTokens(ctx context.Context) ([]*Token, error)
	RevokeToken(ctx context.Context, id string, at time.Time) error

	// EvidenceSize is the number of evidence records committed.
	EvidenceSize(ctx context.Context) (uint64, error)
	// EvidenceRange returns records [from, to) in index order.
	EvidenceRange(ctx context.Context, from, to uint64) ([]*EvidenceRecord, error)
	// EvidenceLeafHashes returns the leaf hashes of records [from, to) in
	// index order, without their bodies.
	EvidenceLeafHashes(ctx context.Context, from, to uint64) ([][]byte, error)
	// EvidenceFrom returns up to limit records with index >= from, in index
	// order, whatever gaps there are (verification reads the log with it).
	EvidenceFrom(ctx context.Context, from uint64, limit int) ([]*EvidenceRecord, error)
	// SessionEvidence returns a session's evidence records in index order.
	SessionEvidence(ctx context.Context, sessionID string) ([]*EvidenceRecord, error)

	// AddCheckpoint stores a signed checkpoint (durably) and sets its ID.
	AddCheckpoint(ctx context.Context, cp *Checkpoint) error
	// LatestCheckpoint returns the checkpoint added last, or ErrNotFound.
	LatestCheckpoint(ctx context.Context) (*Checkpoint, error)
	// ListCheckpoints returns up to limit checkpoints with ID > afterID,
	// in the order they were added.
	ListCheckpoints(ctx context.Context, afterID int64, limit int) ([]*Checkpoint, error)

	Close() error
}

// Submitter is the write half of a store.
type Submitter interface {
	Submit(c *Change) <-chan error
}

// Apply submits c and waits until it is durable or ctx ends.
func Apply(ctx context.Context, s Submitter, c *Change) error {
	select {
	case err := <-s.Submit(c):
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
