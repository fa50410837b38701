package policytest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
)

// TestBuiltinFixturesEndToEnd decides the built-in pack's fixture cases
// through the real classifier, mandate compiler and scope check, composed
// the way the engine composes them, so that the pack is held to its
// fixtures even where no engine is built. `mandate policy test
// policies/builtin` runs the same cases through the engine itself.
func TestBuiltinFixturesEndToEnd(t *testing.T) {
	cl, err := action.NewClassifier()
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := LoadCases(builtinDir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	decide := func(_ context.Context, c *Case) (policy.Verdict, *action.Action, error) {
		m := c.Mandate
		if m == nil {
			d, err := mandate.Compile(c.Intent, mandate.WithNow(now))
			if err != nil {
				return policy.Verdict{}, nil, err
			}
			m = d.Mandate
		}
		a := cl.Classify(action.Call{
			Tool: c.Call.Tool, Args: c.Call.Args,
			WorkingDir: c.WorkingDirectory, HomeDir: c.HomeDirectory, Tools: c.Tools,
		})
		s := c.Session
		if s.Status == "" {
			s.Status = "active"
		}
		v, err := p.Evaluate(&policy.Input{
			Call: c.Call, Action: &a, Mandate: m,
			Scope:   m.CheckIn(&a, mandate.Env{WorkDir: c.WorkingDirectory, HomeDir: c.HomeDirectory}, now),
			Session: s, Agent: c.Agent, Self: c.Self,
		})
		return v, &a, err
	}
	rep := Run(context.Background(), cases, decide)
	if rep.Failed() > 0 {
		var b bytes.Buffer
		rep.Write(&b, false)
		t.Errorf("built-in fixtures failed:\n%s", b.String())
	}
}
