package ui_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/ui"
)

// A decision page shows its evidence record and whether the latest signed
// checkpoint includes it: a decision signed into a checkpoint is "included
// in checkpoint N", one after it is pending.
func TestDecisionEvidence(t *testing.T) {
	// No background checkpoints: the test says when one is signed.
	f := newFixture(t, func(c *app.Config, _ *ui.Options) { c.CheckpointInterval = time.Hour })
	const script = `<script>alert(1)</script>`
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com "+script)
	first := f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"alice@example.com","subject":"`+script+`"}}`)["decision_id"].(string)
	cp, err := f.a.Evidence.Checkpoint(context.Background(), f.a.Evidence.Size())
	if err != nil {
		t.Fatal(err)
	}
	second := f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"alice@example.com","subject":"again"}}`)["decision_id"].(string)
	b := f.browser(t)
	b.signIn("user")

	p := b.get("/ui/decisions/" + first)
	if p.code != 200 {
		t.Fatalf("decision page: %d %s", p.code, p.body)
	}
	for _, want := range []string{"included in checkpoint " + strconv.FormatUint(cp.Size, 10), "Leaf hash", "GET /v1/evidence/records/", "&lt;script&gt;alert(1)&lt;/script&gt;"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("included decision's page lacks %q", want)
		}
	}
	if strings.Contains(p.body, "<script>alert") {
		t.Errorf("the decision page renders a hostile value as markup")
	}
	p = b.get("/ui/decisions/" + second)
	if p.code != 200 || !strings.Contains(p.body, "pending: the latest signed checkpoint covers "+strconv.FormatUint(cp.Size, 10)+" records") {
		t.Errorf("later decision's page: %d, lacks pending", p.code)
	}
	if strings.Contains(p.body, "included in checkpoint") {
		t.Errorf("a decision after the checkpoint is shown included")
	}
	// Signed now, the second is included too.
	cp2, err := f.a.Evidence.Checkpoint(context.Background(), f.a.Evidence.Size())
	if err != nil {
		t.Fatal(err)
	}
	if p := b.get("/ui/decisions/" + second); !strings.Contains(p.body, "included in checkpoint "+strconv.FormatUint(cp2.Size, 10)) {
		t.Errorf("after a new checkpoint the decision is not included")
	}
}
