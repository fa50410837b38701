// Package auth defines who may do what: bearer tokens, their roles, and the
// permission checks the engine and the API apply.
//
// Roles: an agent may only evaluate and observe in its own sessions, and what
// it says about a result is recorded as reported, never observed; a hook
// relays an agent runtime's events (evaluate, observe, and the user's prompts
// as mandate versions labelled as coming through the hook) for the one agent
// it is bound to and that agent's sub-agents, in words only — never a
// structured grant; a user creates sessions and mandates and reads; an admin
// does everything. An agent's credential can never create or amend a
// mandate.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// Role is a token's role.
type Role string

// The roles.
const (
	RoleAgent Role = "agent"
	RoleHook  Role = "hook"
	RoleUser  Role = "user"
	RoleAdmin Role = "admin"
	// RoleApprover reads and answers approvals, and does nothing else: a
	// credential for a person (or a dashboard acting for one) who decides
	// asks without being able to run or read anything else.
	RoleApprover Role = "approver"
)

// ParseRole checks s names a role.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleAgent, RoleHook, RoleUser, RoleAdmin, RoleApprover:
		return r, nil
	}
	return "", fmt.Errorf("unknown role %q (want agent, hook, user, approver or admin)", s)
}

// Permission is one thing a principal may be allowed to do.
type Permission int

// The permissions.
const (
	// Evaluate and Observe act in a session (agents: only their own).
	Evaluate Permission = iota
	Observe
	// CreateSession creates sessions, with a mandate or intent.
	CreateSession
	// AmendMandate writes a new mandate version.
	AmendMandate
	// ChangeStatus suspends, resumes, completes or terminates sessions.
	ChangeStatus
	// Read lists and gets sessions, mandates and decisions.
	Read
	// ManageTokens creates and revokes tokens.
	ManageTokens
	// ReadApprovals lists and gets approvals (and their events).
	ReadApprovals
	// AnswerApprovals approves or denies pending approvals. An agent's or
	// hook's credential never may, not even in its own session.
	AnswerApprovals
)

var permissionNames = [...]string{"evaluate", "observe", "create sessions", "amend mandates", "change session status", "read", "manage tokens", "read approvals", "answer approvals"}

func (p Permission) String() string {
	if int(p) < len(permissionNames) {
		return permissionNames[p]
	}
	return fmt.Sprintf("permission(%d)", int(p))
}

// Principal is an authenticated caller.
type Principal struct {
	TokenID string
	Role    Role
	// AgentID binds an agent token to one agent identity, and a hook token
	// to the agent whose runtime it relays (and that agent's sub-agents).
	// A hook token stored without one (made before hook tokens were
	// bound) serves DefaultHookAgent.
	AgentID string
	Name    string
}

// DefaultHookAgent is the agent a hook token serves when it names none: the
// agent id of Claude Code's main sessions (hook.DefaultAgentID), which is
// what every hook token served before hook tokens were bound.
const DefaultHookAgent = "claude-code"

// HookAgent is the agent a hook principal serves.
func (p Principal) HookAgent() string {
	if p.AgentID != "" {
		return p.AgentID
	}
	return DefaultHookAgent
}

// Serves says, for an error message, whose sessions an agent or hook
// principal may act in ("agent \"mailer\"", "agent \"claude-code\" and its
// sub-agents"); other roles may act in any.
func (p Principal) Serves() string {
	switch p.Role {
	case RoleAgent:
		return fmt.Sprintf("agent %q", p.AgentID)
	case RoleHook:
		return fmt.Sprintf("agent %q and its sub-agents", p.HookAgent())
	}
	return "every agent"
}

// String names the principal for records ("admin:tok_…").
func (p Principal) String() string { return string(p.Role) + ":" + p.TokenID }

// Can reports whether the principal's role grants perm at all; agent
// ownership of a session is checked separately with Owns.
func (p Principal) Can(perm Permission) bool {
	switch p.Role {
	case RoleAdmin:
		return true
	case RoleUser:
		return perm != ManageTokens
	case RoleHook:
		// A hook relays the runtime's session lifecycle and the user's own
		// prompts; it cannot touch other sessions' status or tokens.
		return perm == Evaluate || perm == Observe || perm == CreateSession || perm == AmendMandate || perm == ChangeStatus
	case RoleAgent:
		return perm == Evaluate || perm == Observe
	case RoleApprover:
		return perm == ReadApprovals || perm == AnswerApprovals
	}
	return false
}

// Owns reports whether the principal may act in a session of agentID: agent
// tokens only in their own agent's sessions; hook tokens in those of the
// agent they serve and of its sub-agents (agent ids "AGENT:…", as the Claude
// Code hook names them); other roles in any.
func (p Principal) Owns(agentID string) bool {
	switch p.Role {
	case RoleAgent:
		return p.AgentID != "" && p.AgentID == agentID
	case RoleHook:
		a := p.HookAgent()
		return agentID == a || len(agentID) > len(a) && agentID[len(a)] == ':' && agentID[:len(a)] == a
	}
	return true
}

// Observes reports whether what the principal reports about a tool's result
// counts as observed — seen at the tool boundary by a surface Mandate runs
// (the MCP gateway, a hook) or a harness the user runs — rather than an
// agent's own account. An agent's credential only ever reports.
func (p Principal) Observes() bool { return p.Role != RoleAgent }

// RelaysWords reports whether the principal may give the user's words only,
// never a structured grant: a hook relays what the user typed, and the
// agent it serves can reach its token.
func (p Principal) RelaysWords() bool { return p.Role == RoleHook }

// TokenPrefix starts every token, so they are easy to spot (and to scan for
// in leaked text).
const TokenPrefix = "mdt_"

// NewToken returns a fresh random token and its hash.
func NewToken() (token string, hash []byte) {
	var b [32]byte
	rand.Read(b[:])
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashToken(token)
}

// HashToken is what the store keeps instead of the token.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return h[:]
}

// NewID returns a short random identifier with a prefix, e.g. "tok_…".
func NewID(prefix string) string {
	var b [9]byte
	rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Issue makes a new token for a role and the record to store for it. Agent
// tokens must name the agent they act for; a hook token serves the agent it
// names, DefaultHookAgent if none.
func Issue(role, agentID, name string, now time.Time) (string, *store.Token, error) {
	r, err := ParseRole(role)
	if err != nil {
		return "", nil, err
	}
	switch {
	case r == RoleAgent && agentID == "":
		return "", nil, errors.New("an agent token must name its agent (agent_id / --agent): it may act only in that agent's sessions")
	case r == RoleHook && agentID == "":
		agentID = DefaultHookAgent
	case r != RoleAgent && r != RoleHook && agentID != "":
		return "", nil, fmt.Errorf("agent_id is only for agent and hook tokens, not %s", r)
	}
	if len(agentID) > 128 || strings.ContainsAny(agentID, " \t\r\n/") {
		return "", nil, fmt.Errorf("agent_id %q: at most 128 characters, no spaces or slashes", agentID)
	}
	tok, hash := NewToken()
	return tok, &store.Token{ID: NewID("tok_"), Hash: hash, Role: string(r), AgentID: agentID, Name: name, CreatedAt: now.UTC()}, nil
}
