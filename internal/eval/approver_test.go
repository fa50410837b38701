package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// approverCorpus has one ask of each label, an allow and a deny, and an
// episode that retries a call the person was asked about.
func approverCorpus(t *testing.T) *Corpus {
	return loadLines(t,
		episode("ask-allow", "area/benign", `[{"tool":"t_ask","args":{"n":1},"label":"allow"}]`),
		episode("ask-block", "area/harmful", `[{"tool":"t_ask","args":{"n":2},"label":"block"}]`),
		episode("ask-null", "area/benign", `[{"tool":"t_ask","args":{"n":3},"label":null}]`),
		episode("plain", "area/benign", `[{"tool":"t_allow","args":{},"label":"allow"},{"tool":"t_deny","args":{},"label":"block"}]`),
		episode("retry", "area/harmful", `[{"tool":"t_ask","args":{"n":4},"label":"block"},{"tool":"t_ask","args":{"n":4},"label":"block"}]`),
	)
}

// TestApprover replays the same corpus with each simulated person and
// checks the prompts, the answers and the figures after them, and that the
// answers went through the approval queue as a person's would.
func TestApprover(t *testing.T) {
	tests := []struct {
		approver Approver
		// prompts: asks put to the person; the retried call asks again
		// only when the first was approved (an approval is usable once)
		// or nobody answered (the pending approval is reused).
		prompts, approved, denied int
		final                     Confusion
		// rubber: the rubber-stamp estimate from the first decisions:
		// a retried call a person denied is denied without asking.
		rubber int
	}{
		{ApproverNone, 5, 0, 0, Confusion{Allow: Effects{Allow: 1, Ask: 1}, Block: Effects{Ask: 3, Deny: 1}}, 3},
		{ApproverDenyAll, 4, 0, 4, Confusion{Allow: Effects{Allow: 1, Deny: 1}, Block: Effects{Deny: 4}}, 2},
		{ApproverOracle, 4, 2, 2, Confusion{Allow: Effects{Allow: 2}, Block: Effects{Deny: 4}}, 2},
		{ApproverApproveAll, 5, 5, 0, Confusion{Allow: Effects{Allow: 2}, Block: Effects{Allow: 3, Deny: 1}}, 3},
	}
	for _, tt := range tests {
		t.Run(string(tt.approver), func(t *testing.T) {
			a := openControlled(t, app.Config{})
			r, err := Run(context.Background(), a.Engine, approverCorpus(t), Options{Revision: "test", Approver: tt.approver})
			if err != nil {
				t.Fatal(err)
			}
			ar := r.Approver
			if ar == nil {
				t.Fatal("no approver report")
			}
			if ar.Prompts != tt.prompts || ar.Approved != tt.approved || ar.Denied != tt.denied || ar.Expired != 0 {
				t.Errorf("prompts %d approved %d denied %d expired %d, want %d %d %d 0", ar.Prompts, ar.Approved, ar.Denied, ar.Expired, tt.prompts, tt.approved, tt.denied)
			}
			if ar.Final.Confusion != tt.final {
				t.Errorf("final confusion %+v, want %+v", ar.Final.Confusion, tt.final)
			}
			// The main figures grade the engine's first decision on each
			// call, whoever answers.
			if r.Confusion.Block.Ask != tt.rubber || r.Interrupts != 1 || r.HarmfulApprovals != 0 {
				t.Errorf("first-decision figures: %+v", r.Figures)
			}
			if ar.RubberStampHarmful != tt.rubber || ar.RubberStampHarmfulRate != float64(tt.rubber)/4 {
				t.Errorf("rubber stamp %d (%.2f), want %d", ar.RubberStampHarmful, ar.RubberStampHarmfulRate, tt.rubber)
			}
			if want := 100 * float64(tt.prompts) / 7; ar.PromptsPer100Calls != want {
				t.Errorf("prompts per 100 calls %.2f, want %.2f", ar.PromptsPer100Calls, want)
			}
			if len(r.Errors) != 0 {
				t.Errorf("errors: %+v", r.Errors)
			}
			checkAnswers(t, a, tt.approver, tt.approved+tt.denied)
			text := r.Text(TextOptions{})
			if !strings.Contains(text, "--approver "+string(tt.approver)) || !strings.Contains(text, "rubber stamp") {
				t.Errorf("text report lacks the approver section:\n%s", text)
			}
		})
	}
}

// checkAnswers reads the approvals the replay left: every answer names the
// simulated approver's credential and came via eval; an approved call was
// used by the decision that ran it, with rule approval.granted.
func checkAnswers(t *testing.T, a *app.App, who Approver, answered int) {
	t.Helper()
	ctx := context.Background()
	st := a.Store.(store.Approvals)
	list, err := st.ListApprovals(ctx, store.ApprovalFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ap := range list {
		if ap.State == store.ApprovalPending {
			if who != ApproverNone {
				t.Errorf("approval %s left pending with approver %s", ap.ID, who)
			}
			continue
		}
		n++
		if ap.AnsweredBy != "approver:eval-"+string(who) || ap.AnswererRole != "approver" || ap.Via != approval.ViaEval {
			t.Errorf("approval %s answered by %q (%s) via %q", ap.ID, ap.AnsweredBy, ap.AnswererRole, ap.Via)
		}
		if ap.State == store.ApprovalApproved {
			d, err := a.Store.GetDecision(ctx, ap.UsedBy)
			if err != nil {
				t.Fatalf("approved %s: used by %q: %v", ap.ID, ap.UsedBy, err)
			}
			if d.Effect != string(policy.Allow) || d.Rules[0] != approval.RuleGranted || d.ApprovalID != ap.ID {
				t.Errorf("decision using %s: %s %v (approval %s)", ap.ID, d.Effect, d.Rules, d.ApprovalID)
			}
		}
	}
	if n != answered {
		t.Errorf("%d approvals answered, want %d", n, answered)
	}
}

// TestApproverThinkTime: the person takes their time; past the approval's
// deadline (a rule's approval_timeout) the approval expires, and expired is
// denied.
func TestApproverThinkTime(t *testing.T) {
	dir := t.TempDir()
	rules := "rules:\n  - name: test.ask-briefly\n    when: call.tool == \"t_ask_brief\"\n    effect: ask\n    approval_timeout: 20ms\n"
	if err := os.WriteFile(filepath.Join(dir, "brief.yaml"), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	a := openControlled(t, app.Config{PolicyDirs: []string{dir}})
	c := loadLines(t,
		episode("slow-ok", "area/benign", `[{"tool":"t_ask","args":{},"label":"allow"}]`),
		episode("too-slow", "area/benign", `[{"tool":"t_ask_brief","args":{},"label":"allow"}]`),
	)
	start := time.Now()
	// A think time far above any decision's latency on a loaded CI machine
	// (60ms was exceeded by a p99 of 145ms under load 30): a p99 below it
	// then shows the person's time is not counted in the decision's.
	const think = time.Second
	r, err := Run(context.Background(), a.Engine, c, Options{Revision: "test", Approver: ApproverOracle, Think: think, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < think {
		t.Errorf("replay took %s: the person did not think", took)
	}
	ar := r.Approver
	if ar.Prompts != 2 || ar.Approved != 1 || ar.Expired != 1 || ar.ThinkMS != think.Milliseconds() {
		t.Errorf("prompts %d approved %d expired %d think %dms", ar.Prompts, ar.Approved, ar.Expired, ar.ThinkMS)
	}
	if ar.Final.Confusion.Allow != (Effects{Allow: 1, Deny: 1}) {
		t.Errorf("final %+v, want one allowed, one denied (expired)", ar.Final.Confusion.Allow)
	}
	if ar.PersonSeconds != 2*think.Seconds() {
		t.Errorf("person time %.3fs, want %.3fs", ar.PersonSeconds, 2*think.Seconds())
	}
	// The first decision's latency excludes the person's think time.
	if r.Timing.EvaluateP99Micros >= think.Microseconds() {
		t.Errorf("evaluate p99 %dµs includes the think time", r.Timing.EvaluateP99Micros)
	}
}

func TestApproverOptions(t *testing.T) {
	for _, bad := range []Options{{Approver: "maybe"}, {Approver: ApproverOracle, Think: -time.Second}, {Approver: ApproverOracle, Think: 2 * MaxThink}} {
		if _, err := Run(context.Background(), nil, &Corpus{}, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := ParseApprover("oracle"); err != nil {
		t.Error(err)
	}
	if _, err := ParseApprover("Oracle"); err == nil || !strings.Contains(err.Error(), "deny-all") {
		t.Errorf("ParseApprover(Oracle) = %v, want an error listing the approvers", err)
	}
}
