package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
)

// Session ids are derived from Claude Code's own ids, so that every hook
// process — each event is a separate one — finds the same sessions without
// keeping state of its own:
//
//	claude-code:<session_id>                          the main agent
//	claude-code:<session_id>:task:<tool_use_id>       a launch (Task/Agent call)
//	claude-code:<session_id>:agent:<agent_id>         a running sub-agent
//
// Mandate's session ids allow letters, digits and . _ : @ - up to 128
// characters; a component outside that (or longer than maxComponent) is
// replaced by a hash of itself, so the forms above always fit and stay
// distinct.
const (
	sessionPrefix = "claude-code:"
	launchInfix   = ":task:"
	agentInfix    = ":agent:"
	maxComponent  = 48
)

// DefaultAgentID is the agent id of the main agent's sessions; sub-agents
// get DefaultAgentID + ":" + their agent type.
const DefaultAgentID = "claude-code"

var componentRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]*$`)

// component makes one id part safe: as is when it may be, else "h" and the
// first 32 hex digits of its SHA-256.
func component(s string) string {
	if len(s) <= maxComponent && componentRE.MatchString(s) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "h" + hex.EncodeToString(sum[:16])
}

// MainSessionID is the Mandate session of a Claude Code session.
func MainSessionID(sessionID string) string { return sessionPrefix + component(sessionID) }

// LaunchSessionID is the launch session of a Task/Agent call in a session.
func LaunchSessionID(parent, toolUseID string) string {
	return parent + launchInfix + component(toolUseID)
}

// LaunchPrefix starts the ids of every launch session under parent.
func LaunchPrefix(parent string) string { return parent + launchInfix }

// SubagentSessionID is the session of a running sub-agent.
func SubagentSessionID(main, agentID string) string { return main + agentInfix + component(agentID) }

// subagentAgentID is the agent id of a sub-agent of a type.
func subagentAgentID(base, agentType string) string {
	if agentType == "" {
		agentType = "general-purpose"
	}
	return base + ":" + component(agentType)
}
