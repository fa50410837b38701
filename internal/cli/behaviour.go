package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/client"
)

// The behaviour layer's commands (docs/behaviour.md): they read a running
// server's baselines, drift, traces, summaries and reviews, as a person
// reads them or as JSON (--json).

const behaviourLong = `They talk to a running server (--server, else $MANDATE_URL, else ` + DefaultServer + `)
with a user or admin token (--token, else $MANDATE_TOKEN, else --token-file or
$MANDATE_TOKEN_FILE). --json prints what the HTTP API answers.`

type behaviourCmd struct {
	flags  approvalFlags
	asJSON bool
}

func (b *behaviourCmd) cmd(env Env, use, short string, args cobra.PositionalArgs, run func(c *client.Client, cmd *cobra.Command, args []string) (any, func(io.Writer), error)) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: short, Long: short + ".\n\n" + behaviourLong, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := b.flags.client(env)
			if err != nil {
				return err
			}
			v, text, err := run(c, cmd, args)
			if err != nil {
				return err
			}
			if b.asJSON {
				return writeJSON(env.Stdout, v)
			}
			text(env.Stdout)
			return nil
		},
	}
	b.flags.register(cmd)
	cmd.Flags().BoolVar(&b.asJSON, "json", false, "print JSON, as the HTTP API answers")
	return cmd
}

func newBehaviourCmds(env Env) []*cobra.Command {
	agents := (&behaviourCmd{}).cmd(env, "agents [AGENT]", "List the agents with a baseline, or show one with its versions", cobra.MaximumNArgs(1),
		func(c *client.Client, cmd *cobra.Command, args []string) (any, func(io.Writer), error) {
			if len(args) == 1 {
				a, err := c.Agent(cmd.Context(), args[0])
				return a, func(w io.Writer) { writeAgent(w, a) }, err
			}
			list, err := c.Agents(cmd.Context())
			return api.AgentList{Agents: list}, func(w io.Writer) { writeAgents(w, list) }, err
		})
	agents.Example = "  mandate agents\n  mandate agents coder\n  mandate agents --json"
	drift := (&behaviourCmd{}).cmd(env, "drift AGENT", "Compare each version of an agent with the version before it", cobra.ExactArgs(1),
		func(c *client.Client, cmd *cobra.Command, args []string) (any, func(io.Writer), error) {
			d, err := c.Drift(cmd.Context(), args[0])
			return d, func(w io.Writer) { writeDrift(w, d) }, err
		})
	drift.Example = "  mandate drift coder\n  mandate drift --json coder"
	trace := (&behaviourCmd{}).cmd(env, "trace DECISION_ID", "Show the chain that led to a decision and the step it started at", cobra.ExactArgs(1),
		func(c *client.Client, cmd *cobra.Command, args []string) (any, func(io.Writer), error) {
			t, err := c.Trace(cmd.Context(), args[0])
			return t, func(w io.Writer) { writeTrace(w, t) }, err
		})
	trace.Example = "  mandate trace 01a2…\n  mandate trace --json 01a2…"
	review := narratedCmd(env, "review AGENT", "Show what an agent's sessions repeat: asks, denies, shortcuts, growing scope",
		(*client.Client).Review, (*client.Client).ReviewWithNarrative, writeReview, func(r *api.AgentReview) *api.Narrative { return r.Narrative })
	review.Example = "  mandate review coder\n  mandate review --narrative coder"
	summary := narratedCmd(env, "summary SESSION_ID", "Show a session as facts: kinds, destinations, asks and answers, denies, signals",
		(*client.Client).SessionSummary, (*client.Client).SessionSummaryWithNarrative, writeSummary, func(s *api.SessionSummary) *api.Narrative { return s.Narrative })
	baseline := (&behaviourCmd{}).cmd(env, "baseline reset|freeze|unfreeze AGENT [VERSION]", "Reset, freeze or unfreeze an agent's baseline (an admin token; an evidence record)", cobra.RangeArgs(2, 3),
		func(c *client.Client, cmd *cobra.Command, args []string) (any, func(io.Writer), error) {
			req := api.BaselineRequest{Action: args[0]}
			if len(args) == 3 {
				req.Version = args[2]
			}
			a, err := c.BaselineAction(cmd.Context(), args[1], req)
			return a, func(w io.Writer) { writeAgent(w, a) }, err
		})
	return []*cobra.Command{agents, drift, trace, review, summary, baseline}
}

func writeAgents(w io.Writer, list []api.AgentBaseline) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no agent has a baseline yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tSTATE\tSESSIONS\tCALLS\tVERSIONS\tLAST SEEN")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", a.ID, a.State, a.Sessions, a.Calls, len(a.Versions), a.LastSeen.Format("2006-01-02 15:04"))
	}
	tw.Flush()
}

func writeAgent(w io.Writer, a *api.AgentBaseline) {
	fmt.Fprintf(w, "agent %s: %s, %d sessions (%d of ordinary length), %d calls learned, %d asked, %d denied, %d destinations",
		a.ID, a.State, a.Sessions, a.Ordinary, a.Calls, a.Asked, a.Denied, a.Destinations)
	if a.Dropped > 0 {
		fmt.Fprintf(w, " (%d values past the caps not kept)", a.Dropped)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "kinds: "+counts(a.Kinds))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tMODEL\tSTATE\tSESSIONS\tCALLS\tPREVIOUS")
	for _, v := range a.Versions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", v.Version, orDash(v.Model), v.State, v.Sessions, v.Calls, orDash(v.Previous))
	}
	tw.Flush()
}

func writeDrift(w io.Writer, d *api.DriftReport) {
	if len(d.Pairs) == 0 {
		fmt.Fprintf(w, "agent %s has one version: nothing to compare\n", d.Agent)
		return
	}
	for _, p := range d.Pairs {
		fmt.Fprintf(w, "%s → %s: %s (new version: %d sessions, %d calls; divergence %.3f)\n", p.From, p.To, strings.ToUpper(p.Verdict), p.Sessions, p.Calls, p.Divergence)
		for _, r := range p.Reasons {
			fmt.Fprintln(w, "  "+r)
		}
	}
}

func writeTrace(w io.Writer, t *api.Trace) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tSEQ\tTOOL\tKIND\tEFFECT\tSIGNALS")
	for _, s := range t.Steps {
		mark := ""
		if t.FirstDeparture != nil && t.FirstDeparture.DecisionID == s.DecisionID {
			mark = "►"
		}
		var sig []string
		for _, g := range s.Signals {
			if g.Name != "baseline.state" && !(g.Name == "baseline.score" && string(g.Value) == "0") {
				sig = append(sig, strings.TrimPrefix(g.Name, "baseline.")+"="+string(g.Value))
			}
		}
		for _, sp := range s.Supplied {
			sig = append(sig, "value "+sp.Value+" from the result of "+sp.DecisionID)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", mark, s.Seq, s.Tool, s.Kind, s.Effect, strings.Join(sig, "; "))
	}
	tw.Flush()
	if d := t.FirstDeparture; d != nil {
		fmt.Fprintf(w, "first departure (%s) at %s: %s\n", d.Type, d.DecisionID, d.Reason)
	} else {
		fmt.Fprintln(w, "no departure: every step kept to the mandate and the agent's baseline")
	}
}

func writeReview(w io.Writer, r *api.AgentReview) {
	fmt.Fprintf(w, "agent %s: %d sessions reviewed; distinct destinations per session %v", r.Agent, r.Sessions, r.Scope)
	if r.Growing {
		fmt.Fprint(w, " (growing)")
	}
	fmt.Fprintln(w)
	if len(r.Patterns) == 0 {
		fmt.Fprintln(w, "no repeated pattern")
	}
	for _, p := range r.Patterns {
		fmt.Fprintf(w, "%s %s: %s — %d sessions, decisions %s\n", p.Type, p.Name, p.Why, len(p.Sessions), strings.Join(p.Decisions, ", "))
	}
}

func writeSummary(w io.Writer, s *api.SessionSummary) {
	fmt.Fprintf(w, "session %s (agent %s, %s): %s, %d calls; kinds %s\n", s.SessionID, s.AgentID, s.Version, s.Status, s.Calls, counts(s.Kinds))
	for _, d := range s.Destinations {
		fmt.Fprintf(w, "  destination %s (%d calls)\n", d.What, len(d.Decisions))
	}
	for _, a := range s.Asked {
		fmt.Fprintf(w, "  asked %s (%s): %s\n", a.Tool, strings.Join(a.Rules, ", "), a.Answer)
	}
	for _, d := range s.Denied {
		fmt.Fprintf(w, "  denied %s\n", d.What)
	}
	for _, g := range s.Signals {
		fmt.Fprintf(w, "  signal %s\n", g.What)
	}
	if len(s.Gaps) > 0 {
		fmt.Fprintf(w, "  gaps: %d results of calls that ran without Mandate's allow\n", len(s.Gaps))
	}
	if d := s.FirstDeparture; d != nil {
		fmt.Fprintf(w, "  first departure (%s) at %s: %s\n", d.Type, d.DecisionID, d.Reason)
	}
	if r := s.Recorded; r != nil {
		fmt.Fprintf(w, "  recorded at completion: evidence record %d, %s\n", r.EvidenceIndex, r.RecordedAt.Format(time.RFC3339))
	}
}

// narratedCmd is a command that shows one thing's facts (a review, a
// session summary) and, with --narrative, the judge model's narrative
// printed after them.
func narratedCmd[T any](env Env, use, short string, plain, narrated func(*client.Client, context.Context, string) (T, error),
	write func(io.Writer, T), narrative func(T) *api.Narrative) *cobra.Command {
	var want bool
	cmd := (&behaviourCmd{}).cmd(env, use, short, cobra.ExactArgs(1),
		func(c *client.Client, cmd *cobra.Command, args []string) (any, func(io.Writer), error) {
			get := plain
			if want {
				get = narrated
			}
			v, err := get(c, cmd.Context(), args[0])
			return v, func(w io.Writer) { write(w, v); writeNarrative(w, narrative(v)) }, err
		})
	cmd.Flags().BoolVar(&want, "narrative", false,
		"add the judge model's narrative beside the facts, labelled model-written (needs a judge configured; an evidence record)")
	return cmd
}

// writeNarrative prints a narrative apart from the facts and labelled as
// the model's, never mixed with them.
func writeNarrative(w io.Writer, n *api.Narrative) {
	if n == nil {
		return
	}
	if n.Text == "" {
		fmt.Fprintf(w, "narrative (model-written): none — %s\n", orDash(n.Error))
		return
	}
	fmt.Fprintf(w, "narrative (model-written by %s, from facts %s):\n", orDash(n.Model), n.FactsDigest)
	for line := range strings.SplitSeq(strings.TrimSpace(n.Text), "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
