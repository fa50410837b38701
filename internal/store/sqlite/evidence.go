package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// ErrReadOnly is returned by Submit on a store opened with OpenReadOnly.
var ErrReadOnly = errors.New("store opened read-only")

// OpenReadOnly opens an existing database for reading only: no migration, no
// writer, and none of Open's refusals of a damaged evidence log, so that
// `mandate evidence verify` can examine a store that Open would refuse.
// Submit fails with ErrReadOnly.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if path == ":memory:" {
		return nil, errors.New("sqlite: a read-only store needs a database file")
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	dsn := dataSource(path, "OFF") + "&_pragma=query_only(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	var have int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&have); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: %s: read schema version: %w", path, err)
	}
	if have != len(migrations) {
		db.Close()
		return nil, fmt.Errorf("sqlite: %s: schema version %d, this binary reads version %d: open it once with 'mandate serve' (or a matching binary) first", path, have, len(migrations))
	}
	// Both handles are the same read-only pool; closeDBs closes it once
	// through each field, and sql.DB.Close is idempotent.
	s := &Store{
		path:  path,
		pool:  db,
		write: db,
		opts:  Options{Logger: slog.New(slog.DiscardHandler)},
		log:   slog.New(slog.DiscardHandler),
		queue: sqlstore.NewQueue[job](0),
		done:  make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		for batch := range s.queue.Batches(1) {
			batch[0].Res <- ErrReadOnly
		}
	}()
	return s, nil
}

// EvidenceLeafHashes implements store.Store. A missing index in the range is
// an error: the log has a gap.
func (s *Store) EvidenceLeafHashes(ctx context.Context, from, to uint64) ([][]byte, error) {
	if to < from {
		return nil, fmt.Errorf("evidence leaf hashes: range [%d, %d) is reversed", from, to)
	}
	rows, err := s.query(ctx, `SELECT idx, leaf_hash FROM evidence WHERE idx >= ? AND idx < ? ORDER BY idx`, from, to)
	if err != nil {
		return nil, fmt.Errorf("evidence leaf hashes: %w", err)
	}
	defer rows.Close()
	return sqlstore.LeafHashes(rows, from, to, func(err error) error { return fmt.Errorf("evidence leaf hashes: %w", err) })
}

// EvidenceFrom implements store.Store.
func (s *Store) EvidenceFrom(ctx context.Context, from uint64, limit int) ([]*store.EvidenceRecord, error) {
	if limit <= 0 {
		limit = 1000
	}
	return s.scanEvidence(ctx, "evidence from", `SELECT `+sqlstore.RecordCols+` FROM evidence WHERE idx >= ? ORDER BY idx LIMIT ?`, from, limit)
}

func (s *Store) scanEvidence(ctx context.Context, what, q string, args ...any) ([]*store.EvidenceRecord, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	out, err := sqlstore.Collect(rows, sqlstore.ScanRecord)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// SessionEvidence implements store.Store.
func (s *Store) SessionEvidence(ctx context.Context, sessionID string) ([]*store.EvidenceRecord, error) {
	if sessionID == "" {
		return nil, errors.New("session evidence: a session id is required")
	}
	// The extra condition lets SQLite use the partial index on session_id.
	return s.scanEvidence(ctx, "session evidence", `SELECT `+sqlstore.RecordCols+` FROM evidence WHERE session_id = ? AND session_id != '' ORDER BY idx`, sessionID)
}

// AddCheckpoint implements store.Store. It writes outside the group-commit
// path: checkpoints are rare (about one a second) and the writer's batches
// are for the decision path.
func (s *Store) AddCheckpoint(ctx context.Context, cp *store.Checkpoint) error {
	res, err := s.pool.ExecContext(ctx, `INSERT INTO checkpoints (size, root_hash, note, created_at) VALUES (?, ?, ?, ?)`,
		cp.Size, cp.RootHash, cp.Note, cp.CreatedAt.UnixNano())
	if err != nil {
		return fmt.Errorf("add checkpoint: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("add checkpoint: %w", err)
	}
	cp.ID = id
	return nil
}

// LatestCheckpoint implements store.Store.
func (s *Store) LatestCheckpoint(ctx context.Context) (*store.Checkpoint, error) {
	cp, err := sqlstore.ScanCheckpoint(s.queryRow(ctx, `SELECT `+sqlstore.CheckpointCols+` FROM checkpoints ORDER BY id DESC LIMIT 1`))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("checkpoint: %w", store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("latest checkpoint: %w", err)
	}
	return cp, nil
}

// ListCheckpoints implements store.Store.
func (s *Store) ListCheckpoints(ctx context.Context, afterID int64, limit int) ([]*store.Checkpoint, error) {
	if limit <= 0 {
		limit = 1000
	}
	return list(ctx, s, "list checkpoints", `SELECT `+sqlstore.CheckpointCols+` FROM checkpoints WHERE id > ? ORDER BY id LIMIT ?`, sqlstore.ScanCheckpoint, afterID, limit)
}
