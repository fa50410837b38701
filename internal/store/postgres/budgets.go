package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// Budgets of delegation trees (store/budget.go). A change's draws run as
// mandate_draw statements in its batch, after its guard: each takes its
// budget row's lock and raises MD004 (store.ErrBudget) when the budget no
// longer stands where the draw was decided, so a draw through one replica
// and a draw through another on the same budget are ordered by the lock,
// and the loser is decided again. Draws are queued in (session, dimension)
// order, so two changes drawing on the same rows take their locks in the
// same order.

const stDraw = `SELECT mandate_draw($1, $2, $3, $4, $5, $6)`

func queueDraws(b *pgx.Batch, c *store.Change) {
	if len(c.Draws) == 0 {
		return
	}
	leaves := store.DrawLeaves(c)
	order := make([]int, len(c.Draws))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := c.Draws[i], c.Draws[j]
		if n := strings.Compare(a.SessionID, b.SessionID); n != 0 {
			return n
		}
		return strings.Compare(a.Dim, b.Dim)
	})
	for _, i := range order {
		d := c.Draws[i]
		b.Queue(stDraw, d.SessionID, d.Dim, d.From, d.To, d.Cap, store.At(leaves, i))
	}
}

// latestDraw is the latest draw record on one budget. Records are ordered
// by id, their commit order: a draw on a budget is inserted after it took
// the budget row's lock, so after the draw it follows has committed.
const latestDraw = `SELECT type, session_id, body, leaf_hash FROM evidence
	WHERE session_id = $1 AND session_id <> '' AND type = 'draw' AND position($3::bytea in body) > 0 ORDER BY id DESC LIMIT 1`

func scanDraw(r sqlstore.Scanner) (*store.EvidenceRecord, error) {
	var rec store.EvidenceRecord
	err := r.Scan(&rec.Type, &rec.SessionID, &rec.Body, &rec.LeafHash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &rec, nil
}

// budgetQuery reads a budget row and the latest draw record on it in one
// statement, so both come from one snapshot: read apart, a draw committed
// between them would look like a row set back.
const budgetQuery = `SELECT b.used, b.leaf, e.type, e.session_id, e.body, e.leaf_hash
	FROM (SELECT 1) one
	LEFT JOIN budgets b ON b.session_id = $1 AND b.dim = $2
	LEFT JOIN LATERAL (` + latestDraw + `) e ON true`

// GetBudget implements store.Store.
func (s *Store) GetBudget(ctx context.Context, sessionID, dim string) (*store.Budget, error) {
	var (
		used             *float64
		leaf             []byte
		typ, sess        *string
		body, recordLeaf []byte
	)
	if err := s.pool.QueryRow(ctx, budgetQuery, sessionID, dim, store.DrawPattern(dim)).Scan(&used, &leaf, &typ, &sess, &body, &recordLeaf); err != nil {
		return nil, describe(fmt.Sprintf("budget %s of session %s", dim, sessionID), err)
	}
	b := &store.Budget{SessionID: sessionID, Dim: dim}
	row := b
	if used == nil {
		row = nil
	} else {
		b.Used = *used
	}
	var latest *store.EvidenceRecord
	if typ != nil {
		latest = &store.EvidenceRecord{Type: *typ, SessionID: *sess, Body: body, LeafHash: recordLeaf}
	}
	if err := store.CheckBudget(sessionID, dim, row, leaf, latest); err != nil {
		return nil, err
	}
	return b, nil
}

// verifyBudgets holds every budget row against the latest draw record on
// it, and reports draws whose budget has no row (VerifyRows).
func (s *Store) verifyBudgets(ctx context.Context, report func(problem string)) error {
	w := sqlstore.NewBudgetWalk()
	if err := s.each(ctx, "verify budgets", `SELECT session_id, dim, used, leaf FROM budgets`, w.Row); err != nil {
		return err
	}
	err := s.each(ctx, "verify budgets", `SELECT type, session_id, body, leaf_hash FROM evidence WHERE type = 'draw' ORDER BY id`, func(r sqlstore.Scanner) error {
		rec, err := scanDraw(r)
		if err != nil {
			return err
		}
		w.Draw(rec, "a draw record of session "+rec.SessionID, report)
		return nil
	})
	if err != nil {
		return err
	}
	w.Check(report)
	return nil
}
