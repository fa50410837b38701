// Package postgres is the shared store: a PostgreSQL database (pgx/v5) that
// several `mandate serve` replicas use at once. It implements the same
// store contract as the embedded SQLite store and passes the same
// conformance suite (package storetest).
//
// Correctness across replicas comes from PostgreSQL itself. Each replica
// commits concurrent changes together, in submission order, as one implicit
// transaction (a pgx batch: one round trip); a change carrying a
// store.Guard compares and sets its session's head under the row's lock, so
// a decision made on a stale copy of a session fails with store.ErrStale
// and nothing of it is written. Evidence records are durable when a change
// is acknowledged but get their place in the log from one elected
// integrator (a session-level advisory lock; another replica takes over when
// its connection ends), which assigns indices in order, gaplessly, and
// announces the new size with NOTIFY; every replica follows the integrated
// log to keep its Merkle tree, and only the integrator's process signs
// checkpoints (see Integrator).
package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// Options tune a store.
type Options struct {
	// MaxBatch caps how many changes one transaction commits (default 256).
	MaxBatch int
	// OnEvidence, if set, is called with integrated records' leaf hashes,
	// in index order and gaplessly from the log's size at Open: the
	// records this replica integrated and those others did.
	OnEvidence func(first uint64, leafHashes [][]byte)
	Logger     *slog.Logger
	// ReplicaID names this process in the replicas table (default: host
	// name, process id and random digits).
	ReplicaID string
	// Poll is how often the integrator looks for records without an index
	// when no NOTIFY woke it, and followers for newly integrated ones
	// (default 100 ms). Takeover after an integrator dies takes about this.
	Poll time.Duration
	// NoIntegrator keeps this process from standing for integrator (tools
	// that open the store briefly). It still follows the log.
	NoIntegrator bool
	// MaxConns sizes the connection pool (default 16).
	MaxConns int32
	// OnCommit, if set, is told how long each batch's round trip took and
	// how many changes it committed (for the store latency metric).
	OnCommit func(d time.Duration, changes int)
	// CommitTimeout bounds one batch's round trip (default 10 s): past it
	// the batch fails as unavailable.
	CommitTimeout time.Duration
}

// Store is the PostgreSQL backend. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	cfg    *pgxpool.Config
	opts   Options
	log    *slog.Logger
	schema string
	where  string // host:port/database, for messages

	queue *sqlstore.Queue[sqlstore.Job]
	done  chan struct{}

	readOnly bool
	integ    *integrator

	commits, changes atomic.Uint64
	commitNanos      atomic.Uint64

	// following is closed once a WatchApprovals of this store listens
	// (Following).
	following  chan struct{}
	followOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// ErrReadOnly is returned by Submit on a store opened with OpenReadOnly.
var ErrReadOnly = errors.New("store opened read-only")

// ParseDSN checks a store address: a postgres:// or postgresql:// URL or a
// key=value DSN. It never echoes a password.
func ParseDSN(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: the store address is not a valid PostgreSQL URL or DSN: %v", redactErr(err))
	}
	return cfg, nil
}

// redactErr drops pgx's quoting of the whole connection string (which may
// hold a password) from a parse error, keeping the reason.
func redactErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "`: "); i >= 0 {
		return s[i+3:]
	}
	return s
}

func (o *Options) defaults() {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 16
	}
	if o.CommitTimeout <= 0 {
		o.CommitTimeout = 10 * time.Second
	}
	if o.ReplicaID == "" {
		host, _ := os.Hostname()
		o.ReplicaID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), rand.Text()[:6])
	}
}

func connect(ctx context.Context, dsn string, opts Options) (*pgxpool.Config, string, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, "", err
	}
	cc := cfg.ConnConfig
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = 5 * time.Second
	}
	if cc.RuntimeParams["application_name"] == "" {
		cc.RuntimeParams["application_name"] = "mandate"
	}
	cfg.MaxConns = opts.MaxConns
	where := fmt.Sprintf("%s:%d/%s as %s", cc.Host, cc.Port, cc.Database, cc.User)
	return cfg, where, nil
}

// Migrate applies the schema migrations the database lacks, alone, and
// returns the versions before and after. It refuses a newer schema.
func Migrate(ctx context.Context, dsn string) (from, to int, err error) {
	cfg, where, err := connect(ctx, dsn, Options{MaxConns: 1})
	if err != nil {
		return 0, 0, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return 0, 0, describe("connect to "+where, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	from, to, err = migrate(ctx, conn)
	if err != nil {
		return from, to, fmt.Errorf("%w (database %s)", err, where)
	}
	return from, to, nil
}

// Open connects to the database, applies migrations (refusing a schema
// newer than this binary's), checks the evidence log has no gap, and starts
// the writer and the integrator.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	opts.defaults()
	cfg, where, err := connect(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return nil, describe("connect to "+where, err)
	}
	_, _, err = migrate(ctx, conn)
	conn.Close(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("%w (database %s)", err, where)
	}
	s, err := open(ctx, cfg, where, opts)
	if err != nil {
		return nil, err
	}
	if err := s.checkLog(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	s.done = make(chan struct{})
	go s.writer()
	s.integ = newIntegrator(s)
	if err := s.integ.start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenReadOnly opens the store for reading only — no migration, no writer,
// no integrator, none of Open's refusals of a damaged log — so that
// `mandate evidence verify --store` can examine a store Open would refuse.
// The schema must be this binary's version.
func OpenReadOnly(ctx context.Context, dsn string) (*Store, error) {
	opts := Options{MaxConns: 4}
	opts.defaults()
	cfg, where, err := connect(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	s, err := open(ctx, cfg, where, opts)
	if err != nil {
		return nil, err
	}
	have, err := schemaVersion(ctx, s.pool)
	if err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("%w (database %s)", err, where)
	}
	if have != len(migrations) {
		s.pool.Close()
		if have > len(migrations) {
			return nil, fmt.Errorf("postgres: %s: %w: schema version %d, this binary reads version %d: upgrade mandate", where, ErrNewerSchema, have, len(migrations))
		}
		return nil, fmt.Errorf("postgres: %s: schema version %d, this binary reads version %d: run 'mandate store migrate' first", where, have, len(migrations))
	}
	s.readOnly = true
	return s, nil
}

func open(ctx context.Context, cfg *pgxpool.Config, where string, opts Options) (*Store, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, describe("connect to "+where, err)
	}
	// A read-only store has a queue too, which nothing takes from: Close
	// closes it, and Submit refuses before it.
	s := &Store{pool: pool, cfg: cfg, opts: opts, log: opts.Logger, where: where, queue: sqlstore.NewQueue[sqlstore.Job](4096), following: make(chan struct{})}
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&s.schema); err != nil {
		pool.Close()
		return nil, describe("connect to "+where, err)
	}
	return s, nil
}

// checkLog refuses a log with a gap in its numbering or whose head row
// disagrees with it: appending would hide a deletion.
func (s *Store) checkLog(ctx context.Context) error {
	var count, next, head uint64
	err := s.pool.QueryRow(ctx, `SELECT count(idx), COALESCE(max(idx) + 1, 0), (SELECT size FROM evidence_head) FROM evidence`).Scan(&count, &next, &head)
	if err != nil {
		return describe("read the evidence log's size", err)
	}
	if count != next || head != next {
		return fmt.Errorf("postgres: %s: evidence log has %d records, its last index is %d and its head says %d: the log was tampered with; run 'mandate evidence verify --store'", s.where, count, int64(next)-1, head)
	}
	return nil
}

// Where is the database as host:port/database and role, for messages
// (never the password).
func (s *Store) Where() string { return s.where }

// Close stops accepting changes, commits what is queued, gives up the
// integrator role and closes the pool.
func (s *Store) Close() error {
	if !s.queue.Close() {
		return nil
	}
	if s.done != nil {
		<-s.done
	}
	if s.integ != nil {
		s.integ.stop()
	}
	s.pool.Close()
	return nil
}

// Submit implements store.Store.
func (s *Store) Submit(c *store.Change) <-chan error {
	res := make(chan error, 1)
	if s.readOnly {
		res <- ErrReadOnly
		return res
	}
	e, err := sqlstore.Encode(c)
	if err != nil {
		res <- err
		return res
	}
	if err := s.queue.Put(sqlstore.Job{E: e, Res: res}, nil); err != nil {
		res <- err
	}
	return res
}

// Stats counts the writer's work.
type Stats struct {
	// Commits and Changes are transactions committed and the changes in
	// them; CommitSeconds the time spent in them.
	Commits       uint64
	Changes       uint64
	CommitSeconds float64
}

// Stats reports the writer's counters.
func (s *Store) Stats() Stats {
	return Stats{Commits: s.commits.Load(), Changes: s.changes.Load(), CommitSeconds: float64(s.commitNanos.Load()) / 1e9}
}

// Ping checks the database answers, within ctx.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return describe("ping "+s.where, err)
	}
	return nil
}
