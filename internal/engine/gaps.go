package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/store"
)

// maxCallID bounds a surface's call id; Claude Code's tool_use_ids and MCP
// request ids are far shorter.
const maxCallID = 256

func checkCallID(id string) error {
	if len(id) > maxCallID {
		return invalid("call_id is %d bytes, over the %d-byte limit", len(id), maxCallID)
	}
	for _, r := range id {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return invalid("call_id %q: control or invalid characters", id)
		}
	}
	return nil
}

// ObserveCallRequest is a tool's result reported by the surface's own id
// for the call, for surfaces that cannot carry Mandate's decision id from
// the call to its result (Claude Code runs a new hook process for each).
type ObserveCallRequest struct {
	SessionID string
	// CallID is the id the call was evaluated with (EvaluateRequest.CallID).
	CallID string
	// Tool and Args are the call as the surface saw it run; they are kept
	// with a gap, so that a call Mandate never decided is on record with
	// what it was.
	Tool   string
	Args   json.RawMessage
	Output json.RawMessage
	// Origin is "observed" (default) or "reported"; see ObserveRequest.
	Origin string
}

// Gap reasons, as stored in Observation.GapReason.
const (
	GapNeverDecided = "never decided"
	GapDenied       = "denied"
	GapAsked        = "asked, no approval on record"
	GapOtherTool    = "decided for another tool"
	GapNoCallID     = "no call id to match a decision"
)

// ObserveCall records a tool's result against the decision made for its
// call id in the session. A result Mandate cannot match to an allow is
// recorded as a gap rather than accepted silently: the call was never
// decided (a sub-agent's call whose pre-tool hook the runtime skipped), it
// was decided for another tool, it came without a call id, or it was
// denied (or asked about, with no approval on record) and ran anyway. A gap keeps the call's tool and arguments. The
// session must exist.
func (e *Engine) ObserveCall(ctx context.Context, p auth.Principal, req ObserveCallRequest) (*store.Observation, error) {
	if !p.Can(auth.Observe) {
		return nil, forbidden(p, auth.Observe)
	}
	switch {
	case req.SessionID == "":
		return nil, invalid("session_id is required")
	case req.Tool == "":
		return nil, invalid("tool is required: a result that cannot be matched to a decision is recorded with its tool")
	}
	if err := checkCallID(req.CallID); err != nil {
		return nil, err
	}
	origin, output, err := e.checkResult(p, req.Origin, req.Output)
	if err != nil {
		return nil, err
	}
	args, err := e.jsonField("args", req.Args, true)
	if err != nil {
		return nil, err
	}
	o := &store.Observation{
		ID: newID(), SessionID: req.SessionID, Output: output, Origin: origin,
		CallID: req.CallID, Tool: req.Tool, Args: args,
	}
	var (
		d      *store.Decision
		answer *store.ApprovalChange // an ask's approval, settled by the result
		why    string
	)
	if req.CallID != "" {
		d, err = e.store.DecisionByCall(ctx, req.SessionID, req.CallID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("observe: %w", err)
		}
	}
	switch {
	case req.CallID == "":
		o.Gap, o.GapReason = true, GapNoCallID
	case d == nil:
		o.Gap, o.GapReason = true, GapNeverDecided
	case d.Effect == "ask" && d.Tool == req.Tool:
		// Was it approved? Through a hook, Claude Code asked the user.
		o.DecisionID = d.ID
		answer, why = e.observedAsk(ctx, p, d, true)
		o.Gap, o.GapReason = why != "", why
	default:
		o.DecisionID = d.ID
		if why := gapFor(d.ID, d.Effect, d.Tool, req.Tool, req.CallID); why != "" {
			o.Gap, o.GapReason = true, why
		}
	}
	if !o.Gap {
		// A matched result keeps the decision's arguments; the copy would
		// only repeat them.
		o.Tool, o.Args = "", nil
	}
	family := ""
	if d != nil && d.Action != nil {
		family = d.Action.Family
	}
	if err := e.commitObservation(ctx, p, o, answer, e.scanOutput(output, family)); err != nil {
		return nil, err
	}
	return o, nil
}

// jsonField checks a JSON value a surface sent: size, validity and, for
// object, that it is an object (or absent: {}).
func (e *Engine) jsonField(name string, v json.RawMessage, object bool) (json.RawMessage, error) {
	v = bytes.TrimSpace(v)
	if len(v) > e.maxArgs {
		return nil, invalid("%s is %d bytes, over the %d-byte limit", name, len(v), e.maxArgs)
	}
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		if object {
			return json.RawMessage("{}"), nil
		}
		return json.RawMessage("null"), nil
	}
	if !json.Valid(v) {
		return nil, invalid("%s is not valid JSON", name)
	}
	if object && v[0] != '{' {
		return nil, invalid("%s must be a JSON object", name)
	}
	return v, nil
}

// Gaps lists recorded gaps, newest first, for readers.
func (e *Engine) Gaps(ctx context.Context, p auth.Principal, f store.GapFilter) ([]*store.Observation, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	return e.store.ListGaps(ctx, f)
}
