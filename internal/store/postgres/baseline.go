package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// baselineSchema is the migration that adds the baseline tables (see the
// SQLite backend's for what they hold).
const baselineSchema = `CREATE TABLE baselines (
		agent TEXT NOT NULL,
		version TEXT NOT NULL,
		profile BYTEA NOT NULL,
		revision BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL,
		PRIMARY KEY (agent, version)
	);
	CREATE TABLE baseline_cursors (
		session_id TEXT PRIMARY KEY,
		seq INTEGER NOT NULL
	);
	ALTER TABLE decisions ADD COLUMN signals BYTEA;`

var _ store.Baselines = (*Store)(nil)

// FoldBaseline implements store.Baselines. Replicas fold the same rows one
// at a time: the transaction takes a transaction-level advisory lock per
// session cursor and per row (in a fixed order, so two folds never wait on
// each other in a cycle) before reading them, so Apply always sees what
// the last committed fold wrote.
func (s *Store) FoldBaseline(ctx context.Context, f *store.BaselineFold) error {
	if s.readOnly {
		return ErrReadOnly
	}
	if f == nil || f.Apply == nil || len(f.Keys) == 0 {
		return errors.New("postgres: fold baseline: keys and apply are required")
	}
	locks := []string{}
	if f.SessionID != "" {
		locks = append(locks, "cursor|"+f.SessionID)
	}
	for _, k := range f.Keys {
		locks = append(locks, "baseline|"+k.Agent+"|"+k.Version)
	}
	slices.Sort(locks)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, l := range locks {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1 || current_schema(), 0))`, l); err != nil {
				return err
			}
		}
		cursor := 0
		if f.SessionID != "" {
			err := tx.QueryRow(ctx, `SELECT seq FROM baseline_cursors WHERE session_id = $1`, f.SessionID).Scan(&cursor)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		rows := make([]*store.Baseline, len(f.Keys))
		before := make([]bool, len(f.Keys))
		for i, k := range f.Keys {
			b, err := scanBaseline(tx.QueryRow(ctx, `SELECT `+sqlstore.BaselineCols+` FROM baselines WHERE agent = $1 AND version = $2`, k.Agent, k.Version))
			switch {
			case errors.Is(err, store.ErrNotFound):
				b = &store.Baseline{Agent: k.Agent, Version: k.Version}
			case err != nil:
				return err
			}
			rows[i], before[i] = b, b.Profile != nil
		}
		next, err := f.Apply(cursor, rows)
		if err != nil {
			return &applyError{err}
		}
		now := time.Now().UnixNano()
		for i, r := range rows {
			k := f.Keys[i]
			switch {
			case r.Profile == nil && before[i]:
				if _, err := tx.Exec(ctx, `DELETE FROM baselines WHERE agent = $1 AND version = $2`, k.Agent, k.Version); err != nil {
					return err
				}
			case r.Profile != nil:
				_, err := tx.Exec(ctx, `INSERT INTO baselines (agent, version, profile, revision, created_at, updated_at) VALUES ($1, $2, $3, 1, $4, $4)
					ON CONFLICT (agent, version) DO UPDATE SET profile = excluded.profile, revision = baselines.revision + 1, updated_at = excluded.updated_at`,
					k.Agent, k.Version, []byte(r.Profile), now)
				if err != nil {
					return err
				}
			}
		}
		if f.SessionID != "" && next != cursor {
			if next < cursor {
				return &applyError{fmt.Errorf("session %s: the cursor may only move forward (%d → %d)", f.SessionID, cursor, next)}
			}
			_, err := tx.Exec(ctx, `INSERT INTO baseline_cursors (session_id, seq) VALUES ($1, $2) ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq`, f.SessionID, next)
			if err != nil {
				return err
			}
		}
		return nil
	})
	var ae *applyError
	if errors.As(err, &ae) {
		return ae.err
	}
	return describe("fold baseline", err)
}

// applyError carries the caller's own error out of the transaction
// unchanged.
type applyError struct{ err error }

func (e *applyError) Error() string { return e.err.Error() }

// GetBaseline implements store.Baselines.
func (s *Store) GetBaseline(ctx context.Context, agent, version string) (*store.Baseline, error) {
	b, err := scanBaseline(s.pool.QueryRow(ctx, `SELECT `+sqlstore.BaselineCols+` FROM baselines WHERE agent = $1 AND version = $2`, agent, version))
	if errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return b, describe("get baseline", err)
}

// ListBaselines implements store.Baselines.
func (s *Store) ListBaselines(ctx context.Context, agent string) ([]*store.Baseline, error) {
	a := sqlstore.Where{Numbered: true}
	if agent != "" {
		a.Add("agent = ?", agent)
	}
	return collect(ctx, s, "list baselines", `SELECT `+sqlstore.BaselineCols+` FROM baselines`+a.Clause()+` ORDER BY agent, created_at, version`, a.Args, scanBaseline)
}

func scanBaseline(r sqlstore.Scanner) (*store.Baseline, error) {
	return sqlstore.ScanBaseline(r, pgx.ErrNoRows)
}

// BaselineCursor implements store.Baselines.
func (s *Store) BaselineCursor(ctx context.Context, sessionID string) (int, error) {
	var seq int
	err := s.pool.QueryRow(ctx, `SELECT seq FROM baseline_cursors WHERE session_id = $1`, sessionID).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return seq, describe("baseline cursor", err)
}
