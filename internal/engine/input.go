package engine

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/flow"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// The decider's input is built in one place, inputFor, whoever decides:
// the server for a session's call, and `mandate check` and `mandate policy
// test` offline (Offline), which decide a call as the server decides the
// first call of a session created with the same words, working directory,
// agent and configuration. So the same call gets the same facts — mandate,
// session counters, agent, Mandate's own footprint, flow — and the same
// verdict wherever it is decided.

// inputFor is the input for req in sess's context: m its effective
// mandate, table its flow table, tools its tool list. With locked, the
// input is decided under the session's lock and dropped before it is
// released, so its session facts share the session's counter maps
// (sharedFacts); otherwise they are copies the caller may keep.
func (e *Engine) inputFor(sess *store.Session, m *mandate.Mandate, table *flow.Table, req *EvaluateRequest, tools []action.ToolDef, now time.Time, locked bool) *Input {
	if m == nil {
		m = &mandate.Mandate{}
	}
	if len(tools) == 0 {
		tools = nil
	}
	sf := sharedFacts
	if !locked {
		sf = facts
	}
	return &Input{
		Call:    action.Call{Tool: req.Tool, Args: req.Args, WorkingDir: sess.WorkingDir, HomeDir: sess.HomeDir, Tools: tools},
		Mandate: m,
		Session: sf(sess),
		Agent:   agentFacts(sess.Agent),
		Self:    e.self,
		Flow:    e.newCallFlow(table, sess, req, m),
		Now:     now.UTC(),
	}
}

// Input is the decider's input for req in its session, built as Evaluate
// builds it, without deciding or recording anything: what the server
// would decide the call on, for explaining a verdict and for holding the
// offline deciders to it. It has no Baseline: the agent's baseline is
// assessed under the session's lock as the call is decided.
func (e *Engine) Input(ctx context.Context, p auth.Principal, req EvaluateRequest) (*Input, error) {
	if !p.Can(auth.Evaluate) {
		return nil, forbidden(p, auth.Evaluate)
	}
	l, err := e.acquire(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	if !p.Owns(l.sess.Agent.ID) {
		return nil, notServed(p, "session "+req.SessionID, l.sess.Agent.ID)
	}
	tools, _, err := e.toolContextLocked(ctx, l, req.Tool)
	if err != nil {
		return nil, err
	}
	m, err := e.effective(ctx, l, 0)
	if err != nil {
		return nil, err
	}
	t, err := e.flowLocked(ctx, l)
	if err != nil {
		return nil, err
	}
	return e.inputFor(&l.sess, m, t, &req, tools, e.now(), false), nil
}

// OfflineCall is a call decided without a server, in the context of a new
// session: the user's words and/or a structured grant, as a session is
// created with them by a user's token.
type OfflineCall struct {
	// Intent is the user's words; Mandate a structured grant, instead of
	// or beside them (then the words are kept beside it).
	Intent  string
	Mandate *mandate.Mandate
	Tool    string
	Args    map[string]any
	// Tools is the agent's tool list, for tools the catalog does not know.
	Tools      []action.ToolDef
	WorkingDir string
	HomeDir    string
	// Agent is the session's agent.
	Agent store.Agent
	// Session is the session's state before the call; the zero value is a
	// new session's (active, nothing counted).
	Session policy.SessionFacts
	// Self, if set, replaces the instance's self-protection facts (a
	// fixture that states its own).
	Self *policy.SelfFacts
	Now  time.Time
}

// Offline builds inputs for calls decided without a server, the way the
// server builds them.
type Offline struct {
	e *Engine
}

// NewOffline is an offline input builder for an instance whose
// self-protection facts are self (app.SelfFacts of the configuration the
// server would have).
func NewOffline(self policy.SelfFacts) (*Offline, error) {
	scan, err := flow.NewScanner()
	if err != nil {
		return nil, fmt.Errorf("offline: %w", err)
	}
	return &Offline{e: &Engine{scan: scan, self: self, now: time.Now}}, nil
}

// Input is c's input: the mandate built as session creation builds it (its
// first version, the words labelled user), the session's facts, and a flow
// table holding only the mandate's words, as a new session's has.
func (o *Offline) Input(c OfflineCall) (*Input, error) {
	now := c.Now
	if now.IsZero() {
		now = o.e.now()
	}
	now = now.UTC()
	given := ownWords(auth.Principal{Role: auth.RoleUser}, c.Mandate, "user")
	m, _, err := buildMandate(c.Intent, given, "user", now)
	if err != nil {
		return nil, err
	}
	m.Version = 1
	sess := offlineSession(c)
	fs := &flowState{table: flow.NewTable(flow.TableLimits{})}
	o.e.addMandateFlow(fs, sess, m)
	args := c.Args
	if args == nil {
		args = map[string]any{}
	}
	in := o.e.inputFor(sess, m, fs.table, &EvaluateRequest{Tool: c.Tool, Args: args}, c.Tools, now, false)
	if c.Self != nil {
		in.Self = *c.Self
	}
	return in, nil
}

// offlineSession is the session c's call is decided in: c.Session's state
// on a session with c's agent and directories.
func offlineSession(c OfflineCall) *store.Session {
	f := c.Session
	s := &store.Session{
		ID: f.ID, ParentID: f.ParentID, Status: f.Status, Agent: c.Agent,
		WorkingDir: cleanPath(c.WorkingDir), HomeDir: cleanPath(c.HomeDir),
		State: store.Counters{
			Counts: maps.Clone(f.Counts), Spend: maps.Clone(f.Spend),
			Calls: f.Calls, Denied: f.Denied, Asked: f.Asked,
		},
	}
	if s.Status == "" {
		s.Status = store.StatusActive
	}
	fillCounters(&s.State)
	for _, r := range f.Recent {
		s.State.Recent = append(s.State.Recent, store.Recent{Tool: r.Tool, Kind: r.Kind, Effect: r.Effect})
	}
	return s
}

// MissingBaseline is what Missing says of an input without the agent's
// baseline: offline there is no history of the agent to compare with.
const MissingBaseline = "baseline: none, so the call is not compared with how the agent usually behaves (the server keeps that history)"

// Missing names the facts the input lacks that a server's session would
// normally have, each with what follows from its absence.
func (in *Input) Missing() []string {
	var out []string
	if in.Call.WorkingDir == "" {
		out = append(out, "working directory: none, so relative paths are outside the scope")
	}
	if in.Call.HomeDir == "" {
		out = append(out, "home directory: none, so ~ in paths does not resolve")
	}
	if in.Agent.ID == "" {
		out = append(out, "agent: none, so rules about the agent see no id")
	}
	if len(in.Self.Addresses) == 0 {
		out = append(out, "Mandate's API address: none (no listen address), so calls to the API are not recognised as reaching around Mandate")
	}
	if len(in.Self.Paths) == 0 {
		out = append(out, "Mandate's own files: none (no data directory), so calls that touch them are not recognised")
	}
	if in.Flow == nil {
		out = append(out, "flow: none, so where the call's values came from is unknown")
	}
	if in.Baseline == nil {
		out = append(out, MissingBaseline)
	}
	return out
}
