// Package testpeer is what a test does when something outside the Go
// module that it needs — an npm MCP server, PostgreSQL, a browser, a program
// on the PATH — is missing, and how slow end-to-end tests are marked.
//
// A missing peer fails the test when CI asked for it (CI is set, as .ci/run
// sets it) or when the peer's own environment variable is set (the developer
// asked for it). Otherwise the test is skipped, and one line says so where a
// developer sees it: go test shows a passing package's output only with -v,
// so the line also goes to the terminal (/dev/tty) when there is one, once
// per peer per test binary.
//
// Slow end-to-end tests call Slow first: `go test -short ./...` skips them;
// `go test ./...` and CI run everything. Fuzz targets bound the time one
// input may take with WithinTime.
package testpeer

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// CI reports whether the tests run under CI (CI set to anything but "" or
// "false").
func CI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// Env returns the value of the peer's environment variable env (a DSN, a
// directory, a URL). When it is empty the test fails under CI and is skipped
// elsewhere; install says how to provide the peer.
func Env(t testing.TB, env, install string) string {
	t.Helper()
	v := os.Getenv(env)
	if v != "" {
		return v
	}
	missing(t, env, fmt.Sprintf("%s is not set: %s", env, install))
	return ""
}

// Program returns the path of a program the test runs (node, chromium,
// git). When it is not on the PATH the test fails under CI or when env (if
// not "") is set, and is skipped elsewhere.
func Program(t testing.TB, name, env, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if env != "" && os.Getenv(env) != "" {
		t.Fatalf("%s is set but %s is not on the PATH: %s", env, name, install)
	}
	missing(t, name, fmt.Sprintf("%s is not on the PATH: %s", name, install))
	return ""
}

// Slow marks an end-to-end test that takes seconds: go test -short skips it.
func Slow(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow end-to-end test; skipped with -short (CI runs it)")
	}
}

var told sync.Map // peer → struct{}: the visible line was printed

func missing(t testing.TB, peer, why string) {
	t.Helper()
	if CI() {
		t.Fatalf("%s — CI=%s requires it", why, os.Getenv("CI"))
	}
	if _, done := told.LoadOrStore(peer, struct{}{}); !done {
		tell(fmt.Sprintf("SKIP %s: %s (CI fails here)", t.Name(), why))
	}
	t.Skip(why)
}

// tell writes a line where a developer sees it even when go test hides a
// passing package's output: the controlling terminal, if there is one.
func tell(line string) {
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return // no terminal (an IDE, a pipe): t.Skip's line is what there is
	}
	fmt.Fprintln(tty, line)
	tty.Close()
}

// FuzzTimeLimit is how long one fuzz input may take (issue 10.2: fuzz for
// time as well as crashes).
const FuzzTimeLimit = 100 * time.Millisecond

// WithinTime runs f and fails t when even its fastest of three runs takes
// longer than FuzzTimeLimit: a slow run is tried twice more, so a machine
// busy with other work does not fail it.
func WithinTime(t testing.TB, what string, f func()) {
	t.Helper()
	best := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		f()
		best = min(best, time.Since(start))
		if best <= FuzzTimeLimit {
			return
		}
	}
	t.Fatalf("%s took %v, over the %v one input may take", what, best, FuzzTimeLimit)
}
