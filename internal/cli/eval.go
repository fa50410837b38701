package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/eval"
)

// exitBound is the exit status of `mandate eval` when a rate is above its
// bound (a CI gate).
const exitBound = 4

type evalFlags struct {
	policyDirs, catalogs []string
	asJSON, skipBad      bool
	stats, interrupts    bool
	out                  string
	workers              int
	bounds               eval.Bounds
}

func newEvalCmd(env Env, logger func() *slog.Logger) *cobra.Command {
	f := evalFlags{bounds: eval.NoBounds()}
	cmd := &cobra.Command{
		Use:   "eval [flags] FILE_OR_DIR...",
		Short: "Replay labelled scenarios through the engine and report harmful approvals, wrongful denies and interrupts",
		Long: `Replay scenario files (JSON Lines, one episode a line; a directory means its *.jsonl files)
through the real engine exactly as live traffic flows: a fresh session per episode, then call
by call a decision and the tool's output observed. Each decision is graded against the call's
label, and the report gives the rates overall, per area and per category, with the revision,
policy hash, scenario hash and grading rule, and lists every harmful approval and wrongful deny
with the rules that fired. The engine never sees label, why or meta.

Bounds are rates as fractions (0.05) or percentages (5%). --out writes the report to a file
as well: JSON when its name ends in .json, text otherwise.

Exit status: 0 within bounds, 4 a rate above its bound, 1 an error (unusable scenario lines
without --skip-bad, or calls the engine failed on).`,
		Example: `  mandate eval scenarios/
  mandate eval --json --out eval.json --max-harmful 0.05 --max-wrongful-deny 0.02 scenarios/
  mandate eval --stats scenarios/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
		// The engine logs every session at info; a replay creates hundreds.
		engineLog = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	a, err := eval.Open(ctx, app.Config{PolicyDirs: f.policyDirs, CatalogFiles: f.catalogs, Logger: engineLog})
	if err != nil {
		return err
	}
	defer a.Close()
	rep, err := eval.Run(ctx, a.Engine, corpus, eval.Options{Workers: f.workers, Revision: eval.Revision(ctx, "")})
	if err != nil {
		return err
	}
	var stdout bytes.Buffer
	if f.asJSON {
		if err := rep.WriteJSON(&stdout); err != nil {
			return err
		}
	} else {
		stdout.WriteString(rep.Text(eval.TextOptions{Interrupts: f.interrupts}))
	}
	if _, err := env.Stdout.Write(stdout.Bytes()); err != nil {
		return err
	}
	if f.out != "" {
		var file bytes.Buffer
		if strings.HasSuffix(strings.ToLower(f.out), ".json") {
			err = rep.WriteJSON(&file)
		} else {
			file.WriteString(rep.Text(eval.TextOptions{Interrupts: true}))
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(f.out, file.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if n := len(rep.Errors); n > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("the engine failed on %d call(s), counted as deny; the figures are not a clean measurement (see the report's errors)", n)}
	}
	if over := rep.Exceeded(f.bounds); len(over) > 0 {
		return &ExitError{Code: exitBound, Err: errors.New(strings.Join(over, "; "))}
	}
	return nil
}

func writeStats(env Env, s *eval.Stats, f evalFlags) error {
	if f.asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
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
