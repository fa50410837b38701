package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/flow"
	"github.com/mandate-dev/mandate/internal/store"
)

// Observations are labelled with what they are. A result seen at the tool
// boundary by a surface Mandate runs (the MCP gateway, a hook) or a harness
// the user runs is observed; what an agent's own credential sends is its
// account and is recorded as reported, never observed. A result of a call
// Mandate did not allow — it denied it, or asked and nobody approved — is a
// gap, whichever way the surface names the call (decision id or call id).

// Origins of an observation.
const (
	OriginObserved = "observed"
	OriginReported = "reported"
)

// observationOrigin is the label a principal's result gets. An agent that
// asks for "observed" is refused rather than relabelled, so its client
// learns what its reports count as.
func observationOrigin(p auth.Principal, requested string) (string, error) {
	switch requested {
	case "", OriginObserved, OriginReported:
	default:
		return "", invalid("origin %q: want observed or reported", requested)
	}
	if !p.Observes() {
		if requested == OriginObserved {
			return "", fmt.Errorf("%w: an agent token's account of a result is recorded as reported; only the gateway, a hook or the user's harness observe", ErrForbidden)
		}
		return OriginReported, nil
	}
	if requested == "" {
		return OriginObserved, nil
	}
	return requested, nil
}

// checkResult is the origin label and the checked output of a result p
// reports, by a decision's id or by the call's tool.
func (e *Engine) checkResult(p auth.Principal, origin string, output json.RawMessage) (string, json.RawMessage, error) {
	origin, err := observationOrigin(p, origin)
	if err != nil {
		return "", nil, err
	}
	output, err = e.jsonField("output", output, false)
	if err != nil {
		return "", nil, err
	}
	return origin, output, nil
}

// gapFor says why a result for a decided call is a gap: the decision denied
// the call, or asked and no approval is on record, or it was for another
// tool (tool "" skips that check). "" means the call was allowed.
func gapFor(decisionID, effect, decidedTool, ranTool, callID string) string {
	switch {
	case ranTool != "" && decidedTool != ranTool:
		return fmt.Sprintf("%s: call %s was decided for %s, and %s ran", GapOtherTool, callID, decidedTool, ranTool)
	case effect == "deny":
		return fmt.Sprintf("%s: decision %s denied it, and it ran", GapDenied, decisionID)
	case effect == "ask":
		return fmt.Sprintf("%s: decision %s asked for a person's answer, none is on record, and it ran", GapAsked, decisionID)
	}
	return ""
}

// ObserveRequest is a tool's result for a decided call.
type ObserveRequest struct {
	DecisionID string
	Output     json.RawMessage
	// Origin is "observed" (the surface saw the result at the tool
	// boundary; the default) or "reported" (a client's claim). An agent's
	// token always reports.
	Origin string
}

// GapMessage is the message the engine logs, at warn, for each result
// recorded as a gap. A replay that runs calls the engine did not allow on
// purpose (mandate eval) counts them instead of logging each one.
const GapMessage = "a call ran without Mandate's allow; recorded as a gap"

// Observe records a tool's result against its decision. A result for a call
// the decision did not allow is recorded as a gap.
func (e *Engine) Observe(ctx context.Context, p auth.Principal, req ObserveRequest) (*store.Observation, error) {
	if !p.Can(auth.Observe) {
		return nil, forbidden(p, auth.Observe)
	}
	if req.DecisionID == "" {
		return nil, invalid("decision_id is required")
	}
	origin, output, err := e.checkResult(p, req.Origin, req.Output)
	if err != nil {
		return nil, err
	}
	d, ok := e.decisions.get(req.DecisionID)
	if !ok {
		sd, err := e.store.GetDecision(ctx, req.DecisionID)
		if err != nil {
			return nil, err
		}
		d = indexed{session: sd.SessionID, effect: sd.Effect, tool: sd.Tool}
		if sd.Action != nil {
			d.family = sd.Action.Family
		}
	}
	o := &store.Observation{ID: newID(), DecisionID: req.DecisionID, SessionID: d.session, Output: output, Origin: origin}
	var answer *store.ApprovalChange
	if d.effect == "ask" {
		// Asked: a gap unless someone approved it (approvals.go).
		sd, err := e.store.GetDecision(ctx, req.DecisionID)
		if err != nil {
			return nil, err
		}
		var why string
		answer, why = e.observedAsk(ctx, p, sd, false)
		o.Gap, o.GapReason = why != "", why
	} else if why := gapFor(req.DecisionID, d.effect, d.tool, "", ""); why != "" {
		o.Gap, o.GapReason = true, why
	}
	if err := e.commitObservation(ctx, p, o, answer, e.scanOutput(output, d.family)); err != nil {
		return nil, err
	}
	return o, nil
}

// commitObservation records o in its session, in order with the session's
// decisions, with the approval change the result settled (nil for none),
// and merges the output's scan into the session's flow table.
func (e *Engine) commitObservation(ctx context.Context, p auth.Principal, o *store.Observation, answer *store.ApprovalChange, sc *flow.Scan) error {
	l, err := e.acquire(ctx, o.SessionID)
	if err != nil {
		return err
	}
	if !p.Owns(l.sess.Agent.ID) {
		l.mu.Unlock()
		if o.DecisionID != "" {
			return fmt.Errorf("%w: decision %s belongs to another agent's session", ErrForbidden, o.DecisionID)
		}
		return fmt.Errorf("%w: this %s token may not act for agent %q, whose session %s is", ErrForbidden, p.Role, l.sess.Agent.ID, o.SessionID)
	}
	o.CreatedAt = e.now().UTC()
	c := &store.Change{Observation: o}
	if answer != nil {
		c.ApprovalChanges = []*store.ApprovalChange{answer}
	}
	ch := e.submitLocked(l, c)
	e.flowObserved(ctx, l, o, sc)
	l.mu.Unlock()
	if err := e.settle(ctx, l, ch, true); err != nil {
		return fmt.Errorf("observe: %w", err)
	}
	e.observed(c)
	if o.Gap {
		e.log.Warn(GapMessage, "session", o.SessionID, "tool", o.Tool, "call_id", o.CallID, "decision", o.DecisionID, "reason", o.GapReason, "observation", o.ID)
	}
	return nil
}
