package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// Budgets of delegation trees (store/budget.go): a change's draws are
// applied in its transaction, after its guard, each only if its budget
// still stands at the draw's From; a budget is read back with the latest
// draw record the log holds for it, and held against it.

// The writer's draw statements (prepared with its others).
const (
	stInsertBudget = `INSERT INTO budgets (session_id, dim, used, leaf) VALUES (?,?,?,?) ON CONFLICT (session_id, dim) DO NOTHING`
	stDrawBudget   = `UPDATE budgets SET used = ?, leaf = ? WHERE session_id = ? AND dim = ? AND used = ?`
)

// applyDraws writes c's draws, or fails the change with store.ErrBudget.
// A budget's first draw inserts its row; no row is ever at 0 (a draw
// always adds), so a row another change inserted first fails the insert.
func applyDraws(t *txn, c *store.Change) error {
	leaves := store.DrawLeaves(c)
	for i, d := range c.Draws {
		leaf := store.At(leaves, i)
		var res sql.Result
		var err error
		if d.From == 0 {
			res, err = t.exec(stInsertBudget, d.SessionID, d.Dim, d.To, leaf)
		} else {
			res, err = t.exec(stDrawBudget, d.To, leaf, d.SessionID, d.Dim, d.From)
		}
		if err != nil {
			return wrapWrite(fmt.Sprintf("budget %s of session %s", d.Dim, d.SessionID), err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			var have float64
			if err := t.tx.QueryRowContext(t.ctx, `SELECT used FROM budgets WHERE session_id = ? AND dim = ?`, d.SessionID, d.Dim).Scan(&have); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("budget %s of session %s: %w", d.Dim, d.SessionID, err)
			}
			return store.BudgetMoved(d, have)
		}
	}
	return nil
}

// budgetQuery reads a budget row and the latest draw record on it in one
// statement, so both come from one snapshot: read apart, a draw committed
// between them would look like a row set back.
const budgetQuery = `SELECT b.used, b.leaf, e.type, e.body, e.leaf_hash
	FROM (SELECT 1) one
	LEFT JOIN budgets b ON b.session_id = ?1 AND b.dim = ?2
	LEFT JOIN (SELECT type, body, leaf_hash FROM evidence
		WHERE session_id = ?1 AND session_id != '' AND type = 'draw' AND instr(body, ?3) > 0 ORDER BY idx DESC LIMIT 1) e ON 1`

// GetBudget implements store.Store.
func (s *Store) GetBudget(ctx context.Context, sessionID, dim string) (*store.Budget, error) {
	var (
		used             sql.NullFloat64
		leaf             []byte
		typ              sql.NullString
		body, recordLeaf []byte
	)
	if err := s.queryRow(ctx, budgetQuery, sessionID, dim, store.DrawPattern(dim)).Scan(&used, &leaf, &typ, &body, &recordLeaf); err != nil {
		return nil, fmt.Errorf("budget %s of session %s: %w", dim, sessionID, err)
	}
	b := &store.Budget{SessionID: sessionID, Dim: dim}
	row := b
	if !used.Valid {
		row = nil
	} else {
		b.Used = used.Float64
	}
	var latest *store.EvidenceRecord
	if typ.Valid {
		latest = &store.EvidenceRecord{Type: typ.String, SessionID: sessionID, Body: body, LeafHash: recordLeaf}
	}
	if err := store.CheckBudget(sessionID, dim, row, leaf, latest); err != nil {
		return nil, err
	}
	return b, nil
}

// scanDrawRecord is sqlstore.ScanRecord where no row is no draw (nil).
func scanDrawRecord(r sqlstore.Scanner) (*store.EvidenceRecord, error) {
	rec, err := sqlstore.ScanRecord(r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return rec, err
}

// verifyBudgets holds every budget row against the latest draw record on
// it, and reports draws whose budget has no row (VerifyRows).
func (s *Store) verifyBudgets(ctx context.Context, report func(problem string)) error {
	w := sqlstore.NewBudgetWalk()
	if err := s.each(ctx, "verify budgets", `SELECT session_id, dim, used, leaf FROM budgets`, w.Row); err != nil {
		return err
	}
	err := s.each(ctx, "verify budgets", `SELECT `+sqlstore.RecordCols+` FROM evidence WHERE type = 'draw' ORDER BY idx`, func(r sqlstore.Scanner) error {
		rec, err := scanDrawRecord(r)
		if err != nil {
			return err
		}
		w.Draw(rec, fmt.Sprintf("draw record %d", rec.Index), report)
		return nil
	})
	if err != nil {
		return err
	}
	w.Check(report)
	return nil
}
