package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// baselineSchema is the migration that adds the baseline tables: one row
// per agent and version holding its profile, and per session the sequence
// number of the last decision folded into it.
const baselineSchema = `CREATE TABLE baselines (
		agent TEXT NOT NULL,
		version TEXT NOT NULL,
		profile BLOB NOT NULL,
		revision INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		PRIMARY KEY (agent, version)
	);
	CREATE TABLE baseline_cursors (
		session_id TEXT PRIMARY KEY,
		seq INTEGER NOT NULL
	);
	ALTER TABLE decisions ADD COLUMN signals BLOB;`

var _ store.Baselines = (*Store)(nil)

// FoldBaseline implements store.Baselines. A fold is a job of the
// group-commit writer: it runs inside the writer's next batch, under a
// savepoint of its own (its failure undoes only it), and is acknowledged
// when that batch is durable. Folding beside the writer, in a transaction of
// its own, took the database's write lock and fsynced the WAL once per
// session per fold round, stalling the decisions' commits behind it.
func (s *Store) FoldBaseline(ctx context.Context, f *store.BaselineFold) error {
	if f == nil || f.Apply == nil || len(f.Keys) == 0 {
		return errors.New("sqlite: fold baseline: keys and apply are required")
	}
	res := make(chan error, 1)
	s.enqueue(job{Job: sqlstore.Job{Res: res}, fold: f})
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		// The writer still runs the fold; Apply may be called after this
		// returns, which store.BaselineFold allows.
		return fmt.Errorf("sqlite: fold baseline: %w", ctx.Err())
	}
}

// foldIn runs f in the writer's transaction t.
func foldIn(t *txn, f *store.BaselineFold) error {
	ctx, tx := t.ctx, t.tx
	cursor := 0
	if f.SessionID != "" {
		err := tx.QueryRowContext(ctx, `SELECT seq FROM baseline_cursors WHERE session_id = ?`, f.SessionID).Scan(&cursor)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: fold baseline: read cursor: %w", err)
		}
	}
	rows := make([]*store.Baseline, len(f.Keys))
	for i, k := range f.Keys {
		b, err := scanBaseline(tx.QueryRowContext(ctx, `SELECT `+sqlstore.BaselineCols+` FROM baselines WHERE agent = ? AND version = ?`, k.Agent, k.Version))
		switch {
		case errors.Is(err, store.ErrNotFound):
			b = &store.Baseline{Agent: k.Agent, Version: k.Version}
		case err != nil:
			return fmt.Errorf("sqlite: fold baseline: %w", err)
		}
		rows[i] = b
	}
	before := make([]bool, len(rows))
	for i, r := range rows {
		before[i] = r.Profile != nil
	}
	next, err := f.Apply(cursor, rows)
	if err != nil {
		return err
	}
	now := time.Now().UnixNano()
	for i, r := range rows {
		k := f.Keys[i]
		switch {
		case r.Profile == nil:
			if before[i] {
				if _, err := t.exec(stDeleteBaseline, k.Agent, k.Version); err != nil {
					return fmt.Errorf("sqlite: fold baseline: delete: %w", err)
				}
			}
		default:
			if _, err := t.exec(stUpsertBaseline, k.Agent, k.Version, []byte(r.Profile), now, now); err != nil {
				return fmt.Errorf("sqlite: fold baseline: write %s/%s: %w", k.Agent, k.Version, err)
			}
		}
	}
	if f.SessionID != "" && next != cursor {
		if next < cursor {
			return fmt.Errorf("sqlite: fold baseline: session %s: the cursor may only move forward (%d → %d)", f.SessionID, cursor, next)
		}
		if _, err := t.exec(stUpsertCursor, f.SessionID, next); err != nil {
			return fmt.Errorf("sqlite: fold baseline: write cursor: %w", err)
		}
	}
	return nil
}

// The statements a fold writes, prepared with the writer's.
const (
	stDeleteBaseline = `DELETE FROM baselines WHERE agent = ? AND version = ?`
	stUpsertBaseline = `INSERT INTO baselines (agent, version, profile, revision, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)
				ON CONFLICT (agent, version) DO UPDATE SET profile = excluded.profile, revision = revision + 1, updated_at = excluded.updated_at`
	stUpsertCursor = `INSERT INTO baseline_cursors (session_id, seq) VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq`
)

// GetBaseline implements store.Baselines.
func (s *Store) GetBaseline(ctx context.Context, agent, version string) (*store.Baseline, error) {
	b, err := scanBaseline(s.queryRow(ctx, `SELECT `+sqlstore.BaselineCols+` FROM baselines WHERE agent = ? AND version = ?`, agent, version))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("sqlite: get baseline: %w", err)
	}
	return b, err
}

// ListBaselines implements store.Baselines.
func (s *Store) ListBaselines(ctx context.Context, agent string) ([]*store.Baseline, error) {
	q, args := `SELECT `+sqlstore.BaselineCols+` FROM baselines ORDER BY agent, created_at, version`, []any(nil)
	if agent != "" {
		q, args = `SELECT `+sqlstore.BaselineCols+` FROM baselines WHERE agent = ? ORDER BY created_at, version`, []any{agent}
	}
	return list(ctx, s, "sqlite: list baselines", q, scanBaseline, args...)
}

func scanBaseline(r sqlstore.Scanner) (*store.Baseline, error) {
	return sqlstore.ScanBaseline(r, sql.ErrNoRows)
}

// BaselineCursor implements store.Baselines.
func (s *Store) BaselineCursor(ctx context.Context, sessionID string) (int, error) {
	var seq int
	err := s.queryRow(ctx, `SELECT seq FROM baseline_cursors WHERE session_id = ?`, sessionID).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: baseline cursor: %w", err)
	}
	return seq, nil
}
