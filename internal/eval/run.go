package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/policy"
)

// Surface is the name decisions made by the harness carry.
const Surface = "eval"

// Rules the harness reports for calls the engine never decided.
const (
	// RuleEngineError marks a call refused because the engine returned an
	// error: a live surface must then refuse the call.
	RuleEngineError = "eval.engine-error"
	// RuleDelegationRefused marks a sub-agent call refused because the
	// engine would not create the sub-agent's session.
	RuleDelegationRefused = "eval.delegation-refused"
)

// Open opens an engine for a replay: an in-memory store with synchronous
// writes off (nothing outlives the run) and a clock frozen at the moment
// of opening, so that relative expiries in intents ("today", "for the next
// hour") mean the same whenever and however long the corpus runs. cfg.Now,
// if set, is kept.
func Open(ctx context.Context, cfg app.Config) (*app.App, error) {
	cfg.DataDir = ""
	cfg.Synchronous = "OFF"
	cfg.Metrics = false
	if cfg.Now == nil {
		start := time.Now()
		cfg.Now = func() time.Time { return start }
	}
	return app.Open(ctx, cfg)
}

// Options change how a corpus is replayed.
type Options struct {
	// Workers replay episodes concurrently; 0 means twice GOMAXPROCS (a
	// replay spends about half its time waiting for the store's single
	// writer). Episodes are independent sessions, so the results do not
	// depend on it.
	Workers int
	// Revision names the build being measured (see Revision).
	Revision string
	// Progress, if set, is called (from the replaying goroutines) after
	// each episode; `mandate eval` shows a progress line with it.
	Progress func()
	// Approver is the simulated person who answers asks (approver.go);
	// "" is ApproverNone. Think is how long they take to answer each.
	Approver Approver
	Think    time.Duration
	// afterCall, if set, runs after each call of a replay and ends it
	// when it fails (the behaviour replay waits there for the baseline
	// fold, so each call is assessed on every call before it).
	afterCall func(ctx context.Context) error
	// onSession, if set, is told each session a replay creates, in order.
	onSession func(id string)
}

// outcome is what became of one call.
type outcome struct {
	effect  policy.Effect
	kind    string
	rules   []string
	reasons []string
	err     string // an engine error, on deciding or observing
	latency time.Duration
	decided bool // the engine decided it (for latency figures)
	// final is the effect after a simulated person answered an ask ("":
	// nobody did, effect stands); answer is what they did.
	final  policy.Effect
	answer string
	// gap: the call's recorded output was observed although the engine
	// had not allowed the call (an ask nobody answered, a deny). The
	// replay runs every recorded call, as an agent that ignored Mandate
	// would, so the engine records a gap, as it would live.
	gap bool
}

// principal is who the harness acts as: it creates sessions with the user's
// words, as a user or operator would, and relays calls and results as a
// surface does.
func principal() auth.Principal { return auth.Principal{Role: auth.RoleAdmin, Name: "eval"} }

// Run replays every episode of c through eng and grades the decisions. A
// cancelled ctx stops the run with its error; engine errors on single calls
// do not — they count as denies, as they would live, and are listed in the
// report.
func Run(ctx context.Context, eng *engine.Engine, c *Corpus, opts Options) (*Report, error) {
	if err := opts.checkApprover(); err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(c.Episodes))
	results := make([][]outcome, len(c.Episodes))
	policyHash := eng.Policy().Hash() // the policy every decision is made with
	start := time.Now()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for range workers {
		wg.Go(func() {
			for i := range next {
				out, err := replay(ctx, eng, c.Episodes[i], &opts)
				if err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					continue
				}
				results[i] = out
				if opts.Progress != nil {
					opts.Progress()
				}
			}
		})
	}
feed:
	for i := range c.Episodes {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	r := grade(c, results, reportMeta{
		revision: opts.Revision, policyHash: policyHash, elapsed: elapsed, workers: workers,
	})
	r.Approver = gradeApprover(c, results, r, opts)
	return r, nil
}

// replay runs one episode as a live surface would: a session for the
// user's task, then call by call a decision and, where the episode has
// one, the tool's output observed — also after a refusal, so that later
// calls are judged in the context the grader assumed. Only a cancelled
// context is an error; everything else is a per-call outcome.
func replay(ctx context.Context, eng *engine.Engine, ep *Episode, opts *Options) ([]outcome, error) {
	agent := ep.Agent
	info, err := eng.CreateSession(ctx, principal(), engine.SessionRequest{
		AgentID: agent.ID, Agent: agent, Intent: ep.Intent, Mandate: ep.Mandate,
		Tools: ep.Tools, WorkingDir: ep.WorkingDir, Source: "user",
	})
	type sess struct {
		id  string
		err error
	}
	sessions := map[string]sess{}
	if err != nil {
		sessions[""] = sess{err: err}
	} else {
		sessions[""] = sess{id: info.Session.ID}
		if opts.onSession != nil {
			opts.onSession(info.Session.ID)
		}
	}
	out := make([]outcome, len(ep.Calls))
	for i, call := range ep.Calls {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, ok := sessions[call.Subagent]
		if !ok {
			// The sub-agent's first call: its session is a child of the
			// episode's, holding the prompt the parent gave it. Its words
			// are the parent agent's, not the user's; "file" says where
			// the harness took them from.
			if root := sessions[""]; root.err != nil {
				s = sess{err: fmt.Errorf("parent session: %w", root.err)}
			} else {
				info, err := eng.CreateSession(ctx, principal(), engine.SessionRequest{
					AgentID: agent.ID, Agent: agent, Intent: subagentIntent(ep, call.Subagent),
					Tools: ep.Tools, ParentID: root.id, Source: "file",
				})
				if err != nil {
					s = sess{err: err}
				} else {
					s = sess{id: info.Session.ID}
					if opts.onSession != nil {
						opts.onSession(info.Session.ID)
					}
				}
			}
			sessions[call.Subagent] = s
		}
		if s.err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if call.Subagent != "" && errors.Is(s.err, engine.ErrConflict) {
				out[i] = outcome{effect: policy.Deny, rules: []string{RuleDelegationRefused}, reasons: []string{s.err.Error()}}
			} else {
				out[i] = failed(fmt.Errorf("create session: %w", s.err))
			}
			continue
		}
		out[i] = decide(ctx, eng, s.id, call, opts)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if opts.afterCall != nil {
			if err := opts.afterCall(ctx); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func subagentIntent(ep *Episode, name string) string {
	for _, s := range ep.Subagents {
		if s.Name == name {
			return s.Intent
		}
	}
	return "" // Decode guarantees every named sub-agent is declared
}

// decide evaluates one call (with the simulated person answering an ask)
// and observes its output.
func decide(ctx context.Context, eng *engine.Engine, sessionID string, call Call, opts *Options) outcome {
	var args map[string]any
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return failed(fmt.Errorf("args: %w", err))
	}
	if args == nil {
		args = map[string]any{}
	}
	d, first, latency, answer, err := opts.evaluateAsked(ctx, eng, engine.EvaluateRequest{
		SessionID: sessionID, Tool: call.Tool, Args: args, RawArgs: call.Args, Surface: Surface,
	}, call.Label)
	if err != nil {
		o := failed(fmt.Errorf("evaluate: %w", err))
		if first == policy.Ask {
			// The ask was made; answering it failed: refused, as live.
			o.effect, o.final = policy.Ask, policy.Deny
		}
		return o
	}
	o := outcome{effect: first, rules: d.Rules, reasons: d.Reasons, latency: latency, decided: true, answer: answer}
	if answer != answerNone {
		o.final = d.Effect
	}
	if d.Action != nil {
		o.kind = string(d.Action.Kind)
	}
	if call.Output != nil {
		obs, err := eng.Observe(ctx, principal(), engine.ObserveRequest{DecisionID: d.ID, Output: call.Output})
		if err != nil {
			o.err = fmt.Sprintf("observe: %v", err)
		} else {
			o.gap = obs.Gap
		}
	}
	return o
}

// failed is a call the engine did not decide: refused, as live.
func failed(err error) outcome {
	return outcome{effect: policy.Deny, rules: []string{RuleEngineError}, reasons: []string{err.Error()}, err: err.Error()}
}

// percentile of sorted durations, q in [0, 1].
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func latencies(results [][]outcome) []time.Duration {
	var l []time.Duration
	for _, r := range results {
		for _, o := range r {
			if o.decided {
				l = append(l, o.latency)
			}
		}
	}
	slices.Sort(l)
	return l
}
