// Package evidence keeps Mandate's tamper-evident record of everything it
// saw and decided: an append-only log of canonical JSON records (decisions,
// observations, mandate versions, session changes, tool pins, reported
// statements), each labelled observed or reported; an RFC 6962 Merkle tree
// over them; checkpoints signed in the signed-note format with an Ed25519
// key; inclusion and consistency proofs; session bundles that verify offline
// with nothing but the bundle and the verifier key; and verification of a
// whole store against its signed checkpoints and an earlier checkpoint kept
// elsewhere.
//
// Records are made by the Recorder before a change is submitted and commit
// in the same transaction as what they describe; the store assigns their
// indices and hands the leaf hashes to Log.Append after each commit, before
// anyone is acknowledged. The Log publishes a signed checkpoint at least
// once a second while records arrive, and on Close.
package evidence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// Store is what the log needs from a backend: its evidence records and
// checkpoints. Every store.Store provides it.
type Store interface {
	EvidenceSize(ctx context.Context) (uint64, error)
	EvidenceRange(ctx context.Context, from, to uint64) ([]*store.EvidenceRecord, error)
	EvidenceLeafHashes(ctx context.Context, from, to uint64) ([][]byte, error)
	EvidenceFrom(ctx context.Context, from uint64, limit int) ([]*store.EvidenceRecord, error)
	SessionEvidence(ctx context.Context, sessionID string) ([]*store.EvidenceRecord, error)
	AddCheckpoint(ctx context.Context, cp *store.Checkpoint) error
	LatestCheckpoint(ctx context.Context) (*store.Checkpoint, error)
	ListCheckpoints(ctx context.Context, afterID int64, limit int) ([]*store.Checkpoint, error)
}

var _ Store = store.Store(nil)

// Options configure a Log.
type Options struct {
	Store  Store
	Key    *Key
	Logger *slog.Logger
	// Interval is how often a checkpoint is published while records
	// arrive (default one second).
	Interval time.Duration
	// Now is the clock for checkpoint times (default time.Now).
	Now func() time.Time
	// ReadOnly opens the log of a store opened read-only (a data
	// directory a server has open): nothing is published in the
	// background, and a checkpoint it needs is signed but not stored.
	ReadOnly bool
	// Signs, if set, says whether this process signs checkpoints now. A
	// shared store's replicas sign only while theirs is the integrator;
	// the others use the checkpoints it stores (waiting for one that
	// covers what they are asked for). Nil means always.
	Signs func() bool
}

// Log is the evidence log of one store: its Merkle tree, its checkpoints and
// the proofs over them. It is safe for concurrent use.
type Log struct {
	st       Store
	key      *Key
	log      *slog.Logger
	now      func() time.Time
	interval time.Duration
	readOnly bool
	signs    func() bool
	tree     *tree

	// failed is set when the tree fell out of step with the store; no
	// checkpoint is signed after it.
	failed atomic.Pointer[error]

	pubMu  sync.Mutex // serialises signing and storing checkpoints
	headMu sync.Mutex // serialises committing session heads (head.go)
	latest atomic.Pointer[Checkpoint]

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Open loads the log of the store: it rebuilds the tree from the stored leaf
// hashes, checks it against the latest signed checkpoint, publishes a
// checkpoint if records are not covered yet, and starts the publisher. It
// refuses a store whose log no longer matches its latest checkpoint.
func Open(ctx context.Context, opts Options) (*Log, error) {
	if opts.Store == nil || opts.Key == nil {
		return nil, errors.New("evidence: store and key are required")
	}
	l := &Log{
		st: opts.Store, key: opts.Key, log: opts.Logger, now: opts.Now, interval: opts.Interval, readOnly: opts.ReadOnly, signs: opts.Signs,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.interval <= 0 {
		l.interval = time.Second
	}
	l.tree = newTree(l.st.EvidenceLeafHashes)
	n, err := l.st.EvidenceSize(ctx)
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	if l.readOnly {
		if err := l.tree.load(ctx, n); err != nil {
			return nil, fmt.Errorf("evidence: load the log: %w", err)
		}
		if err := l.checkLatest(ctx); err != nil {
			return nil, err
		}
	} else {
		edited, err := l.loadChecked(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("evidence: load the log: %w", err)
		}
		if err := l.checkLatest(ctx); err != nil {
			return nil, err
		}
		if edited != nil {
			return nil, edited
		}
	}
	if l.readOnly {
		close(l.done)
		return l, nil
	}
	if _, err := l.publish(ctx, 0); err != nil {
		return nil, err
	}
	go l.run()
	return l, nil
}

// checkLatest holds the rebuilt tree against the latest stored checkpoint.
func (l *Log) checkLatest(ctx context.Context) error {
	sc, err := l.st.LatestCheckpoint(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	cp, err := OpenCheckpoint(sc.Note, l.key.Verifier())
	if err != nil {
		return fmt.Errorf("evidence: latest stored checkpoint: %w; run 'mandate evidence verify'", err)
	}
	size := l.tree.size()
	if cp.Size > size {
		return fmt.Errorf("evidence: %w: the log has %d records but checkpoint %d signed %d: records were removed; run 'mandate evidence verify'", ErrTampered, size, sc.ID, cp.Size)
	}
	p, err := l.tree.prover(cp.Size)
	if err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	root, err := p.root(ctx)
	if err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	if !bytes.Equal(root, cp.Root) {
		return fmt.Errorf("evidence: %w: the first %d records no longer match checkpoint %d; run 'mandate evidence verify'", ErrTampered, cp.Size, sc.ID)
	}
	l.latest.Store(cp)
	return nil
}

// loadChecked rebuilds the tree from the stored records and, in the same
// pass, holds every body against its stored leaf hash, refusing a log in
// which a body no longer hashes to it: the tree (and so the signed
// checkpoints) covers the leaf hashes, and the rows the server acts on are
// held against the bodies, so an edited body would otherwise go unseen until
// someone ran verify. One pass over the records, where reading the leaf
// hashes and then the bodies read the table twice. edited is the first body
// that fails; the caller reports it after the checkpoint check, so that a
// replaced leaf hash is still reported as the checkpoint's mismatch.
func (l *Log) loadChecked(ctx context.Context, n uint64) (edited, err error) {
	const chunk = 4096
	for pos := l.tree.size(); pos < n; {
		recs, err := l.st.EvidenceFrom(ctx, pos, int(min(n-pos, chunk)))
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			break
		}
		first := pos
		hashes := make([][]byte, 0, len(recs))
		for _, r := range recs {
			if r.Index != pos {
				return nil, fmt.Errorf("evidence record %d: %w (the log has a gap)", pos, store.ErrNotFound)
			}
			if edited == nil && !bytes.Equal(LeafHash(r.Body), r.LeafHash) {
				edited = fmt.Errorf("evidence: %w: record %d (%s) no longer hashes to its leaf hash: its body was edited; run 'mandate evidence verify'", ErrTampered, r.Index, r.Type)
			}
			hashes = append(hashes, r.LeafHash)
			pos++
		}
		if err := l.tree.append(first, hashes); err != nil {
			return nil, err
		}
	}
	if size := l.tree.size(); size != n {
		return nil, fmt.Errorf("evidence record %d: %w", size, store.ErrNotFound)
	}
	return edited, nil
}

// Append adds committed records' leaf hashes; it is the store's OnEvidence
// callback, called in commit order.
func (l *Log) Append(first uint64, leafHashes [][]byte) {
	err := l.tree.append(first, leafHashes)
	if err == nil {
		return
	}
	if size := l.tree.size(); first > size {
		// Records committed without reaching the tree (not expected):
		// catch up from the store, which has them.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err = l.tree.load(ctx, first); err == nil {
			if err = l.tree.append(first, leafHashes); err == nil {
				return
			}
		}
	}
	err = fmt.Errorf("evidence tree out of step with the store: %w; checkpoints stop until restart", err)
	l.failed.Store(&err)
	l.log.Error("evidence log failed", "err", err)
}

func (l *Log) err() error {
	if p := l.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// run publishes checkpoints while records arrive.
func (l *Log) run() {
	defer close(l.done)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if _, err := l.publish(ctx, 0); err != nil {
				l.log.Error("publish evidence checkpoint", "err", err)
			}
			cancel()
		}
	}
}

// publish signs and stores a checkpoint of the current tree unless the
// latest one already covers it, and returns the latest. The tree must have
// at least atLeast records.
func (l *Log) publish(ctx context.Context, atLeast uint64) (*Checkpoint, error) {
	if err := l.err(); err != nil {
		return nil, err
	}
	if l.signs != nil && !l.signs() {
		return l.stored(ctx, atLeast)
	}
	l.pubMu.Lock()
	defer l.pubMu.Unlock()
	size, root, err := l.tree.head()
	if err != nil {
		return nil, err
	}
	if size < atLeast {
		return nil, fmt.Errorf("evidence log has %d records, fewer than %d: %w", size, atLeast, store.ErrNotFound)
	}
	if cp := l.latest.Load(); cp != nil && cp.Size >= size {
		return cp, nil
	}
	cp, err := l.key.sign(size, root, l.now())
	if err != nil {
		return nil, err
	}
	if l.readOnly {
		l.latest.Store(cp)
		return cp, nil
	}
	if err := l.st.AddCheckpoint(ctx, &store.Checkpoint{Size: cp.Size, RootHash: cp.Root, Note: cp.Note, CreatedAt: cp.Time}); err != nil {
		return nil, fmt.Errorf("store checkpoint: %w", err)
	}
	l.latest.Store(cp)
	return cp, nil
}

// Close stops the publisher and publishes a last checkpoint covering every
// record appended so far. Call it after the store has committed everything
// submitted and before the store closes.
func (l *Log) Close(ctx context.Context) error {
	l.closeOnce.Do(func() {
		close(l.stop)
		<-l.done
		if !l.readOnly {
			_, l.closeErr = l.publish(ctx, 0)
		}
	})
	return l.closeErr
}

// Key is the log's signing key.
func (l *Log) Key() *Key { return l.key }

// Size is the number of records committed and appended to the tree.
func (l *Log) Size() uint64 { return l.tree.size() }

// Checkpoint returns the latest checkpoint, publishing a new one first if
// the latest covers fewer than atLeast records.
func (l *Log) Checkpoint(ctx context.Context, atLeast uint64) (*Checkpoint, error) {
	if cp := l.latest.Load(); cp != nil && cp.Size >= atLeast {
		return cp, nil
	}
	cp, err := l.publish(ctx, atLeast)
	if err == nil && cp == nil {
		// A replica that does not sign, before the integrator's first.
		return nil, fmt.Errorf("evidence: no checkpoint stored yet: %w", store.ErrNotFound)
	}
	return cp, err
}

// Entry is a record with its inclusion proof against a checkpoint.
type Entry struct {
	Record     *store.EvidenceRecord
	Proof      [][]byte
	Checkpoint *Checkpoint
}

// Entry returns the record at index with its inclusion proof against the
// latest checkpoint (published now if the latest does not cover it).
func (l *Log) Entry(ctx context.Context, index uint64) (*Entry, error) {
	if index >= l.Size() {
		return nil, fmt.Errorf("evidence record %d: %w (the log has %d)", index, store.ErrNotFound, l.Size())
	}
	recs, err := l.st.EvidenceRange(ctx, index, index+1)
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, fmt.Errorf("%w: evidence record %d is missing from the store", ErrTampered, index)
	}
	if err := checkStored(recs[0]); err != nil {
		return nil, err
	}
	cp, err := l.Checkpoint(ctx, index+1)
	if err != nil {
		return nil, err
	}
	p, err := l.tree.prover(cp.Size)
	if err != nil {
		return nil, err
	}
	pr, err := p.inclusion(ctx, index)
	if err != nil {
		return nil, fmt.Errorf("evidence record %d: %w", index, err)
	}
	return &Entry{Record: recs[0], Proof: pr, Checkpoint: cp}, nil
}

// checkStored refuses a stored record whose body no longer hashes to its
// leaf hash.
func checkStored(r *store.EvidenceRecord) error {
	if !bytes.Equal(LeafHash(r.Body), r.LeafHash) {
		return fmt.Errorf("%w: stored evidence record %d no longer hashes to its leaf hash; run 'mandate evidence verify'", ErrTampered, r.Index)
	}
	return nil
}

// Consistency returns the consistency proof between the trees of sizes
// from and to (to = 0 means the latest checkpoint's size), with the
// checkpoint it ends at when to is that checkpoint's size.
func (l *Log) Consistency(ctx context.Context, from, to uint64) ([][]byte, uint64, error) {
	if to == 0 {
		cp, err := l.Checkpoint(ctx, 0)
		if err != nil {
			return nil, 0, err
		}
		to = cp.Size
	}
	if from > to {
		return nil, 0, fmt.Errorf("consistency from %d to %d: from is larger", from, to)
	}
	if size := l.Size(); to > size {
		return nil, 0, fmt.Errorf("consistency to %d: %w (the log has %d records)", to, store.ErrNotFound, size)
	}
	p, err := l.tree.prover(to)
	if err != nil {
		return nil, 0, err
	}
	pr, err := p.consistency(ctx, from)
	if err != nil {
		return nil, 0, err
	}
	return pr, to, nil
}

// Root returns the root hash of the tree of the given size.
func (l *Log) Root(ctx context.Context, size uint64) ([]byte, error) {
	p, err := l.tree.prover(size)
	if err != nil {
		return nil, err
	}
	return p.root(ctx)
}
