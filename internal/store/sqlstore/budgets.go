package sqlstore

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/store"
)

// BudgetWalk is the budgets' part of a store's VerifyRows: every budget
// row held against the latest draw record on it, and every draw whose
// budget has no row. A store feeds it the rows (Row), then the draw
// records in commit order (Draw), then calls Check.
type BudgetWalk struct {
	rows   map[budgetKey]*budgetRow
	latest map[budgetKey]*store.EvidenceRecord
}

type budgetKey struct{ session, dim string }

type budgetRow struct {
	b    store.Budget
	leaf []byte
}

// NewBudgetWalk starts a walk.
func NewBudgetWalk() *BudgetWalk {
	return &BudgetWalk{rows: map[budgetKey]*budgetRow{}, latest: map[budgetKey]*store.EvidenceRecord{}}
}

// Row reads a budget row: session_id, dim, used, leaf.
func (w *BudgetWalk) Row(r Scanner) error {
	row := &budgetRow{}
	if err := r.Scan(&row.b.SessionID, &row.b.Dim, &row.b.Used, &row.leaf); err != nil {
		return err
	}
	w.rows[budgetKey{row.b.SessionID, row.b.Dim}] = row
	return nil
}

// Draw takes the next draw record; one that does not decode is reported
// under name.
func (w *BudgetWalk) Draw(rec *store.EvidenceRecord, name string, report func(problem string)) {
	var env struct {
		Content store.Draw `json:"content"`
	}
	if err := json.Unmarshal(rec.Body, &env); err != nil {
		report(fmt.Sprintf("budgets: %s does not decode: %v: %v", name, err, store.ErrTampered))
		return
	}
	w.latest[budgetKey{env.Content.SessionID, env.Content.Dim}] = rec
}

// Check reports each budget whose row and latest draw record disagree
// (store.CheckBudget), in session and dimension order.
func (w *BudgetWalk) Check(report func(problem string)) {
	keys := make([]budgetKey, 0, len(w.rows)+len(w.latest))
	for k := range w.rows {
		keys = append(keys, k)
	}
	for k := range w.latest {
		if _, ok := w.rows[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b budgetKey) int {
		if n := strings.Compare(a.session, b.session); n != 0 {
			return n
		}
		return strings.Compare(a.dim, b.dim)
	})
	for _, k := range keys {
		var b *store.Budget
		var leaf []byte
		if r := w.rows[k]; r != nil {
			b, leaf = &r.b, r.leaf
		}
		if err := store.CheckBudget(k.session, k.dim, b, leaf, w.latest[k]); err != nil {
			report(err.Error())
		}
	}
}
