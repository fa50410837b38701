package api

// Error is every error response: a status that names what was wrong, a
// stable code and a message for a person. A failed POST /v1/evaluate also
// carries Effect "deny" and the reason: the call is refused, so a client that
// reads only the effect still fails closed.
type Error struct {
	Error ErrorDetail `json:"error"`
	// Effect is "deny" on /v1/evaluate failures, absent elsewhere.
	Effect Effect `json:"effect,omitempty"`
	// Reasons say why the call is refused (with Effect).
	Reasons []string `json:"reasons,omitempty"`
}

// ErrorDetail names an error.
type ErrorDetail struct {
	// Code is stable: invalid_request, unauthorized, forbidden, not_found,
	// conflict, too_large, unavailable, internal, evidence_tampered.
	Code string `json:"code"`
	// Message says what was wrong, for a person.
	Message string `json:"message"`
}

// Health is GET /healthz.
type Health struct {
	// Status is "ok", or "unavailable" when the store does not answer.
	Status string `json:"status"`
	// Version is the server's build.
	Version string `json:"version"`
	// PolicyHash is the hash of the policy in force.
	PolicyHash string `json:"policy_hash"`
	// Error says why the server is unavailable.
	Error string `json:"error,omitempty"`
	// Store is the store and this process's role in it, when the server
	// knows them.
	Store *StoreHealth `json:"store,omitempty"`
}
