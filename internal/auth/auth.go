// Package auth defines who may do what: bearer tokens, their roles, and the
// permission checks the engine and the API apply.
//
// Roles: an agent may only evaluate and observe in its own sessions; a hook
// relays an agent runtime's events (evaluate, observe, and the user's prompts
// as mandate versions labelled as coming through the hook); a user creates
// sessions and mandates and reads; an admin does everything. An agent's
// credential can never create or amend a mandate.
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
)

// ParseRole checks s names a role.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleAgent, RoleHook, RoleUser, RoleAdmin:
		return r, nil
	}
	return "", fmt.Errorf("unknown role %q (want agent, hook, user or admin)", s)
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
)

var permissionNames = [...]string{"evaluate", "observe", "create sessions", "amend mandates", "change session status", "read", "manage tokens"}

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
	// AgentID binds an agent token to one agent identity.
	AgentID string
	Name    string
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
	}
	return false
}

// Owns reports whether the principal may act in a session of agentID: agent
// tokens only in their own agent's sessions, other roles in any.
func (p Principal) Owns(agentID string) bool {
	if p.Role == RoleAgent {
		return p.AgentID != "" && p.AgentID == agentID
	}
	return true
}

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
// tokens must name the agent they act for.
func Issue(role, agentID, name string, now time.Time) (string, *store.Token, error) {
	r, err := ParseRole(role)
	if err != nil {
		return "", nil, err
	}
	if r == RoleAgent && agentID == "" {
		return "", nil, errors.New("an agent token must name its agent (agent_id / --agent): it may act only in that agent's sessions")
	}
	if r != RoleAgent && agentID != "" {
		return "", nil, fmt.Errorf("agent_id is only for agent tokens, not %s", r)
	}
	tok, hash := NewToken()
	return tok, &store.Token{ID: NewID("tok_"), Hash: hash, Role: string(r), AgentID: agentID, Name: name, CreatedAt: now.UTC()}, nil
}
