package hook

import "fmt"

// Refusal is the answer that blocks an event as far as Claude Code lets
// it be blocked, with why: what `mandate hook claude-code` achieves by
// exiting 2, given as a JSON answer for handlers that cannot exit — the
// http handler type, whose status code Claude Code does not read as a
// block. A tool call is denied; a prompt, a tool result (fed back to
// Claude) and a sub-agent's stop are blocked; the events Claude Code cannot
// block (session start and end, sub-agent start) tell the user.
func Refusal(event string, err error) *Output {
	reason := fmt.Sprintf("Mandate could not answer this %s event, so it is refused: %v", event, err)
	switch event {
	case EventPreToolUse:
		return &Output{HookSpecificOutput: &EventOutput{
			HookEventName: EventPreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason,
		}}
	case EventPostToolUse, EventUserPromptSubmit, EventSubagentStop, EventStop:
		return &Output{Decision: "block", Reason: reason}
	}
	return &Output{SystemMessage: reason}
}
