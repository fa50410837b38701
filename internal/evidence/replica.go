package evidence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// storedWait bounds how long a replica that does not sign waits for the
// integrator's checkpoint: it signs at least once a second.
const storedWait = 5 * time.Second

// stored is publish for a replica that does not sign (Options.Signs): the
// latest checkpoint the integrator stored, once it covers atLeast records
// and this replica's tree has caught up with it. The checkpoint is checked
// with the key and against the tree before it is used. With atLeast 0 it
// does not wait.
func (l *Log) stored(ctx context.Context, atLeast uint64) (*Checkpoint, error) {
	deadline := time.Now().Add(storedWait)
	for {
		cp, err := l.latestStored(ctx)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if cp != nil && cp.Size >= atLeast && l.tree.size() >= cp.Size {
			p, err := l.tree.prover(cp.Size)
			if err != nil {
				return nil, err
			}
			root, err := p.root(ctx)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(root, cp.Root) {
				return nil, fmt.Errorf("%w: the integrator's checkpoint of %d records does not match this replica's log; run 'mandate evidence verify --store'", ErrTampered, cp.Size)
			}
			if old := l.latest.Load(); old == nil || old.Size < cp.Size {
				l.latest.Store(cp)
			}
			return l.latest.Load(), nil
		}
		if atLeast == 0 {
			return l.latest.Load(), nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("evidence: no checkpoint covering %d records yet (is the integrator running?): %w", atLeast, store.ErrNotFound)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (l *Log) latestStored(ctx context.Context) (*Checkpoint, error) {
	sc, err := l.st.LatestCheckpoint(ctx)
	if err != nil {
		return nil, err
	}
	cp, err := OpenCheckpoint(sc.Note, l.key.Verifier())
	if err != nil {
		return nil, fmt.Errorf("evidence: stored checkpoint %d: %w", sc.ID, err)
	}
	return cp, nil
}
