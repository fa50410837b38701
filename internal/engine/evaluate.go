package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/flow"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// EvaluateRequest is one tool call to decide.
type EvaluateRequest struct {
	SessionID string
	Tool      string
	Args      map[string]any
	// RawArgs, if set, is Args as the caller encoded them; it is what gets
	// stored (after redaction), so nothing is lost to re-encoding.
	RawArgs json.RawMessage
	// Surface names where the call came from: api, mcp, hook, cli, eval.
	Surface string
	// CallID is the surface's own id for the call (Claude Code's
	// tool_use_id), stored with the decision so that the result can be
	// observed by it (ObserveCall), from another process.
	CallID string
	// Reported is the agent's own account of the call (its stated
	// reasoning, say), any JSON value. It is recorded as evidence beside
	// the decision, labelled reported, and plays no part in deciding.
	Reported json.RawMessage
	// Wait, when above 0, makes an ask wait up to this long for its
	// approval to be answered (WaitForAnswer).
	Wait time.Duration
	// OnAsk, if set, is called with an ask decision once it is durable,
	// before the wait starts (the MCP gateway tells its client which
	// approval it waits on).
	OnAsk func(*Decision)
}

// Decision is a decided call as returned to surfaces. On the wire it is
// api.Decision (Wire).
type Decision struct {
	ID             string
	SessionID      string
	Seq            int
	Effect         policy.Effect
	Rules          []string
	Reasons        []string
	Action         *action.Action
	MandateVersion int
	PolicyHash     string
	LatencyMicros  int64

	// ApprovalID is the approval an ask waits on, or the one that decided
	// the call (rules approval.granted, approval.denied, judge.*).
	ApprovalID string
	// Approval is that approval's state when the answer was given.
	Approval *api.ApprovalStatus
	// Judge is the judge model's opinion, when one was asked.
	Judge *store.JudgeOpinion
	// Signals compare the call with its agent's baseline.
	Signals []baseline.Signal
	// rec is the decision as stored (redacted), for the event stream.
	rec *store.Decision
}

// Wire is d as POST /v1/evaluate answers it.
func (d *Decision) Wire() *api.Decision {
	return &api.Decision{
		ID: d.ID, SessionID: d.SessionID, Seq: d.Seq, Effect: api.Effect(d.Effect),
		Rules: d.Rules, Reasons: d.Reasons, Action: d.Action,
		MandateVersion: d.MandateVersion, PolicyHash: d.PolicyHash, LatencyMicros: d.LatencyMicros,
		ApprovalID: d.ApprovalID, Approval: d.Approval, Judge: d.Judge, Signals: d.Signals,
	}
}

// Evaluate decides one call and returns only after the decision is durable.
// An error means the caller must treat the call as denied.
func (e *Engine) Evaluate(ctx context.Context, p auth.Principal, req EvaluateRequest) (*Decision, error) {
	start := time.Now()
	return retryStale(ctx, e, req.SessionID, func() (*Decision, error) { return e.evaluate(ctx, p, req, start) })
}

func (e *Engine) evaluate(ctx context.Context, p auth.Principal, req EvaluateRequest, start time.Time) (*Decision, error) {
	if !p.Can(auth.Evaluate) {
		return nil, forbidden(p, auth.Evaluate)
	}
	if req.SessionID == "" {
		return nil, invalid("session_id is required")
	}
	if req.Tool == "" {
		return nil, invalid("tool is required")
	}
	if req.Surface == "" {
		req.Surface = "api"
	}
	if err := checkCallID(req.CallID); err != nil {
		return nil, err
	}
	if err := e.checkReported(req.Reported); err != nil {
		return nil, err
	}
	raw, err := e.rawArgs(req.Args, req.RawArgs)
	if err != nil {
		return nil, err
	}
	pre := e.preclassify(ctx, req)
	l, err := e.acquire(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	if !p.Owns(l.sess.Agent.ID) {
		l.mu.Unlock()
		return nil, notServed(p, "session "+req.SessionID, l.sess.Agent.ID)
	}
	now := e.now().UTC()
	res, version, pol := e.decideWith(ctx, l, req, now, pre)
	if res.Verdict.Effect == policy.Ask {
		// Nobody is asked about a call its delegation tree's caps
		// refuse anyway.
		e.holdTreeCaps(ctx, l, &res)
	}
	if res.Verdict.Effect == policy.Ask {
		// The approval queue (and the judge) may answer; l may be
		// released and taken again meanwhile.
		if l, res, version, pol, now, err = e.resolveAsk(ctx, l, req, raw, res, version, pol, now); err != nil {
			return nil, err
		}
	}
	if res.Verdict.Effect == policy.Allow {
		// Read now, just before the decision is submitted, so that the
		// draws stand on the budgets as they are.
		e.holdTreeCaps(ctx, l, &res)
	}
	d, ch := e.recordLocked(l, req, raw, res, version, pol, now, time.Since(start))
	agent, workDir := l.sess.Agent, l.sess.WorkingDir
	l.mu.Unlock()

	// The decision is already counted in the session's memory: if the
	// caller stops waiting, the entry stays (its commit settles in the
	// background, and a failure then retires it).
	if err := e.settle(ctx, l, ch, true); err != nil {
		e.appr.failed(res.ask)
		if errors.Is(err, store.ErrStale) {
			// Decided on a copy another replica has moved past (settle
			// retired it): Evaluate reloads the session and decides again.
			return nil, err
		}
		e.metrics.failed()
		e.log.Error("decision not persisted; the call must be refused", "session", req.SessionID, "tool", req.Tool, "err", err)
		return nil, fmt.Errorf("persist decision: %w", err)
	}
	e.decisions.put(d.ID, indexed{session: d.SessionID, effect: string(d.Effect), tool: req.Tool, family: d.Action.Family})
	if d.rec != nil {
		e.beh.learn(agent, workDir, d.rec)
	}
	e.metrics.decided(req.Surface, string(d.Effect), time.Since(start))
	e.logDecision(ctx, d, &req)
	e.decided(d, res.ask)
	if req.Wait > 0 && d.Effect == policy.Ask && d.ApprovalID != "" {
		if req.OnAsk != nil {
			req.OnAsk(d)
		}
		return e.WaitForAnswer(ctx, p, req, d)
	}
	return d, nil
}

// decideLocked runs the pure pipeline in the session's context. Failures
// become a deny; they never escape as an allow.
func (e *Engine) decideLocked(ctx context.Context, l *live, req EvaluateRequest, now time.Time) (Result, int, *policy.Policy) {
	return e.decideWith(ctx, l, req, now, nil)
}

// decideWith is decideLocked with the call perhaps classified already,
// before the lock was taken (preclassify): its classification is used when
// the session's classification context is still the one it was made in,
// and otherwise the call is classified here, with the lock held
// (internal/action bounds that work, bounds.go, and stops it when ctx
// ends).
func (e *Engine) decideWith(ctx context.Context, l *live, req EvaluateRequest, now time.Time, pre *preclassified) (Result, int, *policy.Policy) {
	pol := e.policy.Load()
	d := &Decider{Classifier: e.cls, Policy: pol}
	tools, toolWhy, toolErr := e.toolContextLocked(ctx, l, req.Tool)
	cc := l.classifyContextLocked(tools)
	call := cc.call(req)
	if pre != nil && pre.cc != cc {
		pre = nil // the tools changed meanwhile
	}
	classify := func() action.Action {
		if pre != nil {
			return pre.act
		}
		return e.cls.ClassifyContext(ctx, call)
	}
	s := l.snap.Load()
	version := 0
	if s.own != nil {
		version = s.own.Version
	}
	why, err := e.blocked(ctx, l)
	if err == nil && why != "" {
		return Result{Action: classify(), Verdict: policy.Verdict{
			Effect: policy.Deny, Rules: []string{ruleSessionStatus}, Reasons: []string{why},
		}}, version, pol
	}
	if err == nil {
		err = toolErr
	}
	if err == nil && toolWhy != "" {
		return Result{Action: classify(), Verdict: policy.Verdict{
			Effect: policy.Deny, Rules: []string{RuleToolChanged}, Reasons: []string{toolWhy},
		}}, version, pol
	}
	var res Result
	if err == nil {
		m, merr := e.effective(ctx, l, 0)
		var t *flow.Table
		if merr == nil {
			t, merr = e.flowLocked(ctx, l)
		}
		if merr != nil {
			err = merr
		} else {
			in := e.inputFor(&l.sess, m, t, &req, tools, now, true)
			in.Baseline = &callBaseline{e: e, ctx: ctx, l: l, tool: req.Tool, now: now}
			in.Sequences, err = e.sequenceGroupsLocked(ctx, l, pol)
			if pre != nil {
				in.Classified = &pre.act
			}
			if err == nil {
				res, err = d.DecideContext(ctx, in)
				res.cf, res.tools = in.Flow.(*callFlow), tools
			}
		}
	}
	if err != nil {
		e.log.Error("decision failed; denying", "session", l.sess.ID, "tool", req.Tool, "err", err)
		res.Verdict = DenyInternal()
		if errors.Is(err, store.ErrTampered) {
			// The reason is the row edited behind the log's back (a
			// tool pin or change, read when the call is decided).
			res.Verdict.Reasons = append(res.Verdict.Reasons, err.Error())
		}
	}
	return res, version, pol
}

// recordLocked updates the session's counters for the verdict and submits
// the decision; the returned channel reports durability.
func (e *Engine) recordLocked(l *live, req EvaluateRequest, raw json.RawMessage, res Result, version int, pol *policy.Policy, now time.Time, latency time.Duration) (*Decision, <-chan error) {
	st := &l.sess.State
	if res.signals == nil {
		// Refused before the policy ran (the session's status, a changed
		// tool, an internal failure): the signals are still recorded.
		res.signals = e.assessLocked(context.Background(), l, req.Tool, &res.Action, res.Flow, now).Signals
	}
	count(st, &res.Action, res.Verdict.Effect, res.Verdict.Rules)
	statusChanged := false
	if !statusDenied(res.Verdict) {
		st.Recent = append(st.Recent, store.Recent{Tool: req.Tool, Kind: string(res.Action.Kind), Effect: string(res.Verdict.Effect)})
		if len(st.Recent) > maxRecent {
			st.Recent = st.Recent[len(st.Recent)-maxRecent:]
		}
		if l.sess.Status == store.StatusIdle {
			l.sess.Status = store.StatusActive
			l.publish()
			statusChanged = true
		}
	}
	d, ch := e.submitDecision(l, req, redactCarried(raw, res.Flow), res, version, pol, now, latency, statusChanged)
	e.flowDecided(l, res.cf, d, res.tools, now)
	res.seq.Commit(d.ID, d.Effect, now)
	return d, ch
}

// count applies one decision to a session's counters: when it is made, and
// again when a session is loaded and its decisions newer than the stored
// counters are replayed. Refusals for the session's status count as calls
// only: they are not the agent's doing, so they must not look like attempts
// it could be circumventing.
func count(st *store.Counters, a *action.Action, effect policy.Effect, rules []string) {
	st.Calls++
	if len(rules) == 1 && rules[0] == ruleSessionStatus {
		return
	}
	switch effect {
	case policy.Allow:
		kinds := a.Kinds
		if len(kinds) == 0 && a.Kind != "" {
			kinds = []action.Kind{a.Kind}
		}
		// Count caps count items: an rm of six files is six deletes. A
		// call that does not show its count (allowed where no cap asked
		// about it) counts as one.
		n := max(a.Items, 1)
		seen := map[action.Kind]bool{}
		for _, k := range kinds {
			if !seen[k] {
				seen[k] = true
				st.Counts[string(k)] += n
			}
		}
		if a.Effects.Financial || a.Kind == action.Pay {
			// One call may name the same money several times (price,
			// total): count the largest amount per currency once.
			most := map[string]float64{}
			for _, m := range a.Amounts {
				most[m.Currency] = max(most[m.Currency], m.Value)
			}
			for cur, v := range most {
				st.Spend[cur] += v
			}
		}
	case policy.Deny:
		st.Denied++
	case policy.Ask:
		st.Asked++
	}
}

// countersSaveEvery bounds how often a busy session's counters are written
// with its decisions. Between saves the decisions themselves are the record:
// loading a session replays those newer than its saved counters.
const countersSaveEvery = time.Second

func statusDenied(v policy.Verdict) bool {
	return len(v.Rules) == 1 && v.Rules[0] == ruleSessionStatus
}

const ruleSessionStatus = "engine.session-status"

func (e *Engine) submitDecision(l *live, req EvaluateRequest, raw json.RawMessage, res Result, version int, pol *policy.Policy, now time.Time, latency time.Duration, statusChanged bool) (*Decision, <-chan error) {
	st := &l.sess.State
	l.sess.UpdatedAt = now
	act := res.Action
	d := &Decision{
		ID: newID(), SessionID: l.sess.ID, Seq: st.Calls, Effect: res.Verdict.Effect,
		Rules: res.Verdict.Rules, Reasons: res.Verdict.Reasons, Action: &act,
		MandateVersion: version, PolicyHash: pol.Hash(), LatencyMicros: latency.Microseconds(),
		Signals: res.signals,
	}
	c := &store.Change{
		Guard: e.guardFor(l, d.ID),
		Decision: &store.Decision{
			ID: d.ID, SessionID: d.SessionID, Seq: d.Seq, Surface: req.Surface, Tool: req.Tool, Args: raw,
			Action: cloneAction(&act), MandateVersion: version, PolicyHash: d.PolicyHash, Effect: string(d.Effect),
			Rules: d.Rules, Reasons: d.Reasons, LatencyMicros: d.LatencyMicros, CallID: req.CallID, CreatedAt: now,
			Signals: res.signals, Provenance: provenanceOf(res.Flow),
		},
		Reported: reportedFor(req, d, now),
	}
	l.sess.Head = d.ID
	if statusChanged || now.Sub(l.countersSaved) >= countersSaveEvery {
		c.Session = copySession(&l.sess)
		l.countersSaved = now
	}
	res.ask.attach(c, d)
	keys := e.drawsFor(c, d, res.draws, now)
	ch := e.settleDraws(keys, e.submitLocked(l, c))
	d.rec = c.Decision // redacted by now
	return d, ch
}

// cloneAction copies what a redactor may rewrite, so the caller's copy keeps
// the values the decision was made on.
func cloneAction(a *action.Action) *action.Action {
	cp := *a
	cp.Paths = append([]action.PathRef(nil), a.Paths...)
	cp.URLs = append([]string(nil), a.URLs...)
	cp.Hosts = append([]string(nil), a.Hosts...)
	cp.Recipients = append([]action.Recipient(nil), a.Recipients...)
	cp.Accounts = append([]string(nil), a.Accounts...)
	cp.Notes = append([]string(nil), a.Notes...)
	cp.Commands = make([]action.Command, len(a.Commands))
	for i, c := range a.Commands {
		c.Argv = append([]string(nil), c.Argv...)
		cp.Commands[i] = c
	}
	return &cp
}

func facts(s *store.Session) policy.SessionFacts {
	f := sharedFacts(s)
	f.Counts, f.Spend = maps.Clone(f.Counts), maps.Clone(f.Spend)
	return f
}

// sharedFacts is facts with the session's own counter maps, not copies:
// for an input decided under the session's lock and dropped before the
// lock is released, as a decision's is (the counters change only after
// the call is decided).
func sharedFacts(s *store.Session) policy.SessionFacts {
	f := policy.SessionFacts{
		ID: s.ID, Status: s.Status, ParentID: s.ParentID,
		Counts: s.State.Counts, Spend: s.State.Spend,
		Calls: s.State.Calls, Denied: s.State.Denied, Asked: s.State.Asked,
		Recent: make([]policy.RecentDecision, len(s.State.Recent)),
	}
	for i, r := range s.State.Recent {
		f.Recent[i] = policy.RecentDecision{Tool: r.Tool, Kind: r.Kind, Effect: r.Effect}
	}
	return f
}

func agentFacts(a store.Agent) policy.AgentFacts {
	return policy.AgentFacts{ID: a.ID, Model: a.Model, PromptHash: a.SystemPromptHash, ToolsetHash: a.ToolsetHash, Retrieval: a.RetrievalSource}
}

// Decisions lists decisions for readers.
func (e *Engine) Decisions(ctx context.Context, p auth.Principal, f store.DecisionFilter) ([]*store.Decision, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	return e.store.ListDecisions(ctx, f)
}

// GetDecision returns one decision with its observations.
func (e *Engine) GetDecision(ctx context.Context, p auth.Principal, id string) (*store.Decision, []*store.Observation, error) {
	if !p.Can(auth.Read) {
		return nil, nil, forbidden(p, auth.Read)
	}
	d, err := e.store.GetDecision(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	obs, err := e.store.ListObservations(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return d, obs, nil
}
