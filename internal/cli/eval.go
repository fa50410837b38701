package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/eval"
	"github.com/mandate-dev/mandate/internal/flow"
)

// exitBound is the exit status of `mandate eval` when a rate is above its
// bound (a CI gate).
const exitBound = 4

type evalFlags struct {
	policyDirs, catalogs []string
	asJSON, skipBad      bool
	stats, interrupts    bool
	compile              compileEvalFlags
	behaviour            behaviourEvalFlags
	out                  string
	workers              int
	bounds               eval.Bounds
	approver             string
	injection            bool
	think                time.Duration
}

func newEvalCmd(env Env, logger func() *slog.Logger) *cobra.Command {
	f := evalFlags{bounds: eval.NoBounds()}
	cmd := &cobra.Command{
		Use:   "eval [flags] FILE_OR_DIR...",
		Short: "Replay labelled scenarios through the engine and report harmful approvals, wrongful denies and interrupts",
		Long: `Replay scenario files (JSON Lines, one episode a line; a directory means its *.jsonl files)
through the real engine exactly as live traffic flows: a fresh session per episode, then call
by call a decision and the tool's output observed. Each decision is graded against the call's
label, and the report gives the rates overall, per part (dev and held-out: a file under a
directory whose name contains "heldout", counted below the checkout root, the nearest directory
with go.mod or .git), per area and per category (dev only), with the revision,
policy hash, scenario hash and grading rule, and lists every harmful approval and wrongful deny
with the rules that fired — never a held-out one, and none with --figures-only. The engine
never sees label, why or meta.

--approver puts a simulated person behind every ask, answering it through the real approval
path (the agent's evaluate waits, the person answers as an approver after --think, an approved
call is decided again and allowed once): the report then adds the prompts per 100 calls, the
answers, the rates after them, and the harmful approvals a rubber-stamping person would leave.

Bounds are rates as fractions (0.05) or percentages (5%). --out writes the report to a file
as well: JSON when its name ends in .json, text otherwise.

Exit status: 0 within bounds, 4 a rate above its bound, 1 an error (unusable scenario lines
without --skip-bad, or calls the engine failed on).`,
		Example: `  mandate eval scenarios/
  mandate eval --json --out eval.json --max-harmful 0.05 --max-wrongful-deny 0.02 scenarios/
  mandate eval --approver oracle --think 2s scenarios/
  mandate eval --figures-only scenarios/ heldout/scenarios/
  mandate eval --injection --figures-only internal/flow/testdata/injection/ heldout/injection/
  mandate eval --stats scenarios/
  mandate eval --compile internal/mandate/testdata/compile/
  mandate eval --compile --figures-only heldout/compile/
  mandate eval --behaviour scenarios/behaviour/ heldout/behaviour/
  mandate eval --simulate-behaviour scenarios/behaviour/ --seed 1`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.behaviour.on || f.behaviour.simulate != "" {
				return runBehaviourEval(cmd, env, logger(), f, args)
			}
			if len(args) == 0 {
				return errors.New("give at least one scenario file or directory")
			}
			if f.compile.on {
				return runCompileEval(cmd, env, logger(), f, args)
			}
			if f.injection {
				return runInjectionEval(env, f, args)
			}
			if f.compile.maxWider >= 0 {
				return errors.New("--max-wider goes with --compile")
			}
			return runEval(cmd, env, logger(), f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.policyDirs, "policy", nil, "policy directory to load after the built-in pack (repeatable)")
	fl.StringArrayVar(&f.catalogs, "catalog", nil, "tool catalog file to load after the built-in one (repeatable)")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fl.StringVar(&f.out, "out", "", "also write the report to this file (JSON if it ends in .json)")
	fl.BoolVar(&f.skipBad, "skip-bad", false, "leave unusable scenario lines out (listed in the report) instead of failing")
	fl.BoolVar(&f.stats, "stats", false, "only count the corpus (episodes, calls, labels per area and category; Markdown, or JSON with --json)")
	fl.BoolVar(&f.interrupts, "list-interrupts", false, "list every unnecessary interrupt in the text report, not only their number")
	addCompileEvalFlags(fl, &f.compile)
	fl.BoolVar(&f.injection, "injection", false, "grade the injection detector on labelled outputs (id, lang, text, injected, span): precision and recall per part and language")
	addBehaviourEvalFlags(fl, &f.behaviour)
	fl.StringVar(&f.approver, "approver", "none", "a simulated person who answers asks: none (asks graded as asks), deny-all, oracle (approves allow-labelled, denies block-labelled calls) or approve-all (the rubber stamp)")
	fl.DurationVar(&f.think, "think", 0, "the simulated person's think time per ask (with --approver; at most 1m)")
	fl.IntVar(&f.workers, "workers", 0, "episodes replayed concurrently (default: the number of CPUs)")
	fl.Var(rateFlag{&f.bounds.MaxHarmful}, "max-harmful", "exit 4 if the harmful approval rate is above this")
	fl.Var(rateFlag{&f.bounds.MaxWrongfulDeny}, "max-wrongful-deny", "exit 4 if the wrongful deny rate is above this")
	fl.Var(rateFlag{&f.bounds.MaxInterrupt}, "max-interrupt", "exit 4 if the interrupt rate is above this")
	return cmd
}

func runEval(cmd *cobra.Command, env Env, log *slog.Logger, f evalFlags, paths []string) error {
	ctx := cmd.Context()
	if f.workers < 0 {
		return errors.New("--workers must not be negative")
	}
	if f.stats && (f.out != "" || f.bounds != eval.NoBounds()) {
		// Silently ignoring them would let a CI gate pass without a replay.
		return errors.New("--stats only counts the corpus; --out and the --max-* bounds need a replay")
	}
	approver, err := eval.ParseApprover(f.approver)
	if err != nil {
		return fmt.Errorf("--approver: %w", err)
	}
	if f.think != 0 && approver == eval.ApproverNone {
		return errors.New("--think needs an --approver that answers (deny-all, oracle, approve-all)")
	}
	corpus, err := eval.Load(paths, eval.LoadOptions{SkipBad: f.skipBad})
	if err != nil {
		return err
	}
	for _, s := range corpus.Skipped {
		log.Warn("scenario line skipped", "at", s.Position.String(), "err", s.Err)
	}
	if f.stats {
		return writeStats(env, corpus.Stats(), f)
	}
	engineLog := log
	if !cmd.Flags().Changed("log-level") {
		// The engine logs every session, deny and ask at info; a replay
		// makes thousands. Keep the format the user chose.
		// A replay observes the recorded output of every call, also of
		// one the engine asked about and nobody answered, and the
		// engine records each such output as a gap: the report counts
		// them (Report.Gaps) instead of a warning a line.
		engineLog = slog.New(dropMessage{minLevel{log.Handler(), slog.LevelWarn}, engine.GapMessage})
	}
	// Episodes are independent: no baseline learns across them (the
	// behaviour eval, --behaviour, is where baselines are measured).
	a, err := eval.Open(ctx, app.Config{PolicyDirs: f.policyDirs, CatalogFiles: f.catalogs, Logger: engineLog, NoBaselineLearning: true})
	if err != nil {
		return err
	}
	defer a.Close()
	prog := startProgress(env.Stderr, "eval", int64(len(corpus.Episodes)), "episodes")
	rep, err := eval.Run(ctx, a.Engine, corpus, eval.Options{
		Workers: f.workers, Revision: eval.Revision(ctx, ""), Progress: func() { prog.Add(1) },
		Approver: approver, Think: f.think,
	})
	prog.Stop()
	if err != nil {
		return err
	}
	if f.compile.figuresOnly {
		rep.FiguresOnly()
	}
	if err := writeReport(env, f, rep.WriteJSON,
		rep.Text(eval.TextOptions{Interrupts: f.interrupts, FiguresOnly: f.compile.figuresOnly}),
		rep.Text(eval.TextOptions{Interrupts: true, FiguresOnly: f.compile.figuresOnly})); err != nil {
		return err
	}
	if n := rep.Failed; n > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("the engine failed on %d call(s), counted as deny; the figures are not a clean measurement (see the report's errors)", n)}
	}
	if over := rep.Exceeded(f.bounds); len(over) > 0 {
		return &ExitError{Code: exitBound, Err: errors.New(strings.Join(over, "; "))}
	}
	return nil
}

// writeReport prints a report — JSON with --json, else text — and, with
// --out, writes it to that file too: JSON if the name ends in .json, else
// fileText (which may say more than the terminal's text).
func writeReport(env Env, f evalFlags, writeJSON func(io.Writer) error, text, fileText string) error {
	var out bytes.Buffer
	if f.asJSON {
		if err := writeJSON(&out); err != nil {
			return err
		}
	} else {
		out.WriteString(text)
	}
	if _, err := env.Stdout.Write(out.Bytes()); err != nil {
		return err
	}
	if f.out == "" {
		return nil
	}
	var file bytes.Buffer
	if strings.HasSuffix(strings.ToLower(f.out), ".json") {
		if err := writeJSON(&file); err != nil {
			return err
		}
	} else {
		file.WriteString(fileText)
	}
	if err := os.WriteFile(f.out, file.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

func writeStats(env Env, s *eval.Stats, f evalFlags) error {
	if f.asJSON {
		return writeJSON(env.Stdout, s)
	}
	return s.WriteMarkdown(env.Stdout)
}

// rateFlag is a rate bound: a fraction (0.05) or a percentage (5%), from 0
// to 1. Negative means unset.
type rateFlag struct{ v *float64 }

func (r rateFlag) String() string {
	if r.v == nil || *r.v < 0 {
		return ""
	}
	return strconv.FormatFloat(*r.v, 'g', -1, 64)
}

func (r rateFlag) Set(s string) error {
	t := strings.TrimSpace(s)
	scale := 1.0
	if p, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = strings.TrimSpace(p), 100
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return fmt.Errorf("%q is not a rate: give a fraction such as 0.05 or a percentage such as 5%%", s)
	}
	v /= scale
	if v < 0 || v > 1 || v != v {
		return fmt.Errorf("%q: a rate is between 0 and 1 (0%% and 100%%)", s)
	}
	*r.v = v
	return nil
}

func (rateFlag) Type() string { return "rate" }

// runInjectionEval grades the injection detector alone.
func runInjectionEval(env Env, f evalFlags, paths []string) error {
	cases, files, err := eval.LoadInjection(paths)
	if err != nil {
		return err
	}
	s, err := flow.NewScanner()
	if err != nil {
		return err
	}
	rep := eval.GradeInjection(s, cases, files)
	if f.asJSON {
		if f.compile.figuresOnly {
			rep.Misses = []string{}
		}
		return writeJSON(env.Stdout, rep)
	}
	rep.WriteText(env.Stdout, f.compile.figuresOnly)
	return nil
}
