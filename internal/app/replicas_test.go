package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/redact"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
)

var admin = auth.Principal{TokenID: "test", Role: auth.RoleAdmin, Name: "test"}

// withKeysOf is a new data directory holding copies of first's keys (the
// evidence signing key and the redaction key), as a replica's would.
func withKeysOf(t *testing.T, first string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{evidence.KeyFile, redact.KeyFile} {
		b, err := os.ReadFile(filepath.Join(first, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// payCharger asks, through replica a, for one 20 EUR charger checkout in
// session sess: the payment the cap tests repeat until the cap is reached.
func payCharger(ctx context.Context, a *App, sess string) (*engine.Decision, error) {
	return a.Engine.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: sess, Tool: "checkout",
		Args: map[string]any{"item": "usb-c charger", "price": "20 EUR"}})
}

// replicas opens n instances on one shared store, each with its own data
// directory holding copies of the same keys, as a deployment would.
func replicas(t *testing.T, n int) (string, []*App) {
	t.Helper()
	dsn := pgtest.DSN(t)
	var apps []*App
	first := t.TempDir()
	for i := range n {
		dir := first
		if i > 0 {
			dir = withKeysOf(t, first)
		}
		a, err := Open(context.Background(), Config{DataDir: dir, Store: dsn})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		apps = append(apps, a)
	}
	return dsn, apps
}

// TestCapsHoldAcrossReplicas: a 100 EUR cap, 3 replicas, 50 concurrent
// 20 EUR payments spread over them: exactly 5 are allowed.
func TestCapsHoldAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	_, apps := replicas(t, 3)
	info, err := apps[0].Engine.CreateSession(ctx, admin, engine.SessionRequest{ID: "shop", AgentID: "shopper",
		Intent: "Buy a USB-C charger for at most 100 EUR in total"})
	if err != nil {
		t.Fatal(err)
	}
	if l := info.Mandate.Limits.Spend; l == nil || l.Amount != 100 || l.Currency != "EUR" {
		t.Fatalf("the mandate's cap: %+v", info.Mandate.Limits)
	}
	var (
		mu                     sync.Mutex
		allowed, denied, other int
		failures               []error
	)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d, err := payCharger(ctx, apps[i%3], "shop")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				failures = append(failures, err)
			case d.Effect == policy.Allow:
				allowed++
			case d.Effect == policy.Deny:
				denied++
			default:
				other++
			}
		}()
	}
	close(start)
	wg.Wait()
	t.Logf("allowed %d, denied %d, asked %d, refused on error %d", allowed, denied, other, len(failures))
	for _, err := range failures {
		t.Errorf("a call failed instead of being decided: %v", err)
	}
	if allowed != 5 {
		t.Fatalf("%d payments of 20 EUR allowed under a 100 EUR cap, want exactly 5", allowed)
	}
	// The store agrees, whichever replica reads it.
	for _, a := range apps {
		ds, err := a.Store.ListDecisions(ctx, store.DecisionFilter{SessionID: "shop", Effect: "allow", Limit: 100})
		if err != nil || len(ds) != 5 {
			t.Errorf("allowed decisions in the store: %d %v", len(ds), err)
		}
	}
	all, _ := apps[1].Store.ListDecisions(ctx, store.DecisionFilter{SessionID: "shop", Limit: 100})
	for i, d := range all {
		if d.Seq != i+1 {
			t.Fatalf("decision %d has seq %d: the sequence has a gap or a duplicate", i, d.Seq)
		}
	}
	if len(all) != 50 {
		t.Errorf("%d decisions stored, want 50", len(all))
	}
}

// TestChangesReachOtherReplicas: a suspension or an amendment made through
// one replica takes effect on the very next call through another, whose
// cache still holds the old state.
func TestChangesReachOtherReplicas(t *testing.T) {
	ctx := context.Background()
	_, apps := replicas(t, 2)
	a, b := apps[0].Engine, apps[1].Engine
	if _, err := a.CreateSession(ctx, admin, engine.SessionRequest{ID: "s", AgentID: "coder", Intent: "Read the files in /repo"}); err != nil {
		t.Fatal(err)
	}
	call := engine.EvaluateRequest{SessionID: "s", Tool: "Read", Args: map[string]any{"file_path": "/repo/main.go"}}
	for _, e := range []*engine.Engine{a, b} { // both caches hold the session now
		if d, err := e.Evaluate(ctx, admin, call); err != nil || d.Effect != policy.Allow {
			t.Fatalf("read before: %+v %v", d, err)
		}
	}
	if _, err := a.SetStatus(ctx, admin, "s", store.StatusSuspended); err != nil {
		t.Fatal(err)
	}
	d, err := b.Evaluate(ctx, admin, call)
	if err != nil || d.Effect != policy.Deny {
		t.Fatalf("a call through the other replica after a suspension: %+v %v, want deny", d, err)
	}
	if _, err := b.SetStatus(ctx, admin, "s", store.StatusActive); err != nil {
		t.Fatal(err)
	}
	if d, err := a.Evaluate(ctx, admin, call); err != nil || d.Effect != policy.Allow {
		t.Fatalf("after resuming through the other replica: %+v %v", d, err)
	}
	// A narrowing amendment through b: a write that was not granted stays
	// not granted, and the new grant (write) reaches a.
	write := engine.EvaluateRequest{SessionID: "s", Tool: "Write", Args: map[string]any{"file_path": "/repo/main.go", "content": "x"}}
	before, err := a.Evaluate(ctx, admin, write)
	if err != nil || before.Effect == policy.Allow {
		t.Fatalf("write before the amendment: %+v %v", before, err)
	}
	if _, err := b.AmendMandate(ctx, admin, "s", engine.AmendRequest{Intent: "You may also edit the files in /repo"}); err != nil {
		t.Fatal(err)
	}
	after, err := a.Evaluate(ctx, admin, write)
	if err != nil || after.Effect != policy.Allow || after.MandateVersion != 2 {
		t.Fatalf("write through a after the amendment through b: %+v %v", after, err)
	}
	// A child delegated through a; its parent suspended through b: the
	// child's next call through a is refused.
	if _, err := a.CreateSession(ctx, admin, engine.SessionRequest{ID: "child", AgentID: "coder", ParentID: "s", Intent: "Read the files in /repo"}); err != nil {
		t.Fatal(err)
	}
	child := call
	child.SessionID = "child"
	if d, err := a.Evaluate(ctx, admin, child); err != nil || d.Effect != policy.Allow {
		t.Fatalf("child before: %+v %v", d, err)
	}
	if _, err := b.SetStatus(ctx, admin, "s", store.StatusSuspended); err != nil {
		t.Fatal(err)
	}
	if d, err := a.Evaluate(ctx, admin, child); err != nil || d.Effect != policy.Deny {
		t.Fatalf("child after its parent was suspended elsewhere: %+v %v, want deny", d, err)
	}
}

// TestOneLogAcrossReplicas: decisions through three replicas form one log
// that verifies, and a bundle exported through any replica verifies.
func TestOneLogAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	dsn, apps := replicas(t, 3)
	for i, a := range apps {
		id := []string{"r0", "r1", "r2"}[i]
		if _, err := a.Engine.CreateSession(ctx, admin, engine.SessionRequest{ID: id, AgentID: "coder", Intent: "Read the files in /repo"}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := []string{"r0", "r1", "r2"}[i%3]
			if _, err := apps[(i/3)%3].Engine.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: sess, Tool: "Read", Args: map[string]any{"file_path": "/repo/a"}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, a := range apps {
		b, err := exportAfterSync(ctx, a, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := evidence.VerifyBundle(b, a.Evidence.Key().Verifier()); err != nil {
			t.Errorf("a bundle exported through a replica: %v", err)
		}
	}
	integrators := 0
	for _, a := range apps {
		if a.Store.(*postgres.Store).Integrator() {
			integrators++
		}
	}
	if integrators != 1 {
		t.Errorf("%d integrators, want 1", integrators)
	}
	// /healthz's view: one integrator among them, all three announced.
	integrators = 0
	for _, a := range apps {
		h, err := a.StoreHealth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h.Backend != "postgres" || h.Replicas != 3 || h.Replica == "" || h.EvidenceIntegrated == 0 {
			t.Errorf("store health %+v", h)
		}
		if h.Integrator {
			integrators++
		}
	}
	if integrators != 1 {
		t.Errorf("health: %d integrators, want 1", integrators)
	}
	ro, err := postgres.OpenReadOnly(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rep, err := evidence.VerifyStore(ctx, ro, apps[0].Evidence.Key().Verifier(), nil)
		if err != nil {
			t.Fatalf("the shared log does not verify: %v", err)
		}
		if len(rep.Warnings) == 0 || time.Now().After(deadline) {
			t.Logf("verified %d records, %d checkpoints, warnings %v", rep.Records, rep.Checkpoints, rep.Warnings)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func exportAfterSync(ctx context.Context, a *App, session string) ([]byte, error) {
	if err := a.Store.(*postgres.Store).SyncEvidence(ctx); err != nil {
		return nil, err
	}
	b, err := a.Evidence.Export(ctx, session)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func TestSharedStoreNeedsKeys(t *testing.T) {
	_, err := Open(context.Background(), Config{Store: "postgres://postgres@127.0.0.1:1/x"})
	if err == nil || !strings.Contains(err.Error(), "data directory") {
		t.Fatalf("a shared store without --data: %v", err)
	}
}
