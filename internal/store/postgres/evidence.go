package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// The evidence reads see integrated records only: those the integrator has
// given an index. A record is durable from the moment its change is
// acknowledged and readable here once integrated (SyncEvidence waits).

// EvidenceSize implements store.Store: the number of integrated records.
// Like SQLite's it counts rows, so a deleted record shows as a gap.
func (s *Store) EvidenceSize(ctx context.Context) (uint64, error) {
	var n uint64
	if err := s.pool.QueryRow(ctx, `SELECT count(idx) FROM evidence`).Scan(&n); err != nil {
		return 0, describe("evidence size", err)
	}
	return n, nil
}

// EvidenceRange implements store.Store.
func (s *Store) EvidenceRange(ctx context.Context, from, to uint64) ([]*store.EvidenceRecord, error) {
	return collect(ctx, s, "evidence range", `SELECT `+sqlstore.RecordCols+` FROM evidence WHERE idx >= $1 AND idx < $2 ORDER BY idx`, []any{int64(from), int64(to)}, sqlstore.ScanRecord)
}

// EvidenceLeafHashes implements store.Store. A missing index in the range is
// an error: the log has a gap.
func (s *Store) EvidenceLeafHashes(ctx context.Context, from, to uint64) ([][]byte, error) {
	if to < from {
		return nil, fmt.Errorf("evidence leaf hashes: range [%d, %d) is reversed", from, to)
	}
	rows, err := s.pool.Query(ctx, `SELECT idx, leaf_hash FROM evidence WHERE idx >= $1 AND idx < $2 ORDER BY idx`, int64(from), int64(to))
	if err != nil {
		return nil, describe("evidence leaf hashes", err)
	}
	defer rows.Close()
	return sqlstore.LeafHashes(rows, from, to, func(err error) error { return describe("evidence leaf hashes", err) })
}

// EvidenceFrom implements store.Store.
func (s *Store) EvidenceFrom(ctx context.Context, from uint64, limit int) ([]*store.EvidenceRecord, error) {
	if limit <= 0 {
		limit = 1000
	}
	return collect(ctx, s, "evidence from", `SELECT `+sqlstore.RecordCols+` FROM evidence WHERE idx >= $1 ORDER BY idx LIMIT $2`, []any{int64(from), limit}, sqlstore.ScanRecord)
}

// SessionEvidence implements store.Store.
func (s *Store) SessionEvidence(ctx context.Context, sessionID string) ([]*store.EvidenceRecord, error) {
	if sessionID == "" {
		return nil, errors.New("session evidence: a session id is required")
	}
	return collect(ctx, s, "session evidence", `SELECT `+sqlstore.RecordCols+` FROM evidence WHERE session_id = $1 AND session_id <> '' AND idx IS NOT NULL ORDER BY idx`, []any{sessionID}, sqlstore.ScanRecord)
}

// AddCheckpoint implements store.Store.
func (s *Store) AddCheckpoint(ctx context.Context, cp *store.Checkpoint) error {
	if s.readOnly {
		return ErrReadOnly
	}
	err := s.pool.QueryRow(ctx, `INSERT INTO checkpoints (size, root_hash, note, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
		int64(cp.Size), cp.RootHash, cp.Note, cp.CreatedAt.UnixNano()).Scan(&cp.ID)
	if err != nil {
		return describe("add checkpoint", err)
	}
	return nil
}

// LatestCheckpoint implements store.Store.
func (s *Store) LatestCheckpoint(ctx context.Context) (*store.Checkpoint, error) {
	cp, err := sqlstore.ScanCheckpoint(s.pool.QueryRow(ctx, `SELECT `+sqlstore.CheckpointCols+` FROM checkpoints ORDER BY id DESC LIMIT 1`))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("checkpoint: %w", store.ErrNotFound)
	}
	if err != nil {
		return nil, describe("latest checkpoint", err)
	}
	return cp, nil
}

// ListCheckpoints implements store.Store.
func (s *Store) ListCheckpoints(ctx context.Context, afterID int64, limit int) ([]*store.Checkpoint, error) {
	if limit <= 0 {
		limit = 1000
	}
	return collect(ctx, s, "list checkpoints", `SELECT `+sqlstore.CheckpointCols+` FROM checkpoints WHERE id > $1 ORDER BY id LIMIT $2`, []any{afterID, limit}, sqlstore.ScanCheckpoint)
}
