package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mandate-dev/mandate/internal/store"
)

const sessionCols = `id, agent, tools, working_dir, home_dir, parent_id, status, mandate_version, state, created_by, created_at, updated_at, head, approval_timeout`

// bound selects a row's leaf and the body of the evidence record with that
// leaf hash (NULL when the log has none), for store.Binding.Check. A record
// is durable before the integrator gives it an index, so it is found
// whether or not it has one.
func bound(table string) string {
	return table + `.leaf, (SELECT e.body FROM evidence e WHERE e.leaf_hash = ` + table + `.leaf LIMIT 1)`
}

// boundSession is a session row as read, with its binding, not yet held
// against the log.
type boundSession struct {
	sess       *store.Session
	leaf, body []byte
}

func scanSessionRow(r pgx.Row) (boundSession, error) {
	var (
		s                store.Session
		agent, tools, st []byte
		created, updated int64
		b                boundSession
	)
	if err := r.Scan(&s.ID, &agent, &tools, &s.WorkingDir, &s.HomeDir, &s.ParentID, &s.Status, &s.MandateVersion, &st, &s.CreatedBy, &created, &updated, &s.Head, &s.ApprovalTimeout, &b.leaf, &b.body); err != nil {
		return b, err
	}
	if err := unmarshalAll(map[string]any{"agent": &s.Agent, "tools": &s.Tools, "state": &s.State}, map[string][]byte{"agent": agent, "tools": tools, "state": st}); err != nil {
		return b, fmt.Errorf("session %s: %w", s.ID, err)
	}
	s.CreatedAt = time.Unix(0, created).UTC()
	s.UpdatedAt = time.Unix(0, updated).UTC()
	b.sess = &s
	return b, nil
}

// sessionLogQuery reads what the log and the tables say about one session
// ($1) for store.CheckSession, in one statement on the session's indexes.
// Records are ordered by id, the order they were committed in (the
// integrator's index follows it for one session's records).
const sessionLogQuery = `SELECT
	(SELECT body FROM evidence WHERE session_id = $1 AND session_id <> '' AND type = 'session_status' ORDER BY id DESC LIMIT 1),
	(SELECT body FROM evidence WHERE session_id = $1 AND session_id <> '' AND type = 'mandate' ORDER BY id DESC LIMIT 1),
	(SELECT COUNT(*) FROM evidence WHERE session_id = $1 AND session_id <> '' AND type = 'mandate'),
	(SELECT COUNT(*) FROM evidence WHERE session_id = $1 AND session_id <> '' AND type = 'decision'),
	(SELECT COUNT(*) FROM evidence WHERE session_id = $1 AND session_id <> '' AND type = 'observation'),
	(SELECT COUNT(*) FROM evidence WHERE session_id = $1 AND session_id <> '' AND type = 'approval'),
	(SELECT COUNT(*) FROM mandates WHERE session_id = $1),
	(SELECT COUNT(*) FROM decisions WHERE session_id = $1),
	(SELECT COUNT(*) FROM observations WHERE session_id = $1),
	(SELECT COUNT(*) FROM approvals WHERE session_id = $1),
	(SELECT COUNT(*) FROM evidence WHERE session_id = $1 AND session_id <> '' AND type = 'observation' AND convert_from(body, 'UTF8')::jsonb #>> '{content,gap}' = 'true'),
	(SELECT COUNT(*) FROM observations WHERE session_id = $1 AND gap),
	(SELECT COUNT(*) FROM evidence WHERE session_id = $1 AND session_id <> '' AND type = 'tool_pin'),
	(SELECT COUNT(*) FROM evidence WHERE session_id = $1 AND session_id <> '' AND type = 'tool_change'),
	(SELECT COUNT(*) FROM tool_pins WHERE session_id = $1),
	(SELECT COUNT(*) FROM tool_changes WHERE session_id = $1)`

// checkSession holds a session row against the evidence log
// (store.CheckSession).
func (s *Store) checkSession(ctx context.Context, b boundSession) (*store.Session, error) {
	lg := store.SessionLog{Created: b.body, Records: map[string]int{}}
	var m, d, o, a, tp, tc int
	var rows store.SessionRows
	if err := s.pool.QueryRow(ctx, sessionLogQuery, b.sess.ID).Scan(&lg.Status, &lg.Mandate, &m, &d, &o, &a,
		&rows.Mandates, &rows.Decisions, &rows.Observations, &rows.Approvals, &lg.Gaps, &rows.Gaps,
		&tp, &tc, &rows.ToolPins, &rows.ToolChanges); err != nil {
		return nil, describe("session "+b.sess.ID+": read its evidence", err)
	}
	lg.Records[store.RecordMandate], lg.Records[store.RecordDecision], lg.Records[store.RecordObservation], lg.Records[store.RecordApproval] = m, d, o, a
	lg.Records[store.RecordToolPin], lg.Records[store.RecordToolChange] = tp, tc
	if err := store.CheckSession(b.sess, b.leaf, lg, rows); err != nil {
		return nil, err
	}
	return b.sess, nil
}

func unmarshalAll(dst map[string]any, src map[string][]byte) error {
	for k, b := range src {
		if len(b) == 0 {
			continue
		}
		if err := json.Unmarshal(b, dst[k]); err != nil {
			return fmt.Errorf("decode %s: %w", k, err)
		}
	}
	return nil
}

// GetSession implements store.Store. The row is held against the evidence
// log (store.CheckSession) before it is returned.
func (s *Store) GetSession(ctx context.Context, id string) (*store.Session, error) {
	b, err := scanSessionRow(s.pool.QueryRow(ctx, `SELECT `+sessionCols+`, `+bound("sessions")+` FROM sessions WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, describe("get session "+id, err)
	}
	return s.checkSession(ctx, b)
}

// args builds a query's WHERE clause and its numbered parameters.
type args struct {
	where []string
	vals  []any
}

func (a *args) add(cond string, v ...any) {
	for _, x := range v {
		a.vals = append(a.vals, x)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(a.vals)), 1)
	}
	a.where = append(a.where, cond)
}

func (a *args) next(v any) string {
	a.vals = append(a.vals, v)
	return "$" + strconv.Itoa(len(a.vals))
}

func (a *args) clause() string {
	if len(a.where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(a.where, " AND ")
}

func limit(n int) int {
	if n <= 0 || n > 1000 {
		return 100
	}
	return n
}

// ListSessions implements store.Store.
func (s *Store) ListSessions(ctx context.Context, f store.SessionFilter) ([]*store.Session, error) {
	var a args
	if f.AgentID != "" {
		a.add("agent_id = ?", f.AgentID)
	}
	if f.Status != "" {
		a.add("status = ?", f.Status)
	}
	if f.ParentID != "" {
		a.add("parent_id = ?", f.ParentID)
	}
	if f.Before != "" {
		a.add("ord < (SELECT ord FROM sessions WHERE id = ?)", f.Before)
	}
	q := `SELECT ` + sessionCols + `, ` + bound("sessions") + ` FROM sessions` + a.clause() + ` ORDER BY ord DESC LIMIT ` + a.next(limit(f.Limit))
	all, err := collect(ctx, s, "list sessions", q, a.vals, scanSessionRow)
	if err != nil {
		return nil, err
	}
	// Checked after the rows are read: each check is a query of its own,
	// and holding the listing's connection while taking another for each
	// row could exhaust the pool under load.
	out := make([]*store.Session, 0, len(all))
	for _, b := range all {
		sess, err := s.checkSession(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, sess)
	}
	return out, nil
}

// collect runs a query and scans each row.
func collect[T any](ctx context.Context, s *Store, what, q string, vals []any, scan func(pgx.Row) (T, error)) ([]T, error) {
	rows, err := s.pool.Query(ctx, q, vals...)
	if err != nil {
		return nil, describe(what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, describe(what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, describe(what, err)
	}
	return out, nil
}

const mandateCols = `session_id, version, body, source, created_by, created_at`

func scanMandate(r pgx.Row) (*store.MandateVersion, error) {
	var (
		mv             store.MandateVersion
		body           []byte
		created        int64
		leaf, evidence []byte
	)
	if err := r.Scan(&mv.SessionID, &mv.Version, &body, &mv.Source, &mv.CreatedBy, &created, &leaf, &evidence); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, &mv.Mandate); err != nil {
		return nil, fmt.Errorf("mandate %s v%d: decode: %w", mv.SessionID, mv.Version, err)
	}
	mv.CreatedAt = time.Unix(0, created).UTC()
	if err := store.MandateBinding.Check(fmt.Sprintf("%s v%d", mv.SessionID, mv.Version), &mv, leaf, evidence); err != nil {
		return nil, err
	}
	return &mv, nil
}

// GetMandate implements store.Store. Version 0 means the latest.
func (s *Store) GetMandate(ctx context.Context, sessionID string, version int) (*store.MandateVersion, error) {
	q := `SELECT ` + mandateCols + `, ` + bound("mandates") + ` FROM mandates WHERE session_id = $1`
	vals := []any{sessionID}
	if version > 0 {
		q += " AND version = $2"
		vals = append(vals, version)
	} else {
		q += " ORDER BY version DESC LIMIT 1"
	}
	mv, err := scanMandate(s.pool.QueryRow(ctx, q, vals...))
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
	return collect(ctx, s, "list mandates", `SELECT `+mandateCols+`, `+bound("mandates")+` FROM mandates WHERE session_id = $1 ORDER BY version`, []any{sessionID}, scanMandate)
}

const decisionCols = `id, session_id, seq, surface, tool, args, action, mandate_version, policy_hash, effect, rules, reasons, latency_us, created_at, call_id, signals, approval_id, judge, provenance`

// scanDecision reads a decision row and holds it against its evidence
// record, skipping rows checked's cache has seen unchanged.
func (s *Store) scanDecision(r pgx.Row) (*store.Decision, error) {
	var (
		d                    store.Decision
		args, act, rul, reas []byte
		judge                []byte
		created              int64
		sig, prov            []byte
		leaf, body           []byte
	)
	if err := r.Scan(&d.ID, &d.SessionID, &d.Seq, &d.Surface, &d.Tool, &args, &act, &d.MandateVersion, &d.PolicyHash, &d.Effect, &rul, &reas, &d.LatencyMicros, &created, &d.CallID, &sig, &d.ApprovalID, &judge, &prov, &leaf, &body); err != nil {
		return nil, err
	}
	if len(prov) > 0 {
		if err := json.Unmarshal(prov, &d.Provenance); err != nil {
			return nil, fmt.Errorf("decision %s: decode provenance: %w", d.ID, err)
		}
	}
	if len(sig) > 0 {
		if err := json.Unmarshal(sig, &d.Signals); err != nil {
			return nil, fmt.Errorf("decision %s: decode signals: %w", d.ID, err)
		}
	}
	d.Args = json.RawMessage(args)
	if err := unmarshalAll(map[string]any{"action": &d.Action, "rules": &d.Rules, "reasons": &d.Reasons, "judge": &d.Judge}, map[string][]byte{"action": act, "rules": rul, "reasons": reas, "judge": judge}); err != nil {
		return nil, fmt.Errorf("decision %s: %w", d.ID, err)
	}
	d.CreatedAt = time.Unix(0, created).UTC()
	if err := s.checked.Check(store.DecisionBinding, d.ID, &d, leaf, body,
		d.ID, d.SessionID, &d.Seq, d.Surface, d.Tool, args, act, &d.MandateVersion, d.PolicyHash, d.Effect, rul, reas, &d.LatencyMicros, &created, d.CallID, d.ApprovalID, judge, sig, prov); err != nil {
		return nil, err
	}
	return &d, nil
}

// GetDecision implements store.Store.
func (s *Store) GetDecision(ctx context.Context, id string) (*store.Decision, error) {
	d, err := s.scanDecision(s.pool.QueryRow(ctx, `SELECT `+decisionCols+`, `+bound("decisions")+` FROM decisions WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("decision %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, describe("get decision", err)
	}
	return d, nil
}

// ListDecisions implements store.Store. With a session it lists in sequence
// order; without, newest first.
func (s *Store) ListDecisions(ctx context.Context, f store.DecisionFilter) ([]*store.Decision, error) {
	var a args
	order := " ORDER BY ord DESC"
	if f.SessionID != "" {
		a.add("session_id = ?", f.SessionID)
		a.add("seq > ?", f.AfterSeq)
		order = " ORDER BY seq"
	}
	if f.Effect != "" {
		a.add("effect = ?", f.Effect)
	}
	q := `SELECT ` + decisionCols + `, ` + bound("decisions") + ` FROM decisions` + a.clause() + order + ` LIMIT ` + a.next(limit(f.Limit))
	return collect(ctx, s, "list decisions", q, a.vals, s.scanDecision)
}

const observationCols = `id, decision_id, session_id, output, origin, call_id, gap, gap_reason, tool, args, created_at`

func scanObservation(r pgx.Row) (*store.Observation, error) {
	var (
		o            store.Observation
		output, args []byte
		created      int64
		leaf, body   []byte
	)
	if err := r.Scan(&o.ID, &o.DecisionID, &o.SessionID, &output, &o.Origin, &o.CallID, &o.Gap, &o.GapReason, &o.Tool, &args, &created, &leaf, &body); err != nil {
		return nil, err
	}
	o.Output = json.RawMessage(output)
	if len(args) > 0 {
		o.Args = json.RawMessage(args)
	}
	o.CreatedAt = time.Unix(0, created).UTC()
	if err := store.ObservationBinding.Check(o.ID, &o, leaf, body); err != nil {
		return nil, err
	}
	return &o, nil
}

// ListObservations implements store.Store.
func (s *Store) ListObservations(ctx context.Context, decisionID string) ([]*store.Observation, error) {
	return collect(ctx, s, "list observations", `SELECT `+observationCols+`, `+bound("observations")+` FROM observations WHERE decision_id = $1 ORDER BY ord`, []any{decisionID}, scanObservation)
}

// DecisionByCall implements store.Store.
func (s *Store) DecisionByCall(ctx context.Context, sessionID, callID string) (*store.Decision, error) {
	if callID == "" {
		return nil, fmt.Errorf("decision for an empty call id: %w", store.ErrNotFound)
	}
	d, err := s.scanDecision(s.pool.QueryRow(ctx, `SELECT `+decisionCols+`, `+bound("decisions")+` FROM decisions WHERE session_id = $1 AND call_id = $2 ORDER BY seq DESC LIMIT 1`, sessionID, callID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("decision for call %q in session %q: %w", callID, sessionID, store.ErrNotFound)
	}
	if err != nil {
		return nil, describe("decision by call", err)
	}
	return d, nil
}

// ListGaps implements store.Store.
func (s *Store) ListGaps(ctx context.Context, f store.GapFilter) ([]*store.Observation, error) {
	var a args
	a.add("gap")
	if f.SessionID != "" {
		a.add("session_id = ?", f.SessionID)
	}
	q := `SELECT ` + observationCols + `, ` + bound("observations") + ` FROM observations` + a.clause() + ` ORDER BY ord DESC LIMIT ` + a.next(limit(f.Limit))
	return collect(ctx, s, "list gaps", q, a.vals, scanObservation)
}

const (
	toolPinCols    = `session_id, tool, hash, definition, created_at`
	toolChangeCols = `id, session_id, tool, pinned_hash, hash, definition, created_at`
)

// ListToolPins implements store.Store. Each pin is held against its
// evidence record (store.ToolPinBinding) before it is returned.
func (s *Store) ListToolPins(ctx context.Context, sessionID string) ([]*store.ToolPin, error) {
	return collect(ctx, s, "list tool pins", `SELECT `+toolPinCols+`, `+bound("tool_pins")+` FROM tool_pins WHERE session_id = $1 ORDER BY ord`, []any{sessionID}, scanToolPin)
}

func scanToolPin(r pgx.Row) (*store.ToolPin, error) {
	var (
		p          store.ToolPin
		def        []byte
		created    int64
		leaf, body []byte
	)
	if err := r.Scan(&p.SessionID, &p.Tool, &p.Hash, &def, &created, &leaf, &body); err != nil {
		return nil, err
	}
	p.Definition = json.RawMessage(def)
	p.CreatedAt = time.Unix(0, created).UTC()
	if err := store.ToolPinBinding.Check(p.SessionID+"/"+p.Tool, &p, leaf, body); err != nil {
		return nil, err
	}
	return &p, nil
}

// ListToolChanges implements store.Store. Each change is held against its
// evidence record (store.ToolChangeBinding) before it is returned.
func (s *Store) ListToolChanges(ctx context.Context, sessionID string) ([]*store.ToolChange, error) {
	return collect(ctx, s, "list tool changes", `SELECT `+toolChangeCols+`, `+bound("tool_changes")+` FROM tool_changes WHERE session_id = $1 ORDER BY ord`, []any{sessionID}, scanToolChange)
}

func scanToolChange(r pgx.Row) (*store.ToolChange, error) {
	var (
		c          store.ToolChange
		def        []byte
		created    int64
		leaf, body []byte
	)
	if err := r.Scan(&c.ID, &c.SessionID, &c.Tool, &c.PinnedHash, &c.Hash, &def, &created, &leaf, &body); err != nil {
		return nil, err
	}
	c.Definition = json.RawMessage(def)
	c.CreatedAt = time.Unix(0, created).UTC()
	if err := store.ToolChangeBinding.Check(c.ID, &c, leaf, body); err != nil {
		return nil, err
	}
	return &c, nil
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

const tokenCols = `id, hash, role, agent_id, name, created_at, revoked_at`

func scanToken(r pgx.Row) (*store.Token, error) {
	var (
		t       store.Token
		created int64
		revoked *int64
	)
	if err := r.Scan(&t.ID, &t.Hash, &t.Role, &t.AgentID, &t.Name, &created, &revoked); err != nil {
		return nil, err
	}
	t.CreatedAt = time.Unix(0, created).UTC()
	if revoked != nil {
		at := time.Unix(0, *revoked).UTC()
		t.RevokedAt = &at
	}
	return &t, nil
}

// TokenByHash implements store.Store.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*store.Token, error) {
	t, err := scanToken(s.pool.QueryRow(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = $1`, hash))
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
	return collect(ctx, s, "list tokens", `SELECT `+tokenCols+` FROM tokens ORDER BY created_at`, nil, scanToken)
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
