package api

// StoreHealth is the store as GET /healthz reports it.
type StoreHealth struct {
	// Backend is "sqlite" (embedded) or "postgres" (shared by replicas).
	Backend string `json:"backend"`
	// Database names a shared store's database (host:port/name as role),
	// never its password.
	Database string `json:"database,omitempty"`
	// Replica is this replica's id in a shared store.
	Replica string `json:"replica,omitempty"`
	// Integrator is true when this process integrates the evidence log
	// (assigns indices, signs checkpoints): always for the embedded
	// store, for exactly one replica of a shared one.
	Integrator bool `json:"integrator"`
	// Replicas is the number of replicas that announced themselves in the
	// last few seconds (shared store).
	Replicas int `json:"replicas,omitempty"`
	// EvidenceIntegrated is the log's size; EvidencePending the records
	// committed but not yet given an index; EvidenceUnsigned those not yet
	// covered by a signed checkpoint (the integrator's lag).
	EvidenceIntegrated uint64 `json:"evidence_integrated"`
	EvidencePending    uint64 `json:"evidence_pending"`
	EvidenceUnsigned   uint64 `json:"evidence_unsigned"`
	// LatencyMillis is how long the health check's round trip to the
	// store took.
	LatencyMillis float64 `json:"latency_ms"`
}
