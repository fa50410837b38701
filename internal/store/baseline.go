package store

import (
	"context"
	"encoding/json"
	"time"
)

// Baseline is an agent's learned profile for one version ("" is the agent
// across all its versions), as stored. Profile is package baseline's
// Profile as JSON; the store does not look inside.
type Baseline struct {
	Agent   string          `json:"agent"`
	Version string          `json:"version"`
	Profile json.RawMessage `json:"profile"`
	// Revision counts the row's updates.
	Revision  int64     `json:"revision"`
	UpdatedAt time.Time `json:"updated_at"`
}

// BaselineKey names one baseline row.
type BaselineKey struct{ Agent, Version string }

// BaselineFold is one read-modify-write of baseline rows, committed in one
// transaction and serialised with every other fold of the same rows (and,
// with a SessionID, of the same session), on one replica or several.
//
// A fold with a SessionID also moves the session's cursor: the sequence
// number of its last decision already folded. Apply is given the cursor as
// committed, so a fold retried after a crash, or run by two replicas at
// once, applies each decision exactly once.
type BaselineFold struct {
	SessionID string
	Keys      []BaselineKey
	// Apply gets the session's cursor (0 if none or no SessionID) and one
	// row per key, in Keys order (Profile nil for a row not stored yet); it
	// updates the rows' Profile in place and returns the new cursor. A row
	// whose Profile it leaves nil is deleted. It may be called more than
	// once (the backend retries on contention) and must not keep the rows.
	Apply func(cursor int, rows []*Baseline) (int, error)
}

// Baselines is the part of a backend that keeps baselines. Both backends
// implement it; consumers assert it from their store.
type Baselines interface {
	// FoldBaseline runs f atomically.
	FoldBaseline(ctx context.Context, f *BaselineFold) error
	// GetBaseline returns one row, or ErrNotFound.
	GetBaseline(ctx context.Context, agent, version string) (*Baseline, error)
	// ListBaselines returns an agent's rows ("" agent: every agent's),
	// ordered by agent and then by the time each row was created.
	ListBaselines(ctx context.Context, agent string) ([]*Baseline, error)
	// BaselineCursor returns a session's cursor (0 if it has none).
	BaselineCursor(ctx context.Context, sessionID string) (int, error)
}

// BehaviourRecord is a baseline event for the evidence log: a new version
// of an agent, a drift verdict, an operator's reset or freeze.
type BehaviourRecord struct {
	// Type is "version", "drift", "reset", "freeze" or "unfreeze".
	Type    string `json:"type"`
	Agent   string `json:"agent"`
	Version string `json:"version,omitempty"`
	// SessionID is the session that showed it, if one did.
	SessionID string `json:"session_id,omitempty"`
	// Detail is the event's content (the version's fingerprint, the drift
	// figures).
	Detail json.RawMessage `json:"detail,omitempty"`
	// By is who did it, for an operator's action.
	By        string    `json:"by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}
