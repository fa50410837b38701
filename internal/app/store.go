package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

// StoreEnv names the shared store when --store is not given.
const StoreEnv = "MANDATE_STORE"

// IsShared reports whether a store address names a shared store
// (PostgreSQL) rather than the embedded one.
func IsShared(addr string) bool {
	return strings.HasPrefix(addr, "postgres://") || strings.HasPrefix(addr, "postgresql://") ||
		strings.Contains(addr, "host=") || strings.Contains(addr, "dbname=")
}

// StoreAddress is the store to use: the flag's value, else $MANDATE_STORE,
// else "" (the embedded store). An address that is not a PostgreSQL one is
// refused with what was expected.
func StoreAddress(flag string, getenv func(string) string) (string, error) {
	addr := flag
	if addr == "" && getenv != nil {
		addr = getenv(StoreEnv)
	}
	if addr == "" || IsShared(addr) {
		return addr, nil
	}
	return "", fmt.Errorf("store %q: want a PostgreSQL address (postgres://USER@HOST:PORT/DB[?…]); without --store (or %s) the embedded SQLite store in --data is used", addr, StoreEnv)
}

// openStore opens the embedded SQLite store at dbPath, or the shared store
// cfg.Store names. signs, for a shared store, says whether this replica
// signs evidence checkpoints now (it does while its store integrates).
func openStore(ctx context.Context, cfg Config, dbPath string, onEvidence func(uint64, [][]byte), onCommit func(time.Duration, int)) (store.Store, func() bool, error) {
	if cfg.Store == "" {
		st, err := sqlite.Open(ctx, dbPath, sqlite.Options{Synchronous: cfg.Synchronous, Logger: cfg.Logger, OnEvidence: onEvidence})
		return st, nil, err
	}
	st, err := postgres.Open(ctx, cfg.Store, postgres.Options{Logger: cfg.Logger, OnEvidence: onEvidence, OnCommit: onCommit})
	if err != nil {
		return nil, nil, err
	}
	return st, st.Integrator, nil
}

// appendLeaves hands the log the leaf hashes it does not have yet. A shared
// store's replica may be told of records the log already loaded from the
// store when it opened; the embedded store never repeats itself.
func appendLeaves(l *evidence.Log, first uint64, hashes [][]byte) {
	if n := l.Size(); first < n {
		skip := n - first
		if skip >= uint64(len(hashes)) {
			return
		}
		first, hashes = n, hashes[skip:]
	}
	l.Append(first, hashes)
}

// syncer is a store whose evidence records become readable after their
// change is acknowledged (a shared store, once integrated).
type syncer interface {
	SyncEvidence(ctx context.Context) error
}

// syncEvidence waits (a few seconds at most) until the records this replica
// committed are integrated, so that the last checkpoint covers them when
// this replica is the integrator; otherwise another replica's integrator
// will.
func syncEvidence(ctx context.Context, a *App) {
	sy, ok := a.Store.(syncer)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := sy.SyncEvidence(ctx); err != nil {
		a.Logger.Warn("evidence not integrated before shutdown; another replica's integrator (or the next start) will integrate it", "err", err)
	}
}
