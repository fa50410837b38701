package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// VerifyRows holds every operational row against the evidence log, as
// loading each would (store.Binding), and every record of a bound type
// against its row: it reports each row edited, inserted or deleted behind
// the log's back, naming table, row and column. It is what 'mandate
// evidence verify --data' adds to the log's own verification.
func (s *Store) VerifyRows(ctx context.Context, report func(problem string)) error {
	leaves := map[string]map[string]bool{} // table -> row leaves
	each := func(table, q string, scan func(*sql.Rows) (leaf []byte, err error)) error {
		leaves[table] = map[string]bool{}
		rows, err := s.pool.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("verify %s: %w", table, err)
		}
		defer rows.Close()
		for rows.Next() {
			leaf, err := scan(rows)
			if tampered(err) {
				report(err.Error())
			} else if err != nil {
				return fmt.Errorf("verify %s: %w", table, err)
			}
			leaves[table][string(leaf)] = true
		}
		return rows.Err()
	}
	session := func(r sqlstore.Scanner) error {
		_, err := s.scanSession(ctx, r)
		return err
	}
	decision := func(r sqlstore.Scanner) error {
		_, err := sqlstore.ScanDecision(r)
		return err
	}
	for _, tb := range sqlstore.BoundTables(func(string) string { return "rowid" }, approvalCols, session, decision) {
		if err := each(tb.Name, tb.Query, func(r *sql.Rows) ([]byte, error) {
			var lr leafScanner
			err := tb.Scan(lr.wrap(r))
			return lr.leaf, err
		}); err != nil {
			return err
		}
	}
	if err := s.verifyBudgets(ctx, report); err != nil {
		return err
	}
	// Records whose row is gone.
	tables := sqlstore.RecordTables()
	rows, err := s.pool.QueryContext(ctx, `SELECT idx, type, session_id, leaf_hash FROM evidence WHERE `+sqlstore.BoundRecords+` ORDER BY idx`)
	if err != nil {
		return fmt.Errorf("verify rows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			idx       uint64
			typ, sess string
			leaf      []byte
		)
		if err := rows.Scan(&idx, &typ, &sess, &leaf); err != nil {
			return fmt.Errorf("verify rows: %w", err)
		}
		if t := tables[typ]; !leaves[t][string(leaf)] {
			report(fmt.Sprintf("%s: evidence record %d (%s of session %s) has no row: the row was deleted or rebound: %v", t, idx, typ, sess, store.ErrTampered))
		}
	}
	return rows.Err()
}

func tampered(err error) bool {
	return errors.Is(err, store.ErrTampered)
}

// leafScanner passes a row's columns to a scan function and keeps the one
// extra column after them, the row's leaf. The count comes from the query
// itself, so a column added to a table's list cannot silently shift the
// leaf into the scan function's last field.
type leafScanner struct {
	r    *sql.Rows
	leaf []byte
}

func (l *leafScanner) wrap(r *sql.Rows) sqlstore.Scanner { l.r = r; return l }

func (l *leafScanner) Scan(dst ...any) error {
	cols, err := l.r.Columns()
	if err != nil {
		return fmt.Errorf("verify rows: %w", err)
	}
	if len(dst) != len(cols)-1 {
		return fmt.Errorf("verify rows: %d columns scanned, the query has %d before the leaf", len(dst), len(cols)-1)
	}
	return l.r.Scan(append(dst, &l.leaf)...)
}
