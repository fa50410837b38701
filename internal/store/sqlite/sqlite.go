// Package sqlite is the embedded store: one SQLite database file (pure Go,
// modernc.org/sqlite) in WAL mode, with a single writer goroutine that commits
// concurrent changes together (group commit) and fsyncs before acknowledging.
package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
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
	path  string
	pool  *sql.DB
	write *sql.DB
	opts  Options
	log   *slog.Logger
	queue *sqlstore.Queue[job]
	done  chan struct{}

	// stmts are the read pool's prepared statements by query text
	// (prepared.go).
	stmts sync.Map

	commits, changes atomic.Uint64
	// broken is set when the WAL could not be synced: what was committed
	// since the last sync may be lost, so nothing more is accepted.
	broken          atomic.Pointer[error]
	stopCheckpoints chan struct{}
	checkpointsDone chan struct{}
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
		queue: sqlstore.NewQueue[job](4096),
		done:  make(chan struct{}),
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
	if !s.queue.Close() {
		return nil
	}
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
	e, err := sqlstore.Encode(c)
	if err != nil {
		res <- err
		return res
	}
	s.enqueue(job{Job: sqlstore.Job{E: e, Res: res}})
	return res
}

// job is what the writer runs: a change, or a baseline fold (fold set, E
// nil), which commits in the writer's batch like a change instead of
// taking the database's write lock beside it.
type job struct {
	sqlstore.Job
	fold *store.BaselineFold
}

// enqueue hands j to the writer, or answers it at once when the store takes
// nothing more.
func (s *Store) enqueue(j job) {
	if err := s.queue.Put(j, s.refuse); err != nil {
		j.Res <- err
	}
}

// refuse is the error a store that failed to sync its WAL answers every
// change with.
func (s *Store) refuse() error {
	if err := s.broken.Load(); err != nil {
		return *err
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
	return list(ctx, s, "evidence range", `SELECT `+sqlstore.RecordCols+` FROM evidence WHERE idx >= ? AND idx < ? ORDER BY idx`, sqlstore.ScanRecord, from, to)
}

// isConstraint reports a uniqueness or foreign-key violation. Extended
// result codes keep the primary code in their low byte.
func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}
