// Package policytest runs fixture cases against Mandate's decision, the way
// `opa test` runs Rego tests: each case is a tool call under a user's intent
// or mandate, with the effect it must get. `mandate policy test DIR` loads
// the *_test.yaml files of DIR with LoadCases and reports with Run.
//
// The package does not import the engine: the caller injects the decision
// as a DecideFunc, so the same cases run against the real pipeline (classify,
// mandate check, policy) or, in tests, against a stand-in.
package policytest

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
)

// Case is one fixture case: a call, the context it is made in, and what
// the decision must be.
type Case struct {
	Name string
	// File and Line locate the case, for reports.
	File string
	Line int

	// Intent is the user's words, compiled into a mandate by the caller.
	Intent string
	// Mandate is a structured grant, instead of or beside Intent.
	Mandate *mandate.Mandate
	// WorkingDirectory and HomeDirectory resolve relative paths and "~".
	WorkingDirectory string
	HomeDirectory    string
	// Session holds the session's state before the call (partial is fine).
	Session policy.SessionFacts
	Agent   policy.AgentFacts
	// Self is Mandate's own footprint as a service would fill it, for
	// the self-protection rules (empty: no service, as `mandate check`).
	Self policy.SelfFacts
	// Tools is the agent's tool list, for tools the catalog does not know.
	Tools []action.ToolDef
	Call  policy.CallFacts

	Expect Expectation
	// ExpectRules must all be among the rules that fired.
	ExpectRules []string
}

// Expectation is the effect a case must get.
type Expectation string

// The expectations. Block accepts deny or ask: the call must not happen
// without a person.
const (
	ExpectAllow Expectation = "allow"
	ExpectDeny  Expectation = "deny"
	ExpectAsk   Expectation = "ask"
	ExpectBlock Expectation = "block"
)

// Valid reports whether e is one of the expectations.
func (e Expectation) Valid() bool {
	return e == ExpectAllow || e == ExpectDeny || e == ExpectAsk || e == ExpectBlock
}

// Matches reports whether an effect meets the expectation.
func (e Expectation) Matches(eff policy.Effect) bool {
	if e == ExpectBlock {
		return eff == policy.Deny || eff == policy.Ask
	}
	return string(e) == string(eff)
}

// DecideFunc decides one case: it builds the call, the mandate (compiling
// Intent if given) and the session, and returns the verdict and the action
// the call was classified as.
type DecideFunc func(ctx context.Context, c *Case) (policy.Verdict, *action.Action, error)

// Result is the outcome of one case.
type Result struct {
	Case    *Case
	Verdict policy.Verdict
	Action  *action.Action
	// Err is the DecideFunc's error, if any; the case then fails.
	Err error
	// Failures say why the case failed; empty when it passed.
	Failures []string
	Duration time.Duration
}

// Passed reports whether the case met its expectations.
func (r Result) Passed() bool { return r.Err == nil && len(r.Failures) == 0 }

// Report is the outcome of a run.
type Report struct {
	Results []Result
}

// Run decides every case, in order, and checks each against its
// expectations. When ctx ends, the remaining cases fail with its error.
func Run(ctx context.Context, cases []*Case, decide DecideFunc) Report {
	rep := Report{Results: make([]Result, 0, len(cases))}
	for _, c := range cases {
		res := Result{Case: c}
		if err := ctx.Err(); err != nil {
			res.Err = fmt.Errorf("not run: %w", err)
			rep.Results = append(rep.Results, res)
			continue
		}
		start := time.Now()
		v, a, err := decide(ctx, c)
		res.Duration = time.Since(start)
		res.Verdict, res.Action, res.Err = v, a, err
		if err == nil {
			res.Failures = check(c, v)
		}
		rep.Results = append(rep.Results, res)
	}
	return rep
}

func check(c *Case, v policy.Verdict) []string {
	var fs []string
	if !c.Expect.Matches(v.Effect) {
		want := string(c.Expect)
		if c.Expect == ExpectBlock {
			want = "block (deny or ask)"
		}
		fs = append(fs, fmt.Sprintf("want %s, got %s", want, v.Effect))
	}
	for _, r := range c.ExpectRules {
		if !slices.Contains(v.Rules, r) {
			fs = append(fs, fmt.Sprintf("rule %s did not fire", r))
		}
	}
	return fs
}

// Failed counts the cases that did not pass.
func (r Report) Failed() int {
	n := 0
	for _, res := range r.Results {
		if !res.Passed() {
			n++
		}
	}
	return n
}

// Passed counts the cases that passed.
func (r Report) Passed() int { return len(r.Results) - r.Failed() }

// Write prints the report: a PASS or FAIL line per case, grouped by file,
// with the details of each failure, and a summary line "N/M passed". With
// verbose, passing cases show their verdict too.
func (r Report) Write(w io.Writer, verbose bool) {
	file := ""
	for _, res := range r.Results {
		c := res.Case
		if c.File != file {
			file = c.File
			fmt.Fprintf(w, "%s:\n", file)
		}
		status := "PASS"
		if !res.Passed() {
			status = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s (%s)\n", status, c.Name, formatDuration(res.Duration))
		if res.Passed() && !verbose {
			continue
		}
		if c.Line > 0 {
			fmt.Fprintf(w, "        at %s:%d\n", c.File, c.Line)
		}
		if res.Err != nil {
			fmt.Fprintf(w, "        error: %v\n", res.Err)
			continue
		}
		for _, f := range res.Failures {
			fmt.Fprintf(w, "        %s\n", f)
		}
		if res.Action != nil {
			fmt.Fprintf(w, "        action: %s (%s)\n", res.Action.Kind, joinKinds(res.Action.Kinds))
		}
		fmt.Fprintf(w, "        verdict: %s\n", res.Verdict.Effect)
		fmt.Fprintf(w, "        rules: %s\n", strings.Join(res.Verdict.Rules, ", "))
		for _, reason := range res.Verdict.Reasons {
			fmt.Fprintf(w, "        reason: %s\n", reason)
		}
		for _, e := range res.Verdict.Errors {
			fmt.Fprintf(w, "        rule error: %s\n", e)
		}
	}
	if len(r.Results) > 0 {
		fmt.Fprintln(w, strings.Repeat("-", 72))
	}
	if f := r.Failed(); f > 0 {
		fmt.Fprintf(w, "%d/%d passed, %d failed\n", r.Passed(), len(r.Results), f)
	} else {
		fmt.Fprintf(w, "%d/%d passed\n", r.Passed(), len(r.Results))
	}
}

func joinKinds(ks []action.Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	default:
		return d.Round(10 * time.Microsecond).String()
	}
}
