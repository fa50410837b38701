package postgres

import (
	"context"
	"encoding/json"
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
	type key struct{ session, dim string }
	type row struct {
		b    store.Budget
		leaf []byte
	}
	rows := map[key]*row{}
	q, err := s.pool.Query(ctx, `SELECT session_id, dim, used, leaf FROM budgets`)
	if err != nil {
		return describe("verify budgets", err)
	}
	for q.Next() {
		r := &row{}
		if err := q.Scan(&r.b.SessionID, &r.b.Dim, &r.b.Used, &r.leaf); err != nil {
			q.Close()
			return describe("verify budgets", err)
		}
		rows[key{r.b.SessionID, r.b.Dim}] = r
	}
	q.Close()
	if err := q.Err(); err != nil {
		return describe("verify budgets", err)
	}
	latest := map[key]*store.EvidenceRecord{}
	q, err = s.pool.Query(ctx, `SELECT type, session_id, body, leaf_hash FROM evidence WHERE type = 'draw' ORDER BY id`)
	if err != nil {
		return describe("verify budgets", err)
	}
	for q.Next() {
		rec, err := scanDraw(q)
		if err != nil {
			q.Close()
			return describe("verify budgets", err)
		}
		var env struct {
			Content store.Draw `json:"content"`
		}
		if err := json.Unmarshal(rec.Body, &env); err != nil {
			report(fmt.Sprintf("budgets: a draw record of session %s does not decode: %v: %v", rec.SessionID, err, store.ErrTampered))
			continue
		}
		latest[key{env.Content.SessionID, env.Content.Dim}] = rec
	}
	q.Close()
	if err := q.Err(); err != nil {
		return describe("verify budgets", err)
	}
	keys := make([]key, 0, len(rows)+len(latest))
	for k := range rows {
		keys = append(keys, k)
	}
	for k := range latest {
		if _, ok := rows[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if n := strings.Compare(a.session, b.session); n != 0 {
			return n
		}
		return strings.Compare(a.dim, b.dim)
	})
	for _, k := range keys {
		var b *store.Budget
		var leaf []byte
		if r := rows[k]; r != nil {
			b, leaf = &r.b, r.leaf
		}
		if err := store.CheckBudget(k.session, k.dim, b, leaf, latest[k]); err != nil {
			report(err.Error())
		}
	}
	return nil
}
