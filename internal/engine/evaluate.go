package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
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
}

// Decision is a decided call as returned to surfaces.
type Decision struct {
	ID             string         `json:"decision_id"`
	SessionID      string         `json:"session_id"`
	Seq            int            `json:"seq"`
	Effect         policy.Effect  `json:"effect"`
	Rules          []string       `json:"rules"`
	Reasons        []string       `json:"reasons"`
	Action         *action.Action `json:"action"`
	MandateVersion int            `json:"mandate_version"`
	PolicyHash     string         `json:"policy_hash"`
	LatencyMicros  int64          `json:"latency_us"`
}

// Evaluate decides one call and returns only after the decision is durable.
// An error means the caller must treat the call as denied.
func (e *Engine) Evaluate(ctx context.Context, p auth.Principal, req EvaluateRequest) (*Decision, error) {
	start := time.Now()
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
	l, err := e.acquire(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	if !p.Owns(l.sess.Agent.ID) {
		l.mu.Unlock()
		return nil, fmt.Errorf("%w: this agent token is for agent %q, the session belongs to %q", ErrForbidden, p.AgentID, l.sess.Agent.ID)
	}
	now := e.now().UTC()
	res, version, pol := e.decideLocked(ctx, l, req, now)
	d, ch := e.recordLocked(l, req, raw, res, version, pol, now, time.Since(start))
	l.mu.Unlock()

	if err := e.wait(ctx, ch); err != nil {
		e.metrics.failed()
		e.log.Error("decision not persisted; the call must be refused", "session", req.SessionID, "tool", req.Tool, "err", err)
		if l.mu.TryLock() {
			e.drop(req.SessionID, l)
			l.mu.Unlock()
		} else {
			// Another call holds it; it will see the store's truth after
			// its own commit, or be dropped by its own failure.
			e.dropLater(req.SessionID, l)
		}
		return nil, fmt.Errorf("persist decision: %w", err)
	}
	e.decisions.put(d.ID, d.SessionID)
	e.metrics.decided(req.Surface, string(d.Effect), time.Since(start))
	return d, nil
}

func (e *Engine) dropLater(id string, l *live) {
	go func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if !l.gone {
			e.drop(id, l)
		}
	}()
}

// decideLocked runs the pure pipeline in the session's context. Failures
// become a deny; they never escape as an allow.
func (e *Engine) decideLocked(ctx context.Context, l *live, req EvaluateRequest, now time.Time) (Result, int, *policy.Policy) {
	pol := e.policy.Load()
	d := &Decider{Classifier: e.cls, Policy: pol}
	tools, toolWhy, toolErr := e.toolContextLocked(ctx, l, req.Tool)
	call := action.Call{Tool: req.Tool, Args: req.Args, WorkingDir: l.sess.WorkingDir, HomeDir: l.sess.HomeDir, Tools: tools}
	s := l.snap.Load()
	version := 0
	if s.own != nil {
		version = s.own.Version
	}
	why, err := e.blocked(ctx, l)
	if err == nil && why != "" {
		return Result{Action: e.cls.Classify(call), Verdict: policy.Verdict{
			Effect: policy.Deny, Rules: []string{ruleSessionStatus}, Reasons: []string{why},
		}}, version, pol
	}
	if err == nil {
		err = toolErr
	}
	if err == nil && toolWhy != "" {
		return Result{Action: e.cls.Classify(call), Verdict: policy.Verdict{
			Effect: policy.Deny, Rules: []string{RuleToolChanged}, Reasons: []string{toolWhy},
		}}, version, pol
	}
	var res Result
	if err == nil {
		m, merr := e.effective(ctx, l, 0)
		if merr != nil {
			err = merr
		} else {
			res, err = d.Decide(&Input{Call: call, Mandate: m, Session: facts(&l.sess), Agent: agentFacts(l.sess.Agent), Self: e.self, Now: now})
		}
	}
	if err != nil {
		e.log.Error("decision failed; denying", "session", l.sess.ID, "tool", req.Tool, "err", err)
		res.Verdict = DenyInternal()
	}
	return res, version, pol
}

// recordLocked updates the session's counters for the verdict and submits
// the decision; the returned channel reports durability.
func (e *Engine) recordLocked(l *live, req EvaluateRequest, raw json.RawMessage, res Result, version int, pol *policy.Policy, now time.Time, latency time.Duration) (*Decision, <-chan error) {
	st := &l.sess.State
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
	return e.submitDecision(l, req, raw, res, version, pol, now, latency, statusChanged)
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
		seen := map[action.Kind]bool{}
		for _, k := range kinds {
			if !seen[k] {
				seen[k] = true
				st.Counts[string(k)]++
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
	}
	c := &store.Change{
		Decision: &store.Decision{
			ID: d.ID, SessionID: d.SessionID, Seq: d.Seq, Surface: req.Surface, Tool: req.Tool, Args: raw,
			Action: cloneAction(&act), MandateVersion: version, PolicyHash: d.PolicyHash, Effect: string(d.Effect),
			Rules: d.Rules, Reasons: d.Reasons, LatencyMicros: d.LatencyMicros, CallID: req.CallID, CreatedAt: now,
		},
		Reported: reportedFor(req, d, now),
	}
	if statusChanged || now.Sub(l.countersSaved) >= countersSaveEvery {
		c.Session = copySession(&l.sess)
		l.countersSaved = now
	}
	return d, e.submit(c)
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
	f := policy.SessionFacts{
		ID: s.ID, Status: s.Status, ParentID: s.ParentID,
		Counts: maps.Clone(s.State.Counts), Spend: maps.Clone(s.State.Spend),
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

// ObserveRequest is a tool's result for a decided call.
type ObserveRequest struct {
	DecisionID string
	Output     json.RawMessage
	// Origin is "observed" (the surface saw the result at the tool
	// boundary; default) or "reported" (a client's claim).
	Origin string
}

// Observe records a tool's result against its decision.
func (e *Engine) Observe(ctx context.Context, p auth.Principal, req ObserveRequest) (*store.Observation, error) {
	if !p.Can(auth.Observe) {
		return nil, forbidden(p, auth.Observe)
	}
	if req.DecisionID == "" {
		return nil, invalid("decision_id is required")
	}
	switch req.Origin {
	case "":
		req.Origin = "observed"
	case "observed", "reported":
	default:
		return nil, invalid("origin %q: want observed or reported", req.Origin)
	}
	if len(req.Output) > e.maxArgs {
		return nil, invalid("output is %d bytes, over the %d-byte limit", len(req.Output), e.maxArgs)
	}
	if len(req.Output) == 0 {
		req.Output = json.RawMessage("null")
	}
	if !json.Valid(req.Output) {
		return nil, invalid("output is not valid JSON")
	}
	sessionID, ok := e.decisions.get(req.DecisionID)
	if !ok {
		d, err := e.store.GetDecision(ctx, req.DecisionID)
		if err != nil {
			return nil, err
		}
		sessionID = d.SessionID
	}
	l, err := e.live(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if !p.Owns(l.sess.Agent.ID) {
		return nil, fmt.Errorf("%w: decision %s belongs to another agent's session", ErrForbidden, req.DecisionID)
	}
	o := &store.Observation{ID: newID(), DecisionID: req.DecisionID, SessionID: sessionID, Output: req.Output, Origin: req.Origin, CreatedAt: e.now().UTC()}
	if err := e.commit(ctx, &store.Change{Observation: o}); err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	return o, nil
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
