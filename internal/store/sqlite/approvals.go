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

// Approval rows keep their whole content as JSON in body; the other
// columns are copies for finding rows. An update names the revision it
// replaces, so of two answers racing for one approval exactly one commits.

var _ store.Approvals = (*Store)(nil)

const (
	stInsertApproval = `INSERT INTO approvals (id, session_id, decision_id, tool, args_hash, state, scope, deadline, rev, created_at, body, leaf) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`
	stUpdateApproval = `UPDATE approvals SET state = ?, scope = ?, deadline = ?, rev = ?, body = ?, leaf = ? WHERE id = ? AND rev = ?`
)

func applyApprovals(t *txn, e *sqlstore.Encoded) error {
	for i, a := range e.C.Approvals {
		_, err := t.exec(stInsertApproval, a.ID, a.SessionID, a.DecisionID, a.Tool, a.ArgsHash, a.State, a.Scope,
			a.Deadline.UnixNano(), a.Rev, a.CreatedAt.UnixNano(), e.Approvals[i], store.At(e.Leaves.Approvals, i))
		if err != nil {
			return wrapWrite("approval "+a.ID, err)
		}
	}
	for i, ac := range e.C.ApprovalChanges {
		a := ac.Approval
		res, err := t.exec(stUpdateApproval, a.State, a.Scope, a.Deadline.UnixNano(), a.Rev, e.ApprovalChanges[i], store.At(e.Leaves.ApprovalChanges, i), a.ID, a.Rev-1)
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
const approvalCols = sqlstore.ApprovalCols + `,
	(SELECT json_group_array(json(CAST(l.body AS TEXT))) FROM evidence l WHERE l.session_id = approvals.session_id AND l.session_id != '' AND l.type = 'approval_state'
		AND l.idx > (SELECT MAX(e.idx) FROM evidence e WHERE e.leaf_hash = approvals.leaf) AND instr(CAST(l.body AS TEXT), approvals.id) > 0)`

// GetApproval implements store.Approvals.
func (s *Store) GetApproval(ctx context.Context, id string) (*store.Approval, error) {
	a, err := sqlstore.ScanApproval(s.queryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
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
	q, args := sqlstore.ApprovalsQuery(dialect, approvalCols, f)
	return list(ctx, s, "list approvals", q, sqlstore.ScanApproval, args...)
}

// CallApprovals implements store.Approvals.
func (s *Store) CallApprovals(ctx context.Context, sessionID, tool, argsHash string) ([]*store.Approval, error) {
	return list(ctx, s, "approvals for a call", `SELECT `+approvalCols+` FROM approvals WHERE session_id = ? AND tool = ? AND args_hash = ? ORDER BY id DESC LIMIT 64`,
		sqlstore.ScanApproval, sessionID, tool, argsHash)
}

// SessionGrants implements store.Approvals.
func (s *Store) SessionGrants(ctx context.Context, sessionID string) ([]*store.Approval, error) {
	return list(ctx, s, "session approvals", `SELECT `+approvalCols+` FROM approvals WHERE session_id = ? AND state IN ('approved', 'denied') AND scope = 'session' ORDER BY id LIMIT 1000`,
		sqlstore.ScanApproval, sessionID)
}

// DueApprovals implements store.Approvals.
func (s *Store) DueApprovals(ctx context.Context, t time.Time, n int) ([]*store.Approval, error) {
	return list(ctx, s, "due approvals", `SELECT `+approvalCols+` FROM approvals WHERE state = 'pending' AND deadline <= ? ORDER BY deadline LIMIT ?`,
		sqlstore.ScanApproval, t.UnixNano(), sqlstore.Limit(n))
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
