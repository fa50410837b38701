//go:build !unix

package app

// LockFile is held by the process that has the data directory open.
const LockFile = "mandate.lock"

// lockDir is a no-op where flock is not available: run one process per data
// directory there.
func lockDir(string) (func(), error) { return func() {}, nil }
