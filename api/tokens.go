package api

// CreateTokenRequest is POST /v1/tokens (admin).
type CreateTokenRequest struct {
	// Role is agent, hook, user or admin.
	Role string `json:"role"`
	// AgentID binds an agent token to one agent (required for agents).
	AgentID string `json:"agent_id,omitempty"`
	Name    string `json:"name,omitempty"`
}

// TokenCreated is a new token. The secret is shown only here, once.
type TokenCreated struct {
	Token   string `json:"token"`
	ID      string `json:"id"`
	Role    string `json:"role"`
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
}

// TokenList is GET /v1/tokens; hashes are never shown.
type TokenList struct {
	Tokens []*Token `json:"tokens"`
}

// Whoami is GET /v1/whoami: the token the request carried, as the server
// sees it. Tools check a token's role with it before they rely on it (hook
// install refuses an admin token).
type Whoami struct {
	TokenID string `json:"token_id"`
	// Role is agent, hook, user or admin.
	Role    string `json:"role"`
	AgentID string `json:"agent_id,omitempty"`
	Name    string `json:"name,omitempty"`
}
