package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/flow"
	"github.com/mandate-dev/mandate/internal/store"
)

// The behaviour layer's readers: agents, drift, trace, summary, review, and
// the operator's reset and freeze. Every answer is made of stored facts.

// Bounds of what one reader looks at.
const (
	maxTraceSteps     = 1000
	maxReviewSessions = 100
	// maxScanBytes bounds how much of one observation a trace searches.
	maxScanBytes = 1 << 20
)

func (e *Engine) baselines(p auth.Principal) (store.Baselines, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	if e.beh.bs == nil {
		return nil, fmt.Errorf("%w: this store keeps no baselines", ErrNotFound)
	}
	return e.beh.bs, nil
}

// Agents lists every agent with a baseline.
func (e *Engine) Agents(ctx context.Context, p auth.Principal) ([]api.AgentBaseline, error) {
	bs, err := e.baselines(p)
	if err != nil {
		return nil, err
	}
	rows, err := bs.ListBaselines(ctx, "")
	if err != nil {
		return nil, err
	}
	return e.agentsOf(rows)
}

// Agent returns one agent's baseline and versions, or ErrNotFound.
func (e *Engine) Agent(ctx context.Context, p auth.Principal, id string) (*api.AgentBaseline, error) {
	bs, err := e.baselines(p)
	if err != nil {
		return nil, err
	}
	rows, err := bs.ListBaselines(ctx, id)
	if err != nil {
		return nil, err
	}
	agents, err := e.agentsOf(rows)
	if err != nil {
		return nil, err
	}
	if len(agents) == 0 {
		return nil, fmt.Errorf("agent %q: %w (no baseline: it made no decided call yet)", id, ErrNotFound)
	}
	return &agents[0], nil
}

func (e *Engine) agentsOf(rows []*store.Baseline) ([]api.AgentBaseline, error) {
	cfg := e.beh.cfg
	var out []api.AgentBaseline
	byID := map[string]int{}
	for _, r := range rows {
		prof, err := decodeProfile(r)
		if err != nil {
			return nil, err
		}
		i, ok := byID[r.Agent]
		if !ok {
			i = len(out)
			byID[r.Agent] = i
			out = append(out, api.AgentBaseline{ID: r.Agent, Versions: []api.AgentVersion{}, Kinds: map[string]int{}, Tools: map[string]int{}})
		}
		a := &out[i]
		if r.Version == "" {
			a.State, a.Sessions, a.Ordinary, a.Calls = prof.State(cfg), prof.Sessions, prof.Ordinary, prof.Calls
			a.Denied, a.Asked, a.Destinations, a.Dropped = prof.Denied, prof.Asked, len(prof.Destinations), prof.Dropped
			a.Kinds, a.Tools, a.FirstSeen, a.LastSeen = prof.Kinds, prof.Tools, prof.FirstSeen, prof.LastSeen
			continue
		}
		v := api.AgentVersion{Version: r.Version, Previous: prof.Previous, State: prof.State(cfg), Sessions: prof.Sessions,
			Calls: prof.Calls, FirstSeen: prof.FirstSeen, LastSeen: prof.LastSeen}
		if f := prof.Fingerprint; f != nil {
			v.Model, v.SystemPromptHash, v.ToolsetHash, v.RetrievalSource = f.Model, f.SystemPromptHash, f.ToolsetHash, f.RetrievalSource
		}
		a.Versions = append(a.Versions, v)
	}
	return out, nil
}

// Drift compares each version of an agent with the one before it.
func (e *Engine) Drift(ctx context.Context, p auth.Principal, id string) (*api.DriftReport, error) {
	a, err := e.Agent(ctx, p, id)
	if err != nil {
		return nil, err
	}
	rep := &api.DriftReport{Agent: id, Pairs: []api.Drift{}}
	for _, v := range a.Versions {
		if v.Previous == "" {
			continue
		}
		d, err := e.drift(ctx, id, v.Version)
		if errors.Is(err, ErrNotFound) {
			continue // the previous version was reset
		}
		if err != nil {
			return nil, err
		}
		rep.Pairs = append(rep.Pairs, *d)
	}
	return rep, nil
}

// BaselineAction resets, freezes or unfreezes an agent's baseline. Only an
// admin may; the action is an evidence record.
func (e *Engine) BaselineAction(ctx context.Context, p auth.Principal, agent string, req api.BaselineRequest) (*api.AgentBaseline, error) {
	if p.Role != auth.RoleAdmin {
		return nil, fmt.Errorf("%w: role %s may not change a baseline (admin only)", ErrForbidden, p.Role)
	}
	switch req.Action {
	case "reset", "freeze", "unfreeze":
	default:
		return nil, invalid("action %q: want reset, freeze or unfreeze", req.Action)
	}
	if req.Version != "" && req.Action != "reset" {
		return nil, invalid("version goes with reset only: freezing applies to the agent")
	}
	a, err := e.Agent(ctx, p, agent)
	if err != nil {
		return nil, err
	}
	keys := []store.BaselineKey{{Agent: agent}}
	for _, v := range a.Versions {
		if req.Version == "" || v.Version == req.Version {
			keys = append(keys, store.BaselineKey{Agent: agent, Version: v.Version})
		}
	}
	if req.Version != "" && len(keys) == 1 {
		return nil, fmt.Errorf("agent %q version %q: %w", agent, req.Version, ErrNotFound)
	}
	err = e.beh.bs.FoldBaseline(ctx, &store.BaselineFold{Keys: keys, Apply: func(_ int, rows []*store.Baseline) (int, error) {
		for i, r := range rows {
			if r.Profile == nil {
				continue
			}
			prof := baseline.NewProfile(r.Agent, r.Version)
			if err := json.Unmarshal(r.Profile, prof); err != nil {
				return 0, err
			}
			switch req.Action {
			case "freeze", "unfreeze":
				if r.Version == "" {
					prof.Frozen = req.Action == "freeze"
				}
			case "reset":
				if r.Version == "" && req.Version != "" && i == 0 {
					continue // one version's reset keeps the agent's history
				}
				fresh := baseline.NewProfile(r.Agent, r.Version)
				fresh.Fingerprint, fresh.Previous, fresh.Versions, fresh.Frozen = prof.Fingerprint, prof.Previous, prof.Versions, prof.Frozen
				prof = fresh
			}
			raw, err := json.Marshal(prof)
			if err != nil {
				return 0, err
			}
			r.Profile = raw
		}
		return 0, nil
	}})
	if err != nil {
		return nil, err
	}
	e.beh.mu.Lock()
	delete(e.beh.profiles, agent)
	e.beh.mu.Unlock()
	rec := &store.BehaviourRecord{Type: req.Action, Agent: agent, Version: req.Version, By: p.Name + p.TokenID, CreatedAt: e.now().UTC()}
	if err := e.commit(ctx, &store.Change{Behaviour: []*store.BehaviourRecord{rec}}); err != nil {
		return nil, fmt.Errorf("record the %s: %w", req.Action, err)
	}
	return e.Agent(ctx, p, agent)
}

// Trace returns the chain that led to a decision: the decisions of its
// session before it (and of its parent sessions before the sub-agent
// began), with their signals and the observations that supplied their
// values, and the first departure among them.
func (e *Engine) Trace(ctx context.Context, p auth.Principal, decisionID string) (*api.Trace, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	return e.trace(ctx, decisionID)
}

func (e *Engine) trace(ctx context.Context, decisionID string) (*api.Trace, error) {
	d, err := e.store.GetDecision(ctx, decisionID)
	if err != nil {
		return nil, err
	}
	var chain []*store.Decision
	sessionID, upTo := d.SessionID, d.Seq
	for depth := 0; sessionID != "" && depth < 16; depth++ {
		ds, err := e.sessionDecisions(ctx, sessionID, upTo)
		if err != nil {
			return nil, err
		}
		chain = append(ds, chain...)
		s, err := e.store.GetSession(ctx, sessionID)
		if err != nil {
			return nil, err
		}
		sessionID, upTo = s.ParentID, -1
		if s.ParentID != "" {
			// The parent's steps up to the child's start.
			upTo = e.seqBefore(ctx, s.ParentID, s)
		}
	}
	if len(chain) > maxTraceSteps {
		chain = chain[len(chain)-maxTraceSteps:]
	}
	t := &api.Trace{DecisionID: decisionID, Steps: make([]api.TraceStep, 0, len(chain))}
	facts := e.traceFlow(ctx, chain)
	before := map[string]bool{} // decisions earlier in the chain
	var seen []*store.Observation
	for _, c := range chain {
		step := api.TraceStep{DecisionID: c.ID, SessionID: c.SessionID, Seq: c.Seq, Tool: c.Tool, Effect: c.Effect,
			Rules: orNone(c.Rules), Signals: orNoSignals(c.Signals), Supplied: []api.Supplied{}}
		if c.Action != nil {
			step.Kind = string(c.Action.Kind)
			if f := facts[c.ID]; f != nil {
				step.Supplied, step.Injected = suppliedByFlow(f, before)
			} else {
				step.Supplied = supplied(c, seen)
			}
		}
		before[c.ID] = true
		obs, err := e.store.ListObservations(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		for _, o := range obs {
			step.Injected = append(step.Injected, e.beh.injected(o)...)
		}
		seen = append(seen, obs...)
		t.Steps = append(t.Steps, step)
		if t.FirstDeparture == nil {
			t.FirstDeparture = departure(&step)
		}
	}
	return t, nil
}

// traceFlow looks each step's values up in its session's flow table (the
// flow facts: which earlier output each value was first seen in, and
// whether it came from an injected instruction). A session whose table
// cannot be had (the store fails) is left out: its steps fall back to
// matching values in the earlier outputs' text.
func (e *Engine) traceFlow(ctx context.Context, chain []*store.Decision) map[string]*flow.Facts {
	out := map[string]*flow.Facts{}
	bySession := map[string][]*store.Decision{}
	var order []string
	for _, c := range chain {
		if _, ok := bySession[c.SessionID]; !ok {
			order = append(order, c.SessionID)
		}
		bySession[c.SessionID] = append(bySession[c.SessionID], c)
	}
	for _, id := range order {
		l, err := e.acquire(ctx, id)
		if err != nil {
			continue
		}
		t, err := e.flowLocked(ctx, l)
		if err == nil {
			for _, c := range bySession[id] {
				if c.Action != nil {
					out[c.ID] = t.Facts(flow.CallInput{Action: c.Action})
				}
			}
		} else {
			e.log.Warn("trace without flow facts", "session", id, "err", err)
		}
		l.mu.Unlock()
	}
	return out
}

// suppliedByFlow is what earlier outputs of the chain supplied to a call,
// by its flow facts, and the values that came from injected instructions.
func suppliedByFlow(f *flow.Facts, before map[string]bool) ([]api.Supplied, []string) {
	out := []api.Supplied{}
	var injected []string
	for _, v := range f.Values {
		if v.Origin != flow.OriginOutput || !before[v.DecisionID] {
			continue
		}
		out = append(out, api.Supplied{ObservationID: v.ObservationID, DecisionID: v.DecisionID, Value: v.Value})
		if v.Injected {
			injected = append(injected, fmt.Sprintf("%s %s came from an instruction injected into the output of %s (decision %s)", v.Role, v.Value, v.Tool, v.DecisionID))
		}
	}
	return out, injected
}

func (e *Engine) sessionDecisions(ctx context.Context, sessionID string, upTo int) ([]*store.Decision, error) {
	var out []*store.Decision
	after := 0
	for len(out) < maxTraceSteps*2 {
		page, err := e.store.ListDecisions(ctx, store.DecisionFilter{SessionID: sessionID, AfterSeq: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, d := range page {
			if upTo >= 0 && d.Seq > upTo {
				return out, nil
			}
			out = append(out, d)
		}
		if len(page) < 1000 {
			break
		}
		after = page[len(page)-1].Seq
	}
	return out, nil
}

// seqBefore is the last decision of parent made before child began.
func (e *Engine) seqBefore(ctx context.Context, parent string, child *store.Session) int {
	ds, err := e.sessionDecisions(ctx, parent, -1)
	if err != nil {
		return 0
	}
	seq := 0
	for _, d := range ds {
		if d.CreatedAt.After(child.CreatedAt) {
			break
		}
		seq = d.Seq
	}
	return seq
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orNoSignals(s []baseline.Signal) []baseline.Signal {
	if s == nil {
		return []baseline.Signal{}
	}
	return s
}

// supplied finds, for the values a call uses, the earliest earlier
// observation whose content held each.
func supplied(d *store.Decision, seen []*store.Observation) []api.Supplied {
	out := []api.Supplied{}
	a := d.Action
	var values []string
	values = append(values, a.Hosts...)
	values = append(values, a.URLs...)
	values = append(values, a.Accounts...)
	for _, r := range a.Recipients {
		values = append(values, r.Address)
	}
	done := map[string]bool{}
	for _, v := range values {
		if len(v) < 4 || done[v] {
			continue
		}
		done[v] = true
		lv := strings.ToLower(v)
		for _, o := range seen {
			text := o.Output
			if len(text) > maxScanBytes {
				text = text[:maxScanBytes]
			}
			if strings.Contains(strings.ToLower(string(text)), lv) {
				out = append(out, api.Supplied{ObservationID: o.ID, DecisionID: o.DecisionID, Value: v})
				break
			}
		}
	}
	return out
}

// departure says whether a step left the mandate, the baseline or took in
// injected content.
func departure(s *api.TraceStep) *api.Departure {
	if s.Effect == "ask" || s.Effect == "deny" {
		return &api.Departure{DecisionID: s.DecisionID, Type: "mandate", Reason: fmt.Sprintf("%s: %s (%s)", s.Tool, s.Effect, strings.Join(s.Rules, ", "))}
	}
	monitoring := false
	for _, sg := range s.Signals {
		if sg.Name == baseline.SignalState && string(sg.Value) == `"`+baseline.Monitoring+`"` {
			monitoring = true
		}
	}
	for _, sg := range s.Signals {
		if monitoring && (sg.Name == baseline.SignalFirstSeen || sg.Name == baseline.SignalRareTransition) {
			return &api.Departure{DecisionID: s.DecisionID, Type: "baseline", Reason: sg.Reason}
		}
	}
	if len(s.Injected) > 0 {
		return &api.Departure{DecisionID: s.DecisionID, Type: "injection", Reason: "its result held instructions to the model: " + strings.Join(s.Injected, "; ")}
	}
	return nil
}

// injected lists the injected instructions in an observation's content.
func (b *behaviour) injected(o *store.Observation) []string {
	if b.scanner == nil || len(o.Output) == 0 {
		return nil
	}
	raw := o.Output
	if len(raw) > maxScanBytes {
		raw = raw[:maxScanBytes]
	}
	var out []string
	for _, in := range b.scanner.Output(raw, flow.Hint{}).Injections {
		text := in.Text
		if len(text) > 120 {
			text = text[:120] + "…"
		}
		out = append(out, fmt.Sprintf("%q (%s)", text, in.Why))
	}
	return out
}

// SessionSummary is a session as facts: kinds, destinations, asks and
// their answers, denies, gaps, signals and the first departure. For a
// completed session it is the summary recorded when it completed
// (summary.go), with Recorded naming the evidence record.
func (e *Engine) SessionSummary(ctx context.Context, p auth.Principal, id string) (*api.SessionSummary, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	s, err := e.store.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	if s.Status == store.StatusCompleted {
		if rec, err := e.recordedSummary(ctx, id); err != nil {
			e.log.Warn("recorded summary unreadable; computing it", "session", id, "err", err)
		} else if rec != nil {
			return rec, nil
		}
	}
	return e.summarize(ctx, id)
}

// summarize computes a session's summary from the store.
func (e *Engine) summarize(ctx context.Context, id string) (*api.SessionSummary, error) {
	s, err := e.store.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	ds, err := e.sessionDecisions(ctx, id, -1)
	if err != nil {
		return nil, err
	}
	sum := &api.SessionSummary{SessionID: id, AgentID: s.Agent.ID, Version: versionOf(s.Agent), Status: s.Status, Calls: len(ds),
		Kinds: map[string]int{}, Destinations: []api.Fact{}, Asked: []api.Asked{}, Denied: []api.Fact{}, Gaps: []string{}, Signals: []api.Fact{}}
	dest := map[string]*api.Fact{}
	var order []string
	for _, d := range ds {
		if d.Action != nil {
			sum.Kinds[string(d.Action.Kind)]++
			for _, x := range e.beh.cfg.Destinations(d.Action) {
				if dest[x] == nil {
					dest[x] = &api.Fact{What: x}
					order = append(order, x)
				}
				dest[x].Decisions = append(dest[x].Decisions, d.ID)
			}
		}
		switch d.Effect {
		case "ask":
			sum.Asked = append(sum.Asked, api.Asked{DecisionID: d.ID, Tool: d.Tool, Rules: orNone(d.Rules), ApprovalID: d.ApprovalID, Answer: answerOf(ctx, e.approvalStates(), d)})
		case "deny":
			sum.Denied = append(sum.Denied, api.Fact{What: d.Tool + ": " + strings.Join(d.Reasons, "; "), Decisions: []string{d.ID}})
		}
		for _, sg := range d.Signals {
			if sg.Name != baseline.SignalState && sg.Name != baseline.SignalScore {
				sum.Signals = append(sum.Signals, api.Fact{What: sg.Name + ": " + sg.Reason, Decisions: []string{d.ID}})
			}
		}
	}
	for _, x := range order {
		sum.Destinations = append(sum.Destinations, *dest[x])
	}
	if gaps, err := e.store.ListGaps(ctx, store.GapFilter{SessionID: id, Limit: 1000}); err == nil {
		for _, g := range gaps {
			sum.Gaps = append(sum.Gaps, g.ID)
		}
	}
	if len(ds) > 0 {
		if t, err := e.trace(ctx, ds[len(ds)-1].ID); err == nil {
			sum.FirstDeparture = t.FirstDeparture
		}
	}
	return sum, nil
}

// answerOf is how an ask was answered: "none" when it made no approval,
// "unknown" when the store keeps no approvals (as, nil) or cannot read it.
func answerOf(ctx context.Context, as ApprovalStates, d *store.Decision) string {
	if d.ApprovalID == "" {
		return "none"
	}
	if as == nil {
		return "unknown"
	}
	a, err := as.GetApproval(ctx, d.ApprovalID)
	if err != nil {
		return "unknown"
	}
	return a.State
}

// AgentReview looks across an agent's latest sessions for what repeats:
// the same rule asked or denied again and again, the same questionable
// shortcut, a shortcut approved once and then repeated, and scope that
// grows session after session.
func (e *Engine) AgentReview(ctx context.Context, p auth.Principal, id string) (*api.AgentReview, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	sessions, err := e.store.ListSessions(ctx, store.SessionFilter{AgentID: id, Limit: maxReviewSessions})
	if err != nil {
		return nil, err
	}
	if len(sessions) == 0 {
		return nil, fmt.Errorf("agent %q: %w (no sessions)", id, ErrNotFound)
	}
	slices.Reverse(sessions) // oldest first
	cfg := e.beh.cfg
	rev := &api.AgentReview{Agent: id, Sessions: len(sessions), Patterns: []api.Pattern{}, Scope: []int{}}
	type acc struct {
		p        api.Pattern
		sessions map[string]bool
	}
	found := map[string]*acc{}
	var keys []string
	note := func(typ, name, why, session, decision string) {
		k := typ + "\x00" + name
		a := found[k]
		if a == nil {
			a = &acc{p: api.Pattern{Type: typ, Name: name, Why: why}, sessions: map[string]bool{}}
			found[k] = a
			keys = append(keys, k)
		}
		if !a.sessions[session] {
			a.sessions[session] = true
			a.p.Sessions = append(a.p.Sessions, session)
		}
		a.p.Decisions = append(a.p.Decisions, decision)
	}
	approvedShortcut := map[string]bool{}
	for _, s := range sessions {
		ds, err := e.sessionDecisions(ctx, s.ID, -1)
		if err != nil {
			return nil, err
		}
		dests := map[string]bool{}
		for _, d := range ds {
			for _, r := range d.Rules {
				switch {
				case d.Effect == "ask" && !strings.HasPrefix(r, "approval."):
					note("repeated-ask", r, "asked about again and again", s.ID, d.ID)
				case d.Effect == "deny" && !strings.HasPrefix(r, "engine."):
					note("repeated-deny", r, "denied again and again", s.ID, d.ID)
				}
			}
			text := d.Tool + " " + string(d.Args)
			for i := range cfg.Review.Shortcuts {
				sc := &cfg.Review.Shortcuts[i]
				if !sc.Match(text) {
					continue
				}
				note("shortcut", sc.Name, sc.Why, s.ID, d.ID)
				granted := slices.Contains(d.Rules, "approval.granted")
				if approvedShortcut[sc.Name] && d.Effect == "allow" && !granted {
					note("approved-then-repeated", sc.Name, "approved once by a person, then repeated without asking", s.ID, d.ID)
				}
				if granted {
					approvedShortcut[sc.Name] = true
				}
			}
			if d.Action != nil && d.Effect == "allow" {
				for _, x := range cfg.Destinations(d.Action) {
					dests[x] = true
				}
			}
		}
		rev.Scope = append(rev.Scope, len(dests))
	}
	for _, k := range keys {
		a := found[k]
		if a.p.Type == "approved-then-repeated" || len(a.sessions) >= cfg.Review.MinSessions {
			rev.Patterns = append(rev.Patterns, a.p)
		}
	}
	rev.Growing = growing(rev.Scope)
	return rev, nil
}

// growing: the last sessions (at least three) each used more distinct
// destinations than the one before.
func growing(scope []int) bool {
	run := 1
	for i := 1; i < len(scope); i++ {
		if scope[i] > scope[i-1] {
			run++
		} else {
			run = 1
		}
	}
	return run >= 3 && len(scope) >= 3
}
