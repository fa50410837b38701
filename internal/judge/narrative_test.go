package judge_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/judge"
	"github.com/mandate-dev/mandate/internal/judge/judgetest"
	"github.com/mandate-dev/mandate/internal/store"
)

// TestNarrative: with a judge configured, a summary's and a review's facts
// get a narrative beside them — labelled model-written, naming the model,
// recorded as evidence with the digest of the facts — and a model that
// answers badly leaves an error there, never a text, and the facts intact.
func TestNarrative(t *testing.T) {
	srv := judgetest.Start(t, []judgetest.Rule{
		{Match: `"subject":"session"`, Content: `{"narrative":"The session read one message and sent nothing."}`},
		{Match: `"subject":"agent"`, Content: `{"narrative":"fine","decision":"allow"}`},
	})
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{Synchronous: "OFF", Approvals: engine.ApprovalOptions{Judge: newJudge(t, srv, engine.JudgeAdvisory)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	info, err := a.Engine.CreateSession(ctx, admin, engine.SessionRequest{AgentID: "mailer", Intent: "Read my latest mail."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Engine.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: info.Session.ID, Tool: "read_email", Args: map[string]any{"message_id": "m1"}}); err != nil {
		t.Fatal(err)
	}
	sum, err := a.Engine.SessionSummary(ctx, admin, info.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	facts, _ := json.Marshal(sum)
	n := a.Engine.Narrative(ctx, admin, "session", sum.AgentID, sum.SessionID, sum)
	if !n.ModelWritten || n.Model != "test-model" || !strings.Contains(n.Text, "sent nothing") || n.Error != "" || !strings.HasPrefix(n.FactsDigest, "sha256:") {
		t.Fatalf("session narrative: %+v", n)
	}
	if again, _ := json.Marshal(sum); string(again) != string(facts) {
		t.Fatalf("the narrative changed the facts:\n%s\n%s", facts, again)
	}
	rev, err := a.Engine.AgentReview(ctx, admin, "mailer")
	if err != nil {
		t.Fatal(err)
	}
	if n := a.Engine.Narrative(ctx, admin, "agent", "mailer", "", rev); !n.ModelWritten || n.Text != "" || !strings.Contains(n.Error, "schema") {
		t.Fatalf("an answer outside the schema: %+v", n)
	}
	// Both are evidence records, labelled model-written.
	size, _ := a.Store.EvidenceSize(ctx)
	recs, err := a.Store.EvidenceRange(ctx, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		var body struct {
			Content store.BehaviourRecord `json:"content"`
		}
		if r.Type != "behaviour" || json.Unmarshal(r.Body, &body) != nil || body.Content.Type != "narrative" {
			continue
		}
		var d struct {
			Subject      string `json:"subject"`
			ModelWritten bool   `json:"model_written"`
		}
		if json.Unmarshal(body.Content.Detail, &d) != nil || !d.ModelWritten {
			t.Fatalf("narrative record: %s", body.Content.Detail)
		}
		got = append(got, d.Subject)
	}
	if strings.Join(got, ",") != "session,agent" {
		t.Fatalf("narrative records: %v", got)
	}
}

// TestNarrativeWithoutJudge: no judge configured, the narrative says so
// and nothing is recorded as model-written.
func TestNarrativeWithoutJudge(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	n := a.Engine.Narrative(ctx, admin, "agent", "mailer", "", map[string]any{"agent": "mailer"})
	if !n.ModelWritten || n.Text != "" || !strings.Contains(n.Error, "no judge model") {
		t.Fatalf("narrative without a judge: %+v", n)
	}
}

func TestParseNarrative(t *testing.T) {
	for in, ok := range map[string]bool{
		`{"narrative":"It sent two mails."}`: true, ` {"narrative":" x "} `: true,
		``: false, `null`: false, `{"narrative":""}`: false, `{"narrative":"x","extra":1}`: false,
		`{"narrative":"x"}{"narrative":"y"}`: false, strings.Repeat("x", 5000): false,
	} {
		if _, err := judge.ParseNarrative(in); (err == nil) != ok {
			t.Errorf("ParseNarrative(%.40q) = %v, want ok=%v", in, err, ok)
		}
	}
}

func FuzzParseNarrative(f *testing.F) {
	f.Add(`{"narrative":"It sent two mails."}`)
	f.Fuzz(func(t *testing.T, s string) {
		text, err := judge.ParseNarrative(s)
		if err == nil && (strings.TrimSpace(text) == "" || len(text) > 2010) {
			t.Fatalf("accepted %q", text)
		}
	})
}
