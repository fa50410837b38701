package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

func TestBaselines(t *testing.T) {
	storetest.RunBaselines(t, storetest.Backend{
		New: func(t *testing.T) string { return pgtest.DSN(t) },
		Open: func(t *testing.T, dsn string, on func(uint64, [][]byte)) (store.Store, error) {
			return Open(context.Background(), dsn, Options{OnEvidence: on, Poll: 20 * time.Millisecond})
		},
		Shared: true,
	})
}
