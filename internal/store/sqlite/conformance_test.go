package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

// backend opens stores of opts in a database file each, or in memory.
func backend(memory bool, opts Options) storetest.Backend {
	return storetest.Backend{
		New: func(t *testing.T) string {
			if memory {
				return ":memory:"
			}
			return filepath.Join(t.TempDir(), "m.db")
		},
		Open: func(t *testing.T, loc string, on func(uint64, [][]byte)) (store.Store, error) {
			o := opts
			o.OnEvidence = on
			return Open(context.Background(), loc, o)
		},
	}
}

func TestConformance(t *testing.T) { storetest.Run(t, backend(false, Options{})) }

func TestBaselines(t *testing.T) { storetest.RunBaselines(t, backend(false, Options{})) }

// TestBaselinesInMemory: the in-memory store (eval, tests) shares one
// cache between the writer and the pool, where a busy table is reported
// at once instead of waited for; folds must still get through.
func TestBaselinesInMemory(t *testing.T) {
	storetest.RunBaselines(t, backend(true, Options{Synchronous: "OFF"}),
		"FoldIsIdempotent", "FoldConcurrent") // nothing survives a reopen
}
