package sqlstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// Scanner is one row: *sql.Row and *sql.Rows, pgx.Row and pgx.Rows.
type Scanner interface{ Scan(dest ...any) error }

// Rows is a result being read; the caller closes it.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Collect scans every row of rows.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Bound selects a row's leaf and the body of the evidence record with that
// leaf hash (NULL when the log has none), for store.Binding.Check. It is
// found whether or not the record has an index yet (PostgreSQL's
// integrator gives it one after it is durable).
func Bound(table string) string {
	return table + `.leaf, (SELECT e.body FROM evidence e WHERE e.leaf_hash = ` + table + `.leaf LIMIT 1)`
}

// The columns a record is read from, in the order its scan takes them;
// each is followed by Bound of its table.
const (
	SessionCols = `id, agent, tools, working_dir, home_dir, parent_id, status, mandate_version, state, created_by, created_at, updated_at, head, approval_timeout`
	MandateCols = `session_id, version, body, source, created_by, created_at`
	// DecisionCols are what a decision's row keeps beside its leaf: the
	// rest of the decision is read from its record (store.LoadDecision).
	DecisionCols    = `id, session_id, seq, effect, call_id, args`
	ObservationCols = `id, decision_id, session_id, output, origin, call_id, gap, gap_reason, tool, args, created_at`
	ToolPinCols     = `session_id, tool, hash, definition, created_at`
	ToolChangeCols  = `id, session_id, tool, pinned_hash, hash, definition, created_at`
	// TokenCols are a token's columns; tokens have no evidence.
	TokenCols = `id, hash, role, agent_id, name, created_at, revoked_at`
	// RecordCols are an evidence record's columns.
	RecordCols = `idx, type, session_id, origin, body, leaf_hash, created_at`
	// ApprovalCols are an approval row's columns and Bound; a store's
	// query adds the bodies of the later state records of its session
	// naming its id (ScanApproval).
	ApprovalCols = `approvals.id, approvals.session_id, approvals.decision_id, approvals.tool, approvals.args_hash, approvals.state, approvals.scope, approvals.deadline, approvals.rev, approvals.body, ` +
		`approvals.leaf, (SELECT e.body FROM evidence e WHERE e.leaf_hash = approvals.leaf LIMIT 1)`
)

func unixNano(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// decode unmarshals each non-empty JSON column into its destination.
func decode(cols ...column) error {
	for _, c := range cols {
		if len(c.b) == 0 {
			continue
		}
		if err := json.Unmarshal(c.b, c.dst); err != nil {
			return fmt.Errorf("decode %s: %w", c.name, err)
		}
	}
	return nil
}

type column struct {
	name string
	b    []byte
	dst  any
}

// BoundSession is a session row as read, with its binding, not yet held
// against the log (CheckSession).
type BoundSession struct {
	Session    *store.Session
	Leaf, Body []byte
}

// ScanSession reads a row of SessionCols and Bound("sessions").
func ScanSession(r Scanner) (BoundSession, error) {
	var (
		s                store.Session
		agent, tools, st []byte
		created, updated int64
		b                BoundSession
	)
	if err := r.Scan(&s.ID, &agent, &tools, &s.WorkingDir, &s.HomeDir, &s.ParentID, &s.Status, &s.MandateVersion, &st, &s.CreatedBy, &created, &updated, &s.Head, &s.ApprovalTimeout, &b.Leaf, &b.Body); err != nil {
		return b, err
	}
	if err := decode(column{"agent", agent, &s.Agent}, column{"tools", tools, &s.Tools}, column{"state", st, &s.State}); err != nil {
		return b, fmt.Errorf("session %s: %w", s.ID, err)
	}
	s.CreatedAt, s.UpdatedAt = unixNano(created), unixNano(updated)
	b.Session = &s
	return b, nil
}

// CheckSession holds b against what the log and the tables say about its
// session, read by a store's session log query into r: the latest status
// and mandate record bodies, the counts of the session's mandate,
// decision, observation and approval records and rows, its gap records
// and rows, and its tool pin and tool change records and rows
// (store.CheckSession). A failed read is returned as wrap words it.
func CheckSession(b BoundSession, r Scanner, wrap func(what string, err error) error) error {
	lg := store.SessionLog{Created: b.Body, Records: map[string]int{}}
	var m, d, o, a, tp, tc int
	var rows store.SessionRows
	if err := r.Scan(&lg.Status, &lg.Mandate, &m, &d, &o, &a,
		&rows.Mandates, &rows.Decisions, &rows.Observations, &rows.Approvals, &lg.Gaps, &rows.Gaps,
		&tp, &tc, &rows.ToolPins, &rows.ToolChanges); err != nil {
		return wrap("session "+b.Session.ID+": read its evidence", err)
	}
	lg.Records[store.RecordMandate], lg.Records[store.RecordDecision], lg.Records[store.RecordObservation], lg.Records[store.RecordApproval] = m, d, o, a
	lg.Records[store.RecordToolPin], lg.Records[store.RecordToolChange] = tp, tc
	return store.CheckSession(b.Session, b.Leaf, lg, rows)
}

// CheckSessionRead holds b against its log as CheckSession does, with the
// log read by readLog. The row and its log are read by two statements, so
// a commit between them (a status change, a new mandate version) shows
// the row older than its log; that is a torn read, not an edit. So when
// the check fails, the row is read again (reread): if it changed meanwhile,
// the new row is held against a new read of its log, at most three times.
// A row edited behind the log's back does not change between the reads,
// and its error stands.
func CheckSessionRead(b BoundSession, readLog func() Scanner, reread func() (BoundSession, error), wrap func(what string, err error) error) (*store.Session, error) {
	for try := 0; ; try++ {
		err := CheckSession(b, readLog(), wrap)
		if err == nil {
			return b.Session, nil
		}
		if !errors.Is(err, store.ErrTampered) || try == 2 {
			return nil, err
		}
		nb, rerr := reread()
		if rerr != nil || !rowMoved(b.Session, nb.Session) {
			return nil, err
		}
		b = nb
	}
}

// CheckSessions holds each listed session row against its log by check,
// once all of them are read: each check is a query of its own, which a
// store must not run while the listing still holds its connection.
func CheckSessions(all []BoundSession, check func(BoundSession) (*store.Session, error)) ([]*store.Session, error) {
	out := make([]*store.Session, 0, len(all))
	for _, b := range all {
		sess, err := check(b)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, sess)
	}
	return out, nil
}

// rowMoved reports whether a session row changed between two reads in
// what a commit changes with its log.
func rowMoved(a, b *store.Session) bool {
	return a.Status != b.Status || a.MandateVersion != b.MandateVersion || a.Head != b.Head || !a.UpdatedAt.Equal(b.UpdatedAt)
}

// ScanMandate reads a row of MandateCols and Bound("mandates") and holds it
// against its evidence record.
func ScanMandate(r Scanner) (*store.MandateVersion, error) {
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
	mv.CreatedAt = unixNano(created)
	if err := store.MandateBinding.Check(fmt.Sprintf("%s v%d", mv.SessionID, mv.Version), &mv, leaf, evidence); err != nil {
		return nil, err
	}
	return &mv, nil
}

// ScanDecision reads a row of DecisionCols and Bound("decisions"): the
// decision out of its evidence record, the row held against it
// (store.LoadDecision).
func ScanDecision(r Scanner) (*store.Decision, error) {
	var (
		row        store.DecisionRow
		leaf, body []byte
	)
	if err := r.Scan(&row.ID, &row.SessionID, &row.Seq, &row.Effect, &row.CallID, &row.Args, &leaf, &body); err != nil {
		return nil, err
	}
	return store.LoadDecision(row, leaf, body)
}

// ScanObservation reads a row of ObservationCols and Bound("observations")
// and holds it against its evidence record.
func ScanObservation(r Scanner) (*store.Observation, error) {
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
	o.CreatedAt = unixNano(created)
	if err := store.ObservationBinding.Check(o.ID, &o, leaf, body); err != nil {
		return nil, err
	}
	return &o, nil
}

// ScanToolPin reads a row of ToolPinCols and Bound("tool_pins") and holds
// it against its evidence record.
func ScanToolPin(r Scanner) (*store.ToolPin, error) {
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
	p.CreatedAt = unixNano(created)
	if err := store.ToolPinBinding.Check(p.SessionID+"/"+p.Tool, &p, leaf, body); err != nil {
		return nil, err
	}
	return &p, nil
}

// ScanToolChange reads a row of ToolChangeCols and Bound("tool_changes")
// and holds it against its evidence record.
func ScanToolChange(r Scanner) (*store.ToolChange, error) {
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
	c.CreatedAt = unixNano(created)
	if err := store.ToolChangeBinding.Check(c.ID, &c, leaf, body); err != nil {
		return nil, err
	}
	return &c, nil
}

// ScanToken reads a row of TokenCols.
func ScanToken(r Scanner) (*store.Token, error) {
	var (
		t       store.Token
		created int64
		revoked *int64
	)
	if err := r.Scan(&t.ID, &t.Hash, &t.Role, &t.AgentID, &t.Name, &created, &revoked); err != nil {
		return nil, err
	}
	t.CreatedAt = unixNano(created)
	if revoked != nil {
		at := unixNano(*revoked)
		t.RevokedAt = &at
	}
	return &t, nil
}

// ScanRecord reads a row of RecordCols.
func ScanRecord(r Scanner) (*store.EvidenceRecord, error) {
	var (
		rec     store.EvidenceRecord
		created int64
	)
	if err := r.Scan(&rec.Index, &rec.Type, &rec.SessionID, &rec.Origin, &rec.Body, &rec.LeafHash, &created); err != nil {
		return nil, err
	}
	rec.CreatedAt = unixNano(created)
	return &rec, nil
}

// ScanApproval reads a row of ApprovalCols followed by a JSON array (or
// NULL) of the bodies of the later state records of its session naming
// its id, and holds it against them (store.CheckApproval): a row bound to
// an earlier state of its approval than the log's last (an answer or a use
// rolled back) is refused.
func ScanApproval(r Scanner) (*store.Approval, error) {
	var (
		c                  store.ApprovalColumns
		deadline           int64
		body, leaf, record []byte
		later              []byte
	)
	if err := r.Scan(&c.ID, &c.SessionID, &c.DecisionID, &c.Tool, &c.ArgsHash, &c.State, &c.Scope, &deadline, &c.Rev, &body, &leaf, &record, &later); err != nil {
		return nil, err
	}
	c.Deadline = unixNano(deadline)
	var a store.Approval
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("decode approval: %w", err)
	}
	var laterBodies []json.RawMessage
	if len(later) > 0 {
		if err := json.Unmarshal(later, &laterBodies); err != nil {
			return nil, fmt.Errorf("approval %s: read its later records: %w", c.ID, err)
		}
	}
	if err := store.CheckApproval(&a, c, leaf, record, laterBodies); err != nil {
		return nil, err
	}
	return &a, nil
}

// Limit is a listing's row limit: n, or 100 when n is not in 1..1000.
func Limit(n int) int {
	if n <= 0 || n > 1000 {
		return 100
	}
	return n
}

// BaselineCols are a baseline's columns; baselines are folded from the
// evidence and have no binding of their own.
const BaselineCols = `agent, version, profile, revision, updated_at`

// ScanBaseline reads a row of BaselineCols. A missing row — the driver's
// noRows — is store.ErrNotFound.
func ScanBaseline(r Scanner, noRows error) (*store.Baseline, error) {
	var (
		b       store.Baseline
		updated int64
		profile []byte
	)
	if err := r.Scan(&b.Agent, &b.Version, &profile, &b.Revision, &updated); err != nil {
		if errors.Is(err, noRows) {
			return nil, store.ErrNotFound
		}
		return nil, err
	}
	b.Profile = profile
	b.UpdatedAt = unixNano(updated)
	return &b, nil
}

// CheckpointCols are a signed checkpoint's columns.
const CheckpointCols = `id, size, root_hash, note, created_at`

// ScanCheckpoint reads a row of CheckpointCols.
func ScanCheckpoint(r Scanner) (*store.Checkpoint, error) {
	var (
		cp      store.Checkpoint
		created int64
	)
	if err := r.Scan(&cp.ID, &cp.Size, &cp.RootHash, &cp.Note, &created); err != nil {
		return nil, err
	}
	cp.CreatedAt = unixNano(created)
	return &cp, nil
}

// LeafHashes reads rows of (idx, leaf_hash) in index order and returns the
// leaf hashes of [from, to). A missing index is an error: the log has a
// gap. wrap describes an error of the rows themselves (the store's
// wording).
func LeafHashes(rows Rows, from, to uint64, wrap func(error) error) ([][]byte, error) {
	out := make([][]byte, 0, min(to-from, 1<<16))
	next := from
	for rows.Next() {
		var (
			idx uint64
			h   []byte
		)
		if err := rows.Scan(&idx, &h); err != nil {
			return nil, wrap(err)
		}
		if idx != next {
			return nil, fmt.Errorf("evidence record %d: %w (the log has a gap)", next, store.ErrNotFound)
		}
		out = append(out, h)
		next++
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err)
	}
	if next != to {
		return nil, fmt.Errorf("evidence record %d: %w", next, store.ErrNotFound)
	}
	return out, nil
}

// Each calls fn for every row of rows, in order, until it fails.
func Each(rows Rows, fn func(Scanner) error) error {
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
