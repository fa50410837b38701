package sqlstore

import (
	"iter"
	"sync"

	"github.com/mandate-dev/mandate/internal/store"
)

// Queue is a store's writer queue: Submit puts jobs on it until Close, and
// the store's one writer takes them off in batches, in submission order. A
// backend may queue jobs of its own type (one that embeds Job).
type Queue[J any] struct {
	jobs   chan J
	mu     sync.RWMutex // guards closed against Put: a send on a closed channel panics
	closed bool
}

// NewQueue returns a queue that holds up to size jobs before Put waits for
// the writer (0: every Put waits for the writer to take its job).
func NewQueue[J any](size int) *Queue[J] {
	return &Queue[J]{jobs: make(chan J, size)}
}

// Put hands j to the writer. It returns store.ErrClosed once Close has been
// called, and otherwise the error of refuse (when not nil), which is asked
// under the same lock, so that no job is taken after a store stops taking
// them.
func (q *Queue[J]) Put(j J, refuse func() error) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return store.ErrClosed
	}
	if refuse != nil {
		if err := refuse(); err != nil {
			return err
		}
	}
	q.jobs <- j
	return nil
}

// Close stops Put taking jobs; the writer still gets those already taken.
// It reports whether this call closed the queue (false when it was closed
// before), so that a store's Close runs once.
func (q *Queue[J]) Close() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.closed = true
	close(q.jobs)
	return true
}

// Batches yields, for the writer, each job as it arrives together with
// the jobs waiting behind it, up to max in all, without waiting for more;
// it ends once the queue is closed and empty.
func (q *Queue[J]) Batches(max int) iter.Seq[[]J] {
	return func(yield func([]J) bool) {
		for first := range q.jobs {
			if !yield(drain(first, q.jobs, max)) {
				return
			}
		}
	}
}

// drain returns a batch of first and the jobs waiting on jobs, up to max
// in all.
func drain[J any](first J, jobs <-chan J, max int) []J {
	// A fresh slice each time: a batch may still be waiting to be
	// acknowledged while the next is gathered.
	batch := make([]J, 1, 16)
	batch[0] = first
	for len(batch) < max {
		select {
		case j, ok := <-jobs:
			if !ok {
				return batch
			}
			batch = append(batch, j)
		default:
			return batch
		}
	}
	return batch
}
