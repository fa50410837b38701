package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// sessionLogQuery reads what the log and the tables say about one session
// ($1) for store.CheckSession. Records are ordered by id, the order they
// were committed in (the integrator's index follows it for one session's
// records).
var sessionLogQuery = sqlstore.SessionLogQuery(dialect)

// checkSession holds a session row against the evidence log
// (store.CheckSession).
func (s *Store) checkSession(ctx context.Context, b sqlstore.BoundSession) (*store.Session, error) {
	id := b.Session.ID
	return sqlstore.CheckSessionRead(b,
		func() sqlstore.Scanner { return s.pool.QueryRow(ctx, sessionLogQuery, id) },
		func() (sqlstore.BoundSession, error) {
			return sqlstore.ScanSession(s.pool.QueryRow(ctx, getSessionQuery(), id))
		},
		describe)
}

// getSessionQuery reads one session row ($1) with its binding.
func getSessionQuery() string {
	return `SELECT ` + sqlstore.SessionCols + `, ` + sqlstore.Bound("sessions") + ` FROM sessions WHERE id = $1`
}

// GetSession implements store.Store. The row is held against the evidence
// log (store.CheckSession) before it is returned.
func (s *Store) GetSession(ctx context.Context, id string) (*store.Session, error) {
	b, err := sqlstore.ScanSession(s.pool.QueryRow(ctx, getSessionQuery(), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, describe("get session "+id, err)
	}
	return s.checkSession(ctx, b)
}

// dialect is how PostgreSQL writes what the listings share.
var dialect = sqlstore.Dialect{Numbered: true, AgentID: "agent_id", Order: "ord", Gap: "gap",
	LogOrder: "id", GapRecord: "convert_from(body, 'UTF8')::jsonb #>> '{content,gap}' = 'true'"}

// ListSessions implements store.Store.
func (s *Store) ListSessions(ctx context.Context, f store.SessionFilter) ([]*store.Session, error) {
	q, args := sqlstore.SessionsQuery(dialect, sqlstore.SessionCols+", "+sqlstore.Bound("sessions"), f)
	all, err := collect(ctx, s, "list sessions", q, args, sqlstore.ScanSession)
	if err != nil {
		return nil, err
	}
	// Checked after the rows are read: holding the listing's connection
	// while taking another for each row could exhaust the pool under load.
	return sqlstore.CheckSessions(all, func(b sqlstore.BoundSession) (*store.Session, error) { return s.checkSession(ctx, b) })
}

// each runs a query and calls fn for each row.
func (s *Store) each(ctx context.Context, what, q string, fn func(sqlstore.Scanner) error) error {
	rows, err := s.pool.Query(ctx, q)
	if err != nil {
		return describe(what, err)
	}
	defer rows.Close()
	return describe(what, sqlstore.Each(rows, fn))
}

// collect runs a query and scans each row.
func collect[T any](ctx context.Context, s *Store, what, q string, vals []any, scan func(sqlstore.Scanner) (T, error)) ([]T, error) {
	rows, err := s.pool.Query(ctx, q, vals...)
	if err != nil {
		return nil, describe(what, err)
	}
	defer rows.Close()
	out, err := sqlstore.Collect(rows, scan)
	if err != nil {
		return nil, describe(what, err)
	}
	return out, nil
}

// GetMandate implements store.Store. Version 0 means the latest.
func (s *Store) GetMandate(ctx context.Context, sessionID string, version int) (*store.MandateVersion, error) {
	q := `SELECT ` + sqlstore.MandateCols + `, ` + sqlstore.Bound("mandates") + ` FROM mandates WHERE session_id = $1`
	vals := []any{sessionID}
	if version > 0 {
		q += " AND version = $2"
		vals = append(vals, version)
	} else {
		q += " ORDER BY version DESC LIMIT 1"
	}
	mv, err := sqlstore.ScanMandate(s.pool.QueryRow(ctx, q, vals...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("mandate of session %q version %d: %w", sessionID, version, store.ErrNotFound)
	}
	if err != nil {
		return nil, describe("get mandate", err)
	}
	return mv, nil
}

// ListMandates implements store.Store.
func (s *Store) ListMandates(ctx context.Context, sessionID string) ([]*store.MandateVersion, error) {
	return collect(ctx, s, "list mandates", `SELECT `+sqlstore.MandateCols+`, `+sqlstore.Bound("mandates")+` FROM mandates WHERE session_id = $1 ORDER BY version`, []any{sessionID}, sqlstore.ScanMandate)
}

// GetDecision implements store.Store.
func (s *Store) GetDecision(ctx context.Context, id string) (*store.Decision, error) {
	return s.decision(ctx, "get decision", func() string { return fmt.Sprintf("decision %q", id) },
		`SELECT `+sqlstore.DecisionCols+`, `+sqlstore.Bound("decisions")+` FROM decisions WHERE id = $1`, id)
}

// decision reads the one decision q finds; none is store.ErrNotFound,
// named by missing, any other failure is described as what.
func (s *Store) decision(ctx context.Context, what string, missing func() string, q string, args ...any) (*store.Decision, error) {
	d, err := sqlstore.ScanDecision(s.pool.QueryRow(ctx, q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", missing(), store.ErrNotFound)
	}
	if err != nil {
		return nil, describe(what, err)
	}
	return d, nil
}

// ListDecisions implements store.Store. With a session it lists in sequence
// order; without, newest first.
func (s *Store) ListDecisions(ctx context.Context, f store.DecisionFilter) ([]*store.Decision, error) {
	q, args := sqlstore.DecisionsQuery(dialect, f)
	return collect(ctx, s, "list decisions", q, args, sqlstore.ScanDecision)
}

// ListObservations implements store.Store.
func (s *Store) ListObservations(ctx context.Context, decisionID string) ([]*store.Observation, error) {
	return collect(ctx, s, "list observations", `SELECT `+sqlstore.ObservationCols+`, `+sqlstore.Bound("observations")+` FROM observations WHERE decision_id = $1 ORDER BY ord`, []any{decisionID}, sqlstore.ScanObservation)
}

// DecisionByCall implements store.Store.
func (s *Store) DecisionByCall(ctx context.Context, sessionID, callID string) (*store.Decision, error) {
	if callID == "" {
		return nil, fmt.Errorf("decision for an empty call id: %w", store.ErrNotFound)
	}
	return s.decision(ctx, "decision by call", func() string { return fmt.Sprintf("decision for call %q in session %q", callID, sessionID) },
		`SELECT `+sqlstore.DecisionCols+`, `+sqlstore.Bound("decisions")+` FROM decisions WHERE session_id = $1 AND call_id = $2 ORDER BY seq DESC LIMIT 1`, sessionID, callID)
}

// ListGaps implements store.Store.
func (s *Store) ListGaps(ctx context.Context, f store.GapFilter) ([]*store.Observation, error) {
	q, args := sqlstore.GapsQuery(dialect, f)
	return collect(ctx, s, "list gaps", q, args, sqlstore.ScanObservation)
}

// ListToolPins implements store.Store. Each pin is held against its
// evidence record (store.ToolPinBinding) before it is returned.
func (s *Store) ListToolPins(ctx context.Context, sessionID string) ([]*store.ToolPin, error) {
	return collect(ctx, s, "list tool pins", `SELECT `+sqlstore.ToolPinCols+`, `+sqlstore.Bound("tool_pins")+` FROM tool_pins WHERE session_id = $1 ORDER BY ord`, []any{sessionID}, sqlstore.ScanToolPin)
}

// ListToolChanges implements store.Store. Each change is held against its
// evidence record (store.ToolChangeBinding) before it is returned.
func (s *Store) ListToolChanges(ctx context.Context, sessionID string) ([]*store.ToolChange, error) {
	return collect(ctx, s, "list tool changes", `SELECT `+sqlstore.ToolChangeCols+`, `+sqlstore.Bound("tool_changes")+` FROM tool_changes WHERE session_id = $1 ORDER BY ord`, []any{sessionID}, sqlstore.ScanToolChange)
}

// CreateToken implements store.Store.
func (s *Store) CreateToken(ctx context.Context, t *store.Token) error {
	if s.readOnly {
		return ErrReadOnly
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO tokens (id, hash, role, agent_id, name, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.ID, t.Hash, t.Role, t.AgentID, t.Name, t.CreatedAt.UnixNano())
	if err != nil {
		return describe("create token "+t.ID, err)
	}
	return nil
}

// TokenByHash implements store.Store.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*store.Token, error) {
	t, err := sqlstore.ScanToken(s.pool.QueryRow(ctx, `SELECT `+sqlstore.TokenCols+` FROM tokens WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	if err != nil {
		return nil, describe("look up token", err)
	}
	return t, nil
}

// ListTokens implements store.Store.
func (s *Store) ListTokens(ctx context.Context) ([]*store.Token, error) {
	return collect(ctx, s, "list tokens", `SELECT `+sqlstore.TokenCols+` FROM tokens ORDER BY created_at`, nil, sqlstore.ScanToken)
}

// RevokeToken implements store.Store.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	if s.readOnly {
		return ErrReadOnly
	}
	tag, err := s.pool.Exec(ctx, `UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, at.UnixNano(), id)
	if err != nil {
		return describe("revoke token", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("token %q: %w", id, store.ErrNotFound)
	}
	return nil
}
