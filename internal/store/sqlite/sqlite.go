// Package sqlite is the embedded store: one SQLite database file (pure Go,
// modernc.org/sqlite) in WAL mode, with a single writer goroutine that commits
// concurrent changes together (group commit) and fsyncs before acknowledging.
package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mandate-dev/mandate/internal/store"
)

// Options tune a store.
type Options struct {
	// Synchronous is the SQLite synchronous level: "FULL" (default; every
	// commit is fsynced) or "OFF" for throwaway stores (tests, eval).
	Synchronous string
	// MaxBatch caps how many changes one transaction commits.
	MaxBatch int
	// OnEvidence, if set, is called after each commit that appended evidence
	// records, with the index of the first one and their leaf hashes in
	// order, before any submitter of that commit is acknowledged.
	OnEvidence func(first uint64, leafHashes [][]byte)
	Logger     *slog.Logger
	// WALLimit bounds the write-ahead log: when a background checkpoint
	// finds it larger, the next one copies it all back and truncates it
	// (default DefaultWALLimit).
	WALLimit int64

	// syncWAL replaces the WAL fsync, for tests of its failure.
	syncWAL func() error
}

// DefaultWALLimit is the WAL size above which it is truncated. Passive
// checkpoints alone never shrink it under steady load: the WAL is reused
// from its start only once every frame is copied back, and a writer that
// never pauses always has frames newer than the copy — so it grew by about
// 16 KB a decision, without end (7.3 GB after 440,000 decisions).
const DefaultWALLimit = 64 << 20

// Store is the SQLite backend. It is safe for concurrent use.
type Store struct {
	path   string
	pool   *sql.DB
	write  *sql.DB
	opts   Options
	log    *slog.Logger
	queue  chan job
	done   chan struct{}
	mu     sync.RWMutex // guards closed against Submit
	closed bool

	// stmts are the read pool's prepared statements by query text
	// (prepared.go).
	stmts sync.Map

	commits, changes atomic.Uint64
	// broken is set when the WAL could not be synced: what was committed
	// since the last sync may be lost, so nothing more is accepted.
	broken          atomic.Pointer[error]
	stopCheckpoints chan struct{}
	checkpointsDone chan struct{}
	// checked remembers decisions already held against their records
	// (nil for a read-only store: verify checks every row).
	checked *store.CheckCache
}

// Stats counts the writer's work: transactions committed and changes in them
// (their ratio is the group-commit batch size).
type Stats struct {
	Commits uint64
	Changes uint64
}

// Stats reports the writer's counters.
func (s *Store) Stats() Stats {
	return Stats{Commits: s.commits.Load(), Changes: s.changes.Load()}
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path and starts the writer.
// path ":memory:" gives a private in-memory database.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = "FULL"
	}
	switch opts.Synchronous {
	case "FULL", "NORMAL", "OFF":
	default:
		return nil, fmt.Errorf("sqlite: synchronous must be FULL, NORMAL or OFF, not %q", opts.Synchronous)
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	dsn := dataSource(path, opts.Synchronous)
	memory := path == ":memory:"
	if !memory {
		// Decisions, mandates and observations are private: create the
		// file owner-only before SQLite does (its WAL and shared-memory
		// files take the same mode).
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		f.Close()
	}
	writeDSN := dsn
	pipelined := !memory && opts.Synchronous == "FULL"
	if !memory {
		// The writer never checkpoints the WAL itself: a background
		// goroutine does, so commits do not stall behind copying pages
		// into the database file.
		writeDSN += "&_pragma=wal_autocheckpoint(0)"
	}
	if pipelined {
		// Durability without stalling the writer: its commits skip
		// SQLite's fsync, and a syncer goroutine fsyncs the WAL before
		// anyone is acknowledged, while the writer runs the next batch.
		// (The pool's connections keep FULL, so checkpoints still sync
		// the database file before the WAL is reused.)
		writeDSN = dataSource(path, "OFF") + "&_pragma=wal_autocheckpoint(0)"
	}
	write, err := sql.Open("sqlite", writeDSN)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	if err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	// The pool serves reads (WAL lets them run beside the writer) and the
	// rare writes outside the group-commit path (tokens).
	read, err := sql.Open("sqlite", dsn)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	read.SetMaxOpenConns(8)
	read.SetMaxIdleConns(8)
	s := &Store{
		path:  path,
		pool:  read,
		write: write,
		opts:  opts,
		log:   opts.Logger,
		queue: make(chan job, 4096),
		done:  make(chan struct{}),
		// About 100 bytes a row: some 6 MB at most.
		checked: store.NewCheckCache(1 << 16),
	}
	w, err := newWriter(ctx, s)
	if err != nil {
		s.closeDBs()
		return nil, err
	}
	if pipelined {
		w.syncq = make(chan *synced, 64)
		w.syncing = make(chan struct{}, 1)
		w.syncWAL = (&walSyncer{path: path + "-wal"}).sync
		if opts.syncWAL != nil {
			w.syncWAL = opts.syncWAL
		}
	}
	go w.run()
	if !memory {
		s.stopCheckpoints, s.checkpointsDone = make(chan struct{}), make(chan struct{})
		go s.checkpoints()
	}
	return s, nil
}

// checkpointEvery is how often the WAL is copied back into the database.
const checkpointEvery = time.Second

// checkpoints copies the WAL into the database file in the background. A
// passive checkpoint never blocks the writer; the last one, on Close, also
// truncates the WAL.
func (s *Store) checkpoints() {
	defer close(s.checkpointsDone)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	limit := s.opts.WALLimit
	if limit <= 0 {
		limit = DefaultWALLimit
	}
	last := uint64(0)
	for {
		select {
		case <-s.stopCheckpoints:
			return
		case <-t.C:
			if n := s.commits.Load(); n != last {
				last = n
				// Over the limit, TRUNCATE: it waits for the writer's
				// transaction in progress (the writer then waits for it,
				// for as long as copying the rest takes), copies every
				// frame back, syncs the database and empties the WAL.
				mode := "PASSIVE"
				if fi, err := os.Stat(s.path + "-wal"); err == nil && fi.Size() > limit {
					mode = "TRUNCATE"
				}
				if _, err := s.pool.Exec(`PRAGMA wal_checkpoint(` + mode + `)`); err != nil {
					s.log.Warn("wal checkpoint", "mode", mode, "err", err)
				}
			}
		}
	}
}

func dataSource(path, sync string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+sync+")")
	q.Set("_txlock", "immediate")
	if path == ":memory:" {
		// A named shared-cache database is shared by the writer and the
		// pool, and private to this Store.
		q.Set("mode", "memory")
		q.Set("cache", "shared")
		return "file:mem-" + rand.Text() + "?" + q.Encode()
	}
	q.Add("_pragma", "journal_mode(WAL)")
	return "file:" + path + "?" + q.Encode()
}

// Close stops accepting changes, commits what is queued and closes the
// database.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.queue)
	s.mu.Unlock()
	<-s.done
	if s.stopCheckpoints != nil {
		close(s.stopCheckpoints)
		<-s.checkpointsDone
		if _, err := s.pool.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			s.log.Warn("final wal checkpoint", "err", err)
		}
	}
	return s.closeDBs()
}

func (s *Store) closeDBs() error {
	var errs []error
	errs = append(errs, s.closeStmts(), s.pool.Close(), s.write.Close())
	return errors.Join(errs...)
}

// Submit implements store.Store.
func (s *Store) Submit(c *store.Change) <-chan error {
	res := make(chan error, 1)
	e, err := encode(c)
	if err != nil {
		res <- err
		return res
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		res <- store.ErrClosed
		return res
	}
	if err := s.broken.Load(); err != nil {
		res <- *err
		return res
	}
	s.queue <- job{e: e, res: res}
	return res
}

// GetSession implements store.Store. The row is held against the
// evidence log (store.CheckSession) before it is returned.
func (s *Store) GetSession(ctx context.Context, id string) (*store.Session, error) {
	row := s.queryRow(ctx, `SELECT `+sessionCols+`, `+bound("sessions")+` FROM sessions WHERE id = ?`, id)
	sess, err := s.scanSession(ctx, row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	return sess, err
}

const sessionCols = `id, agent, tools, working_dir, home_dir, parent_id, status, mandate_version, state, created_by, created_at, updated_at, head, approval_timeout`

// bound selects a row's leaf and the body of the evidence record with that
// leaf hash (NULL when the log has none), for store.Binding.Check.
func bound(table string) string {
	return table + `.leaf, (SELECT e.body FROM evidence e WHERE e.leaf_hash = ` + table + `.leaf LIMIT 1)`
}

type scanner interface{ Scan(...any) error }

func (s *Store) scanSession(ctx context.Context, r scanner) (*store.Session, error) {
	sess, leaf, body, err := scanSessionRow(r)
	if err != nil {
		return nil, err
	}
	if err := s.checkSession(ctx, sess, leaf, body); err != nil {
		return nil, err
	}
	return sess, nil
}

// scanSessionRow reads a session row and its binding, unchecked.
func scanSessionRow(r scanner) (*store.Session, []byte, []byte, error) {
	var (
		sess             store.Session
		agent, tools, st []byte
		created, updated int64
		leaf, body       []byte
	)
	if err := r.Scan(&sess.ID, &agent, &tools, &sess.WorkingDir, &sess.HomeDir, &sess.ParentID, &sess.Status, &sess.MandateVersion, &st, &sess.CreatedBy, &created, &updated, &sess.Head, &sess.ApprovalTimeout, &leaf, &body); err != nil {
		return nil, nil, nil, err
	}
	if err := unmarshalAll(map[string]any{"agent": &sess.Agent, "tools": &sess.Tools, "state": &sess.State}, map[string][]byte{"agent": agent, "tools": tools, "state": st}); err != nil {
		return nil, nil, nil, fmt.Errorf("session %s: %w", sess.ID, err)
	}
	sess.CreatedAt = time.Unix(0, created).UTC()
	sess.UpdatedAt = time.Unix(0, updated).UTC()
	return &sess, leaf, body, nil
}

// sessionLogQuery reads what the log and the tables say about one session
// (?1) for store.CheckSession, in one statement on the session's indexes.
const sessionLogQuery = `SELECT
	(SELECT body FROM evidence WHERE session_id = ?1 AND session_id != '' AND type = 'session_status' ORDER BY idx DESC LIMIT 1),
	(SELECT body FROM evidence WHERE session_id = ?1 AND session_id != '' AND type = 'mandate' ORDER BY idx DESC LIMIT 1),
	(SELECT COUNT(*) FROM evidence WHERE session_id = ?1 AND session_id != '' AND type = 'mandate'),
	(SELECT COUNT(*) FROM evidence WHERE session_id = ?1 AND session_id != '' AND type = 'decision'),
	(SELECT COUNT(*) FROM evidence WHERE session_id = ?1 AND session_id != '' AND type = 'observation'),
	(SELECT COUNT(*) FROM evidence WHERE session_id = ?1 AND session_id != '' AND type = 'approval'),
	(SELECT COUNT(*) FROM mandates WHERE session_id = ?1),
	(SELECT COUNT(*) FROM decisions WHERE session_id = ?1),
	(SELECT COUNT(*) FROM observations WHERE session_id = ?1),
	(SELECT COUNT(*) FROM approvals WHERE session_id = ?1),
	(SELECT COUNT(*) FROM evidence WHERE session_id = ?1 AND session_id != '' AND type = 'observation' AND json_extract(CAST(body AS TEXT), '$.content.gap') = 1),
	(SELECT COUNT(*) FROM observations WHERE session_id = ?1 AND gap = 1),
	(SELECT COUNT(*) FROM evidence WHERE session_id = ?1 AND session_id != '' AND type = 'tool_pin'),
	(SELECT COUNT(*) FROM evidence WHERE session_id = ?1 AND session_id != '' AND type = 'tool_change'),
	(SELECT COUNT(*) FROM tool_pins WHERE session_id = ?1),
	(SELECT COUNT(*) FROM tool_changes WHERE session_id = ?1)`

func (s *Store) checkSession(ctx context.Context, sess *store.Session, leaf, body []byte) error {
	lg := store.SessionLog{Created: body, Records: map[string]int{}}
	var m, d, o, a, tp, tc int
	var rows store.SessionRows
	if err := s.queryRow(ctx, sessionLogQuery, sess.ID).Scan(&lg.Status, &lg.Mandate, &m, &d, &o, &a,
		&rows.Mandates, &rows.Decisions, &rows.Observations, &rows.Approvals, &lg.Gaps, &rows.Gaps,
		&tp, &tc, &rows.ToolPins, &rows.ToolChanges); err != nil {
		return fmt.Errorf("session %s: read its evidence: %w", sess.ID, err)
	}
	lg.Records[store.RecordMandate], lg.Records[store.RecordDecision], lg.Records[store.RecordObservation], lg.Records[store.RecordApproval] = m, d, o, a
	lg.Records[store.RecordToolPin], lg.Records[store.RecordToolChange] = tp, tc
	return store.CheckSession(sess, leaf, lg, rows)
}

func unmarshalAll(dst map[string]any, src map[string][]byte) error {
	for k, b := range src {
		if len(b) == 0 {
			continue
		}
		if err := json.Unmarshal(b, dst[k]); err != nil {
			return fmt.Errorf("decode %s: %w", k, err)
		}
	}
	return nil
}

// ListSessions implements store.Store.
func (s *Store) ListSessions(ctx context.Context, f store.SessionFilter) ([]*store.Session, error) {
	var where []string
	var args []any
	if f.AgentID != "" {
		where = append(where, "json_extract(agent, '$.id') = ?")
		args = append(args, f.AgentID)
	}
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	if f.ParentID != "" {
		where = append(where, "parent_id = ?")
		args = append(args, f.ParentID)
	}
	if f.Before != "" {
		where = append(where, "rowid < (SELECT rowid FROM sessions WHERE id = ?)")
		args = append(args, f.Before)
	}
	q := `SELECT ` + sessionCols + `, ` + bound("sessions") + ` FROM sessions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY rowid DESC LIMIT ?"
	args = append(args, limit(f.Limit))
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	type bound struct {
		sess       *store.Session
		leaf, body []byte
	}
	var all []bound
	for rows.Next() {
		sess, leaf, body, err := scanSessionRow(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		all = append(all, bound{sess, leaf, body})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	rows.Close()
	// Checked after the rows are read: each check is a query of its own,
	// and the pool may have one connection (an in-memory store).
	out := make([]*store.Session, 0, len(all))
	for _, b := range all {
		if err := s.checkSession(ctx, b.sess, b.leaf, b.body); err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, b.sess)
	}
	return out, nil
}

func limit(n int) int {
	if n <= 0 || n > 1000 {
		return 100
	}
	return n
}

// GetMandate implements store.Store. Version 0 means the latest.
func (s *Store) GetMandate(ctx context.Context, sessionID string, version int) (*store.MandateVersion, error) {
	q := `SELECT ` + mandateCols + `, ` + bound("mandates") + ` FROM mandates WHERE session_id = ?`
	args := []any{sessionID}
	if version > 0 {
		q += " AND version = ?"
		args = append(args, version)
	} else {
		q += " ORDER BY version DESC LIMIT 1"
	}
	mv, err := scanMandate(s.queryRow(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("mandate of session %q version %d: %w", sessionID, version, store.ErrNotFound)
	}
	return mv, err
}

const mandateCols = `session_id, version, body, source, created_by, created_at`

func scanMandate(r scanner) (*store.MandateVersion, error) {
	var (
		mv             store.MandateVersion
		body           []byte
		created        int64
		leaf, evidence []byte
	)
	if err := r.Scan(&mv.SessionID, &mv.Version, &body, &mv.Source, &mv.CreatedBy, &created, &leaf, &evidence); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, &mv.Mandate); err != nil {
		return nil, fmt.Errorf("mandate %s v%d: decode: %w", mv.SessionID, mv.Version, err)
	}
	mv.CreatedAt = time.Unix(0, created).UTC()
	if err := store.MandateBinding.Check(fmt.Sprintf("%s v%d", mv.SessionID, mv.Version), &mv, leaf, evidence); err != nil {
		return nil, err
	}
	return &mv, nil
}

// ListMandates implements store.Store.
func (s *Store) ListMandates(ctx context.Context, sessionID string) ([]*store.MandateVersion, error) {
	rows, err := s.query(ctx, `SELECT `+mandateCols+`, `+bound("mandates")+` FROM mandates WHERE session_id = ? ORDER BY version`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list mandates: %w", err)
	}
	defer rows.Close()
	var out []*store.MandateVersion
	for rows.Next() {
		mv, err := scanMandate(rows)
		if err != nil {
			return nil, fmt.Errorf("list mandates: %w", err)
		}
		out = append(out, mv)
	}
	return out, rows.Err()
}

const decisionCols = `id, session_id, seq, surface, tool, args, action, mandate_version, policy_hash, effect, rules, reasons, latency_us, created_at, call_id, approval_id, judge, signals, provenance`

func scanDecision(r scanner, checked *store.CheckCache) (*store.Decision, error) {
	var (
		d                    store.Decision
		args, act, rul, reas []byte
		created              int64
		judge, sig, prov     []byte
		leaf, body           []byte
	)
	if err := r.Scan(&d.ID, &d.SessionID, &d.Seq, &d.Surface, &d.Tool, &args, &act, &d.MandateVersion, &d.PolicyHash, &d.Effect, &rul, &reas, &d.LatencyMicros, &created, &d.CallID, &d.ApprovalID, &judge, &sig, &prov, &leaf, &body); err != nil {
		return nil, err
	}
	if len(prov) > 0 {
		if err := json.Unmarshal(prov, &d.Provenance); err != nil {
			return nil, fmt.Errorf("decision %s: decode provenance: %w", d.ID, err)
		}
	}
	if len(sig) > 0 {
		if err := json.Unmarshal(sig, &d.Signals); err != nil {
			return nil, fmt.Errorf("decision %s: decode signals: %w", d.ID, err)
		}
	}
	if len(judge) > 0 {
		if err := json.Unmarshal(judge, &d.Judge); err != nil {
			return nil, fmt.Errorf("decision %s: decode judge: %w", d.ID, err)
		}
	}
	d.Args = json.RawMessage(args)
	if err := unmarshalAll(map[string]any{"action": &d.Action, "rules": &d.Rules, "reasons": &d.Reasons}, map[string][]byte{"action": act, "rules": rul, "reasons": reas}); err != nil {
		return nil, fmt.Errorf("decision %s: %w", d.ID, err)
	}
	d.CreatedAt = time.Unix(0, created).UTC()
	if err := checked.Check(store.DecisionBinding, d.ID, &d, leaf, body,
		d.ID, d.SessionID, &d.Seq, d.Surface, d.Tool, args, act, &d.MandateVersion, d.PolicyHash, d.Effect, rul, reas, &d.LatencyMicros, &created, d.CallID, d.ApprovalID, judge, sig, prov); err != nil {
		return nil, err
	}
	return &d, nil
}

// GetDecision implements store.Store.
func (s *Store) GetDecision(ctx context.Context, id string) (*store.Decision, error) {
	d, err := scanDecision(s.queryRow(ctx, `SELECT `+decisionCols+`, `+bound("decisions")+` FROM decisions WHERE id = ?`, id), s.checked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("decision %q: %w", id, store.ErrNotFound)
	}
	return d, err
}

// ListDecisions implements store.Store. With a session it lists in sequence
// order; without, newest first.
func (s *Store) ListDecisions(ctx context.Context, f store.DecisionFilter) ([]*store.Decision, error) {
	var where []string
	var args []any
	order := "ORDER BY rowid DESC"
	if f.SessionID != "" {
		where = append(where, "session_id = ?", "seq > ?")
		args = append(args, f.SessionID, f.AfterSeq)
		order = "ORDER BY seq"
	}
	if f.Effect != "" {
		where = append(where, "effect = ?")
		args = append(args, f.Effect)
	}
	q := `SELECT ` + decisionCols + `, ` + bound("decisions") + ` FROM decisions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " " + order + " LIMIT ?"
	args = append(args, limit(f.Limit))
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list decisions: %w", err)
	}
	defer rows.Close()
	var out []*store.Decision
	for rows.Next() {
		d, err := scanDecision(rows, s.checked)
		if err != nil {
			return nil, fmt.Errorf("list decisions: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

const observationCols = `id, decision_id, session_id, output, origin, call_id, gap, gap_reason, tool, args, created_at`

func scanObservations(rows *sql.Rows) ([]*store.Observation, error) {
	defer rows.Close()
	var out []*store.Observation
	for rows.Next() {
		o, err := scanObservation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

func scanObservation(r scanner) (*store.Observation, error) {
	var (
		o            store.Observation
		output, args []byte
		created      int64
		leaf, body   []byte
	)
	if err := r.Scan(&o.ID, &o.DecisionID, &o.SessionID, &output, &o.Origin, &o.CallID, &o.Gap, &o.GapReason, &o.Tool, &args, &created, &leaf, &body); err != nil {
		return nil, err
	}
	o.Output = json.RawMessage(output)
	if len(args) > 0 {
		o.Args = json.RawMessage(args)
	}
	o.CreatedAt = time.Unix(0, created).UTC()
	if err := store.ObservationBinding.Check(o.ID, &o, leaf, body); err != nil {
		return nil, err
	}
	return &o, nil
}

// ListObservations implements store.Store.
func (s *Store) ListObservations(ctx context.Context, decisionID string) ([]*store.Observation, error) {
	rows, err := s.query(ctx, `SELECT `+observationCols+`, `+bound("observations")+` FROM observations WHERE decision_id = ? ORDER BY rowid`, decisionID)
	if err != nil {
		return nil, fmt.Errorf("list observations: %w", err)
	}
	out, err := scanObservations(rows)
	if err != nil {
		return nil, fmt.Errorf("list observations: %w", err)
	}
	return out, nil
}

// DecisionByCall implements store.Store.
func (s *Store) DecisionByCall(ctx context.Context, sessionID, callID string) (*store.Decision, error) {
	if callID == "" {
		return nil, fmt.Errorf("decision for an empty call id: %w", store.ErrNotFound)
	}
	d, err := scanDecision(s.queryRow(ctx, `SELECT `+decisionCols+`, `+bound("decisions")+` FROM decisions WHERE session_id = ? AND call_id = ? ORDER BY seq DESC LIMIT 1`, sessionID, callID), s.checked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("decision for call %q in session %q: %w", callID, sessionID, store.ErrNotFound)
	}
	return d, err
}

// ListGaps implements store.Store.
func (s *Store) ListGaps(ctx context.Context, f store.GapFilter) ([]*store.Observation, error) {
	q := `SELECT ` + observationCols + `, ` + bound("observations") + ` FROM observations WHERE gap = 1`
	var args []any
	if f.SessionID != "" {
		q += ` AND session_id = ?`
		args = append(args, f.SessionID)
	}
	q += ` ORDER BY rowid DESC LIMIT ?`
	args = append(args, limit(f.Limit))
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list gaps: %w", err)
	}
	out, err := scanObservations(rows)
	if err != nil {
		return nil, fmt.Errorf("list gaps: %w", err)
	}
	return out, nil
}

const (
	toolPinCols    = `session_id, tool, hash, definition, created_at`
	toolChangeCols = `id, session_id, tool, pinned_hash, hash, definition, created_at`
)

// ListToolPins implements store.Store. Each pin is held against its
// evidence record (store.ToolPinBinding) before it is returned.
func (s *Store) ListToolPins(ctx context.Context, sessionID string) ([]*store.ToolPin, error) {
	rows, err := s.query(ctx, `SELECT `+toolPinCols+`, `+bound("tool_pins")+` FROM tool_pins WHERE session_id = ? ORDER BY rowid`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list tool pins: %w", err)
	}
	defer rows.Close()
	var out []*store.ToolPin
	for rows.Next() {
		p, err := scanToolPin(rows)
		if err != nil {
			return nil, fmt.Errorf("list tool pins: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func scanToolPin(r scanner) (*store.ToolPin, error) {
	var (
		p          store.ToolPin
		def        []byte
		created    int64
		leaf, body []byte
	)
	if err := r.Scan(&p.SessionID, &p.Tool, &p.Hash, &def, &created, &leaf, &body); err != nil {
		return nil, err
	}
	p.Definition = json.RawMessage(def)
	p.CreatedAt = time.Unix(0, created).UTC()
	if err := store.ToolPinBinding.Check(p.SessionID+"/"+p.Tool, &p, leaf, body); err != nil {
		return nil, err
	}
	return &p, nil
}

// ListToolChanges implements store.Store. Each change is held against its
// evidence record (store.ToolChangeBinding) before it is returned.
func (s *Store) ListToolChanges(ctx context.Context, sessionID string) ([]*store.ToolChange, error) {
	rows, err := s.query(ctx, `SELECT `+toolChangeCols+`, `+bound("tool_changes")+` FROM tool_changes WHERE session_id = ? ORDER BY rowid`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list tool changes: %w", err)
	}
	defer rows.Close()
	var out []*store.ToolChange
	for rows.Next() {
		c, err := scanToolChange(rows)
		if err != nil {
			return nil, fmt.Errorf("list tool changes: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func scanToolChange(r scanner) (*store.ToolChange, error) {
	var (
		c          store.ToolChange
		def        []byte
		created    int64
		leaf, body []byte
	)
	if err := r.Scan(&c.ID, &c.SessionID, &c.Tool, &c.PinnedHash, &c.Hash, &def, &created, &leaf, &body); err != nil {
		return nil, err
	}
	c.Definition = json.RawMessage(def)
	c.CreatedAt = time.Unix(0, created).UTC()
	if err := store.ToolChangeBinding.Check(c.ID, &c, leaf, body); err != nil {
		return nil, err
	}
	return &c, nil
}

// CreateToken implements store.Store.
func (s *Store) CreateToken(ctx context.Context, t *store.Token) error {
	_, err := s.pool.ExecContext(ctx, `INSERT INTO tokens (id, hash, role, agent_id, name, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		t.ID, t.Hash, t.Role, t.AgentID, t.Name, t.CreatedAt.UnixNano())
	if err != nil {
		if isConstraint(err) {
			return fmt.Errorf("token %s: %w", t.ID, store.ErrConflict)
		}
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

func scanToken(r scanner) (*store.Token, error) {
	var (
		t       store.Token
		created int64
		revoked sql.NullInt64
	)
	if err := r.Scan(&t.ID, &t.Hash, &t.Role, &t.AgentID, &t.Name, &created, &revoked); err != nil {
		return nil, err
	}
	t.CreatedAt = time.Unix(0, created).UTC()
	if revoked.Valid {
		at := time.Unix(0, revoked.Int64).UTC()
		t.RevokedAt = &at
	}
	return &t, nil
}

// TokenByHash implements store.Store.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*store.Token, error) {
	t, err := scanToken(s.queryRow(ctx, `SELECT id, hash, role, agent_id, name, created_at, revoked_at FROM tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	return t, err
}

// ListTokens implements store.Store.
func (s *Store) ListTokens(ctx context.Context) ([]*store.Token, error) {
	rows, err := s.query(ctx, `SELECT id, hash, role, agent_id, name, created_at, revoked_at FROM tokens ORDER BY created_at`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []*store.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeToken implements store.Store.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	res, err := s.pool.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, at.UnixNano(), id)
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("token %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// EvidenceSize implements store.Store. The log is gapless from 0 (the
// writer only appends the next index, and the tree's rebuild at open reads
// every index below this and fails on a missing one), so its size is the
// last index + 1: one seek down the primary key, where COUNT(*) reads the
// whole table — over a second at a million records, longer than a health
// check may take.
func (s *Store) EvidenceSize(ctx context.Context) (uint64, error) {
	var n uint64
	if err := s.queryRow(ctx, `SELECT COALESCE(MAX(idx) + 1, 0) FROM evidence`).Scan(&n); err != nil {
		return 0, fmt.Errorf("evidence size: %w", err)
	}
	return n, nil
}

// EvidenceRange implements store.Store.
func (s *Store) EvidenceRange(ctx context.Context, from, to uint64) ([]*store.EvidenceRecord, error) {
	rows, err := s.query(ctx, `SELECT idx, type, session_id, origin, body, leaf_hash, created_at FROM evidence WHERE idx >= ? AND idx < ? ORDER BY idx`, from, to)
	if err != nil {
		return nil, fmt.Errorf("evidence range: %w", err)
	}
	defer rows.Close()
	var out []*store.EvidenceRecord
	for rows.Next() {
		var (
			r       store.EvidenceRecord
			created int64
		)
		if err := rows.Scan(&r.Index, &r.Type, &r.SessionID, &r.Origin, &r.Body, &r.LeafHash, &created); err != nil {
			return nil, fmt.Errorf("evidence range: %w", err)
		}
		r.CreatedAt = time.Unix(0, created).UTC()
		out = append(out, &r)
	}
	return out, rows.Err()
}

// isConstraint reports a uniqueness or foreign-key violation. Extended
// result codes keep the primary code in their low byte.
func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}
