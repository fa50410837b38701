package api

import (
	"time"

	"github.com/mandate-dev/mandate/internal/baseline"
)

// The behaviour layer's wire types (docs/behaviour.md): agents and their
// baselines, drift between versions, a decision's trace, a session's
// summary and an agent's review.

type (
	// Drift compares a version of an agent with the version before it.
	Drift = baseline.Drift
	// DriftRate is a kind's mean count per session before and after.
	DriftRate = baseline.Rate
)

// AgentVersion is one version of an agent and its baseline.
type AgentVersion struct {
	// Version is the fingerprint's id ("v-" and 12 hex digits).
	Version          string `json:"version"`
	Model            string `json:"model,omitempty"`
	SystemPromptHash string `json:"system_prompt_hash,omitempty"`
	ToolsetHash      string `json:"toolset_hash,omitempty"`
	RetrievalSource  string `json:"retrieval_source,omitempty"`
	// Previous is the version before this one.
	Previous string `json:"previous,omitempty"`
	// State is learning, monitoring or frozen.
	State     string    `json:"state"`
	Sessions  int       `json:"sessions"`
	Calls     int       `json:"calls"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
}

// AgentBaseline is an agent's baseline across its versions.
type AgentBaseline struct {
	ID string `json:"id"`
	// State is the baseline's state: learning, monitoring or frozen.
	State string `json:"state"`
	// Sessions are the sessions learned from (Ordinary: of ordinary
	// length); Calls the allowed calls learned.
	Sessions int `json:"sessions"`
	Ordinary int `json:"ordinary_sessions"`
	Calls    int `json:"calls"`
	Denied   int `json:"denied"`
	Asked    int `json:"asked"`
	// Destinations is how many distinct destinations the baseline holds;
	// Dropped how many values its caps kept out.
	Destinations int            `json:"destinations"`
	Dropped      int            `json:"dropped"`
	Kinds        map[string]int `json:"kinds"`
	Tools        map[string]int `json:"tools"`
	Versions     []AgentVersion `json:"versions"`
	FirstSeen    time.Time      `json:"first_seen"`
	LastSeen     time.Time      `json:"last_seen"`
}

// AgentList is every agent with a baseline.
type AgentList struct {
	Agents []AgentBaseline `json:"agents"`
}

// DriftReport is an agent's drift, one entry per pair of consecutive
// versions, oldest first.
type DriftReport struct {
	Agent string  `json:"agent"`
	Pairs []Drift `json:"pairs"`
}

// BaselineRequest is an operator's action on a baseline.
type BaselineRequest struct {
	// Action is "reset" (forget what was learned), "freeze" (stop
	// learning) or "unfreeze".
	Action string `json:"action"`
	// Version limits a reset to one version; "" resets the agent and
	// every version.
	Version string `json:"version,omitempty"`
}

// Trace is the chain that led to a decision.
type Trace struct {
	DecisionID string `json:"decision_id"`
	// Steps are the decisions of the session (and, for a sub-agent, its
	// parents' before it began) up to this one, in order.
	Steps []TraceStep `json:"steps"`
	// FirstDeparture is the first step that left the mandate (an ask or
	// deny), the agent's baseline (a first-seen destination, a rare
	// transition) or took in injected content; null when none did.
	FirstDeparture *Departure `json:"first_departure"`
}

// TraceStep is one decision in a trace.
type TraceStep struct {
	DecisionID string   `json:"decision_id"`
	SessionID  string   `json:"session_id"`
	Seq        int      `json:"seq"`
	Tool       string   `json:"tool"`
	Kind       string   `json:"kind"`
	Effect     string   `json:"effect"`
	Rules      []string `json:"rules"`
	Signals    []Signal `json:"signals"`
	// Supplied are the earlier observations whose content held a value
	// this call uses (a host, recipient, account or URL).
	Supplied []Supplied `json:"supplied"`
	// Injected names the injected instructions found in this call's own
	// results, if any.
	Injected []string `json:"injected,omitempty"`
}

// Supplied is an observation that held a value a later call used.
type Supplied struct {
	ObservationID string `json:"observation_id"`
	// DecisionID is the call whose result it was.
	DecisionID string `json:"decision_id"`
	Value      string `json:"value"`
}

// Departure is the step a trace's trouble started at.
type Departure struct {
	DecisionID string `json:"decision_id"`
	// Type is "mandate", "baseline" or "injection".
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

// SessionSummary is a session as facts.
type SessionSummary struct {
	SessionID string         `json:"session_id"`
	AgentID   string         `json:"agent_id"`
	Version   string         `json:"version"`
	Status    string         `json:"status"`
	Calls     int            `json:"calls"`
	Kinds     map[string]int `json:"kinds"`
	// Destinations are the session's destinations ("type:value") with
	// the decisions that used them.
	Destinations []Fact `json:"destinations"`
	// Asked are the asks and how each was answered (approved, denied,
	// pending, …).
	Asked  []Asked `json:"asked"`
	Denied []Fact  `json:"denied"`
	// Gaps are results of calls that ran without Mandate's allow.
	Gaps []string `json:"gaps"`
	// Signals are the decisions whose baseline signals said something
	// (a first-seen destination, a rare tool or transition, a rate).
	Signals        []Fact     `json:"signals"`
	FirstDeparture *Departure `json:"first_departure"`
	// Recorded names the evidence record these facts were read from: a
	// session's summary is recorded once when it completes, and the
	// summary of a completed session is that record. Absent when the
	// facts were computed on demand (a session not completed, or one
	// completed without a recorded summary).
	Recorded *RecordedSummary `json:"recorded,omitempty"`
	// Narrative is the judge model's account of these facts, when asked
	// for (?narrative=1) — model-written, beside the facts, never mixed
	// with them.
	Narrative *Narrative `json:"narrative,omitempty"`
}

// RecordedSummary is the evidence record that holds a session's summary
// (type "behaviour", its content a summary record; see `mandate evidence`).
type RecordedSummary struct {
	EvidenceIndex uint64    `json:"evidence_index"`
	RecordedAt    time.Time `json:"recorded_at"`
}

// Fact is a fact and the decisions that show it.
type Fact struct {
	What      string   `json:"what"`
	Decisions []string `json:"decisions"`
}

// Asked is one ask and its answer.
type Asked struct {
	DecisionID string   `json:"decision_id"`
	Tool       string   `json:"tool"`
	Rules      []string `json:"rules"`
	ApprovalID string   `json:"approval_id,omitempty"`
	// Answer is approved, denied, expired, withdrawn or pending.
	Answer string `json:"answer"`
}

// AgentReview is what an agent's sessions show together that no single
// one does.
type AgentReview struct {
	Agent    string `json:"agent"`
	Sessions int    `json:"sessions"`
	// Patterns are the repeated findings, each with its decisions.
	Patterns []Pattern `json:"patterns"`
	// Scope is the number of distinct destinations per session, oldest
	// first; Growing says it grew session after session.
	Scope   []int `json:"scope"`
	Growing bool  `json:"growing"`
	// Narrative is the judge model's account of these facts, when asked
	// for (?narrative=1) — model-written, beside the facts, never mixed
	// with them.
	Narrative *Narrative `json:"narrative,omitempty"`
}

// Narrative is a model-written account of a summary's or a review's facts.
// It is labelled as such (ModelWritten is always true), names the model,
// and is an evidence record (behaviour, type "narrative") with the digest
// of the facts it was written from. Error says why there is none (no judge
// model configured, the model failed); the facts stand either way.
type Narrative struct {
	ModelWritten bool      `json:"model_written"`
	Model        string    `json:"model,omitempty"`
	Text         string    `json:"text,omitempty"`
	FactsDigest  string    `json:"facts_digest"`
	CreatedAt    time.Time `json:"created_at"`
	Error        string    `json:"error,omitempty"`
}

// Pattern is one repeated finding of a review.
type Pattern struct {
	// Type is "repeated-ask", "repeated-deny", "shortcut" or
	// "approved-then-repeated".
	Type string `json:"type"`
	// Name is the rule or the shortcut.
	Name      string   `json:"name"`
	Why       string   `json:"why"`
	Sessions  []string `json:"sessions"`
	Decisions []string `json:"decisions"`
}
