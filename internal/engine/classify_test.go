package engine

import (
	"context"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// TestPreclassifiedUsedOnlyInItsContext: a call classified before the
// session's lock was taken is decided on that classification while the
// session's tool list is the one it was classified with, and classified
// again once a listing changed the list.
func TestPreclassifiedUsedOnlyInItsContext(t *testing.T) {
	ctx := context.Background()
	e, _, sid := engineSession(t, SessionRequest{AgentID: "a", Intent: "Read my notes and summarise them."})
	req := EvaluateRequest{SessionID: sid, Tool: "zap", Args: map[string]any{"id": "42"}}
	decide := func(pre *preclassified) action.Action {
		t.Helper()
		l, err := e.acquire(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		defer l.mu.Unlock()
		res, _, _ := e.decideWith(ctx, l, req, e.now().UTC(), pre)
		return res.Action
	}
	if pre := e.preclassify(ctx, req); pre != nil {
		t.Fatalf("a session's first call was classified outside the lock, on no context: %+v", pre)
	}
	first := decide(nil)
	if first.Kind == action.Send {
		t.Fatalf("the test needs a tool the catalog does not know: %s", first.Kind)
	}
	pre := e.preclassify(ctx, req)
	if pre == nil || pre.act.Kind != first.Kind {
		t.Fatalf("preclassified after the first call: %+v", pre)
	}
	// Marked, to see which classification the decision used.
	marked := *pre
	marked.act.Notes = append([]string{"preclassified"}, marked.act.Notes...)
	if got := decide(&marked); len(got.Notes) == 0 || got.Notes[0] != "preclassified" {
		t.Fatalf("the context did not change, yet the call was classified again: %v", got.Notes)
	}
	zap := action.ToolDef{Name: "zap", Description: "Send an email message to the given recipient.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"to": map[string]any{"type": "string"}}}}
	if _, err := e.PinTools(ctx, hookP("a"), sid, []action.ToolDef{zap}); err != nil {
		t.Fatal(err)
	}
	if got := decide(&marked); got.Kind != action.Send || (len(got.Notes) > 0 && got.Notes[0] == "preclassified") {
		t.Fatalf("decided on a classification made before the tools changed: %s %v", got.Kind, got.Notes)
	}
	if pre := e.preclassify(ctx, req); pre == nil || pre.act.Kind != action.Send {
		t.Fatalf("preclassified on the new tool list: %+v", pre)
	}
}
