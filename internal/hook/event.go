// Package hook connects agent runtimes' hook mechanisms to Mandate. Claude
// Code runs `mandate hook claude-code` once per event — a fresh process each
// time, the event as JSON on stdin — and ClaudeCode answers it by asking a
// Mandate server through the public client: PreToolUse is decided,
// PostToolUse observed (or recorded as a gap when Mandate never allowed the
// call), the user's prompts become mandate versions, sessions and
// sub-agents become a session tree. Everything that fails fails closed: the
// command exits 2 with one line on stderr, which Claude Code treats as a
// block. The same ClaudeCode answers Claude Code's http handler type inside
// `mandate serve` (POST /v1/hooks/claude-code), where a failure is answered
// with Refusal instead of an exit status.
//
// Install and Uninstall merge the hook entries into a Claude Code
// settings.json and take exactly them out again.
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The Claude Code hook events Mandate knows.
const (
	EventSessionStart     = "SessionStart"
	EventSessionEnd       = "SessionEnd"
	EventUserPromptSubmit = "UserPromptSubmit"
	EventPreToolUse       = "PreToolUse"
	EventPostToolUse      = "PostToolUse"
	EventSubagentStart    = "SubagentStart"
	EventSubagentStop     = "SubagentStop"
	EventStop             = "Stop"
	EventNotification     = "Notification"
	EventPreCompact       = "PreCompact"
)

// MaxEventBytes bounds one event on stdin. A PostToolUse carries the tool's
// whole result, which can be large; beyond this the hook refuses the event
// rather than read without end.
const MaxEventBytes = 64 << 20

// Event is one hook event as Claude Code sends it. Fields an event does not
// carry stay empty. Unknown fields are ignored: Claude Code adds fields
// over time, and the hook must keep working when it does.
type Event struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`

	// AgentID and AgentType are set for sub-agent events, and for tool
	// events fired inside a sub-agent.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`

	// PreToolUse, PostToolUse.
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolUseID    string          `json:"tool_use_id"`
	ToolResponse json.RawMessage `json:"tool_response"`

	// UserPromptSubmit.
	Prompt string `json:"prompt"`
	// SessionStart: startup, resume, clear or compact; and the model, where
	// Claude Code says it (a name, or an object with an id: kept raw so
	// that a shape this hook does not know never fails the event).
	Source string          `json:"source"`
	Model  json.RawMessage `json:"model"`
	// SessionEnd.
	Reason string `json:"reason"`
}

// ReadEvent reads and checks one event. Errors name what is wrong with it.
func ReadEvent(r io.Reader) (*Event, error) { return readEvent(r, MaxEventBytes) }

// ErrNoEvent is returned when the event did not arrive on stdin before the
// context ended: a caller that never closes stdin must not hold the hook (and
// the agent's call) past its timeout.
var ErrNoEvent = errors.New("no complete hook event on stdin")

// ReadEventContext is ReadEvent bounded by ctx. The read goes on in the
// background after ctx ends; the hook exits right after, so it is not left
// behind for long.
func ReadEventContext(ctx context.Context, r io.Reader) (*Event, error) {
	type result struct {
		ev  *Event
		err error
	}
	ch := make(chan result, 1)
	go func() {
		ev, err := ReadEvent(r)
		ch <- result{ev, err}
	}()
	select {
	case res := <-ch:
		return res.ev, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrNoEvent, ctx.Err())
	}
}

func readEvent(r io.Reader, limit int64) (*Event, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read event from stdin: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("event on stdin is larger than %d bytes", limit)
	}
	return ParseEvent(data)
}

// ParseEvent decodes one event and checks that it has what its kind needs.
func ParseEvent(data []byte) (*Event, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("no event on stdin: expected one JSON object")
	}
	if data[0] != '{' {
		return nil, errors.New("malformed event: expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var ev Event
	if err := dec.Decode(&ev); err != nil {
		return nil, fmt.Errorf("malformed event: %w", cleanJSONError(err))
	}
	if dec.More() {
		return nil, errors.New("malformed event: more than one JSON value on stdin")
	}
	if err := ev.check(); err != nil {
		return nil, err
	}
	return &ev, nil
}

func cleanJSONError(err error) error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		return fmt.Errorf("field %s: expected %s, got JSON %s", ute.Field, ute.Type, ute.Value)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the JSON ends before the object does")
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// check validates the fields an event's kind relies on.
func (ev *Event) check() error {
	if ev.HookEventName == "" {
		return errors.New("event has no hook_event_name")
	}
	switch ev.HookEventName {
	case EventStop, EventNotification, EventPreCompact:
		return nil // answered without looking further
	case EventSessionStart, EventSessionEnd, EventUserPromptSubmit, EventPreToolUse, EventPostToolUse, EventSubagentStart, EventSubagentStop:
	default:
		return fmt.Errorf("unknown hook event %q", ev.HookEventName)
	}
	if strings.TrimSpace(ev.SessionID) == "" {
		return fmt.Errorf("%s event has no session_id", ev.HookEventName)
	}
	switch ev.HookEventName {
	case EventPreToolUse, EventPostToolUse:
		if strings.TrimSpace(ev.ToolName) == "" {
			return fmt.Errorf("%s event has no tool_name", ev.HookEventName)
		}
		if in := bytes.TrimSpace(ev.ToolInput); len(in) > 0 && in[0] != '{' && !bytes.Equal(in, []byte("null")) {
			return fmt.Errorf("%s event: tool_input must be a JSON object", ev.HookEventName)
		}
	case EventSubagentStart, EventSubagentStop:
		if strings.TrimSpace(ev.AgentID) == "" {
			return fmt.Errorf("%s event has no agent_id", ev.HookEventName)
		}
	}
	return nil
}

// Args returns the tool input as a JSON object: {} when absent (or, for
// events check does not hold to it, not an object).
func (ev *Event) Args() json.RawMessage {
	in := bytes.TrimSpace(ev.ToolInput)
	if len(in) == 0 || in[0] != '{' {
		return json.RawMessage("{}")
	}
	return in
}

// Output is the hook's answer on stdout. Claude Code parses it when the
// hook exits 0.
type Output struct {
	// SystemMessage is shown to the user.
	SystemMessage string `json:"systemMessage,omitempty"`
	// Decision "block" with Reason: for PostToolUse, UserPromptSubmit, Stop
	// and SubagentStop.
	Decision           string       `json:"decision,omitempty"`
	Reason             string       `json:"reason,omitempty"`
	HookSpecificOutput *EventOutput `json:"hookSpecificOutput,omitempty"`
}

// EventOutput is the event-specific part of an answer.
type EventOutput struct {
	HookEventName string `json:"hookEventName"`
	// PermissionDecision (PreToolUse) is allow, deny or ask.
	PermissionDecision string `json:"permissionDecision,omitempty"`
	// PermissionDecisionReason is shown to the user for allow and ask and
	// to Claude for deny.
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}
