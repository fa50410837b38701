// Package storecopy moves an embedded SQLite store into a shared PostgreSQL
// one with its history intact: every table row for row, in the order the
// embedded store wrote them, the evidence log with the indices it had and
// every signed checkpoint — so the copied log verifies against the old
// checkpoints and the history stays provable. The copy is one PostgreSQL
// transaction: it lands whole or not at all.
package storecopy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the embedded store's driver

	"github.com/mandate-dev/mandate/internal/store/postgres"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

// Report says what was copied.
type Report struct {
	// Rows is the number of rows copied per table.
	Rows   map[string]int64
	Tables []string
	// Evidence is the log's size; Checkpoints how many signed
	// checkpoints came along.
	Evidence    int64
	Checkpoints int64
}

// tables are copied in this order (parents before children). A table the
// embedded store has that is not listed, or that the shared store lacks,
// stops the copy: nothing may be left behind silently.
var tables = []string{"sessions", "mandates", "decisions", "approvals", "observations", "tokens", "tool_pins", "tool_changes", "evidence", "checkpoints", "baselines", "baseline_cursors", "budgets"}

// derived are the shared store's columns filled from others after the copy.
var derived = map[string]string{
	"sessions": `UPDATE sessions SET agent_id = COALESCE(convert_from(agent, 'UTF8')::json->>'id', '')`,
	// Checkpoint ids came along; new ones continue after them.
	"checkpoints": `SELECT setval(pg_get_serial_sequence('checkpoints', 'id'), COALESCE(max(id), 0) + 1, false) FROM checkpoints`,
}

// Option changes how Copy runs.
type Option func(*options)

type options struct {
	progress func(rows int64)
}

// WithProgress has Copy call f with the number of rows copied since its
// last call (every 1,024 rows and at the end of each table), so a long
// copy can show how far it has got.
func WithProgress(f func(rows int64)) Option {
	return func(o *options) { o.progress = f }
}

// progressEvery is how many rows pass between two progress calls.
const progressEvery = 1024

// Copy copies the SQLite database at path into the (migrated, empty) shared
// store at dsn.
func Copy(ctx context.Context, path, dsn string, opts ...Option) (*Report, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("copy: the embedded store: %w", err)
	}
	src, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, fmt.Errorf("copy: open %s: %w", path, err)
	}
	defer src.Close()
	// One read transaction: a consistent snapshot, even beside a server
	// that still writes (WAL).
	stx, err := src.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("copy: read %s: %w", path, err)
	}
	defer stx.Rollback()
	var version int
	if err := stx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return nil, fmt.Errorf("copy: read %s: %w", path, err)
	}
	if version != sqlite.SchemaVersion() {
		return nil, fmt.Errorf("copy: %s has schema version %d, this binary's is %d: open it once with a matching 'mandate serve' first", path, version, sqlite.SchemaVersion())
	}
	if err := checkTables(ctx, stx); err != nil {
		return nil, err
	}
	if _, _, err := postgres.Migrate(ctx, dsn); err != nil {
		return nil, err
	}
	cfg, err := postgres.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("copy: connect to the shared store: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rep := &Report{Rows: map[string]int64{}}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// Nobody else may write while the history moves in.
		if _, err := tx.Exec(ctx, `LOCK TABLE sessions, evidence, tokens, checkpoints IN EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("lock the shared store: %w", err)
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM evidence) + (SELECT count(*) FROM tokens) + (SELECT count(*) FROM checkpoints)`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("the shared store is not empty (%d sessions, records, tokens and checkpoints): copy into a new database", n)
		}
		for _, t := range tables {
			c, err := copyTable(ctx, stx, tx, t, o.progress)
			if err != nil {
				return fmt.Errorf("table %s: %w", t, err)
			}
			rep.Rows[t], rep.Tables = c, append(rep.Tables, t)
			if q, ok := derived[t]; ok {
				if _, err := tx.Exec(ctx, q); err != nil {
					return fmt.Errorf("table %s: %w", t, err)
				}
			}
		}
		rep.Evidence, rep.Checkpoints = rep.Rows["evidence"], rep.Rows["checkpoints"]
		_, err := tx.Exec(ctx, `UPDATE evidence_head SET size = $1`, rep.Evidence)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("copy: nothing was copied: %w", err)
	}
	return rep, nil
}

// checkTables refuses an embedded store with tables this copy does not
// know: they would be left behind.
func checkTables(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return fmt.Errorf("copy: list tables: %w", err)
	}
	defer rows.Close()
	known := map[string]bool{}
	for _, t := range tables {
		known[t] = true
	}
	var unknown []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("copy: the embedded store has tables this copy does not know (%s): upgrade mandate", strings.Join(unknown, ", "))
	}
	return rows.Err()
}

// copyTable copies one table's rows in rowid order, converting SQLite's
// integers to booleans where the shared store's column is boolean.
func copyTable(ctx context.Context, src *sql.Tx, dst pgx.Tx, table string, progress func(int64)) (int64, error) {
	rows, err := src.QueryContext(ctx, `SELECT * FROM `+table+` ORDER BY rowid`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	types := map[string]string{}
	trows, err := dst.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`, table)
	if err != nil {
		return 0, err
	}
	for trows.Next() {
		var n, t string
		if err := trows.Scan(&n, &t); err != nil {
			trows.Close()
			return 0, err
		}
		types[n] = t
	}
	trows.Close()
	if err := trows.Err(); err != nil {
		return 0, err
	}
	for _, c := range cols {
		if _, ok := types[c]; !ok {
			return 0, fmt.Errorf("the shared store has no column %s.%s: upgrade mandate", table, c)
		}
	}
	src2 := &rowSource{rows: rows, cols: cols, types: types, progress: progress}
	n, err := dst.CopyFrom(ctx, pgx.Identifier{table}, cols, src2)
	src2.flush()
	if err != nil {
		return n, err
	}
	if src2.err != nil {
		return n, src2.err
	}
	return n, rows.Err()
}

type rowSource struct {
	rows  *sql.Rows
	cols  []string
	types map[string]string
	err   error
	// progress, when set, hears of the rows read, pending at a time.
	progress func(int64)
	pending  int64
}

func (r *rowSource) Next() bool {
	if r.err != nil || !r.rows.Next() {
		return false
	}
	if r.progress != nil {
		if r.pending++; r.pending == progressEvery {
			r.flush()
		}
	}
	return true
}

// flush reports the rows not yet reported.
func (r *rowSource) flush() {
	if r.progress != nil && r.pending > 0 {
		r.progress(r.pending)
		r.pending = 0
	}
}

func (r *rowSource) Values() ([]any, error) {
	raw := make([]any, len(r.cols))
	ptrs := make([]any, len(r.cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := r.rows.Scan(ptrs...); err != nil {
		r.err = err
		return nil, err
	}
	for i, c := range r.cols {
		switch v := raw[i].(type) {
		case int64:
			if r.types[c] == "boolean" {
				raw[i] = v != 0
			}
		case string:
			if r.types[c] == "bytea" {
				raw[i] = []byte(v)
			}
		case nil:
		}
	}
	return raw, nil
}

func (r *rowSource) Err() error {
	if r.err != nil {
		return r.err
	}
	return errors.Join(r.rows.Err())
}
