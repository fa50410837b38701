package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

func open(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// edit runs statements on the database file at path behind the store's
// back, as someone with the file would.
func edit(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// seeded opens a store in a new file and applies changes to it, in order.
func seeded(t testing.TB, opts Options, changes ...*store.Change) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.db")
	s := open(t, path, opts)
	applyAll(t, s, changes...)
	return s, path
}

// applyAll applies changes to s, in order.
func applyAll(t testing.TB, s store.Store, changes ...*store.Change) {
	t.Helper()
	for _, c := range changes {
		if err := store.Apply(context.Background(), s, c); err != nil {
			t.Fatal(err)
		}
	}
}

func newSession(id string) *store.Change {
	now := time.Unix(1700000000, 123456789).UTC()
	return recorded(&store.Change{
		NewSession: true,
		Session: &store.Session{ID: id, Agent: store.Agent{ID: "a1", Model: "m"}, Status: store.StatusActive,
			MandateVersion: 1, CreatedBy: "tok", CreatedAt: now, UpdatedAt: now,
			Tools: []action.ToolDef{{Name: "send_email", Description: "Send"}}},
		Mandate: &store.MandateVersion{SessionID: id, Version: 1, Source: "user", CreatedBy: "tok", CreatedAt: now,
			Mandate: &mandate.Mandate{Version: 1, Allow: []action.Kind{action.Read}}},
	})
}

// recorded adds c's evidence records, as the engine does: rows without
// theirs are refused when loaded.
func recorded(c *store.Change) *store.Change {
	recs, err := evidence.NewRecorder(nil).Record(c)
	if err != nil {
		panic(err)
	}
	c.Evidence = append(c.Evidence, recs...)
	return c
}

func decision(sess string, seq int) *store.Change {
	id := fmt.Sprintf("%s-d%d", sess, seq)
	return recorded(&store.Change{
		Decision: &store.Decision{ID: id, SessionID: sess, Seq: seq, Surface: "api", Tool: "Read",
			Args: json.RawMessage(`{"file_path":"/x"}`), Action: &action.Action{Tool: "Read", Kind: action.Read},
			MandateVersion: 1, PolicyHash: "h", Effect: "allow", Rules: []string{"r"}, Reasons: []string{"why"}, CreatedAt: time.Now()},
	})
}

func TestRoundTripAndReopen(t *testing.T) {
	ctx := context.Background()
	s, path := seeded(t, Options{}, newSession("s1"), decision("s1", 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, Options{})
	got, err := s.GetSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Agent.Model != "m" || got.Tools[0].Name != "send_email" || got.CreatedAt.UnixNano() != 1700000000123456789 {
		t.Errorf("session round trip: %+v", got)
	}
	mv, err := s.GetMandate(ctx, "s1", 0)
	if err != nil || mv.Mandate.Allow[0] != action.Read {
		t.Fatalf("mandate: %+v %v", mv, err)
	}
	d, err := s.GetDecision(ctx, "s1-d1")
	if err != nil || d.Action.Kind != action.Read || d.Reasons[0] != "why" {
		t.Fatalf("decision: %+v %v", d, err)
	}
	if n, _ := s.EvidenceSize(ctx); n != 3 {
		t.Fatalf("evidence size %d, want 3 (session, mandate, decision)", n)
	}
	if _, err := s.GetSession(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing session: %v", err)
	}
}

func TestGroupCommitIsolatesFailures(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var seen []uint64
	s := open(t, filepath.Join(t.TempDir(), "m.db"), Options{OnEvidence: func(first uint64, h [][]byte) {
		mu.Lock()
		defer mu.Unlock()
		for i := range h {
			seen = append(seen, first+uint64(i))
		}
	}})
	if err := store.Apply(ctx, s, newSession("s1")); err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := decision("s1", i+1)
			if i%10 == 0 {
				c.Decision.SessionID = "missing" // foreign key violation
			}
			errs[i] = store.Apply(ctx, s, c)
		}()
	}
	wg.Wait()
	failed := 0
	for i, err := range errs {
		if i%10 == 0 {
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("change %d: want conflict, got %v", i, err)
			}
			failed++
		} else if err != nil {
			t.Errorf("change %d: %v", i, err)
		}
	}
	size, _ := s.EvidenceSize(ctx)
	if want := uint64(2 + n - failed); size != want {
		t.Fatalf("evidence size %d, want %d", size, want)
	}
	recs, err := s.EvidenceRange(ctx, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.Index != uint64(i) {
			t.Fatalf("record %d has index %d: indices must be contiguous", i, r.Index)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if uint64(len(seen)) != size {
		t.Fatalf("OnEvidence saw %d records, want %d", len(seen), size)
	}
}

func TestUpdateMissingSession(t *testing.T) {
	s := open(t, ":memory:", Options{Synchronous: "OFF"})
	err := store.Apply(context.Background(), s, &store.Change{Session: &store.Session{ID: "x", Status: "active"}})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("got %v", err)
	}
}

func TestSubmitAfterClose(t *testing.T) {
	s, err := Open(context.Background(), ":memory:", Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := <-s.Submit(newSession("s")); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("got %v", err)
	}
}

func TestTokens(t *testing.T) {
	ctx := context.Background()
	s := open(t, ":memory:", Options{})
	tok := &store.Token{ID: "t1", Hash: []byte("h1"), Role: "agent", AgentID: "a", CreatedAt: time.Now()}
	if err := s.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateToken(ctx, tok); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate: %v", err)
	}
	got, err := s.TokenByHash(ctx, []byte("h1"))
	if err != nil || got.AgentID != "a" || got.RevokedAt != nil {
		t.Fatalf("%+v %v", got, err)
	}
	if err := s.RevokeToken(ctx, "t1", time.Now()); err != nil {
		t.Fatal(err)
	}
	got, _ = s.TokenByHash(ctx, []byte("h1"))
	if got.RevokedAt == nil {
		t.Fatal("not revoked")
	}
}

func TestSynchronousValidated(t *testing.T) {
	if _, err := Open(context.Background(), ":memory:", Options{Synchronous: "SOMETIMES"}); err == nil {
		t.Fatal("want error")
	}
}

func BenchmarkSubmitDecision(b *testing.B) {
	ctx := context.Background()
	s, _ := seeded(b, Options{}, newSession("s1"))
	var mu sync.Mutex
	seq := 0
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			seq++
			c := decision("s1", seq)
			mu.Unlock()
			if err := store.Apply(ctx, s, c); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func TestDatabaseFilesAreOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	s := open(t, filepath.Join(dir, "m.db"), Options{})
	if err := store.Apply(context.Background(), s, newSession("s1")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"m.db", "m.db-wal", "m.db-shm"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %v: others can read it", name, perm)
		}
	}
}

func TestFailedWALSyncBreaksTheStore(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	fail := false
	syncs := 0
	s := open(t, filepath.Join(t.TempDir(), "m.db"), Options{syncWAL: func() error {
		mu.Lock()
		defer mu.Unlock()
		syncs++
		if fail {
			return errors.New("EIO")
		}
		return nil
	}})
	if err := store.Apply(ctx, s, newSession("s1")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if syncs == 0 {
		t.Fatal("a durable commit was acknowledged without syncing the WAL")
	}
	fail = true
	mu.Unlock()
	err := store.Apply(ctx, s, decision("s1", 1))
	if err == nil || !strings.Contains(err.Error(), "fsync") {
		t.Fatalf("a change whose WAL sync failed was acknowledged: %v", err)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if err := store.Apply(ctx, s, decision("s1", 2)); err == nil {
		t.Fatal("after a failed sync the store must refuse further changes")
	}
}

func TestPipelinedCommitsAreDurableAndOrdered(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	var mu sync.Mutex
	var firsts []uint64
	s, err := Open(ctx, path, Options{OnEvidence: func(first uint64, h [][]byte) {
		mu.Lock()
		firsts = append(firsts, first, uint64(len(h)))
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(ctx, s, newSession("s1")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := store.Apply(ctx, s, decision("s1", i+1)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	s.Close()
	mu.Lock()
	next := uint64(0)
	for i := 0; i < len(firsts); i += 2 {
		if firsts[i] != next {
			t.Fatalf("evidence acknowledged out of order: batch starting at %d, expected %d", firsts[i], next)
		}
		next += firsts[i+1]
	}
	mu.Unlock()
	if next != 302 {
		t.Fatalf("%d evidence records acknowledged, want 302", next)
	}
	s2 := open(t, path, Options{})
	if n, _ := s2.EvidenceSize(ctx); n != 302 {
		t.Fatalf("after reopening: %d records", n)
	}
}
