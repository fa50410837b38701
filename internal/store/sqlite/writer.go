package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mandate-dev/mandate/internal/store"
)

// encoded is a Change with its JSON columns marshalled by the submitter, so
// the single writer goroutine spends its time in SQLite, not in encoding.
type encoded struct {
	c                            *store.Change
	agent, tools, state          []byte
	mandate                      []byte
	args, action, rules, reasons []byte
	judge                        []byte
	signals, provenance          []byte
	output                       []byte
	// approvals and approvalChanges are the bodies of c's approval rows,
	// in order (approvals.go).
	approvals, approvalChanges [][]byte
	// leaves bind c's rows to their evidence records.
	leaves store.Leaves
}

func encode(c *store.Change) (*encoded, error) {
	e := &encoded{c: c, leaves: store.LeavesOf(c)}
	var err error
	if s := c.Session; s != nil {
		if e.state, err = json.Marshal(s.State); err != nil {
			return nil, fmt.Errorf("encode session state: %w", err)
		}
		if c.NewSession {
			if e.agent, err = json.Marshal(s.Agent); err != nil {
				return nil, fmt.Errorf("encode agent: %w", err)
			}
			if e.tools, err = json.Marshal(s.Tools); err != nil {
				return nil, fmt.Errorf("encode tools: %w", err)
			}
		}
	}
	if m := c.Mandate; m != nil {
		if e.mandate, err = json.Marshal(m.Mandate); err != nil {
			return nil, fmt.Errorf("encode mandate: %w", err)
		}
	}
	if d := c.Decision; d != nil {
		e.args = d.Args
		if len(e.args) == 0 {
			e.args = []byte("{}")
		}
		if e.action, err = json.Marshal(d.Action); err != nil {
			return nil, fmt.Errorf("encode action: %w", err)
		}
		if e.rules, err = json.Marshal(nonNil(d.Rules)); err != nil {
			return nil, fmt.Errorf("encode rules: %w", err)
		}
		if e.reasons, err = json.Marshal(nonNil(d.Reasons)); err != nil {
			return nil, fmt.Errorf("encode reasons: %w", err)
		}
		if len(d.Signals) > 0 {
			if e.signals, err = json.Marshal(d.Signals); err != nil {
				return nil, fmt.Errorf("encode signals: %w", err)
			}
		}
		if len(d.Provenance) > 0 {
			if e.provenance, err = json.Marshal(d.Provenance); err != nil {
				return nil, fmt.Errorf("encode provenance: %w", err)
			}
		}
		if d.Judge != nil {
			if e.judge, err = json.Marshal(d.Judge); err != nil {
				return nil, fmt.Errorf("encode judge: %w", err)
			}
		}
	}
	if err := e.encodeApprovals(); err != nil {
		return nil, err
	}
	if o := c.Observation; o != nil {
		e.output = o.Output
		if len(e.output) == 0 {
			e.output = []byte("null")
		}
	}
	return e, nil
}

func nonEmptyJSON(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type job struct {
	e   *encoded
	res chan error
}

// writer is the single goroutine that owns the write connection.
type writer struct {
	s       *Store
	conn    *sql.Conn
	stmts   map[string]*sql.Stmt
	nextIdx uint64

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
	stInsertSession  = `INSERT INTO sessions (` + sessionCols + `, leaf) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	stGuardHead      = `UPDATE sessions SET head = ? WHERE id = ? AND head = ?`
	stExpectState    = `SELECT status, mandate_version FROM sessions WHERE id = ?`
	stUpdateSession  = `UPDATE sessions SET status = ?, mandate_version = ?, state = ?, updated_at = ? WHERE id = ?`
	stInsertMandate  = `INSERT INTO mandates (` + mandateCols + `, leaf) VALUES (?,?,?,?,?,?,?)`
	stInsertDecision = `INSERT INTO decisions (` + decisionCols + `, leaf) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	stInsertObserve  = `INSERT INTO observations (` + observationCols + `, leaf) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`
	stInsertEvidence = `INSERT INTO evidence (idx, type, session_id, origin, body, leaf_hash, created_at) VALUES (?,?,?,?,?,?,?)`
	stInsertToolPin  = `INSERT INTO tool_pins (` + toolPinCols + `, leaf) VALUES (?,?,?,?,?,?)`
	stInsertToolChg  = `INSERT INTO tool_changes (` + toolChangeCols + `, leaf) VALUES (?,?,?,?,?,?,?,?)`
)

func newWriter(ctx context.Context, s *Store) (*writer, error) {
	w := &writer{s: s, stmts: map[string]*sql.Stmt{}}
	// Prepare on the pool before taking its only connection: the
	// statements stay prepared on that connection, and each transaction
	// reuses them instead of parsing SQL per row.
	for _, q := range []string{stGuardHead, stExpectState, stInsertSession, stUpdateSession, stInsertMandate, stInsertDecision, stInsertObserve, stInsertEvidence, stInsertToolPin, stInsertToolChg, stInsertApproval, stUpdateApproval, stInsertBudget, stDrawBudget} {
		st, err := s.write.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("sqlite: prepare: %w", err)
		}
		w.stmts[q] = st
	}
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: writer connection: %w", err)
	}
	w.conn = conn
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
	for first := range w.s.queue {
		// A fresh slice each time: with the syncer, the last batch may
		// still be waiting to be acknowledged.
		batch := make([]job, 1, 16)
		batch[0] = first
	drain:
		for len(batch) < w.s.opts.MaxBatch {
			select {
			case j, ok := <-w.s.queue:
				if !ok {
					break drain
				}
				batch = append(batch, j)
			default:
				break drain
			}
		}
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
					j.res <- err
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

// txn is one transaction with the writer's statements bound to it.
type txn struct {
	ctx   context.Context
	tx    *sql.Tx
	w     *writer
	bound map[string]*sql.Stmt
}

func (t *txn) exec(q string, args ...any) (sql.Result, error) {
	st, ok := t.bound[q]
	if !ok {
		st = t.tx.StmtContext(t.ctx, t.w.stmts[q])
		t.bound[q] = st
	}
	return st.ExecContext(t.ctx, args...)
}

func (w *writer) begin(ctx context.Context) (*txn, error) {
	tx, err := w.conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: begin: %w", err)
	}
	return &txn{ctx: ctx, tx: tx, w: w, bound: map[string]*sql.Stmt{}}, nil
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
			j.res <- *err
		}
		return
	}
	startIdx := w.nextIdx
	hashes, err := w.fastPath(ctx, batch)
	if err == nil {
		w.deliver(&synced{batch: batch, startIdx: startIdx, hashes: hashes})
		return
	}
	w.nextIdx = startIdx
	errs, hashes, err := w.slowPath(ctx, batch)
	if err != nil {
		w.nextIdx = startIdx
		for _, j := range batch {
			j.res <- err
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
		j.res <- err
	}
}

func (w *writer) fastPath(ctx context.Context, batch []job) ([][]byte, error) {
	t, err := w.begin(ctx)
	if err != nil {
		return nil, err
	}
	var hashes [][]byte
	last := map[string]*encoded{} // session id -> its last counter update
	var order []string
	for _, j := range batch {
		if err := w.apply(t, j.e, &hashes, true); err != nil {
			t.tx.Rollback()
			return nil, err
		}
		if s := j.e.c.Session; s != nil && !j.e.c.NewSession {
			if _, ok := last[s.ID]; !ok {
				order = append(order, s.ID)
			}
			last[s.ID] = j.e
		}
	}
	for _, id := range order {
		if err := w.updateSession(t, last[id]); err != nil {
			t.tx.Rollback()
			return nil, err
		}
	}
	if err := t.tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: commit: %w", err)
	}
	return hashes, nil
}

func (w *writer) slowPath(ctx context.Context, batch []job) ([]error, [][]byte, error) {
	t, err := w.begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	errs := make([]error, len(batch))
	var hashes [][]byte
	for i, j := range batch {
		if _, err := t.tx.ExecContext(ctx, `SAVEPOINT change`); err != nil {
			t.tx.Rollback()
			return nil, nil, fmt.Errorf("sqlite: savepoint: %w", err)
		}
		idx, nh := w.nextIdx, len(hashes)
		err := w.apply(t, j.e, &hashes, false)
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

func (w *writer) updateSession(t *txn, e *encoded) error {
	s := e.c.Session
	res, err := t.exec(stUpdateSession, s.Status, s.MandateVersion, e.state, s.UpdatedAt.UnixNano(), s.ID)
	if err != nil {
		return wrapWrite("session "+s.ID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("session %q: %w", s.ID, store.ErrNotFound)
	}
	return nil
}

// apply writes one change. With deferUpdate the session's counter update is
// left to the caller, who writes each session once per batch.
func (w *writer) apply(t *txn, e *encoded, hashes *[][]byte, deferUpdate bool) error {
	c := e.c
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
				s.ID, e.agent, e.tools, s.WorkingDir, s.HomeDir, s.ParentID, s.Status, s.MandateVersion, e.state, s.CreatedBy, s.CreatedAt.UnixNano(), s.UpdatedAt.UnixNano(), head, s.ApprovalTimeout, e.leaves.Session)
			if err != nil {
				return wrapWrite("session "+s.ID, err)
			}
		} else if !deferUpdate {
			if err := w.updateSession(t, e); err != nil {
				return err
			}
		}
	}
	if m := c.Mandate; m != nil {
		if _, err := t.exec(stInsertMandate, m.SessionID, m.Version, e.mandate, m.Source, m.CreatedBy, m.CreatedAt.UnixNano(), e.leaves.Mandate); err != nil {
			return wrapWrite(fmt.Sprintf("mandate %s v%d", m.SessionID, m.Version), err)
		}
	}
	if d := c.Decision; d != nil {
		_, err := t.exec(stInsertDecision,
			d.ID, d.SessionID, d.Seq, d.Surface, d.Tool, e.args, e.action, d.MandateVersion, d.PolicyHash, d.Effect, e.rules, e.reasons, d.LatencyMicros, d.CreatedAt.UnixNano(), d.CallID, d.ApprovalID, e.judge, e.signals, e.provenance, e.leaves.Decision)
		if err != nil {
			return wrapWrite("decision "+d.ID, err)
		}
	}
	if o := c.Observation; o != nil {
		var args []byte
		if len(o.Args) > 0 {
			args = o.Args
		}
		if _, err := t.exec(stInsertObserve, o.ID, o.DecisionID, o.SessionID, e.output, o.Origin, o.CallID, o.Gap, o.GapReason, o.Tool, args, o.CreatedAt.UnixNano(), e.leaves.Observation); err != nil {
			return wrapWrite("observation "+o.ID, err)
		}
	}
	for i, p := range c.ToolPins {
		if _, err := t.exec(stInsertToolPin, p.SessionID, p.Tool, p.Hash, nonEmptyJSON(p.Definition), p.CreatedAt.UnixNano(), store.At(e.leaves.ToolPins, i)); err != nil {
			return wrapWrite(fmt.Sprintf("tool pin %s/%s", p.SessionID, p.Tool), err)
		}
	}
	for i, tc := range c.ToolChanges {
		if _, err := t.exec(stInsertToolChg, tc.ID, tc.SessionID, tc.Tool, tc.PinnedHash, tc.Hash, nonEmptyJSON(tc.Definition), tc.CreatedAt.UnixNano(), store.At(e.leaves.ToolChanges, i)); err != nil {
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
		if _, err := t.exec(stInsertEvidence, r.Index, r.Type, r.SessionID, r.Origin, r.Body, r.LeafHash, r.CreatedAt.UnixNano()); err != nil {
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
		st, ok := t.bound[stExpectState]
		if !ok {
			st = t.tx.StmtContext(t.ctx, w.stmts[stExpectState])
			t.bound[stExpectState] = st
		}
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
