package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// Approval rows keep their whole content as JSON in body; the other
// columns are copies for finding rows. An update names the revision it
// replaces, so of two answers racing for one approval exactly one commits.

var _ store.Approvals = (*Store)(nil)

const (
	stInsertApproval = `INSERT INTO approvals (id, session_id, decision_id, tool, args_hash, state, scope, deadline, rev, created_at, body, leaf) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`
	stUpdateApproval = `UPDATE approvals SET state = ?, scope = ?, deadline = ?, rev = ?, body = ?, leaf = ? WHERE id = ? AND rev = ?`
)

func (e *encoded) encodeApprovals() error {
	for _, a := range e.c.Approvals {
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encode approval %s: %w", a.ID, err)
		}
		e.approvals = append(e.approvals, b)
	}
	for _, ac := range e.c.ApprovalChanges {
		if ac.Approval == nil {
			return errors.New("encode approval change: no approval")
		}
		b, err := json.Marshal(ac.Approval)
		if err != nil {
			return fmt.Errorf("encode approval %s: %w", ac.Approval.ID, err)
		}
		e.approvalChanges = append(e.approvalChanges, b)
	}
	return nil
}

func applyApprovals(t *txn, e *encoded) error {
	for i, a := range e.c.Approvals {
		_, err := t.exec(stInsertApproval, a.ID, a.SessionID, a.DecisionID, a.Tool, a.ArgsHash, a.State, a.Scope,
			a.Deadline.UnixNano(), a.Rev, a.CreatedAt.UnixNano(), e.approvals[i], store.At(e.leaves.Approvals, i))
		if err != nil {
			return wrapWrite("approval "+a.ID, err)
		}
	}
	for i, ac := range e.c.ApprovalChanges {
		a := ac.Approval
		res, err := t.exec(stUpdateApproval, a.State, a.Scope, a.Deadline.UnixNano(), a.Rev, e.approvalChanges[i], store.At(e.leaves.ApprovalChanges, i), a.ID, a.Rev-1)
		if err != nil {
			return wrapWrite("approval "+a.ID, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("approval %s: %w: it changed since it was read (someone else answered it, or it expired)", a.ID, store.ErrConflict)
		}
	}
	return nil
}

// approvalCols are an approval row's columns, its binding, and the bodies
// of any later state records of its session naming its id: a row bound to
// an earlier state of its approval than the log's last (an answer or a use
// rolled back) is refused.
const approvalCols = `approvals.id, approvals.session_id, approvals.decision_id, approvals.tool, approvals.args_hash, approvals.state, approvals.scope, approvals.deadline, approvals.rev, approvals.body, ` + `approvals.leaf, (SELECT e.body FROM evidence e WHERE e.leaf_hash = approvals.leaf LIMIT 1),
	(SELECT json_group_array(json(CAST(l.body AS TEXT))) FROM evidence l WHERE l.session_id = approvals.session_id AND l.session_id != '' AND l.type = 'approval_state'
		AND l.idx > (SELECT MAX(e.idx) FROM evidence e WHERE e.leaf_hash = approvals.leaf) AND instr(CAST(l.body AS TEXT), approvals.id) > 0)`

func scanApproval(r scanner) (*store.Approval, error) {
	var (
		c                  store.ApprovalColumns
		deadline           int64
		body, leaf, record []byte
		later              sql.NullString
	)
	if err := r.Scan(&c.ID, &c.SessionID, &c.DecisionID, &c.Tool, &c.ArgsHash, &c.State, &c.Scope, &deadline, &c.Rev, &body, &leaf, &record, &later); err != nil {
		return nil, err
	}
	c.Deadline = time.Unix(0, deadline).UTC()
	var a store.Approval
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("decode approval: %w", err)
	}
	var laterBodies []json.RawMessage
	if later.Valid {
		if err := json.Unmarshal([]byte(later.String), &laterBodies); err != nil {
			return nil, fmt.Errorf("approval %s: read its later records: %w", c.ID, err)
		}
	}
	if err := store.CheckApproval(&a, c, leaf, record, laterBodies); err != nil {
		return nil, err
	}
	return &a, nil
}

func (s *Store) approvals(ctx context.Context, q string, args ...any) ([]*store.Approval, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// GetApproval implements store.Approvals.
func (s *Store) GetApproval(ctx context.Context, id string) (*store.Approval, error) {
	a, err := scanApproval(s.queryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("approval %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("approval %q: %w", id, err)
	}
	return a, nil
}

// ListApprovals implements store.Approvals. Ids are time-ordered (UUIDv7),
// so id order is creation order.
func (s *Store) ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]*store.Approval, error) {
	q := `SELECT ` + approvalCols + ` FROM approvals WHERE 1 = 1`
	var args []any
	if f.SessionID != "" {
		q += ` AND session_id = ?`
		args = append(args, f.SessionID)
	}
	if f.State != "" {
		q += ` AND state = ?`
		args = append(args, f.State)
	}
	if f.Before != "" {
		q += ` AND id < ?`
		args = append(args, f.Before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit(f.Limit))
	out, err := s.approvals(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return out, nil
}

// CallApprovals implements store.Approvals.
func (s *Store) CallApprovals(ctx context.Context, sessionID, tool, argsHash string) ([]*store.Approval, error) {
	out, err := s.approvals(ctx, `SELECT `+approvalCols+` FROM approvals WHERE session_id = ? AND tool = ? AND args_hash = ? ORDER BY id DESC LIMIT 64`, sessionID, tool, argsHash)
	if err != nil {
		return nil, fmt.Errorf("approvals for a call: %w", err)
	}
	return out, nil
}

// SessionGrants implements store.Approvals.
func (s *Store) SessionGrants(ctx context.Context, sessionID string) ([]*store.Approval, error) {
	out, err := s.approvals(ctx, `SELECT `+approvalCols+` FROM approvals WHERE session_id = ? AND state IN ('approved', 'denied') AND scope = 'session' ORDER BY id LIMIT 1000`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("session approvals: %w", err)
	}
	return out, nil
}

// DueApprovals implements store.Approvals.
func (s *Store) DueApprovals(ctx context.Context, t time.Time, n int) ([]*store.Approval, error) {
	out, err := s.approvals(ctx, `SELECT `+approvalCols+` FROM approvals WHERE state = 'pending' AND deadline <= ? ORDER BY deadline LIMIT ?`, t.UnixNano(), limit(n))
	if err != nil {
		return nil, fmt.Errorf("due approvals: %w", err)
	}
	return out, nil
}

// NextDeadline implements store.Approvals.
func (s *Store) NextDeadline(ctx context.Context) (time.Time, error) {
	var ns sql.NullInt64
	if err := s.queryRow(ctx, `SELECT MIN(deadline) FROM approvals WHERE state = 'pending'`).Scan(&ns); err != nil {
		return time.Time{}, fmt.Errorf("next approval deadline: %w", err)
	}
	if !ns.Valid {
		return time.Time{}, fmt.Errorf("no pending approval: %w", store.ErrNotFound)
	}
	return time.Unix(0, ns.Int64).UTC(), nil
}
