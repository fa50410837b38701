package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// writer is the single goroutine that owns the write connection.
type writer struct {
	s       *Store
	conn    *sql.Conn
	stmts   map[string]*sql.Stmt
	nextIdx uint64

	// decisions and records collect the fast path's decision rows and
	// evidence records, written as multi-row INSERTs at the end of the
	// batch: one statement for up to rowChunks[0] rows instead of one
	// each (modernc's bind, database/sql's and the VM's work per statement
	// were half the writer's allocations).
	decisions, records rowBuf

	// With syncq set (synchronous FULL on a file), committed batches go
	// to the syncer, which fsyncs the WAL and then acknowledges them,
	// while the writer commits the next batch.
	syncq   chan *synced
	syncWAL func() error
	// syncing holds a token while a batch is being synced: the writer
	// commits the next batch meanwhile, but no further, so batches grow
	// while the disk is busy instead of fragmenting into small commits.
	syncing chan struct{}
}

// synced is a committed batch waiting for the WAL to reach the disk.
type synced struct {
	batch    []job
	errs     []error
	startIdx uint64
	hashes   [][]byte
}

// The statements the writer runs, prepared once.
const (
	stInsertSession  = `INSERT INTO sessions (` + sqlstore.SessionCols + `, leaf) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	stGuardHead      = `UPDATE sessions SET head = ? WHERE id = ? AND head = ?`
	stExpectState    = `SELECT status, mandate_version FROM sessions WHERE id = ?`
	stUpdateSession  = `UPDATE sessions SET status = ?, mandate_version = ?, state = ?, updated_at = ? WHERE id = ?`
	stInsertMandate  = `INSERT INTO mandates (` + sqlstore.MandateCols + `, leaf) VALUES (?,?,?,?,?,?,?)`
	stInsertDecision = `INSERT INTO decisions (` + sqlstore.DecisionCols + `, leaf) VALUES (?,?,?,?,?,?,?)`
	stInsertObserve  = `INSERT INTO observations (` + sqlstore.ObservationCols + `, leaf) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`
	stInsertEvidence = `INSERT INTO evidence (idx, type, session_id, origin, body, leaf_hash, created_at) VALUES (?,?,?,?,?,?,?)`
	stInsertToolPin  = `INSERT INTO tool_pins (` + sqlstore.ToolPinCols + `, leaf) VALUES (?,?,?,?,?,?)`
	stInsertToolChg  = `INSERT INTO tool_changes (` + sqlstore.ToolChangeCols + `, leaf) VALUES (?,?,?,?,?,?,?,?)`
)

// rowChunks are the row counts of the multi-row INSERTs prepared, largest
// first: a batch's rows go out in as few statements as these sizes make
// (21 rows: 16 + 4 + 1). 64 rows of seven columns are 448 parameters,
// far below SQLite's limit of 32,766.
var rowChunks = [...]int{64, 16, 4, 1}

// rowBuf is one table's rows waiting for their INSERT.
type rowBuf struct {
	what  string // for errors
	width int    // columns a row
	// texts[i] inserts rowChunks[i] rows.
	texts [len(rowChunks)]string
	args  []any
	rows  int
}

func newRowBuf(what, insert string, width int) rowBuf {
	b := rowBuf{what: what, width: width}
	prefix, group, ok := strings.Cut(insert, " VALUES ")
	if !ok {
		panic("sqlite: no VALUES in " + insert)
	}
	for i, n := range rowChunks {
		b.texts[i] = prefix + " VALUES " + strings.TrimSuffix(strings.Repeat(group+",", n), ",")
	}
	return b
}

func (b *rowBuf) add(args ...any) {
	b.args = append(b.args, args...)
	b.rows++
}

// reset forgets the rows (and the values they held).
func (b *rowBuf) reset() {
	clear(b.args)
	b.args, b.rows = b.args[:0], 0
}

// flush inserts the rows collected, largest chunks first.
func (t *txn) flush(b *rowBuf) error {
	defer b.reset()
	args := b.args
	for rows := b.rows; rows > 0; {
		for i, n := range rowChunks {
			if n > rows {
				continue
			}
			if _, err := t.exec(b.texts[i], args[:n*b.width]...); err != nil {
				return wrapWrite(b.what, err)
			}
			args, rows = args[n*b.width:], rows-n
			break
		}
	}
	return nil
}

func newWriter(ctx context.Context, s *Store) (*writer, error) {
	w := &writer{
		s:         s,
		stmts:     map[string]*sql.Stmt{},
		decisions: newRowBuf("decisions", stInsertDecision, 7),
		records:   newRowBuf("evidence records", stInsertEvidence, 7),
	}
	queries := []string{stGuardHead, stExpectState, stInsertSession, stUpdateSession, stInsertMandate, stInsertDecision, stInsertObserve, stInsertEvidence, stInsertToolPin, stInsertToolChg, stInsertApproval, stUpdateApproval, stInsertBudget, stDrawBudget, stDeleteBaseline, stUpsertBaseline, stUpsertCursor}
	queries = append(queries, w.decisions.texts[:]...)
	queries = append(queries, w.records.texts[:]...)
	queries = append(queries, txStatements[:]...)
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: writer connection: %w", err)
	}
	w.conn = conn
	// The statements are prepared on the writer's own connection, and
	// its transactions are BEGIN and COMMIT on it (connTx): a statement
	// prepared on the pool had to be bound to each *sql.Tx again
	// (Tx.StmtContext, about 2 allocations a statement a batch).
	for _, q := range queries {
		if w.stmts[q] != nil {
			continue // a one-row chunk is the plain INSERT
		}
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("sqlite: prepare: %w", err)
		}
		w.stmts[q] = st
	}
	// The next index is one seek down the primary key. A gap below it
	// (records deleted) is not looked for here — COUNT(*) would read the
	// whole table at every start —: the evidence log's rebuild at open
	// reads every leaf below it and refuses the store on a missing one, and
	// evidence verify reports it.
	var next uint64
	err = conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(idx) + 1, 0) FROM evidence`).Scan(&next)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("sqlite: read evidence size: %w", err)
	}
	w.nextIdx = next
	return w, nil
}

func (w *writer) run() {
	defer close(w.s.done)
	defer w.conn.Close()
	var syncerDone chan struct{}
	if w.syncq != nil {
		syncerDone = make(chan struct{})
		go w.syncer(syncerDone)
		defer func() {
			close(w.syncq)
			<-syncerDone
		}()
	}
	for batch := range w.s.queue.Batches(w.s.opts.MaxBatch) {
		w.commit(batch)
	}
}

// syncer fsyncs the WAL for committed batches, several at a time, and
// acknowledges them in commit order. A failed fsync leaves what those batches
// wrote in doubt: they fail, and the store takes nothing more.
func (w *writer) syncer(done chan struct{}) {
	defer close(done)
	var pending []*synced
	for first := range w.syncq {
		pending = append(pending[:0], first)
	drain:
		for {
			select {
			case s, ok := <-w.syncq:
				if !ok {
					break drain
				}
				pending = append(pending, s)
			default:
				break drain
			}
		}
		err := w.syncWAL()
		for range pending {
			<-w.syncing
		}
		if err != nil {
			err = fmt.Errorf("sqlite: fsync the WAL: %w; decisions since the last sync may be lost: restart mandate", err)
			w.s.broken.CompareAndSwap(nil, &err)
			w.s.log.Error("store broken", "err", err)
			for _, s := range pending {
				for _, j := range s.batch {
					j.Res <- err
				}
			}
			continue
		}
		for _, s := range pending {
			w.acknowledge(s.batch, s.errs, s.startIdx, s.hashes)
		}
	}
}

// walSyncer fsyncs the WAL file through a descriptor of its own: fsync
// flushes the file, whichever descriptor wrote it.
type walSyncer struct {
	path string
	f    *os.File
}

func (ws *walSyncer) sync() error {
	if ws.f == nil {
		f, err := os.OpenFile(ws.path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		// The WAL's directory entry must be durable too, once.
		if d, err := os.Open(filepath.Dir(ws.path)); err == nil {
			d.Sync()
			d.Close()
		}
		ws.f = f
	}
	return ws.f.Sync()
}

// txn is one transaction on the writer's connection.
type txn struct {
	ctx context.Context
	tx  *connTx
	w   *writer
}

func (t *txn) exec(q string, args ...any) (sql.Result, error) {
	return t.w.stmts[q].ExecContext(t.ctx, args...)
}

// txStatements are the transaction's own statements, prepared like the
// others: run as text, each was parsed again (and a driver statement made)
// every time, twice a batch at least.
var txStatements = [...]string{`BEGIN IMMEDIATE`, `COMMIT`, `ROLLBACK`,
	`SAVEPOINT fold`, `ROLLBACK TO fold`, `RELEASE fold`,
	`SAVEPOINT change`, `ROLLBACK TO change`, `RELEASE change`}

// connTx is a transaction as statements on the writer's connection: the
// writer holds the connection for its life, so nothing else runs on it
// between BEGIN and COMMIT.
type connTx struct {
	ctx   context.Context
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// ExecContext runs q, prepared when it is one of the writer's statements.
func (x *connTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st := x.stmts[q]; st != nil {
		return st.ExecContext(ctx, args...)
	}
	return x.conn.ExecContext(ctx, q, args...)
}

func (x *connTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return x.conn.QueryRowContext(ctx, q, args...)
}

func (x *connTx) Rollback() error {
	_, err := x.ExecContext(x.ctx, `ROLLBACK`)
	return err
}

// Commit commits, or rolls back what a failed COMMIT left open.
func (x *connTx) Commit() error {
	if _, err := x.ExecContext(x.ctx, `COMMIT`); err != nil {
		x.Rollback()
		return err
	}
	return nil
}

func (w *writer) begin(ctx context.Context) (*txn, error) {
	// IMMEDIATE, as the store's _txlock: the write lock is taken at once.
	x := &connTx{ctx: ctx, conn: w.conn, stmts: w.stmts}
	if _, err := x.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return nil, fmt.Errorf("sqlite: begin: %w", err)
	}
	return &txn{ctx: ctx, tx: x, w: w}, nil
}

// commit applies a batch in one transaction. The fast path runs every
// change and writes each session's counters once, from its last change. If
// any change fails, the transaction is rolled back and the batch is applied
// again one change at a time, each under a savepoint, so one bad change
// (a duplicate id, say) fails alone.
func (w *writer) commit(batch []job) {
	ctx := context.Background()
	if err := w.s.broken.Load(); err != nil {
		for _, j := range batch {
			j.Res <- *err
		}
		return
	}
	startIdx := w.nextIdx
	errs, hashes, err := w.fastPath(ctx, batch)
	if err == nil {
		w.deliver(&synced{batch: batch, errs: errs, startIdx: startIdx, hashes: hashes})
		return
	}
	w.nextIdx = startIdx
	errs, hashes, err = w.slowPath(ctx, batch)
	if err != nil {
		w.nextIdx = startIdx
		for _, j := range batch {
			j.Res <- err
		}
		return
	}
	w.deliver(&synced{batch: batch, errs: errs, startIdx: startIdx, hashes: hashes})
}

// deliver acknowledges a committed batch: at once when SQLite synced it, or
// through the syncer.
func (w *writer) deliver(s *synced) {
	if w.syncq != nil {
		w.syncing <- struct{}{}
		w.syncq <- s
		return
	}
	w.acknowledge(s.batch, s.errs, s.startIdx, s.hashes)
}

func (w *writer) acknowledge(batch []job, errs []error, startIdx uint64, hashes [][]byte) {
	w.s.commits.Add(1)
	w.s.changes.Add(uint64(len(batch)))
	if len(hashes) > 0 && w.s.opts.OnEvidence != nil {
		w.s.opts.OnEvidence(startIdx, hashes)
	}
	for i, j := range batch {
		var err error
		if errs != nil {
			err = errs[i]
		}
		j.Res <- err
	}
}

// fastPath commits the batch in one transaction. Only a fold can fail alone
// here (under its own savepoint; errs then says which); any other failure
// fails the transaction.
func (w *writer) fastPath(ctx context.Context, batch []job) ([]error, [][]byte, error) {
	t, err := w.begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Rows not flushed when the batch fails are not the next batch's.
	defer w.records.reset()
	defer w.decisions.reset()
	var (
		errs   []error
		hashes [][]byte
	)
	last := map[string]*sqlstore.Encoded{} // session id -> its last counter update
	var order []string
	for i, j := range batch {
		if j.fold != nil {
			ferr, err := w.fold(t, j.fold)
			if err != nil {
				return nil, nil, err
			}
			if ferr != nil {
				if errs == nil {
					errs = make([]error, len(batch))
				}
				errs[i] = ferr
			}
			continue
		}
		if err := w.apply(t, j.E, &hashes, true); err != nil {
			t.tx.Rollback()
			return nil, nil, err
		}
		if s := j.E.C.Session; s != nil && !j.E.C.NewSession {
			if _, ok := last[s.ID]; !ok {
				order = append(order, s.ID)
			}
			last[s.ID] = j.E
		}
	}
	for _, b := range []*rowBuf{&w.decisions, &w.records} {
		if err := t.flush(b); err != nil {
			t.tx.Rollback()
			return nil, nil, err
		}
	}
	for _, id := range order {
		if err := w.updateSession(t, last[id]); err != nil {
			t.tx.Rollback()
			return nil, nil, err
		}
	}
	if err := t.tx.Commit(); err != nil {
		return nil, nil, fmt.Errorf("sqlite: commit: %w", err)
	}
	return errs, hashes, nil
}

// fold runs a baseline fold under a savepoint: ferr is the fold's own
// failure (its writes undone), err one of the transaction's, which fold
// has rolled back (both paths of a batch give it up then).
func (w *writer) fold(t *txn, f *store.BaselineFold) (ferr, err error) {
	if ferr, err = w.foldSavepoint(t, f); err != nil {
		t.tx.Rollback()
	}
	return ferr, err
}

func (w *writer) foldSavepoint(t *txn, f *store.BaselineFold) (ferr, err error) {
	if _, err := t.tx.ExecContext(t.ctx, `SAVEPOINT fold`); err != nil {
		return nil, fmt.Errorf("sqlite: savepoint: %w", err)
	}
	if ferr = foldIn(t, f); ferr != nil {
		if _, err := t.tx.ExecContext(t.ctx, `ROLLBACK TO fold`); err != nil {
			return nil, fmt.Errorf("sqlite: rollback to savepoint: %w", err)
		}
	}
	if _, err := t.tx.ExecContext(t.ctx, `RELEASE fold`); err != nil {
		return nil, fmt.Errorf("sqlite: release savepoint: %w", err)
	}
	return ferr, nil
}

func (w *writer) slowPath(ctx context.Context, batch []job) ([]error, [][]byte, error) {
	t, err := w.begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	errs := make([]error, len(batch))
	var hashes [][]byte
	for i, j := range batch {
		if j.fold != nil {
			ferr, err := w.fold(t, j.fold)
			if err != nil {
				return nil, nil, err
			}
			errs[i] = ferr
			continue
		}
		if _, err := t.tx.ExecContext(ctx, `SAVEPOINT change`); err != nil {
			t.tx.Rollback()
			return nil, nil, fmt.Errorf("sqlite: savepoint: %w", err)
		}
		idx, nh := w.nextIdx, len(hashes)
		err := w.apply(t, j.E, &hashes, false)
		if err != nil {
			errs[i] = err
			w.nextIdx, hashes = idx, hashes[:nh]
			if _, err := t.tx.ExecContext(ctx, `ROLLBACK TO change`); err != nil {
				t.tx.Rollback()
				return nil, nil, fmt.Errorf("sqlite: rollback to savepoint: %w", err)
			}
		}
		if _, err := t.tx.ExecContext(ctx, `RELEASE change`); err != nil {
			t.tx.Rollback()
			return nil, nil, fmt.Errorf("sqlite: release savepoint: %w", err)
		}
	}
	if err := t.tx.Commit(); err != nil {
		return nil, nil, fmt.Errorf("sqlite: commit: %w", err)
	}
	return errs, hashes, nil
}

func (w *writer) updateSession(t *txn, e *sqlstore.Encoded) error {
	s := e.C.Session
	res, err := t.exec(stUpdateSession, s.Status, s.MandateVersion, e.State, s.UpdatedAt.UnixNano(), s.ID)
	if err != nil {
		return wrapWrite("session "+s.ID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("session %q: %w", s.ID, store.ErrNotFound)
	}
	return nil
}

// apply writes one change. With deferred, the session's counter update is
// left to the caller, who writes each session once per batch, and the
// decision row and evidence records to w.decisions and w.records, which the
// caller flushes.
func (w *writer) apply(t *txn, e *sqlstore.Encoded, hashes *[][]byte, deferred bool) error {
	c := e.C
	if err := w.guard(t, c); err != nil {
		return err
	}
	if s := c.Session; s != nil {
		if c.NewSession {
			head := ""
			if c.Guard != nil {
				head = c.Guard.NewHead
			}
			_, err := t.exec(stInsertSession,
				s.ID, e.Agent, e.Tools, s.WorkingDir, s.HomeDir, s.ParentID, s.Status, s.MandateVersion, e.State, s.CreatedBy, s.CreatedAt.UnixNano(), s.UpdatedAt.UnixNano(), head, s.ApprovalTimeout, e.Leaves.Session)
			if err != nil {
				return wrapWrite("session "+s.ID, err)
			}
		} else if !deferred {
			if err := w.updateSession(t, e); err != nil {
				return err
			}
		}
	}
	if m := c.Mandate; m != nil {
		if _, err := t.exec(stInsertMandate, m.SessionID, m.Version, e.Mandate, m.Source, m.CreatedBy, m.CreatedAt.UnixNano(), e.Leaves.Mandate); err != nil {
			return wrapWrite(fmt.Sprintf("mandate %s v%d", m.SessionID, m.Version), err)
		}
	}
	if d := c.Decision; d != nil {
		if deferred {
			w.decisions.add(d.ID, d.SessionID, d.Seq, d.Effect, d.CallID, e.Args, e.Leaves.Decision)
		} else if _, err := t.exec(stInsertDecision, d.ID, d.SessionID, d.Seq, d.Effect, d.CallID, e.Args, e.Leaves.Decision); err != nil {
			return wrapWrite("decision "+d.ID, err)
		}
	}
	if o := c.Observation; o != nil {
		if _, err := t.exec(stInsertObserve, o.ID, o.DecisionID, o.SessionID, e.Output, o.Origin, o.CallID, o.Gap, o.GapReason, o.Tool, sqlstore.ObservationArgs(o), o.CreatedAt.UnixNano(), e.Leaves.Observation); err != nil {
			return wrapWrite("observation "+o.ID, err)
		}
	}
	for i, p := range c.ToolPins {
		if _, err := t.exec(stInsertToolPin, p.SessionID, p.Tool, p.Hash, sqlstore.JSONOrNull(p.Definition), p.CreatedAt.UnixNano(), store.At(e.Leaves.ToolPins, i)); err != nil {
			return wrapWrite(fmt.Sprintf("tool pin %s/%s", p.SessionID, p.Tool), err)
		}
	}
	for i, tc := range c.ToolChanges {
		if _, err := t.exec(stInsertToolChg, tc.ID, tc.SessionID, tc.Tool, tc.PinnedHash, tc.Hash, sqlstore.JSONOrNull(tc.Definition), tc.CreatedAt.UnixNano(), store.At(e.Leaves.ToolChanges, i)); err != nil {
			return wrapWrite("tool change "+tc.ID, err)
		}
	}
	if err := applyApprovals(t, e); err != nil {
		return err
	}
	if err := applyDraws(t, c); err != nil {
		return err
	}
	for _, r := range c.Evidence {
		r.Index = w.nextIdx
		if deferred {
			w.records.add(r.Index, r.Type, r.SessionID, r.Origin, r.Body, r.LeafHash, r.CreatedAt.UnixNano())
		} else if _, err := t.exec(stInsertEvidence, r.Index, r.Type, r.SessionID, r.Origin, r.Body, r.LeafHash, r.CreatedAt.UnixNano()); err != nil {
			return wrapWrite(fmt.Sprintf("evidence record %d", r.Index), err)
		}
		w.nextIdx++
		*hashes = append(*hashes, r.LeafHash)
	}
	return nil
}

// guard checks a change's store.Guard before anything of it is written. In
// one process the engine's own lock keeps it true; it fails only when the
// caller's copy of a session is out of date.
func (w *writer) guard(t *txn, c *store.Change) error {
	g := c.Guard
	if g == nil {
		return nil
	}
	state := func(id string) (string, int, error) {
		st := w.stmts[stExpectState]
		var (
			status  string
			version int
		)
		err := st.QueryRowContext(t.ctx, id).Scan(&status, &version)
		if errors.Is(err, sql.ErrNoRows) {
			return "", 0, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return "", 0, fmt.Errorf("check session %s: %w", id, err)
		}
		return status, version, nil
	}
	for _, want := range g.Sessions {
		status, version, err := state(want.ID)
		if err != nil {
			return err
		}
		if status != want.Status || version != want.MandateVersion {
			return fmt.Errorf("session %s is %s at mandate version %d, not %s at %d: %w", want.ID, status, version, want.Status, want.MandateVersion, store.ErrStale)
		}
	}
	if c.NewSession {
		return nil
	}
	res, err := t.exec(stGuardHead, g.NewHead, g.SessionID, g.Head)
	if err != nil {
		return fmt.Errorf("guard session %s: %w", g.SessionID, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	if _, _, err := state(g.SessionID); err != nil {
		return err
	}
	return fmt.Errorf("session %s: %w", g.SessionID, store.ErrStale)
}

func wrapWrite(what string, err error) error {
	if isConstraint(err) {
		return fmt.Errorf("%s: %w", what, errors.Join(store.ErrConflict, err))
	}
	return fmt.Errorf("write %s: %w", what, err)
}
