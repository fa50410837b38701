// Package apptest is a Mandate instance inside a test: the real app (store,
// engine, evidence log) on a data directory, its HTTP API on a loopback
// server with a token for each principal a suite names, and requests to it
// as one of them.
//
// Suites that drive Mandate in-process (internal/evidence,
// internal/security) share it instead of each keeping a copy; suites that
// need a separate process (a crash, replicas) use internal/servetest.
package apptest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/server"
)

// Token is a token an instance issues: Key names it in requests (Do's
// who), Role and Agent are what it is issued for.
type Token struct{ Key, Role, Agent string }

// Instance is a Mandate instance on Dir (or on the shared store Store).
type Instance struct {
	T   testing.TB
	Dir string
	// Store is a shared store's address (PostgreSQL); empty means the
	// embedded store in Dir.
	Store string
	// Opts adjust the server before Serve starts it; Engine and Evidence
	// are the app's.
	Opts   server.Options
	App    *app.App
	Srv    *httptest.Server
	Tokens map[string]string // Key → the token
}

// New returns an instance on dir (a fresh temporary directory when dir is
// ""), not yet open; the test's cleanup closes it.
func New(t testing.TB, dir string) *Instance {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	in := &Instance{T: t, Dir: dir, Tokens: map[string]string{}}
	t.Cleanup(in.Close)
	return in
}

// Open opens the app as tests want it: no fsync (a test's directory does
// not outlive a crash of the machine) and checkpoints every 20 ms, so that
// what a test writes is soon under a signed checkpoint.
func (in *Instance) Open() *Instance {
	in.T.Helper()
	a, err := app.Open(context.Background(), app.Config{DataDir: in.Dir, Store: in.Store, Synchronous: "OFF", CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		in.T.Fatal(err)
	}
	in.App = a
	return in
}

// Serve issues the tokens not issued yet and starts the HTTP API on the
// open app.
func (in *Instance) Serve(tokens ...Token) *Instance {
	in.T.Helper()
	for _, spec := range tokens {
		if _, ok := in.Tokens[spec.Key]; ok {
			continue // issued before a restart: the store keeps it
		}
		tok, rec, err := auth.Issue(spec.Role, spec.Agent, spec.Key, time.Now())
		if err != nil {
			in.T.Fatal(err)
		}
		if err := in.App.Store.CreateToken(context.Background(), rec); err != nil {
			in.T.Fatal(err)
		}
		in.Tokens[spec.Key] = tok
	}
	o := in.Opts
	o.Engine, o.Evidence = in.App.Engine, in.App.Evidence
	in.Srv = httptest.NewServer(server.New(o))
	return in
}

// Close stops the server and closes the app; a failed close fails the
// test. An instance may be opened again after it.
func (in *Instance) Close() {
	if in.Srv != nil {
		in.Srv.Close()
		in.Srv = nil
	}
	if in.App != nil {
		if err := in.App.Close(); err != nil {
			in.T.Errorf("close: %v", err)
		}
		in.App = nil
	}
}

// Do sends a request to the server as who (a token's Key, a raw token, or
// "" for none) and returns the status and the body.
func (in *Instance) Do(method, path, who string, body io.Reader) (int, []byte) {
	in.T.Helper()
	req, err := http.NewRequest(method, in.Srv.URL+path, body)
	if err != nil {
		in.T.Fatal(err)
	}
	if who != "" {
		tok, ok := in.Tokens[who]
		if !ok {
			tok = who // a raw token
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		in.T.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return resp.StatusCode, data
}

// CopyDir copies the files of a closed data directory into a new temporary
// directory of the test (subdirectories are not part of a data directory's
// state).
func CopyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
