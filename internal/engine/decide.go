// Package engine composes Mandate's decision pipeline — call → classify →
// context (mandate, session) → policy → verdict → durable decision record —
// for every surface: the HTTP API, the CLI, the MCP gateway, agent hooks and
// the eval harness. Each stage is a part of its own package; this is the one
// place they are put together.
package engine

import (
	"fmt"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
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
	Now  time.Time
}

// Result is a decided call with everything that led to the verdict.
type Result struct {
	Action  action.Action
	Scope   mandate.Report
	Verdict policy.Verdict
}

// InternalErrorReason is the reason given when Mandate itself fails on a
// call; the call is denied.
const InternalErrorReason = "mandate internal error"

// Decide classifies the call, holds it against the mandate and evaluates the
// policy. A panic or policy failure becomes an error; the caller must deny.
func (d *Decider) Decide(in *Input) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decide %s: panic: %v", in.Call.Tool, r)
		}
	}()
	res.Action = d.Classifier.Classify(in.Call)
	m := in.Mandate
	if m == nil {
		m = &mandate.Mandate{}
	}
	res.Scope = m.CheckIn(&res.Action, mandate.Env{WorkDir: in.Call.WorkingDir, HomeDir: in.Call.HomeDir}, in.Now)
	res.Verdict, err = d.Policy.Evaluate(&policy.Input{
		Call:    policy.CallFacts{Tool: in.Call.Tool, Args: in.Call.Args},
		Action:  &res.Action,
		Mandate: m,
		Scope:   res.Scope,
		Session: in.Session,
		Agent:   in.Agent,
		Self:    in.Self,
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
