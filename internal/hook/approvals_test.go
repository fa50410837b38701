package hook_test

import (
	"context"
	"github.com/mandate-dev/mandate/internal/hook"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/store"
)

var person = auth.Principal{TokenID: "tok_person", Role: auth.RoleUser}

// askingSession starts a session whose prompt does not cover sending mail.
func askingSession(t *testing.T, h *hook.ClaudeCode) {
	t.Helper()
	answer(t, h, event(t, hook.EventSessionStart, map[string]any{"source": "startup"}))
	answer(t, h, event(t, hook.EventUserPromptSubmit, map[string]any{"prompt": "Summarise the README in /home/dev/api"}))
}

func sendCall(id string) map[string]any {
	return map[string]any{"tool_name": "mcp__mail__send_email", "tool_input": map[string]any{"to": "eve@elsewhere.example", "subject": "hi"}, "tool_use_id": id}
}

func TestClaudeCodesPromptAnswersTheApproval(t *testing.T) {
	h, a := inProcess(t)
	ctx := context.Background()
	askingSession(t, h)
	d := preToolUse(t, h, sendCall("toolu_ask1"))
	if d.PermissionDecision != "ask" {
		t.Fatalf("want ask: %+v", d)
	}
	list, err := a.Engine.ListApprovals(ctx, person, store.ApprovalFilter{SessionID: hook.MainSessionID(sid(t, "s1")), State: store.ApprovalPending})
	if err != nil || len(list) != 1 {
		t.Fatalf("pending approvals: %d %v", len(list), err)
	}
	// The user said yes in Claude Code's prompt: the call ran.
	ev := event(t, hook.EventPostToolUse, sendCall("toolu_ask1"))
	ev.ToolResponse = []byte(`"sent"`)
	if out := answer(t, h, ev); out != nil {
		t.Errorf("PostToolUse of an approved ask answered %+v (a gap?)", out)
	}
	ap, _ := a.Engine.GetApproval(ctx, person, list[0].ID, 0)
	if ap.State != store.ApprovalApproved || ap.Via != approval.ViaClaudeCode || ap.Origin != "reported" || ap.UsedBy == "" {
		t.Errorf("approval %+v", ap)
	}
}

func TestWaitTakesAnAnswerThroughMandate(t *testing.T) {
	h, a := inProcess(t)
	ctx := context.Background()
	h.Wait = 5 * time.Second
	askingSession(t, h)
	done := make(chan hook.EventOutput, 1)
	go func() { done <- preToolUse(t, h, sendCall("toolu_wait1")) }()
	var id string
	for range 500 {
		list, _ := a.Engine.ListApprovals(ctx, person, store.ApprovalFilter{SessionID: hook.MainSessionID(sid(t, "s1")), State: store.ApprovalPending})
		if len(list) > 0 && a.Engine.Hub().Waiting(list[0].ID) > 0 {
			id = list[0].ID
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("the hook did not wait on an approval")
	}
	if _, err := a.Engine.Answer(ctx, person, id, engine.AnswerRequest{Answer: approval.Answer{Decision: "approve", Note: "yes, Eve"}}); err != nil {
		t.Fatal(err)
	}
	d := <-done
	if d.PermissionDecision != "allow" || !strings.Contains(d.PermissionDecisionReason, "approved by user:tok_person") {
		t.Fatalf("after the answer: %+v", d)
	}
	// Nobody answers: Claude Code's prompt decides.
	h.Wait = 100 * time.Millisecond
	if d := preToolUse(t, h, sendCall("toolu_wait2")); d.PermissionDecision == "allow" {
		t.Fatalf("the approval was used twice: %+v", d)
	}
}
