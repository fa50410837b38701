package engine

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

func pay(session, price string) EvaluateRequest {
	return EvaluateRequest{SessionID: session, Tool: "checkout", Args: map[string]any{"item": "usb-c charger", "price": price}}
}

// TestTreeCapSharedBySubagents: a parent and two sub-agents each try to pay
// 100 EUR under the parent's one cap of 120 EUR: exactly one payment goes
// through, whichever session asks first, and the others are denied with a
// reason naming the tree's cap — one after another and all at once.
func TestTreeCapSharedBySubagents(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		name := "in turn"
		if concurrent {
			name = "at once"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e, st := newEngine(t, "")
			mustSession(t, e, SessionRequest{ID: "p", AgentID: "shopper", Intent: "Buy a USB-C charger for at most 120 EUR in total"})
			for _, id := range []string{"c1", "c2"} {
				mustSession(t, e, SessionRequest{ID: id, AgentID: "shopper", ParentID: "p", Intent: "Buy the USB-C charger"})
			}
			sessions := []string{"p", "c1", "c2"}
			effects := make([]*Decision, len(sessions))
			var wg sync.WaitGroup
			for i, s := range sessions {
				run := func() {
					d, err := e.Evaluate(ctx, admin, pay(s, "100 EUR"))
					if err != nil {
						t.Errorf("%s: %v", s, err)
						return
					}
					effects[i] = d
				}
				if concurrent {
					wg.Go(run)
				} else {
					run()
				}
			}
			wg.Wait()
			allowed := 0
			for i, d := range effects {
				if d == nil {
					continue
				}
				switch d.Effect {
				case policy.Allow:
					allowed++
				case policy.Deny:
					if len(d.Rules) != 1 || d.Rules[0] != RuleTreeCap || !strings.Contains(d.Reasons[0], "session p") || !strings.Contains(d.Reasons[0], "cap of 120 EUR") {
						t.Errorf("%s denied by %v: %q, want %s naming p's cap of 120 EUR", sessions[i], d.Rules, d.Reasons, RuleTreeCap)
					}
				default:
					t.Errorf("%s: %s %v %q", sessions[i], d.Effect, d.Rules, d.Reasons)
				}
			}
			if allowed != 1 {
				t.Fatalf("%d payments of 100 EUR allowed under one 120 EUR cap, want 1", allowed)
			}
			b, err := st.GetBudget(ctx, "p", store.SpendDim("EUR"))
			if err != nil || b.Used != 100 {
				t.Errorf("the tree's budget: %+v %v, want 100 used", b, err)
			}
			// What is left can still be spent, by any of them, once.
			d, err := e.Evaluate(ctx, admin, pay("c2", "20 EUR"))
			if err != nil || d.Effect != policy.Allow {
				t.Fatalf("20 EUR of the 20 left: %+v %v", d, err)
			}
			if d, err := e.Evaluate(ctx, admin, pay("c1", "1 EUR")); err != nil || d.Effect != policy.Deny || d.Rules[0] != RuleTreeCap {
				t.Fatalf("1 EUR past the cap: %+v %v", d, err)
			}
			// A restart reads the budget from the store.
			r := restarted(t, st)
			if d, err := r.Evaluate(ctx, admin, pay("p", "1 EUR")); err != nil || d.Effect != policy.Deny {
				t.Fatalf("after a restart, 1 EUR past the cap: %+v %v", d, err)
			}
		})
	}
}

// TestTreeCountCap: count caps count the items of the whole tree. Under
// "delete at most 3 files", a sub-agent's rm of two files leaves the
// parent one: its own rm of two is denied for the tree's cap, an rm of one
// is allowed, and then nothing more — also not for the sub-agent.
func TestTreeCountCap(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t, "")
	mustSession(t, e, SessionRequest{ID: "p", AgentID: "cleaner", WorkingDir: "/w", Intent: "Delete at most 3 files in /w/tmp"})
	mustSession(t, e, SessionRequest{ID: "c", AgentID: "cleaner", ParentID: "p", WorkingDir: "/w", Intent: "Delete the old files in /w/tmp"})
	rm := func(session, files string) *Decision {
		t.Helper()
		d, err := e.Evaluate(ctx, admin, EvaluateRequest{SessionID: session, Tool: "Bash", Args: map[string]any{"command": "rm " + files}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		session, files string
		want           policy.Effect
		rule           string
	}{
		{"c", "/w/tmp/a /w/tmp/b", policy.Allow, ""},
		{"p", "/w/tmp/c /w/tmp/d", policy.Deny, RuleTreeCap},
		// Another file: retrying the refused one is refused as a retry.
		{"p", "/w/tmp/e", policy.Allow, ""},
		{"c", "/w/tmp/d", policy.Deny, RuleTreeCap},
	} {
		d := rm(tc.session, tc.files)
		if d.Effect != tc.want || (tc.rule != "" && (len(d.Rules) != 1 || d.Rules[0] != tc.rule)) {
			t.Errorf("%s: rm %s: %s %v %q, want %s %s", tc.session, tc.files, d.Effect, d.Rules, d.Reasons, tc.want, tc.rule)
		}
		if tc.rule == RuleTreeCap && !strings.Contains(d.Reasons[0], "cap of 3 delete") {
			t.Errorf("%s: the reason does not name the cap: %q", tc.session, d.Reasons)
		}
	}
}
