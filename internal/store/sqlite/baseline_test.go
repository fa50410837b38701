package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

func TestBaselines(t *testing.T) {
	storetest.RunBaselines(t, storetest.Backend{
		New: func(t *testing.T) string { return filepath.Join(t.TempDir(), "m.db") },
		Open: func(t *testing.T, loc string, on func(uint64, [][]byte)) (store.Store, error) {
			return Open(context.Background(), loc, Options{OnEvidence: on})
		},
	})
}

// TestBaselinesInMemory: the in-memory store (eval, tests) shares one
// cache between the writer and the pool, where a busy table is reported
// at once instead of waited for; folds must still get through.
func TestBaselinesInMemory(t *testing.T) {
	storetest.RunBaselines(t, storetest.Backend{
		New: func(t *testing.T) string { return ":memory:" },
		Open: func(t *testing.T, loc string, on func(uint64, [][]byte)) (store.Store, error) {
			return Open(context.Background(), loc, Options{OnEvidence: on, Synchronous: "OFF"})
		},
	}, "FoldIsIdempotent", "FoldConcurrent") // nothing survives a reopen
}
