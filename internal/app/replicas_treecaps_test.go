package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

// TestTreeCapsHoldAcrossReplicas: a parent and two sub-agents under one
// 100 EUR cap, 3 replicas, one 20 EUR payment by each sub-agent and then
// 45 concurrent ones spread over the sessions and the replicas: exactly 5
// are allowed in all, and the budgets and
// their draw records account for each allowed payment exactly once — a
// draw doubled by a retried decision, or lost with a failed one, shows in
// the parent's budget, in a sub-agent's, or in the log.
func TestTreeCapsHoldAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	_, apps := replicas(t, 3)
	if _, err := apps[0].Engine.CreateSession(ctx, admin, engine.SessionRequest{ID: "p", AgentID: "shopper",
		Intent: "Buy a USB-C charger for at most 100 EUR in total"}); err != nil {
		t.Fatal(err)
	}
	sessions := []string{"p", "c1", "c2"}
	for i, id := range sessions[1:] {
		if _, err := apps[i+1].Engine.CreateSession(ctx, admin, engine.SessionRequest{ID: id, AgentID: "shopper", ParentID: "p",
			Intent: "Buy the USB-C charger"}); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu      sync.Mutex
		allowed = map[string]int{}
		// treeDenied counts the denials for the tree's cap.
		treeDenied = map[string]int{}
		failures   []error
	)
	// Each sub-agent pays once first, through a replica of its own, so
	// that draws on both levels of the tree are in what is counted below.
	for i, s := range sessions[1:] {
		d, err := payCharger(ctx, apps[2-i], s)
		if err != nil || d.Effect != policy.Allow {
			t.Fatalf("%s's first payment: %+v %v", s, d, err)
		}
		allowed[s]++
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 45 {
		sess := sessions[i%3]
		app := apps[(i/3)%3]
		wg.Go(func() {
			<-start
			d, err := payCharger(ctx, app, sess)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				failures = append(failures, err)
			case d.Effect == policy.Allow:
				allowed[sess]++
			case d.Effect != policy.Deny:
				failures = append(failures, fmt.Errorf("%s: %s %v", sess, d.Effect, d.Rules))
			case len(d.Rules) == 1 && d.Rules[0] == engine.RuleTreeCap:
				if !strings.Contains(d.Reasons[0], "session p") || !strings.Contains(d.Reasons[0], "cap of 100 EUR") {
					failures = append(failures, fmt.Errorf("%s denied: %q does not name p's cap of 100 EUR", sess, d.Reasons))
				}
				treeDenied[sess]++
			case sess != "p" && !slices.Contains(d.Rules, "builtin.retry-after-denial"):
				// The parent's own counters may refuse it first (the
				// policy's own cap rule), and a session refused before
				// is refused for retrying; nothing else refuses a
				// sub-agent's payment.
				failures = append(failures, fmt.Errorf("%s denied by %v %q, want %s", sess, d.Rules, d.Reasons, engine.RuleTreeCap))
			}
		})
	}
	close(start)
	wg.Wait()
	for _, err := range failures {
		t.Errorf("a call was not decided as it should be: %v", err)
	}
	for _, s := range sessions[1:] {
		if treeDenied[s] == 0 {
			t.Errorf("sub-agent %s was never denied for the tree's cap", s)
		}
	}
	total := allowed["p"] + allowed["c1"] + allowed["c2"]
	t.Logf("allowed %v", allowed)
	if total != 5 {
		t.Fatalf("%d payments of 20 EUR allowed under one 100 EUR cap, want exactly 5", total)
	}
	eur := store.SpendDim("EUR")
	for _, a := range apps {
		for _, s := range sessions {
			want := 20 * float64(allowed[s])
			if s == "p" {
				want = 100
			}
			b, err := a.Store.GetBudget(ctx, s, eur)
			if err != nil || b.Used != want {
				t.Errorf("budget of %s: %+v %v, want %v used", s, b, err, want)
			}
		}
	}
	// One draw record per allowed payment and budget on its chain: the
	// parent's own payments draw once, a sub-agent's twice.
	storetest.Sync(ctx, t, apps[0].Store)
	draws := 0
	for _, s := range sessions {
		recs, err := apps[0].Store.SessionEvidence(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Type != store.RecordDraw {
				continue
			}
			var env struct {
				Content store.Draw `json:"content"`
			}
			if err := json.Unmarshal(r.Body, &env); err != nil {
				t.Fatal(err)
			}
			if env.Content.To-env.Content.From != 20 {
				t.Errorf("a draw of %v", env.Content.To-env.Content.From)
			}
			draws++
		}
	}
	if want := allowed["p"] + 2*(allowed["c1"]+allowed["c2"]); draws != want {
		t.Errorf("%d draw records, want %d", draws, want)
	}
}
