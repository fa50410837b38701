package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/store"
)

// The optional narrative of a session summary or an agent review: the
// judge model, when one is configured and can write one (a Judge that is
// also a Narrator), is shown the facts — already facts, not the calls'
// arguments — and asked for a short account of them. The account is
// returned beside the facts, labelled as model-written, and committed as
// an evidence record with the digest of the facts it was written from, so
// a reader can always tell what Mandate found from what a model said.

// Narrator writes a short account of a summary's or a review's facts.
type Narrator interface {
	// Narrate never fails: a timeout or an unusable answer comes back
	// with Error set and no Text.
	Narrate(ctx context.Context, q *NarrativeQuestion) NarrativeAnswer
}

// NarrativeQuestion is what a narrator is shown.
type NarrativeQuestion struct {
	// Subject is "session" (a session summary) or "agent" (a review).
	Subject string          `json:"subject"`
	ID      string          `json:"id"`
	Facts   json.RawMessage `json:"facts"`
}

// NarrativeAnswer is a narrator's account.
type NarrativeAnswer struct {
	Model, Text, Error string
	// PromptHash is the SHA-256 of the request sent; LatencyMS its time.
	PromptHash string
	LatencyMS  int64
}

// Narrative asks the configured judge model for an account of facts (a
// session summary or an agent review) and records it. It never fails the
// facts: without a narrator, or when the model fails, the narrative says
// why in Error.
func (e *Engine) Narrative(ctx context.Context, p auth.Principal, subject, agent, sessionID string, facts any) *api.Narrative {
	raw, err := json.Marshal(facts)
	sum := sha256.Sum256(raw)
	n := &api.Narrative{ModelWritten: true, FactsDigest: "sha256:" + hex.EncodeToString(sum[:]), CreatedAt: e.now().UTC()}
	if err != nil {
		n.Error = fmt.Sprintf("the facts could not be encoded: %v", err)
		return n
	}
	if !p.Can(auth.Read) {
		n.Error = forbidden(p, auth.Read).Error()
		return n
	}
	nr, ok := e.appr.opts.Judge.(Narrator)
	if !ok {
		n.Error = "no judge model is configured that writes narratives (judge: in the configuration); the facts stand alone"
		return n
	}
	id := agent
	if subject == "session" {
		id = sessionID
	}
	a := nr.Narrate(ctx, &NarrativeQuestion{Subject: subject, ID: id, Facts: raw})
	n.Model, n.Text, n.Error = a.Model, a.Text, a.Error
	e.beh.record(ctx, &store.BehaviourRecord{Type: "narrative", Agent: agent, SessionID: sessionID, CreatedAt: n.CreatedAt,
		Detail: mustJSON(map[string]any{"subject": subject, "model_written": true, "model": a.Model, "text": a.Text, "error": a.Error,
			"facts_digest": n.FactsDigest, "prompt_hash": a.PromptHash, "latency_ms": a.LatencyMS})})
	return n
}
