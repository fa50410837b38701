package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/client"
)

// DefaultMaxOutputBytes caps a tool result sent as an observation. The
// server refuses outputs over its argument limit (1 MiB by default); a
// larger result is replaced by a summary with its size and SHA-256, so the
// record stays whole and provable instead of the hook failing.
const DefaultMaxOutputBytes = 512 << 10

// gapAskedPrefix starts the gap reason of a call Mandate asked about
// (engine.GapAsked).
const gapAskedPrefix = "asked"

// launchTools are Claude Code's tools that start a sub-agent.
var launchTools = map[string]bool{"Task": true, "Agent": true}

// ClaudeCode answers Claude Code hook events by asking a Mandate server.
// One value handles one event; it keeps no state between events, since
// Claude Code runs a new process for each.
type ClaudeCode struct {
	Client *client.Client
	// AgentID is the main agent's agent id (default DefaultAgentID).
	AgentID string
	// HomeDir is the user's home directory, given to new sessions so "~"
	// in paths resolves.
	HomeDir string
	// MaxOutputBytes caps an observed tool result (default
	// DefaultMaxOutputBytes).
	MaxOutputBytes int
	// Wait, above 0, makes an ask wait up to this long for an answer
	// through Mandate (mandate approvals, a dashboard) before it is left
	// to Claude Code's own prompt: approved there, the call is allowed;
	// denied, denied.
	Wait time.Duration
}

// Handle reads one event from in, acts on it and writes the answer to out
// (nothing, for events that need none). Reading the event is bounded by ctx
// too (ErrNoEvent). Any error means the hook must
// block: exit 2 with the error on stderr.
func (h *ClaudeCode) Handle(ctx context.Context, in io.Reader, out io.Writer) error {
	ev, err := ReadEventContext(ctx, in)
	if err != nil {
		return err
	}
	ans, err := h.Answer(ctx, ev)
	if err != nil {
		return err
	}
	if ans == nil {
		return nil
	}
	b, err := json.Marshal(ans)
	if err != nil {
		return fmt.Errorf("encode answer: %w", err)
	}
	if _, err := out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write answer: %w", err)
	}
	return nil
}

// Answer acts on one checked event and returns the answer to print, or nil
// for none.
func (h *ClaudeCode) Answer(ctx context.Context, ev *Event) (*Output, error) {
	if h.Client == nil {
		return nil, errors.New("no Mandate client configured")
	}
	switch ev.HookEventName {
	case EventStop, EventNotification, EventPreCompact:
		// Nothing to decide or record: Stop and PreCompact change no state
		// Mandate keeps, and a Notification is Claude Code talking to the
		// user. Answering nothing lets them proceed.
		return nil, nil
	case EventSessionStart:
		return h.sessionStart(ctx, ev)
	case EventUserPromptSubmit:
		return nil, h.userPrompt(ctx, ev)
	case EventPreToolUse:
		return h.preToolUse(ctx, ev)
	case EventPostToolUse:
		return h.postToolUse(ctx, ev)
	case EventSubagentStart:
		return nil, h.subagentStart(ctx, ev)
	case EventSubagentStop:
		return nil, h.endSession(ctx, SubagentSessionID(MainSessionID(ev.SessionID), ev.AgentID))
	case EventSessionEnd:
		return nil, h.endSession(ctx, MainSessionID(ev.SessionID))
	}
	return nil, fmt.Errorf("unknown hook event %q", ev.HookEventName)
}

func (h *ClaudeCode) agentID() string {
	if h.AgentID != "" {
		return h.AgentID
	}
	return DefaultAgentID
}

// createMain creates the main session; existed reports that it was there.
func (h *ClaudeCode) createMain(ctx context.Context, ev *Event, intent string) (existed bool, err error) {
	_, err = h.Client.CreateSession(ctx, client.SessionRequest{
		SessionID: MainSessionID(ev.SessionID), AgentID: h.agentID(), Agent: h.agentOf(ev), Intent: intent,
		WorkingDirectory: ev.Cwd, HomeDirectory: h.HomeDir,
	})
	switch {
	case err == nil:
		return false, nil
	case client.IsConflict(err):
		return true, nil
	}
	return false, fmt.Errorf("create session: %w", err)
}

// sessionStart creates the session, or takes up the existing one on a
// resume, compaction or clear: a session that had ended becomes active
// again. A suspended or terminated one stays so — the hook may not lift
// that — and the user is told.
func (h *ClaudeCode) sessionStart(ctx context.Context, ev *Event) (*Output, error) {
	existed, err := h.createMain(ctx, ev, "")
	if err != nil || !existed {
		return nil, err
	}
	id := MainSessionID(ev.SessionID)
	switch err := h.Client.SetStatus(ctx, id, "active"); {
	case err == nil:
		return nil, nil
	case client.IsConflict(err) || isForbidden(err):
		return &Output{SystemMessage: fmt.Sprintf("Mandate: session %s stays stopped (%s); tool calls will be refused until a user resumes it", id, apiMessage(err))}, nil
	default:
		return nil, fmt.Errorf("resume session %s: %w", id, err)
	}
}

// userPrompt makes the user's words a new mandate version. The first
// prompt amends the empty mandate the session started with, so it sets the
// grant; later prompts add to it.
func (h *ClaudeCode) userPrompt(ctx context.Context, ev *Event) error {
	if strings.TrimSpace(ev.Prompt) == "" {
		return nil // nothing said, nothing granted
	}
	id := MainSessionID(ev.SessionID)
	_, err := h.Client.AmendIntent(ctx, id, ev.Prompt)
	if client.IsNotFound(err) {
		// SessionStart was not seen (the hook was installed mid-session):
		// the session starts with these words.
		var existed bool
		existed, err = h.createMain(ctx, ev, ev.Prompt)
		if err == nil && existed {
			_, err = h.Client.AmendIntent(ctx, id, ev.Prompt)
		}
	}
	if err != nil {
		return fmt.Errorf("record the prompt in session %s: %w", id, err)
	}
	return nil
}

// callSession is the session a tool event belongs to: the sub-agent's when
// it fired inside one, else the main session. ensure creates it.
func (h *ClaudeCode) callSession(ev *Event) (id string, ensure func(context.Context) error) {
	main := MainSessionID(ev.SessionID)
	if ev.AgentID == "" {
		return main, func(ctx context.Context) error {
			_, err := h.createMain(ctx, ev, "")
			return err
		}
	}
	return SubagentSessionID(main, ev.AgentID), func(ctx context.Context) error {
		return h.ensureSubagent(ctx, ev)
	}
}

// retry runs fn, and once more after ensure when the session was not found
// (its start event was never seen).
func retry(ctx context.Context, ensure func(context.Context) error, fn func() error) error {
	err := fn()
	if !client.IsNotFound(err) {
		return err
	}
	if err := ensure(ctx); err != nil {
		return err
	}
	return fn()
}

// preToolUse decides the call. A launch of a sub-agent that may go ahead
// also creates its launch session, holding the sub-agent's prompt, so the
// sub-agent's own session (SubagentStart) is narrowed by those words.
func (h *ClaudeCode) preToolUse(ctx context.Context, ev *Event) (*Output, error) {
	sid, ensure := h.callSession(ev)
	var d *client.Decision
	err := retry(ctx, ensure, func() error {
		var err error
		d, err = h.Client.EvaluateCall(ctx, client.Call{SessionID: sid, Tool: ev.ToolName, Args: ev.Args(), CallID: ev.ToolUseID, Wait: h.Wait})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", ev.ToolName, err)
	}
	var decision string
	switch d.Effect {
	case client.Allow, client.Deny, client.Ask:
		decision = string(d.Effect)
	default:
		return nil, fmt.Errorf("evaluate %s: the server answered effect %q", ev.ToolName, d.Effect)
	}
	if launchTools[ev.ToolName] && decision != string(client.Deny) && ev.ToolUseID != "" {
		if err := h.createLaunch(ctx, ev, sid); err != nil {
			return nil, err
		}
	}
	return &Output{HookSpecificOutput: &EventOutput{
		HookEventName:            EventPreToolUse,
		PermissionDecision:       decision,
		PermissionDecisionReason: decisionReason(d),
	}}, nil
}

// launchInput is the part of a Task/Agent call's input that describes the
// sub-agent.
type launchInput struct {
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
}

func (h *ClaudeCode) createLaunch(ctx context.Context, ev *Event, parent string) error {
	var in launchInput
	if err := json.Unmarshal(ev.Args(), &in); err != nil {
		return fmt.Errorf("%s input: %w", ev.ToolName, cleanJSONError(err))
	}
	id := LaunchSessionID(parent, ev.ToolUseID)
	_, err := h.Client.CreateSession(ctx, client.SessionRequest{
		SessionID: id, AgentID: subagentAgentID(h.agentID(), in.SubagentType), Intent: in.Prompt,
		WorkingDirectory: ev.Cwd, ParentSessionID: parent,
	})
	if err != nil && !client.IsConflict(err) {
		return fmt.Errorf("create the launch session for %s: %w", ev.ToolName, err)
	}
	return nil
}

// decisionReason is what Claude Code shows: to the user for allow and ask,
// to Claude for deny.
func decisionReason(d *client.Decision) string {
	r := d.Reason()
	if r == "" {
		r = strings.Join(d.Rules, ", ")
	}
	var verb string
	switch d.Effect {
	case client.Allow:
		verb = "allowed"
	case client.Deny:
		verb = "denied"
	default:
		verb = "asks"
	}
	return fmt.Sprintf("Mandate %s: %s (decision %s)", verb, r, d.ID)
}

// postToolUse records the result against the call's decision, found by its
// tool_use_id. A call Mandate never allowed — never decided (sub-agent
// calls whose PreToolUse Claude Code skipped), or denied and run anyway —
// is recorded as a gap, and the user is told.
func (h *ClaudeCode) postToolUse(ctx context.Context, ev *Event) (*Output, error) {
	sid, ensure := h.callSession(ev)
	output := h.capOutput(ev.ToolResponse)
	var o *client.Observation
	err := retry(ctx, ensure, func() error {
		var err error
		o, err = h.Client.ObserveCall(ctx, client.Call{SessionID: sid, Tool: ev.ToolName, Args: ev.Args(), CallID: ev.ToolUseID}, output)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("observe %s: %w", ev.ToolName, err)
	}
	if launchTools[ev.ToolName] && ev.ToolUseID != "" {
		// The sub-agent has finished; its launch is done too.
		if err := h.endSession(ctx, LaunchSessionID(sid, ev.ToolUseID)); err != nil {
			return nil, err
		}
	}
	if !o.Gap || strings.HasPrefix(o.GapReason, gapAskedPrefix) {
		// A call Mandate asked about ran because the user approved it in
		// Claude Code's own prompt: it is on record as a gap (no approval
		// reached Mandate), but the user needs no telling.
		return nil, nil
	}
	return &Output{SystemMessage: fmt.Sprintf("Mandate: %s ran without Mandate's allow (%s); recorded as gap %s in session %s",
		ev.ToolName, o.GapReason, o.ID, o.SessionID)}, nil
}

// capOutput returns the tool result to observe: as is when small enough,
// else a summary with its size, SHA-256 and beginning.
func (h *ClaudeCode) capOutput(resp json.RawMessage) json.RawMessage {
	limit := h.MaxOutputBytes
	if limit <= 0 {
		limit = DefaultMaxOutputBytes
	}
	if len(resp) == 0 {
		return json.RawMessage("null")
	}
	if len(resp) <= limit {
		return resp
	}
	sum := sha256.Sum256(resp)
	head := resp[:min(len(resp), limit/2)]
	for len(head) > 0 && !utf8.Valid(head) {
		head = head[:len(head)-1]
	}
	b, _ := json.Marshal(map[string]any{
		"truncated": true,
		"bytes":     len(resp),
		"sha256":    hex.EncodeToString(sum[:]),
		"head":      string(head),
	})
	return b
}

// subagentStart starts the sub-agent's session, under the launch session
// its Task/Agent call created when there is one.
func (h *ClaudeCode) subagentStart(ctx context.Context, ev *Event) error {
	if err := h.ensureSubagent(ctx, ev); err != nil {
		return fmt.Errorf("start sub-agent %s in session %s: %w", ev.AgentID, MainSessionID(ev.SessionID), err)
	}
	return nil
}

// ensureSubagent starts the sub-agent's session, and the main session
// first if that was never seen either.
func (h *ClaudeCode) ensureSubagent(ctx context.Context, ev *Event) error {
	return retry(ctx, func(ctx context.Context) error {
		_, err := h.createMain(ctx, ev, "")
		return err
	}, func() error { return h.startSubagent(ctx, ev) })
}

func (h *ClaudeCode) startSubagent(ctx context.Context, ev *Event) error {
	main := MainSessionID(ev.SessionID)
	_, err := h.Client.StartSubagent(ctx, main, client.SubagentRequest{
		SessionID: SubagentSessionID(main, ev.AgentID), AgentID: subagentAgentID(h.agentID(), ev.AgentType),
		LaunchPrefix: LaunchPrefix(main), WorkingDirectory: ev.Cwd,
	})
	if err != nil && !client.IsConflict(err) {
		return err
	}
	return nil
}

// endSession marks a session completed. A session that never started has
// nothing to end, and one that was suspended or terminated stays so (only
// a user may lift a suspension): neither is an error.
func (h *ClaudeCode) endSession(ctx context.Context, id string) error {
	err := h.Client.SetStatus(ctx, id, "completed")
	if err == nil || client.IsNotFound(err) || client.IsConflict(err) || isForbidden(err) {
		return nil
	}
	return fmt.Errorf("complete session %s: %w", id, err)
}

func isForbidden(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Status == http.StatusForbidden
}

func apiMessage(err error) string {
	var ae *client.APIError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}
