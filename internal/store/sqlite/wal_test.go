package sqlite

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// TestWALBounded keeps the writer busy without a pause, with readers
// reading all along (what starves passive checkpoints), and watches the
// WAL: once it passes WALLimit, a checkpoint truncates it while the writes
// go on.
func TestWALBounded(t *testing.T) {
	ctx := context.Background()
	const limit = 256 << 10
	s, path := seeded(t, Options{WALLimit: limit})
	const writers = 8
	for w := range writers {
		applyAll(t, s, newSession(fmt.Sprintf("s%d", w)))
	}
	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		written atomic.Int64
	)
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for seq := 1; !stop.Load(); seq++ {
				if err := store.Apply(ctx, s, decision(fmt.Sprintf("s%d", w), seq)); err != nil {
					t.Error(err)
					return
				}
				written.Add(1)
			}
		}()
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := s.GetSession(ctx, fmt.Sprintf("s%d", w)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	size := func() int64 {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	deadline := time.Now().Add(60 * time.Second)
	var over bool
	for time.Now().Before(deadline) {
		n := size()
		if n > limit {
			over = true
		} else if over && n < limit {
			t.Logf("WAL truncated to %d bytes after passing %d, %d decisions in", n, limit, written.Load())
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the WAL never came back under %d bytes after passing it (now %d bytes, passed it: %v, %d decisions written)", limit, size(), over, written.Load())
}
