// Package engine composes Mandate's decision pipeline — call → classify →
// context (mandate, session) → policy → verdict → durable decision record —
// for every surface: the HTTP API, the CLI, the MCP gateway, agent hooks and
// the eval harness. Each stage is a part of its own package; this is the one
// place they are put together.
package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/flow"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
)

// Decider is the pure part of the pipeline: no store, no I/O. The engine,
// `mandate check` and `mandate policy test` all decide through it.
type Decider struct {
	Classifier *action.Classifier
	Policy     *policy.Policy
}

// Input is one call in its context.
type Input struct {
	Call    action.Call
	Mandate *mandate.Mandate
	Session policy.SessionFacts
	Agent   policy.AgentFacts
	// Self is Mandate's own footprint, for the self-protection rules.
	Self policy.SelfFacts
	// Flow, if set, gives the call's flow facts once it is classified.
	Flow FlowSource
	// Baseline, if set, compares the classified call with its agent's
	// baseline (`baseline` in rules, and the decision's signals).
	Baseline BaselineSource
	// Sequences are the sequence states the call belongs to; nil
	// evaluates no sequence rule.
	Sequences *policy.SequenceGroups
	Now       time.Time
	// Classified, if set, is Call already classified (the engine does it
	// before taking the session's lock); the decider uses it as is.
	Classified *action.Action
}

// BaselineSource compares a classified call with its agent's history;
// f is the call's flow facts (nil unknown), which make a new destination
// riskier (baseline.Current.Exposure).
type BaselineSource interface {
	Assess(a *action.Action, f *flow.Facts) baseline.Result
}

// Result is a decided call with everything that led to the verdict.
type Result struct {
	Action  action.Action
	Scope   mandate.Report
	Verdict policy.Verdict
	// Flow are the flow facts the verdict was reached on (nil without a
	// FlowSource).
	Flow *flow.Facts
	// cf is the engine's flow of the call (flow.go), tools the session's
	// tool list it was decided with.
	cf    *callFlow
	tools []action.ToolDef
	// ask is what the approval queue did with an ask (approvals.go).
	ask *askOutcome
	// signals compare the call with its agent's baseline (behaviour.go).
	signals []baseline.Signal
	// seq is the call's part in the sequence rules, committed once the
	// decision is recorded.
	seq *policy.SequenceCall
	// draws are what an allowed call takes from its delegation tree's
	// budgets (treecaps.go).
	draws []plannedDraw
}

// InternalErrorReason is the reason given when Mandate itself fails on a
// call; the call is denied.
const InternalErrorReason = "mandate internal error"

// Decide classifies the call, holds it against the mandate and evaluates the
// policy. A panic or policy failure becomes an error; the caller must deny.
func (d *Decider) Decide(in *Input) (Result, error) {
	return d.DecideContext(context.Background(), in)
}

// DecideContext is Decide for a caller whose request may end: the
// classification stops then, and what it did not examine makes the call
// at least an ask (action.Action.Unexamined).
func (d *Decider) DecideContext(ctx context.Context, in *Input) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decide %s: panic: %v", in.Call.Tool, r)
		}
	}()
	if in.Classified != nil {
		res.Action = *in.Classified
	} else {
		res.Action = d.Classifier.ClassifyContext(ctx, in.Call)
	}
	m := in.Mandate
	if m == nil {
		m = &mandate.Mandate{}
	}
	res.Scope = m.CheckIn(&res.Action, mandate.Env{WorkDir: in.Call.WorkingDir, HomeDir: in.Call.HomeDir}, in.Now)
	if in.Flow != nil {
		res.Flow = in.Flow.Facts(&res.Action)
		if res.Flow != nil && m.NeedsItems() {
			// "but keep everything from my bank", "the emails in the
			// Promotions label", "the emails older than 30 days", "only
			// post in #general": who sent the items the call names, where
			// they are filed, when they were sent and a channel id's name
			// are known only from the session's earlier outputs.
			m.MeetItems(&res.Scope, &res.Action, listedItems(res.Flow), in.Now)
		}
	}
	var bl *policy.BaselineFacts
	if in.Baseline != nil {
		r := in.Baseline.Assess(&res.Action, res.Flow)
		res.signals, bl = r.Signals, baselineFacts(r)
	}
	if in.Sequences != nil {
		res.seq = &policy.SequenceCall{Groups: *in.Sequences, This: policy.NewStepCall(&res.Action, in.Session.ID, in.Now)}
	}
	res.Verdict, err = d.Policy.Evaluate(&policy.Input{
		Call:      policy.CallFacts{Tool: in.Call.Tool, Args: in.Call.Args},
		Action:    &res.Action,
		Mandate:   m,
		Scope:     res.Scope,
		Session:   in.Session,
		Agent:     in.Agent,
		Self:      in.Self,
		Flow:      res.Flow,
		Baseline:  bl,
		Sequences: res.seq,
	})
	if err != nil {
		return res, fmt.Errorf("evaluate policy for %s: %w", in.Call.Tool, err)
	}
	return res, nil
}

// DenyInternal is the verdict for a call Mandate failed to decide.
func DenyInternal() policy.Verdict {
	return policy.Verdict{Effect: policy.Deny, Rules: []string{"engine.internal-error"}, Reasons: []string{InternalErrorReason}}
}

// listedItems are the items the call names by id as earlier outputs of the
// session listed them, for the mandate's sender conditions. An item whose
// name an injected text carries vouches for nothing.
func listedItems(f *flow.Facts) []mandate.Item {
	var out []mandate.Item
	for _, it := range f.Items {
		if it.Injected {
			continue
		}
		out = append(out, mandate.Item{ID: it.ID, Senders: it.Senders(), Labels: it.Labels(), Name: it.Name, Date: it.Date()})
	}
	return out
}
