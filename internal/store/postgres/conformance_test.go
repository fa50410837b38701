package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

// backend opens stores on a fresh schema each; several opened on one
// schema are replicas of one shared store.
func backend() storetest.Backend {
	return storetest.Backend{
		New: func(t *testing.T) string { return pgtest.DSN(t) },
		Open: func(t *testing.T, dsn string, on func(uint64, [][]byte)) (store.Store, error) {
			return Open(context.Background(), dsn, Options{OnEvidence: on, Poll: 20 * time.Millisecond})
		},
		Shared: true,
	}
}

func TestConformance(t *testing.T) { storetest.Run(t, backend()) }

func TestBaselines(t *testing.T) { storetest.RunBaselines(t, backend()) }
