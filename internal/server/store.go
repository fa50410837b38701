package server

import (
	"context"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// Store is what the server reads and writes itself, beside the engine:
// tokens (the bearer check and /v1/tokens) and whether the store answers
// (/healthz). Every store.Store provides it.
type Store interface {
	TokenByHash(ctx context.Context, hash []byte) (*store.Token, error)
	CreateToken(ctx context.Context, t *store.Token) error
	ListTokens(ctx context.Context) ([]*store.Token, error)
	RevokeToken(ctx context.Context, id string, at time.Time) error
	// EvidenceSize answers /healthz: a store that can say it is alive.
	EvidenceSize(ctx context.Context) (uint64, error)
}

var _ Store = store.Store(nil)
