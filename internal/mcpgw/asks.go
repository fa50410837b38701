package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/engine"
)

// An ask is a pending approval (docs/approvals.md). The gateway keeps the
// tools/call open while a person answers it, up to Options.ApprovalWait:
// approved, Mandate decides the call again (allowed once, rule
// approval.granted) and the gateway runs it; denied or expired, the client
// gets a refusal saying so; still pending, a refusal naming the approval, so
// the agent can try again once it is answered. Meanwhile a client that sent a
// progress token gets progress notifications naming the approval.
//
// With Options.Elicit, a client that supports MCP elicitation is asked
// directly: the person answers in the client's own form, and the answer is
// recorded as given through it (via mcp-elicitation, labelled reported —
// Mandate did not see the person, the client says it asked them). Only a
// backend acting as a person's credential (the embedded gateway's, a user
// token) can record that answer; otherwise the gateway waits as above.

// DefaultApprovalWait is how long `mandate serve`'s /mcp waits for an answer
// when the configuration does not say.
const DefaultApprovalWait = time.Minute

// progressEvery is how often a waiting call reports progress.
const progressEvery = 5 * time.Second

// Waiter is a Backend that can keep an ask open until a person answers it.
type Waiter interface {
	// EvaluateWaiting decides a call and, when it is an ask, waits up to
	// wait for its approval; onAsk (which may be nil, and may not be
	// called) hears of the ask before the wait starts.
	EvaluateWaiting(ctx context.Context, sessionID, tool string, args json.RawMessage, wait time.Duration, onAsk func(*api.Decision)) (*api.Decision, error)
}

// Answerer is a Backend that can record a person's answer to an approval
// given through the MCP client (elicitation).
type Answerer interface {
	AnswerApproval(ctx context.Context, approvalID string, approve bool, note string) error
}

// EvaluateWaiting implements Waiter.
func (b *EngineBackend) EvaluateWaiting(ctx context.Context, sessionID, tool string, args json.RawMessage, wait time.Duration, onAsk func(*api.Decision)) (*api.Decision, error) {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	req := engine.EvaluateRequest{SessionID: sessionID, Tool: tool, Args: m, RawArgs: args, Surface: api.SurfaceMCP, Wait: wait}
	if onAsk != nil {
		req.OnAsk = func(d *engine.Decision) { onAsk(d.Wire()) }
	}
	d, err := b.Engine.Evaluate(ctx, b.principal(ctx), req)
	if err != nil {
		return nil, err
	}
	return d.Wire(), nil
}

// AnswerApproval implements Answerer.
func (b *EngineBackend) AnswerApproval(ctx context.Context, approvalID string, approve bool, note string) error {
	dec := approval.Deny
	if approve {
		dec = approval.Approve
	}
	_, err := b.Engine.Answer(ctx, b.principal(ctx), approvalID, engine.AnswerRequest{
		Answer: approval.Answer{Decision: dec, Note: note}, Via: approval.ViaElicitation, Reported: true,
	})
	return err
}

// EvaluateWaiting implements Waiter. Over HTTP the ask's approval id is
// known only when the answer comes, so onAsk is not called.
func (b *ClientBackend) EvaluateWaiting(ctx context.Context, sessionID, tool string, args json.RawMessage, wait time.Duration, _ func(*api.Decision)) (*api.Decision, error) {
	return b.Client.EvaluateCall(ctx, client.Call{SessionID: sessionID, Tool: tool, Args: args, Surface: api.SurfaceMCP, Wait: wait})
}

// AnswerApproval implements Answerer (a user or approver token; a hook
// token is refused).
func (b *ClientBackend) AnswerApproval(ctx context.Context, approvalID string, approve bool, note string) error {
	dec := "deny"
	if approve {
		dec = "approve"
	}
	_, err := b.Client.AnswerApproval(ctx, approvalID, client.Answer{Decision: dec, Note: note})
	return err
}

// elicitable reports whether the gateway may ask the person through the
// client for this request: it supports elicitation, and the backend can
// record the answer.
func (g *Gateway) elicitable(req *mcp.CallToolRequest) bool {
	if !g.opts.Elicit {
		return false
	}
	if _, ok := g.opts.Backend.(Answerer); !ok {
		return false
	}
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil
}

// decide evaluates a call; with an approval wait (and no elicitation to
// ask through), an ask is kept open until answered, with progress for the
// client.
func (g *Gateway) decide(ctx context.Context, req *mcp.CallToolRequest, sid, exposed string, args json.RawMessage) (*api.Decision, error) {
	w, ok := g.opts.Backend.(Waiter)
	if g.opts.ApprovalWait <= 0 || !ok || g.elicitable(req) || g.approver != nil {
		return g.opts.Backend.Evaluate(ctx, sid, exposed, args)
	}
	p := g.startProgress(ctx, req, exposed)
	defer p.stop()
	return w.EvaluateWaiting(ctx, sid, exposed, args, g.opts.ApprovalWait, p.asked)
}

// onAsk settles an ask decision: through the client's elicitation form if
// it can, else by the refusal the agent reads. It returns the decision to
// run the call under (an allow), or the refusal.
func (g *Gateway) onAsk(ctx context.Context, req *mcp.CallToolRequest, sid, exposed string, args json.RawMessage, v *api.Decision) (*api.Decision, *mcp.CallToolResult) {
	if g.approver != nil {
		return g.legacyApprove(ctx, sid, exposed, args, v)
	}
	if v.ApprovalID != "" && g.elicitable(req) {
		nv, res, done := g.elicit(ctx, req, sid, exposed, args, v)
		if done {
			return nv, res
		}
		// Not answered in the form: wait for an answer elsewhere.
		if w, ok := g.opts.Backend.(Waiter); ok && g.opts.ApprovalWait > 0 {
			p := g.startProgress(ctx, req, exposed)
			p.asked(v)
			nv, err := w.EvaluateWaiting(ctx, sid, exposed, args, g.opts.ApprovalWait, nil)
			p.stop()
			if err != nil {
				return nil, refusal(v.ID, string(v.Effect), fmt.Sprintf("This call needs the user's approval (%s) and waiting for it failed, so it was not run: %v (approval %s)", reasons(v), err, v.ApprovalID))
			}
			if nv.Effect == api.Allow {
				return nv, nil
			}
			v = nv
		}
	}
	return nil, askRefusal(v)
}

// askRefusal is what the agent reads for an ask that was not approved.
func askRefusal(v *api.Decision) *mcp.CallToolResult {
	switch {
	case v.Effect == api.Deny && v.Approval != nil && v.Approval.State == api.ApprovalExpired:
		return refusal(v.ID, string(v.Effect), fmt.Sprintf("This call was not run: nobody answered in time (%s), and that counts as a no. (approval %s, decision %s)", reasons(v), v.ApprovalID, v.ID))
	case v.Effect == api.Deny:
		return refusal(v.ID, string(v.Effect), fmt.Sprintf("This call was not run: it was %s. (approval %s, decision %s)", reasons(v), v.ApprovalID, v.ID))
	case v.ApprovalID != "":
		return refusal(v.ID, string(v.Effect), fmt.Sprintf("This call was not run: it needs the user's approval (%s). It awaits approval %s, which is waiting for an answer (mandate approvals approve %s); call the tool again once it is approved. (decision %s)", reasons(v), v.ApprovalID, v.ApprovalID, v.ID))
	}
	return refusal(v.ID, string(v.Effect), fmt.Sprintf("This call was not run: it needs the user's approval (%s). Decision %s awaits approval.", reasons(v), v.ID))
}

// elicitSchema is the form the person answers in.
const elicitSchema = `{"type":"object","properties":{
 "decision":{"type":"string","title":"Let the agent run this call?","enum":["approve","deny"],"enumNames":["Approve (this call, once)","Deny"]},
 "note":{"type":"string","title":"Note (optional; kept with your answer)","maxLength":1000}},
 "required":["decision"]}`

// elicitKey names the gateway's input request in a multi-round-trip
// tools/call (SEP-2322): the first call answers with an elicitation request
// and the approval id as its request state; the client asks the person and
// calls again with the answer. (For clients on older protocol versions the
// SDK makes the round trip itself, with elicitation/create.)
const elicitKey = "mandate.approval"

// elicit asks the person through the client, or takes their answer from
// the retried call. done is false when they did not answer in the form
// (cancelled, or the answer could not be recorded): the caller then waits
// for an answer elsewhere.
func (g *Gateway) elicit(ctx context.Context, req *mcp.CallToolRequest, sid, exposed string, args json.RawMessage, v *api.Decision) (*api.Decision, *mcp.CallToolResult, bool) {
	resp, answered := req.Params.InputResponses[elicitKey]
	if !answered {
		msg := fmt.Sprintf("Mandate asks you before the agent runs %s.\n\nWhy: %s\n\nThe call: %s", exposed, reasons(v), clip(string(args), 600))
		return nil, &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{elicitKey: &mcp.ElicitParams{Message: msg, RequestedSchema: json.RawMessage(elicitSchema)}},
			RequestState:  v.ApprovalID,
		}, true
	}
	if req.Params.RequestState != v.ApprovalID {
		// The answer is for another approval (it changed meanwhile, or
		// the client sent something else): it answers nothing here.
		return nil, refusal(v.ID, string(v.Effect), fmt.Sprintf("This call was not run: the answer the client sent is not for its approval %s. (decision %s)", v.ApprovalID, v.ID)), true
	}
	res, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return nil, nil, false
	}
	approve, note := false, ""
	switch res.Action {
	case "accept":
		d, _ := res.Content["decision"].(string)
		note, _ = res.Content["note"].(string)
		approve = d == "approve"
	case "decline":
	default: // cancel: no answer
		return nil, nil, false
	}
	if err := g.opts.Backend.(Answerer).AnswerApproval(ctx, v.ApprovalID, approve, note); err != nil {
		var ae *client.APIError
		if !errors.Is(err, engine.ErrConflict) && !(errors.As(err, &ae) && ae.Status == 409) {
			g.log.Warn("recording the user's answer from the client failed; waiting for an answer elsewhere", "session", sid, "approval", v.ApprovalID, "err", err)
			return nil, nil, false
		}
		// Answered elsewhere first: decide again below.
	}
	nv, err := g.opts.Backend.Evaluate(ctx, sid, exposed, args)
	if err != nil {
		return nil, refusal(v.ID, string(v.Effect), fmt.Sprintf("Mandate could not decide this call after the user's answer, so it was not run: %v", err)), true
	}
	if nv.Effect == api.Allow {
		return nv, nil, true
	}
	return nil, askRefusal(nv), true
}

// legacyApprove consults an Approver given in Options (tests, embedders).
func (g *Gateway) legacyApprove(ctx context.Context, sid, exposed string, args json.RawMessage, v *api.Decision) (*api.Decision, *mcp.CallToolResult) {
	a, err := g.approver.Approve(ctx, ApprovalRequest{SessionID: sid, DecisionID: v.ID, Tool: exposed, Args: args, Reasons: v.Reasons})
	switch {
	case err != nil:
		return nil, refusal(v.ID, string(v.Effect), fmt.Sprintf("This call needs the user's approval (%s) and asking failed, so it was not run: %v (decision %s)", reasons(v), err, v.ID))
	case a.Status == Approved:
		return v, nil
	case a.Status == Rejected:
		return nil, refusal(v.ID, string(v.Effect), fmt.Sprintf("The user rejected this call: %s. It was not run. (decision %s)", orDefault(a.Reason, reasons(v)), v.ID))
	}
	return nil, askRefusal(v)
}

// progress reports a waiting call to a client that sent a progress token.
type progress struct {
	mu     sync.Mutex
	msg    string
	cancel context.CancelFunc
	done   chan struct{}
	// named wakes the reporter when the approval is known, so the client
	// hears which approval it waits on at once, not a tick later.
	named chan struct{}
}

func (g *Gateway) startProgress(ctx context.Context, req *mcp.CallToolRequest, exposed string) *progress {
	p := &progress{msg: fmt.Sprintf("Mandate is waiting for a person to approve %s", exposed), done: make(chan struct{}), named: make(chan struct{}, 1)}
	tok := req.Params.GetProgressToken()
	if tok == nil || req.Session == nil {
		close(p.done)
		p.cancel = func() {}
		return p
	}
	pctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	start := time.Now()
	total := g.opts.ApprovalWait.Seconds()
	go func() {
		defer close(p.done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			p.mu.Lock()
			msg := p.msg
			p.mu.Unlock()
			n := &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: time.Since(start).Seconds(), Total: total, Message: msg}
			if err := req.Session.NotifyProgress(pctx, n); err != nil && pctx.Err() == nil {
				g.log.Debug("progress notification failed", "err", err)
			}
			select {
			case <-pctx.Done():
				return
			case <-t.C:
			case <-p.named:
			}
		}
	}()
	return p
}

// asked names the approval once it is known.
func (p *progress) asked(d *api.Decision) {
	if d == nil || d.ApprovalID == "" {
		return
	}
	msg := fmt.Sprintf("Mandate is waiting for a person to answer approval %s (%s)", d.ApprovalID, strings.Join(d.Reasons, "; "))
	if d.Action != nil && d.Action.Tool != "" {
		msg = fmt.Sprintf("Mandate is waiting for a person to approve %s (%s) — approval %s", d.Action.Tool, strings.Join(d.Reasons, "; "), d.ApprovalID)
	}
	p.mu.Lock()
	p.msg = msg
	p.mu.Unlock()
	select {
	case p.named <- struct{}{}:
	default: // a wake-up is already pending; it will read the new message
	}
}

func (p *progress) stop() {
	p.cancel()
	<-p.done
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
