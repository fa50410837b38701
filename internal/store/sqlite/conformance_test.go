package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		New: func(t *testing.T) string { return filepath.Join(t.TempDir(), "m.db") },
		Open: func(t *testing.T, loc string, on func(uint64, [][]byte)) (store.Store, error) {
			return Open(context.Background(), loc, Options{OnEvidence: on})
		},
	})
}
