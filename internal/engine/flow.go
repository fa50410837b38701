package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/flow"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// A session's flow table (internal/flow) is its memory of what it saw:
// the values of the user's words, of every call's arguments and of every
// observed output, each with its first source, and the injected spans.
// It lives beside the session's live entry, guarded by the same lock, and
// like the rest of the entry is rebuilt from the store when a session is
// loaded (replayFlow). Outputs are scanned before the lock is taken; a
// decision only looks its values up.

// FlowSource gives the flow facts of a call once it is classified. The
// engine's is the session's table; `mandate check` and policy fixtures
// have none (policy then sees flow.NoFacts).
type FlowSource interface {
	Facts(a *action.Action) *flow.Facts
}

// flowState is a live session's flow table and the mandate whose words it
// holds (guarded by live.mu).
type flowState struct {
	table *flow.Table
	from  *mandate.Mandate
}

// maxFlowReplay bounds how many of a session's latest decisions (with
// their outputs) are replayed into its table when it is loaded; older
// values are then unknown rather than wrong (the table says it evicted).
const maxFlowReplay = 1024

// callFlow is the flow of one call being decided: the session's table, the
// call's argument scan, and the facts built for it.
type callFlow struct {
	table    *flow.Table
	args     *flow.Scan
	granted  []string
	concepts []string
	facts    *flow.Facts
	mandate  *mandate.Mandate
}

func (c *callFlow) Facts(a *action.Action) *flow.Facts {
	granted := c.granted
	// A kind asked under a condition the call meets ("buy …": a write that
	// only prepares the payment) is granted for this call.
	if c.mandate != nil && len(c.mandate.ConditionsMet(a)) > 0 {
		granted = slices.Clone(granted)
		for _, k := range c.mandate.Ask {
			granted = append(granted, string(k))
		}
	}
	c.facts = c.table.Facts(flow.CallInput{Action: a, Args: c.args, Granted: granted, ToolConcepts: c.concepts})
	return c.facts
}

// flowHint is how a session's values are normalised.
func flowHint(s *store.Session, family string) flow.Hint {
	return flow.Hint{WorkingDir: s.WorkingDir, HomeDir: s.HomeDir, Family: family}
}

// flowLocked returns the session's table, building it on first use (from
// the store for a session with history) and taking in the words of a
// mandate it has not seen yet. l.mu is held.
func (e *Engine) flowLocked(ctx context.Context, l *live) (_ *flow.Table, err error) {
	m := l.ownMandate()
	if l.flow == nil {
		fs := &flowState{table: flow.NewTable(flow.TableLimits{})}
		e.addMandateFlow(fs, &l.sess, m)
		var seq *seqReplay
		if l.seq == nil {
			// The session's sequence state is rebuilt with its table,
			// from the same decisions (sequences.go).
			l.seq = policy.NewSequenceState()
			if l.sess.State.Calls > 0 {
				if seq, err = e.newSeqReplay(ctx, l); err != nil {
					return nil, fmt.Errorf("session %s: rebuilding its sequences: %w", l.sess.ID, err)
				}
			}
		}
		if l.sess.State.Calls > 0 {
			if err := e.replayFlow(ctx, l, fs.table, seq); err != nil {
				return nil, fmt.Errorf("session %s: rebuilding its flow: %w", l.sess.ID, err)
			}
		}
		l.flow = fs
	}
	if l.flow.from != m {
		e.addMandateFlow(l.flow, &l.sess, m)
	}
	return l.flow.table, nil
}

// addMandateFlow records a mandate's words and scope in a table.
func (e *Engine) addMandateFlow(fs *flowState, s *store.Session, m *mandate.Mandate) {
	fs.from = m
	if m == nil {
		return
	}
	var words []string
	for _, in := range m.Instructions {
		words = append(words, in.Text)
	}
	at := e.now().UTC()
	if text := strings.Join(words, "\n"); text != "" {
		fs.table.AddWords(e.scan.Words(text, flowHint(s, "")), e.scan.Detector().Concepts(text), at)
		fs.table.AddCounts(userCounts(text))
	}
	var vals []flow.MandateValue
	for _, r := range m.Scope.Recipients {
		c := flow.Handle
		if strings.Contains(r, "@") {
			c = flow.Email
		}
		vals = append(vals, flow.MandateValue{Class: c, Value: r, Field: "recipients"})
	}
	for _, h := range m.Scope.Hosts {
		vals = append(vals, flow.MandateValue{Class: flow.Host, Value: h, Field: "hosts"})
	}
	for _, a := range m.Scope.Accounts {
		vals = append(vals, flow.MandateValue{Class: flow.Account, Value: a, Field: "accounts"})
	}
	for _, p := range m.Scope.Paths {
		vals = append(vals, flow.MandateValue{Class: flow.Path, Value: expandHome(p, s.HomeDir), Field: "paths"})
	}
	for _, n := range m.Scope.Names {
		vals = append(vals, flow.MandateValue{Class: flow.Name, Value: n, Field: "names"})
	}
	fs.table.AddMandate(vals, at)
}

// userCounts are the counts the user's words state, for
// builtin.quantity-over-words. WordCounts fails only when its table does
// not load, and New refuses to start an engine then, so no error reaches
// here.
func userCounts(text string) []flow.UserCount {
	wcs, _ := mandate.WordCounts(text)
	out := make([]flow.UserCount, len(wcs))
	for i, wc := range wcs {
		out[i] = flow.UserCount{N: wc.N, Words: wc.Words, Phrase: wc.Phrase}
	}
	return out
}

func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return home + p[1:]
	}
	return p
}

// newCallFlow prepares the flow of a call: its arguments scanned once.
func (e *Engine) newCallFlow(t *flow.Table, s *store.Session, req *EvaluateRequest, m *mandate.Mandate) *callFlow {
	cf := &callFlow{table: t, args: e.scan.Args(req.Args, flowHint(s, "")), concepts: e.conceptsOfTool(req.Tool), mandate: m}
	if m != nil && len(m.Allow) > 0 {
		cf.granted = make([]string, 0, len(m.Allow))
		for _, k := range m.Allow {
			cf.granted = append(cf.granted, string(k))
		}
	}
	return cf
}

// maxToolConcepts bounds the tool names whose concepts are remembered.
const maxToolConcepts = 4096

// conceptsOfTool is the flow detector's concepts of a tool's name,
// remembered per name: the same few tools are called all session long.
// The slice is shared and only read (flow.CallInput.ToolConcepts).
func (e *Engine) conceptsOfTool(tool string) []string {
	if v, ok := e.toolConcepts.Load(tool); ok {
		return v.([]string)
	}
	cs := slices.Clip(e.scan.Detector().Concepts(tool))
	if e.nToolConcepts.Load() < maxToolConcepts {
		if _, loaded := e.toolConcepts.LoadOrStore(tool, cs); !loaded {
			e.nToolConcepts.Add(1)
		}
	}
	return cs
}

// decisionInfo is what the flow table keeps of a decided call.
func (e *Engine) decisionInfo(id string, seq int, a *action.Action, effect string, tools []action.ToolDef, f *flow.Facts, at time.Time) flow.DecisionInfo {
	info := flow.DecisionInfo{
		ID: id, Seq: seq, Tool: a.Tool, Family: a.Family, Effect: effect, At: at,
		Trust: e.scan.TrustOf(a, annotationsOf(tools, a.Tool)), Targets: flow.Targets(a),
	}
	for _, k := range a.Kinds {
		info.Kinds = append(info.Kinds, string(k))
	}
	reads := slices.Contains(a.Kinds, action.Read) || slices.Contains(a.Kinds, action.Execute) ||
		slices.Contains(a.Kinds, action.Credential) || a.Kind == action.Read
	if a.Sensitive && reads {
		info.Sensitive = true
		for _, p := range a.Paths {
			if p.Sensitive {
				info.What = p.Path
				break
			}
		}
		if info.What == "" && len(a.Commands) > 0 {
			info.What = strings.Join(a.Commands[0].Argv, " ")
		}
	}
	if f != nil {
		for _, v := range f.Values {
			if v.InUserWords && !v.Injected {
				info.Named = true
				if v.Role == "path" && v.Field == "read" {
					info.NamedFile = true
				}
			}
		}
		// An item the call takes by its id whose listed name the user's
		// words name whole ("the 'Launch checklist' thread" for m9, listed
		// as "Launch checklist") is the item the user pointed to, as much
		// as one whose sender they named; one an injected span named, or
		// the listing marks private, is not.
		for _, it := range f.Items {
			if it.Named && !it.Injected && !it.Private {
				info.Named = true
				break
			}
		}
	}
	return info
}

func annotationsOf(tools []action.ToolDef, name string) *action.Annotations {
	for i := range tools {
		if tools[i].Name == name {
			return tools[i].Annotations
		}
	}
	return nil
}

// flowDecided records a decided call in the session's table. l.mu is held.
func (e *Engine) flowDecided(l *live, cf *callFlow, d *Decision, tools []action.ToolDef, now time.Time) {
	if cf == nil || l.flow == nil || d.Action == nil {
		return
	}
	cf.table.Decided(e.decisionInfo(d.ID, d.Seq, d.Action, string(d.Effect), tools, cf.facts, now), cf.args)
}

// scanOutput scans an observed output, off the session's lock.
func (e *Engine) scanOutput(output json.RawMessage, family string) *flow.Scan {
	return e.scan.Output(output, flow.Hint{Family: family})
}

// flowObserved merges an observation's scan into its session's table.
// l.mu is held. A decision the table no longer remembers is read from the
// store; failing that, the output counts as open content.
func (e *Engine) flowObserved(ctx context.Context, l *live, o *store.Observation, sc *flow.Scan) {
	t, err := e.flowLocked(ctx, l)
	if err != nil || sc == nil {
		if err != nil {
			e.log.Error("flow table unavailable; the observation is stored but not merged", "session", l.sess.ID, "observation", o.ID, "err", err)
		}
		return
	}
	var info flow.DecisionInfo
	if o.DecisionID != "" {
		var ok bool
		if info, ok = t.Decision(o.DecisionID); !ok {
			if d, err := e.store.GetDecision(ctx, o.DecisionID); err == nil && d.Action != nil {
				info = e.decisionInfo(d.ID, d.Seq, d.Action, d.Effect, l.sess.Tools, nil, d.CreatedAt)
			}
		}
	} else {
		info = flow.DecisionInfo{Tool: o.Tool, Trust: flow.TrustOpen}
	}
	t.Observed(flow.Observation{ID: o.ID, DecisionID: o.DecisionID, Reported: o.Origin == OriginReported, At: o.CreatedAt, Scan: sc, Info: info})
}

// replayFlow rebuilds a loaded session's table from its latest decisions
// and their observations, in order, and with seq (when not nil) its
// sequence state from the same decisions.
func (e *Engine) replayFlow(ctx context.Context, l *live, t *flow.Table, seq *seqReplay) error {
	var before func(*store.Decision, map[string]any, *flow.Scan) *flow.Facts
	if seq != nil {
		before = func(d *store.Decision, args map[string]any, sc *flow.Scan) *flow.Facts {
			return seq.decided(t, d, args, sc)
		}
	}
	return e.feedFlow(ctx, &l.sess, t, max(0, l.sess.State.Calls-maxFlowReplay), 0, before)
}

// feedFlow enters into t a session's decisions after sequence number
// after, up to upto (0: all of them), with their observations, in order.
// before, when not nil, sees each call before it enters the table (as it
// was when the call was decided) and returns the call's flow facts.
func (e *Engine) feedFlow(ctx context.Context, s *store.Session, t *flow.Table, after, upto int, before func(*store.Decision, map[string]any, *flow.Scan) *flow.Facts) error {
	for {
		limit := 1000
		if upto > 0 {
			limit = min(limit, upto-after)
			if limit <= 0 {
				return nil
			}
		}
		ds, err := e.store.ListDecisions(ctx, store.DecisionFilter{SessionID: s.ID, AfterSeq: after, Limit: limit})
		if err != nil {
			return err
		}
		for _, d := range ds {
			after = d.Seq
			if d.Action == nil {
				continue
			}
			var args map[string]any
			if len(d.Args) > 0 {
				_ = json.Unmarshal(d.Args, &args) // stored args were checked when decided
			}
			sc := e.scan.Args(args, flowHint(s, ""))
			var facts *flow.Facts
			if before != nil {
				facts = before(d, args, sc)
			}
			info := e.decisionInfo(d.ID, d.Seq, d.Action, d.Effect, s.Tools, facts, d.CreatedAt)
			t.Decided(info, sc)
			obs, err := e.store.ListObservations(ctx, d.ID)
			if err != nil {
				return err
			}
			for _, o := range obs {
				t.Observed(flow.Observation{ID: o.ID, DecisionID: d.ID, Reported: o.Origin == OriginReported, At: o.CreatedAt,
					Scan: e.scan.Output(o.Output, flowHint(s, d.Action.Family)), Info: info})
			}
		}
		if len(ds) < limit {
			return nil
		}
	}
}

// redactCarried replaces, in a call's encoded arguments, the secrets the
// session read that the call carries in clear (flow.Facts.CarriedSecrets)
// with their redaction markers, before anything of the call is stored.
func redactCarried(raw json.RawMessage, f *flow.Facts) json.RawMessage {
	cs := f.CarriedSecrets()
	if len(cs) == 0 {
		return raw
	}
	s := string(raw)
	for _, c := range cs {
		s = strings.ReplaceAll(s, c.Clear, c.Marker)
	}
	return json.RawMessage(s)
}

// maxFlowListing bounds the values GET /v1/sessions/{id}/flow lists.
const maxFlowListing = 1000

// SessionFlow returns the session's flow table for readers.
func (e *Engine) SessionFlow(ctx context.Context, p auth.Principal, id string) (*flow.Snapshot, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	l, err := e.acquire(ctx, id)
	if err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	t, err := e.flowLocked(ctx, l)
	if err != nil {
		return nil, err
	}
	return t.Snapshot(maxFlowListing), nil
}

// provenanceOf is what the decision record keeps of the facts a verdict
// was reached on: each of the call's values with its first source. Values
// are as the facts show them (a secret only as its redaction marker), and
// the redactor still walks the record before it is stored.
func provenanceOf(f *flow.Facts) []store.Provenance {
	if f == nil || len(f.Values) == 0 {
		return nil
	}
	out := make([]store.Provenance, len(f.Values))
	for i, v := range f.Values {
		out[i] = store.Provenance{
			Value: v.Value, Field: v.Field, Origin: string(v.Origin), Trust: string(v.Trust),
			Injected: v.Injected, ObservationID: v.ObservationID, DecisionID: v.DecisionID,
		}
	}
	return out
}
