package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// VerifyRows holds every operational row against the evidence log, as
// loading each would (store.Binding), and every record of a bound type
// against its row: it reports each row edited, inserted or deleted behind
// the log's back, naming table, row and column. It is what 'mandate
// evidence verify --store' adds to the log's own verification.
func (s *Store) VerifyRows(ctx context.Context, report func(problem string)) error {
	leaves := map[string]map[string]bool{} // table -> row leaves
	each := func(table, q string, scan func(sqlstore.Scanner) (leaf []byte, err error)) error {
		leaves[table] = map[string]bool{}
		rows, err := s.pool.Query(ctx, q)
		if err != nil {
			return describe("verify "+table, err)
		}
		defer rows.Close()
		for rows.Next() {
			leaf, err := scan(rows)
			if errors.Is(err, store.ErrTampered) {
				report(err.Error())
			} else if err != nil {
				return describe("verify "+table, err)
			}
			leaves[table][string(leaf)] = true
		}
		return describe("verify "+table, rows.Err())
	}
	// Sessions are checked after their rows are read (a check is a query
	// of its own), before the next table.
	var sessions []sqlstore.BoundSession
	session := func(r sqlstore.Scanner) error {
		b, err := sqlstore.ScanSession(r)
		if err == nil {
			sessions = append(sessions, b)
		}
		return err
	}
	decision := func(r sqlstore.Scanner) error {
		_, err := sqlstore.ScanDecision(r)
		return err
	}
	order := func(table string) string {
		switch table {
		case "mandates":
			return "session_id, version"
		case "approvals":
			return "id"
		}
		return "ord"
	}
	for _, tb := range sqlstore.BoundTables(order, approvalCols, session, decision) {
		if err := each(tb.Name, tb.Query, func(r sqlstore.Scanner) ([]byte, error) {
			var lr leafScanner
			err := tb.Scan(lr.wrap(r))
			return lr.leaf, err
		}); err != nil {
			return err
		}
		for _, b := range sessions {
			if _, err := s.checkSession(ctx, b); errors.Is(err, store.ErrTampered) {
				report(err.Error())
			} else if err != nil {
				return err
			}
		}
		sessions = nil
	}
	if err := s.verifyBudgets(ctx, report); err != nil {
		return err
	}
	// Records whose row is gone.
	tables := sqlstore.RecordTables()
	rows, err := s.pool.Query(ctx, `SELECT COALESCE(idx, -1), type, session_id, leaf_hash FROM evidence WHERE `+sqlstore.BoundRecords+` ORDER BY id`)
	if err != nil {
		return describe("verify rows", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			idx       int64
			typ, sess string
			leaf      []byte
		)
		if err := rows.Scan(&idx, &typ, &sess, &leaf); err != nil {
			return describe("verify rows", err)
		}
		if t := tables[typ]; !leaves[t][string(leaf)] {
			which := fmt.Sprintf("evidence record %d", idx)
			if idx < 0 {
				which = "an evidence record not yet integrated"
			}
			report(fmt.Sprintf("%s: %s (%s of session %s) has no row: the row was deleted or rebound: %v", t, which, typ, sess, store.ErrTampered))
		}
	}
	return describe("verify rows", rows.Err())
}

// leafScanner passes a row's columns to a scan function and keeps the one
// extra column after them, the row's leaf. The count comes from the query
// itself, so a column added to a table's list cannot silently shift the
// leaf into the scan function's last field.
type leafScanner struct {
	r    pgx.Rows
	leaf []byte
}

func (l *leafScanner) wrap(r sqlstore.Scanner) pgx.Row { l.r = r.(pgx.Rows); return l }

func (l *leafScanner) Scan(dst ...any) error {
	if n := len(l.r.FieldDescriptions()); len(dst) != n-1 {
		return fmt.Errorf("verify rows: %d columns scanned, the query has %d before the leaf", len(dst), n-1)
	}
	return l.r.Scan(append(dst, &l.leaf)...)
}
