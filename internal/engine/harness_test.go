package engine

import (
	"context"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

// builtins are the classifier and policy pack a server starts with and
// every engine test runs on unless it says otherwise.
func builtins(t testing.TB) (*action.Classifier, *policy.Policy) {
	t.Helper()
	cls, err := action.NewClassifier()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return cls, pol
}

// testStore is a SQLite store at path (in memory when path is empty),
// without fsync, closed when the test ends.
func testStore(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	if path == "" {
		path = ":memory:"
	}
	st, err := sqlite.Open(context.Background(), path, sqlite.Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// engineWith is an engine on opts, with the built-in classifier and policy
// where opts names none.
func engineWith(t testing.TB, opts Options) *Engine {
	t.Helper()
	if opts.Classifier == nil || opts.Policy == nil {
		cls, pol := builtins(t)
		if opts.Classifier == nil {
			opts.Classifier = cls
		}
		if opts.Policy == nil {
			opts.Policy = pol
		}
	}
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
