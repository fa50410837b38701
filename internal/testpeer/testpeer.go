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
// Slow end-to-end tests call Slow first. They run under CI and when
// MANDATE_TEST_SLOW is set; a plain `go test ./...` skips them, saying so in
// one line per test binary, so that the README's command stays a command
// people run; -short skips them always. Tests that run everywhere but do
// more in full (a simulation's sample, a fuzz-like loop's count) size
// themselves with Size. Fuzz targets bound the time one input may take with
// WithinTime.
package testpeer

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
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

// SlowEnv is the environment variable that runs the slow tests outside CI.
const SlowEnv = "MANDATE_TEST_SLOW"

// Full reports whether the slow tests run: under CI or with SlowEnv set
// (to anything but "", "0" or "false"), and never with -short.
func Full() bool {
	if testing.Short() {
		return false
	}
	v := os.Getenv(SlowEnv)
	return CI() || (v != "" && v != "false" && v != "0")
}

// Slow marks an end-to-end test that takes seconds: it runs only when Full
// says so. The first skip in a test binary prints one line where a developer
// sees it.
func Slow(t testing.TB) {
	t.Helper()
	if Full() {
		return
	}
	skippedSlow.Store(true)
	if _, done := told.LoadOrStore(SlowEnv, struct{}{}); !done && !testing.Short() {
		tell(fmt.Sprintf("SKIP %s and the other slow tests of this package: %s=1 (or CI=true) runs them", t.Name(), SlowEnv))
	}
	t.Skip("slow end-to-end test: " + SlowEnv + "=1 or CI=true runs it")
}

var skippedSlow atomic.Bool

// SkippedSlow reports whether Slow skipped a test in this test binary: a
// TestMain that checks what the package's tests covered as a whole checks
// it only when every test ran.
func SkippedSlow() bool { return skippedSlow.Load() }

// Size is full when the slow tests run (Full) and quick otherwise: how many
// runs, records or inputs a test that runs everywhere takes.
func Size(full, quick int) int {
	if Full() {
		return full
	}
	return quick
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
