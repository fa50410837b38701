package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The evidence log of a shared store is integrated the way a transparency
// log's is (Trillian, Tessera): replicas append records durably without an
// index; one integrator, elected by a session-level advisory lock held on
// its own connection, gives the records waiting indices in the order of
// their ids, moves the log's head row in the same transaction, and
// announces the new size with NOTIFY. When its process dies its connection
// ends, PostgreSQL releases the lock, and the next replica to try it (every
// Poll) takes over. The head row is locked and compared with the size the
// integrator has followed, so even two processes that both believed they
// held the lock could not assign an index twice or leave a gap.
//
// Every replica, integrator or not, follows the integrated log and hands new
// leaf hashes to Options.OnEvidence in order; the process whose store is the
// integrator is the one that signs checkpoints (Integrator reports it).

const (
	chanPending    = "pending"    // records were appended
	chanIntegrated = "integrated" // the head moved
	integratorLock = "mandate.integrator."
	integrateBatch = 8192
	heartbeatEvery = time.Second
	// replicaFresh is how recently a replica must have announced itself to
	// count as running.
	replicaFresh = 5 * time.Second
)

// channel is a NOTIFY channel of this schema's store (channels and
// advisory locks are per database; schemas share them).
func (s *Store) channel(name string) string { return "mandate_" + name + "_" + s.schema }

type integrator struct {
	s *Store

	mu   sync.Mutex // serialises following, integrating and OnEvidence
	size uint64     // the log's size as delivered to OnEvidence

	leader    atomic.Bool
	lastErr   atomic.Pointer[string]
	conn      *pgx.Conn // the loop's own: LISTEN and the advisory lock
	lastBeat  time.Time
	startedAt time.Time

	stopc chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newIntegrator(s *Store) *integrator {
	return &integrator{s: s, stopc: make(chan struct{}), done: make(chan struct{}), startedAt: time.Now()}
}

// start reads the integrated size and starts the loop.
func (i *integrator) start(ctx context.Context) error {
	if err := i.s.pool.QueryRow(ctx, `SELECT size FROM evidence_head`).Scan(&i.size); err != nil {
		return describe("read the evidence head", err)
	}
	go i.run()
	return nil
}

func (i *integrator) stop() {
	i.once.Do(func() {
		close(i.stopc)
		<-i.done
	})
}

func (i *integrator) run() {
	defer close(i.done)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if i.conn != nil {
			i.conn.Exec(ctx, `DELETE FROM replicas WHERE id = $1`, i.s.opts.ReplicaID)
			i.conn.Close(ctx) // releases the lock
		}
		i.leader.Store(false)
	}()
	backoff := i.s.opts.Poll
	for {
		select {
		case <-i.stopc:
			return
		default:
		}
		err := i.step()
		if err != nil {
			msg := err.Error()
			i.lastErr.Store(&msg)
			i.s.log.Warn("evidence integrator", "err", err, "integrator", i.leader.Load())
			if i.conn != nil && (i.conn.IsClosed() || errors.Is(err, ErrUnavailable)) {
				i.conn.Close(context.Background())
				i.conn = nil
				i.leader.Store(false)
			}
			select {
			case <-i.stopc:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		i.lastErr.Store(nil)
		backoff = i.s.opts.Poll
		i.wait()
	}
}

// wait sleeps until a notification arrives, Poll passes or stop.
func (i *integrator) wait() {
	ctx, cancel := context.WithTimeout(context.Background(), i.s.opts.Poll)
	defer cancel()
	go func() {
		select {
		case <-i.stopc:
			cancel()
		case <-ctx.Done():
		}
	}()
	i.conn.WaitForNotification(ctx)
}

// step connects if needed, stands for integrator, follows the log and, as
// integrator, integrates what waits.
func (i *integrator) step() error {
	ctx, cancel := context.WithTimeout(context.Background(), i.s.opts.CommitTimeout)
	defer cancel()
	if i.conn == nil {
		conn, err := pgx.ConnectConfig(ctx, i.s.cfg.ConnConfig.Copy())
		if err != nil {
			return describe("integrator: connect to "+i.s.where, err)
		}
		for _, ch := range []string{chanPending, chanIntegrated} {
			if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{i.s.channel(ch)}.Sanitize()); err != nil {
				conn.Close(ctx)
				return describe("integrator: listen", err)
			}
		}
		i.conn = conn
	}
	if !i.leader.Load() && !i.s.opts.NoIntegrator {
		var got bool
		if err := i.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtext($1 || current_schema()))`, integratorLock).Scan(&got); err != nil {
			return describe("integrator: try the lock", err)
		}
		if got {
			i.s.log.Info("evidence integrator: this replica integrates the log", "replica", i.s.opts.ReplicaID)
			i.leader.Store(true)
			i.lastBeat = time.Time{}
		}
	}
	if time.Since(i.lastBeat) >= heartbeatEvery {
		now := time.Now().UnixNano()
		if _, err := i.conn.Exec(ctx, `INSERT INTO replicas (id, started_at, seen_at, integrator) VALUES ($1, $2, $3, $4)
			ON CONFLICT (id) DO UPDATE SET seen_at = $3, integrator = $4`, i.s.opts.ReplicaID, i.startedAt.UnixNano(), now, i.leader.Load()); err != nil {
			return describe("integrator: announce the replica", err)
		}
		i.lastBeat = time.Now()
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if err := i.followLocked(ctx); err != nil {
		return err
	}
	if !i.leader.Load() {
		return nil
	}
	for {
		n, err := i.integrateLocked(ctx)
		if err != nil || n < integrateBatch {
			return err
		}
	}
}

// followLocked hands OnEvidence the records integrated beyond i.size.
func (i *integrator) followLocked(ctx context.Context) error {
	var head uint64
	if err := i.s.pool.QueryRow(ctx, `SELECT size FROM evidence_head`).Scan(&head); err != nil {
		return describe("follow the evidence log", err)
	}
	for i.size < head {
		to := min(head, i.size+1<<16)
		hashes, err := i.s.EvidenceLeafHashes(ctx, i.size, to)
		if err != nil {
			return fmt.Errorf("follow the evidence log: %w", err)
		}
		if i.s.opts.OnEvidence != nil {
			i.s.opts.OnEvidence(i.size, hashes)
		}
		i.size = to
	}
	return nil
}

// integrateLocked gives waiting records their indices, in one transaction on
// the lock's connection, and returns how many.
func (i *integrator) integrateLocked(ctx context.Context) (int, error) {
	tx, err := i.conn.Begin(ctx)
	if err != nil {
		return 0, describe("integrate: begin", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var head uint64
	if err := tx.QueryRow(ctx, `SELECT size FROM evidence_head FOR UPDATE`).Scan(&head); err != nil {
		return 0, describe("integrate: lock the head", err)
	}
	if head != i.size {
		// Someone else integrated (a previous holder of the lock whose
		// last commit we had not followed): follow first.
		return 0, nil
	}
	rows, err := tx.Query(ctx, `SELECT id, leaf_hash FROM evidence WHERE idx IS NULL ORDER BY id LIMIT $1`, integrateBatch)
	if err != nil {
		return 0, describe("integrate: read waiting records", err)
	}
	var (
		ids, idxs []int64
		hashes    [][]byte
	)
	for rows.Next() {
		var (
			id int64
			h  []byte
		)
		if err := rows.Scan(&id, &h); err != nil {
			rows.Close()
			return 0, describe("integrate: read waiting records", err)
		}
		ids, idxs, hashes = append(ids, id), append(idxs, int64(head)+int64(len(ids))), append(hashes, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, describe("integrate: read waiting records", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	size := head + uint64(len(ids))
	if _, err := tx.Exec(ctx, `UPDATE evidence e SET idx = v.idx FROM unnest($1::bigint[], $2::bigint[]) AS v(id, idx) WHERE e.id = v.id`, ids, idxs); err != nil {
		return 0, describe("integrate: assign indices", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE evidence_head SET size = $1`, int64(size)); err != nil {
		return 0, describe("integrate: move the head", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, i.s.channel(chanIntegrated), fmt.Sprint(size)); err != nil {
		return 0, describe("integrate: notify", err)
	}
	if err := tx.Commit(ctx); err != nil {
		// In doubt: the next follow reads what the head says.
		return 0, describe("integrate: commit", err)
	}
	if i.s.opts.OnEvidence != nil {
		i.s.opts.OnEvidence(head, hashes)
	}
	i.size = size
	return len(ids), nil
}

// Integrator reports whether this process currently integrates the log
// (and so signs its checkpoints).
func (s *Store) Integrator() bool { return s.integ != nil && s.integ.leader.Load() }

// SyncEvidence waits until every record committed before it was called is
// integrated and handed to OnEvidence, or ctx ends: evidence reads after it
// see them.
func (s *Store) SyncEvidence(ctx context.Context) error {
	var maxID int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(max(id), 0) FROM evidence`).Scan(&maxID); err != nil {
		return describe("sync evidence", err)
	}
	for {
		var waiting bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM evidence WHERE idx IS NULL AND id <= $1)`, maxID).Scan(&waiting); err != nil {
			return describe("sync evidence", err)
		}
		if !waiting {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres: evidence not integrated yet (is an integrator running?): %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	if s.integ == nil {
		return nil
	}
	s.integ.mu.Lock()
	defer s.integ.mu.Unlock()
	return s.integ.followLocked(ctx)
}

// Replication is the shared store's state as /healthz and /metrics report it.
type Replication struct {
	ReplicaID  string `json:"replica_id"`
	Integrator bool   `json:"integrator"`
	// Replicas is the number of replicas that announced themselves in
	// the last few seconds.
	Replicas int `json:"replicas"`
	// Integrated is the log's integrated size; Pending the records
	// committed but not yet integrated; Unsigned those (pending included)
	// not yet covered by a stored checkpoint — the integrator's lag.
	Integrated uint64 `json:"integrated"`
	Pending    uint64 `json:"pending"`
	Unsigned   uint64 `json:"unsigned"`
	// LastError is the integrator loop's last failure, if it has not
	// recovered since.
	LastError string `json:"last_error,omitempty"`
}

// Replication reads the replication state.
func (s *Store) Replication(ctx context.Context) (*Replication, error) {
	r := &Replication{ReplicaID: s.opts.ReplicaID, Integrator: s.Integrator()}
	var signed uint64
	err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM replicas WHERE seen_at > $1),
		(SELECT size FROM evidence_head),
		(SELECT count(*) FROM evidence WHERE idx IS NULL),
		COALESCE((SELECT size FROM checkpoints ORDER BY id DESC LIMIT 1), 0)`,
		time.Now().Add(-replicaFresh).UnixNano()).Scan(&r.Replicas, &r.Integrated, &r.Pending, &signed)
	if err != nil {
		return nil, describe("read the replication state", err)
	}
	if total := r.Integrated + r.Pending; total > signed {
		r.Unsigned = total - signed
	}
	if s.integ != nil {
		if p := s.integ.lastErr.Load(); p != nil {
			r.LastError = *p
		}
	}
	return r, nil
}
