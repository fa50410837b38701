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

// GetSession implements store.Store. The row is held against the
// evidence log (store.CheckSession) before it is returned.
func (s *Store) GetSession(ctx context.Context, id string) (*store.Session, error) {
	sess, err := s.scanSession(ctx, s.queryRow(ctx, getSessionQuery(), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	return sess, err
}

// getSessionQuery reads one session row (?) with its binding.
func getSessionQuery() string {
	return `SELECT ` + sqlstore.SessionCols + `, ` + sqlstore.Bound("sessions") + ` FROM sessions WHERE id = ?`
}

func (s *Store) scanSession(ctx context.Context, r sqlstore.Scanner) (*store.Session, error) {
	b, err := sqlstore.ScanSession(r)
	if err != nil {
		return nil, err
	}
	return s.checkSession(ctx, b)
}

// sessionLogQuery reads what the log and the tables say about one session
// (?1) for store.CheckSession.
var sessionLogQuery = sqlstore.SessionLogQuery(dialect)

func (s *Store) checkSession(ctx context.Context, b sqlstore.BoundSession) (*store.Session, error) {
	id := b.Session.ID
	return sqlstore.CheckSessionRead(b,
		func() sqlstore.Scanner { return s.queryRow(ctx, sessionLogQuery, id) },
		func() (sqlstore.BoundSession, error) {
			return sqlstore.ScanSession(s.queryRow(ctx, getSessionQuery(), id))
		},
		wrap)
}

func wrap(what string, err error) error { return fmt.Errorf("%s: %w", what, err) }

// each runs a query on the pool and calls fn for each row.
func (s *Store) each(ctx context.Context, what, q string, fn func(sqlstore.Scanner) error) error {
	rows, err := s.pool.QueryContext(ctx, q)
	if err != nil {
		return wrap(what, err)
	}
	defer rows.Close()
	if err := sqlstore.Each(rows, fn); err != nil {
		return wrap(what, err)
	}
	return nil
}

// list runs a query through a prepared statement and scans each row.
func list[T any](ctx context.Context, s *Store, what, q string, scan func(sqlstore.Scanner) (T, error), args ...any) ([]T, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, wrap(what, err)
	}
	defer rows.Close()
	out, err := sqlstore.Collect(rows, scan)
	if err != nil {
		return nil, wrap(what, err)
	}
	return out, nil
}

// dialect is how SQLite writes what the listings share.
var dialect = sqlstore.Dialect{AgentID: "json_extract(agent, '$.id')", Order: "rowid", Gap: "gap = 1",
	LogOrder: "idx", GapRecord: "json_extract(CAST(body AS TEXT), '$.content.gap') = 1"}

// ListSessions implements store.Store.
func (s *Store) ListSessions(ctx context.Context, f store.SessionFilter) ([]*store.Session, error) {
	q, args := sqlstore.SessionsQuery(dialect, sqlstore.SessionCols+", "+sqlstore.Bound("sessions"), f)
	all, err := list(ctx, s, "list sessions", q, sqlstore.ScanSession, args...)
	if err != nil {
		return nil, err
	}
	// Checked after the rows are read: the pool may have one connection
	// (an in-memory store).
	return sqlstore.CheckSessions(all, func(b sqlstore.BoundSession) (*store.Session, error) { return s.checkSession(ctx, b) })
}

// GetMandate implements store.Store. Version 0 means the latest.
func (s *Store) GetMandate(ctx context.Context, sessionID string, version int) (*store.MandateVersion, error) {
	q := `SELECT ` + sqlstore.MandateCols + `, ` + sqlstore.Bound("mandates") + ` FROM mandates WHERE session_id = ?`
	args := []any{sessionID}
	if version > 0 {
		q += " AND version = ?"
		args = append(args, version)
	} else {
		q += " ORDER BY version DESC LIMIT 1"
	}
	mv, err := sqlstore.ScanMandate(s.queryRow(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("mandate of session %q version %d: %w", sessionID, version, store.ErrNotFound)
	}
	return mv, err
}

// ListMandates implements store.Store.
func (s *Store) ListMandates(ctx context.Context, sessionID string) ([]*store.MandateVersion, error) {
	return list(ctx, s, "list mandates", `SELECT `+sqlstore.MandateCols+`, `+sqlstore.Bound("mandates")+` FROM mandates WHERE session_id = ? ORDER BY version`, sqlstore.ScanMandate, sessionID)
}

// GetDecision implements store.Store.
func (s *Store) GetDecision(ctx context.Context, id string) (*store.Decision, error) {
	return s.decision(ctx, func() string { return fmt.Sprintf("decision %q", id) },
		`SELECT `+sqlstore.DecisionCols+`, `+sqlstore.Bound("decisions")+` FROM decisions WHERE id = ?`, id)
}

// decision reads the one decision q finds; none is store.ErrNotFound,
// named by missing.
func (s *Store) decision(ctx context.Context, missing func() string, q string, args ...any) (*store.Decision, error) {
	d, err := sqlstore.ScanDecision(s.queryRow(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", missing(), store.ErrNotFound)
	}
	return d, err
}

// ListDecisions implements store.Store. With a session it lists in sequence
// order; without, newest first.
func (s *Store) ListDecisions(ctx context.Context, f store.DecisionFilter) ([]*store.Decision, error) {
	q, args := sqlstore.DecisionsQuery(dialect, f)
	return list(ctx, s, "list decisions", q, sqlstore.ScanDecision, args...)
}

// ListObservations implements store.Store.
func (s *Store) ListObservations(ctx context.Context, decisionID string) ([]*store.Observation, error) {
	return list(ctx, s, "list observations", `SELECT `+sqlstore.ObservationCols+`, `+sqlstore.Bound("observations")+` FROM observations WHERE decision_id = ? ORDER BY rowid`, sqlstore.ScanObservation, decisionID)
}

// DecisionByCall implements store.Store.
func (s *Store) DecisionByCall(ctx context.Context, sessionID, callID string) (*store.Decision, error) {
	if callID == "" {
		return nil, fmt.Errorf("decision for an empty call id: %w", store.ErrNotFound)
	}
	return s.decision(ctx, func() string { return fmt.Sprintf("decision for call %q in session %q", callID, sessionID) },
		`SELECT `+sqlstore.DecisionCols+`, `+sqlstore.Bound("decisions")+` FROM decisions WHERE session_id = ? AND call_id = ? ORDER BY seq DESC LIMIT 1`, sessionID, callID)
}

// ListGaps implements store.Store.
func (s *Store) ListGaps(ctx context.Context, f store.GapFilter) ([]*store.Observation, error) {
	q, args := sqlstore.GapsQuery(dialect, f)
	return list(ctx, s, "list gaps", q, sqlstore.ScanObservation, args...)
}

// ListToolPins implements store.Store. Each pin is held against its
// evidence record (store.ToolPinBinding) before it is returned.
func (s *Store) ListToolPins(ctx context.Context, sessionID string) ([]*store.ToolPin, error) {
	return list(ctx, s, "list tool pins", `SELECT `+sqlstore.ToolPinCols+`, `+sqlstore.Bound("tool_pins")+` FROM tool_pins WHERE session_id = ? ORDER BY rowid`, sqlstore.ScanToolPin, sessionID)
}

// ListToolChanges implements store.Store. Each change is held against its
// evidence record (store.ToolChangeBinding) before it is returned.
func (s *Store) ListToolChanges(ctx context.Context, sessionID string) ([]*store.ToolChange, error) {
	return list(ctx, s, "list tool changes", `SELECT `+sqlstore.ToolChangeCols+`, `+sqlstore.Bound("tool_changes")+` FROM tool_changes WHERE session_id = ? ORDER BY rowid`, sqlstore.ScanToolChange, sessionID)
}

// CreateToken implements store.Store.
func (s *Store) CreateToken(ctx context.Context, t *store.Token) error {
	_, err := s.pool.ExecContext(ctx, `INSERT INTO tokens (id, hash, role, agent_id, name, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		t.ID, t.Hash, t.Role, t.AgentID, t.Name, t.CreatedAt.UnixNano())
	if err != nil {
		if isConstraint(err) {
			return fmt.Errorf("token %s: %w", t.ID, store.ErrConflict)
		}
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

// TokenByHash implements store.Store.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*store.Token, error) {
	t, err := sqlstore.ScanToken(s.queryRow(ctx, `SELECT `+sqlstore.TokenCols+` FROM tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	return t, err
}

// ListTokens implements store.Store.
func (s *Store) ListTokens(ctx context.Context) ([]*store.Token, error) {
	return list(ctx, s, "list tokens", `SELECT `+sqlstore.TokenCols+` FROM tokens ORDER BY created_at`, sqlstore.ScanToken)
}

// RevokeToken implements store.Store.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	res, err := s.pool.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, at.UnixNano(), id)
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("token %q: %w", id, store.ErrNotFound)
	}
	return nil
}
