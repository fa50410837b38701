// Package policy decides allow, deny or ask for a classified action held
// against the session's mandate and state. Rules are YAML with CEL conditions;
// deny beats ask beats allow, and what no rule matches falls to a per-kind
// default. Every verdict names the rules that fired and why.
package policy

import (
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/flow"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// Effect is a policy outcome.
type Effect string

// The effects, strongest first.
const (
	Deny  Effect = "deny"
	Ask   Effect = "ask"
	Allow Effect = "allow"
)

// Input is everything a rule may look at. Each field is a CEL variable of the
// same name (lower case), with the JSON field names of its type.
type Input struct {
	Call    CallFacts        // `call`
	Action  *action.Action   // `action`
	Mandate *mandate.Mandate // `mandate`
	Scope   mandate.Report   // `scope`
	Session SessionFacts     // `session`
	Agent   AgentFacts       // `agent`
	Self    SelfFacts        // `self`
	// Flow is where the call's values came from and what the session has
	// seen (`flow`); nil is a session that has seen nothing.
	Flow *flow.Facts // `flow`
	// Baseline is how the call compares with its agent's own history
	// (`baseline`); nil is an agent with no history (learning).
	Baseline *BaselineFacts // `baseline`
	// Sequences is the call's part in the sequence rules (sequence.go):
	// the partial matches of its session, tree and agent. Nil evaluates
	// no sequence.
	Sequences *SequenceCall
}

// BaselineFacts is the call held against its agent's baseline: the same
// figures as the decision's signals (internal/baseline).
type BaselineFacts struct {
	// State is learning, monitoring or frozen.
	State string `json:"state"`
	// FirstSeen are the call's destinations ("host:x", "recipient:y",
	// "program:z" …) the agent never used.
	FirstSeen []string `json:"first_seen"`
	// RareTool and RareTransition are the tool's and the transition's
	// smoothed probabilities under the agent's history (1 while the
	// history is too short to say).
	RareTool       float64 `json:"rare_tool"`
	RareTransition float64 `json:"rare_transition"`
	// Rate is this session's count of sends, deletes or pays (this call
	// included) over the agent's usual most; RateHigh that it is far above.
	Rate     float64 `json:"rate"`
	RateHigh bool    `json:"rate_high"`
	// Score is how unusual the call is for the agent (0-1), Reasons its
	// top contributors; UnlikeSelf that it is monitoring and the score is
	// at or above the knowledge file's threshold.
	Score      float64  `json:"score"`
	Reasons    []string `json:"reasons"`
	UnlikeSelf bool     `json:"unlike_self"`
}

// noBaseline is what rules see without a baseline: nothing learned.
var noBaseline = BaselineFacts{State: "learning", RareTool: 1, RareTransition: 1}

// CallFacts is the raw call: the tool name and its arguments.
type CallFacts struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// SessionFacts is the session's state before this call.
type SessionFacts struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	ParentID string `json:"parent_id,omitempty"`
	// Counts are the items allowed calls acted on so far, per kind.
	Counts map[string]int `json:"counts"`
	// Spend is money committed by allowed calls so far, per currency.
	Spend map[string]float64 `json:"spend"`
	// Calls, Denied and Asked count earlier decisions of each effect
	// (Calls counts all of them).
	Calls  int `json:"calls"`
	Denied int `json:"denied"`
	Asked  int `json:"asked"`
	// Recent holds the most recent decisions, oldest first (at most 32).
	Recent []RecentDecision `json:"recent"`
}

// RecentDecision is a short summary of an earlier decision in the session.
type RecentDecision struct {
	Tool   string `json:"tool"`
	Kind   string `json:"kind"`
	Effect string `json:"effect"`
}

// AgentFacts is the agent's identity and version fingerprint.
type AgentFacts struct {
	ID          string `json:"id"`
	Model       string `json:"model,omitempty"`
	PromptHash  string `json:"system_prompt_hash,omitempty"`
	ToolsetHash string `json:"toolset_hash,omitempty"`
	Retrieval   string `json:"retrieval_source,omitempty"`
}

// SelfFacts is Mandate's own footprint on the machine: where its API
// listens and which files are its own. The built-in self-protection rules
// use it to refuse agent calls that would reach around Mandate — call its
// API with a token found lying about, read its tokens or database, change
// its policy, data or hook settings. The engine fills it from its
// configuration; it is empty where Mandate runs no service (`mandate
// check`), and then only the rules that need no address or path apply.
type SelfFacts struct {
	// Addresses are the host:port forms the API is reachable at from this
	// machine: the listen address and its loopback and wildcard aliases
	// (127.0.0.1:7410, localhost:7410, [::1]:7410, 0.0.0.0:7410, …).
	Addresses []string `json:"addresses"`
	// Hosts and Ports are the host and port parts of Addresses, for
	// commands that name them apart (nc 127.0.0.1 7410).
	Hosts []string `json:"hosts"`
	Ports []string `json:"ports"`
	// Paths are absolute files and directories that are Mandate's own:
	// the data directory, token files, policy directories, catalog files,
	// its configuration directory.
	Paths []string `json:"paths"`
}

// Verdict is a decision with its explanation.
type Verdict struct {
	Effect Effect `json:"effect"`
	// Rules are the names of the rules that fired (all of them, not only
	// the winning effect's), or "default:<kind>" when none did.
	Rules []string `json:"rules"`
	// Reasons are human-readable, one per rule that decided the effect.
	Reasons []string `json:"reasons"`
	// Errors name the rules that failed at run time, with the error. A
	// failed deny or ask rule counts as fired; a failed allow rule does not.
	Errors []string `json:"errors,omitempty"`
}
