package api

import (
	"encoding/json"
	"time"
)

// Checkpoint is a signed statement of the evidence log's size and root.
type Checkpoint struct {
	Origin string `json:"origin"`
	Size   uint64 `json:"size"`
	// RootHash is the tree's root, base64.
	RootHash string    `json:"root_hash"`
	Time     time.Time `json:"time"`
	// Note is the signed note (what `mandate evidence verify
	// --since-checkpoint` reads).
	Note string `json:"note"`
	// VerifierKey checks Note's signature (signed-note verifier key).
	VerifierKey string `json:"verifier_key"`
}

// EvidenceEntry is GET /v1/evidence/records/{index}: one record with its
// inclusion proof against Checkpoint.
type EvidenceEntry struct {
	Index     uint64 `json:"index"`
	Type      string `json:"type"`
	Origin    string `json:"origin"`
	SessionID string `json:"session_id"`
	// LeafHash is the record's RFC 6962 leaf hash, hex.
	LeafHash string `json:"leaf_hash"`
	// Record is the record's canonical JSON.
	Record json.RawMessage `json:"record"`
	// InclusionProof are the proof's hashes, base64.
	InclusionProof []string   `json:"inclusion_proof"`
	Checkpoint     Checkpoint `json:"checkpoint"`
}

// ConsistencyProof is GET /v1/evidence/consistency: the log of size From is
// a prefix of the log of size To.
type ConsistencyProof struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
	// Proof are the proof's hashes, base64.
	Proof []string `json:"proof"`
	// Checkpoint is the latest signed checkpoint, when it has size To.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// Bundle is GET /v1/evidence/sessions/{id}/bundle, the file `mandate
// evidence export` writes and `mandate evidence verify` checks offline: every
// record of a session with its inclusion proof, and the signed checkpoint the
// proofs are against.
type Bundle struct {
	// Format names the bundle format and its version.
	Format    string `json:"format"`
	SessionID string `json:"session_id"`
	// Origin and TreeSize are the checkpoint's.
	Origin   string `json:"origin"`
	TreeSize uint64 `json:"tree_size"`
	// Checkpoint is the signed note.
	Checkpoint string         `json:"checkpoint"`
	Records    []BundleRecord `json:"records"`
}

// BundleRecord is one record of a bundle.
type BundleRecord struct {
	Index uint64 `json:"index"`
	// LeafHash is hex; InclusionProof's hashes base64.
	LeafHash       string   `json:"leaf_hash"`
	InclusionProof []string `json:"inclusion_proof"`
	// Record is the record's canonical JSON.
	Record json.RawMessage `json:"record"`
}
