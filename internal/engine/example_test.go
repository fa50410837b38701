package engine_test

import (
	"context"
	"fmt"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

// An engine composes the pipeline: a session holds the user's words as its
// mandate, and every call is classified, held against it and decided by
// the policy, then recorded before the answer. Here with the embedded store
// in memory, the built-in tool catalog and the built-in policy pack —
// what `mandate serve` runs, without the evidence log and the redactor.
func Example() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, ":memory:", sqlite.Options{})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	cls, err := action.NewClassifier()
	if err != nil {
		panic(err)
	}
	pol, err := policy.Load()
	if err != nil {
		panic(err)
	}
	e, err := engine.New(engine.Options{Store: st, Classifier: cls, Policy: pol})
	if err != nil {
		panic(err)
	}

	user := auth.Principal{Role: auth.RoleUser, Name: "example"}
	s, err := e.CreateSession(ctx, user, engine.SessionRequest{
		AgentID: "shopper",
		Intent:  "Compare prices of the Dell U2723QE on two shops. Do not buy.",
	})
	if err != nil {
		panic(err)
	}
	agent := auth.Principal{Role: auth.RoleAgent, AgentID: "shopper"}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"web_fetch", map[string]any{"url": "https://shop-a.example/u2723qe"}},
		{"checkout", map[string]any{"item": "u2723qe", "price": "579 USD"}},
	} {
		d, err := e.Evaluate(ctx, agent, engine.EvaluateRequest{SessionID: s.Session.ID, Tool: call.tool, Args: call.args})
		if err != nil {
			panic(err) // any error: the call must not run
		}
		fmt.Printf("%s (%s): %s\n", call.tool, d.Action.Kind, d.Effect)
	}
	// Output:
	// web_fetch (fetch): allow
	// checkout (pay): deny
}
