package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/eval"
)

type behaviourEvalFlags struct {
	on       bool
	simulate string
	seed     uint64
	short    bool
	short8   bool
}

func addBehaviourEvalFlags(fl *pflag.FlagSet, f *behaviourEvalFlags) {
	fl.BoolVar(&f.on, "behaviour", false, "replay behaviour episodes (each FILE_OR_DIR a corpus, reported side by side): drift detection and unlike-self precision/recall")
	fl.StringVar(&f.simulate, "simulate-behaviour", "", "write the simulated behaviour corpus (coding, mail, infra, research agents; benign and harmful version changes) to this directory")
	fl.Uint64Var(&f.seed, "seed", 1, "the simulation's seed (with --simulate-behaviour)")
	fl.BoolVar(&f.short, "simulate-short", false, "with --simulate-behaviour: the short-history shape (12 sessions of the first version, 10 of the second, at most 3 calls a session; files short15-*)")
	fl.BoolVar(&f.short8, "simulate-short8", false, "with --simulate-behaviour: the shorter-history shape (8 sessions of the first version, 12 of the second, at most 4 calls a session, unlike-self graded from the second version's first session; files short8-*)")
}

func runBehaviourEval(cmd *cobra.Command, env Env, log *slog.Logger, f evalFlags, paths []string) error {
	ctx := cmd.Context()
	if f.behaviour.simulate != "" {
		shape := eval.SimDefault()
		if f.behaviour.short {
			shape = eval.SimShort()
		}
		if f.behaviour.short8 {
			shape = eval.SimShort8()
		}
		files, err := eval.SimulateBehaviourShape(f.behaviour.seed, shape)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(f.behaviour.simulate, 0o755); err != nil {
			return err
		}
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(f.behaviour.simulate, n), files[n], 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintf(env.Stdout, "wrote %d files to %s (seed %d)\n", len(names), f.behaviour.simulate, f.behaviour.seed)
		if !f.behaviour.on {
			return nil
		}
	}
	if len(paths) == 0 {
		return errors.New("--behaviour: give at least one behaviour corpus (file or directory)")
	}
	engineLog := slog.New(minLevel{log.Handler(), slog.LevelWarn})
	open := func(ctx context.Context) (*engine.Engine, func() error, error) {
		a, err := eval.Open(ctx, app.Config{PolicyDirs: f.policyDirs, CatalogFiles: f.catalogs, Logger: engineLog})
		if err != nil {
			return nil, nil, err
		}
		return a.Engine, a.Close, nil
	}
	var reps []*eval.BehaviourReport
	for _, p := range paths {
		c, err := eval.LoadBehaviour([]string{p})
		if err != nil {
			return err
		}
		rep, err := eval.RunBehaviour(ctx, open, c, p)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	if f.asJSON {
		return writeJSON(env.Stdout, reps)
	}
	writeBehaviourReports(env, reps)
	for _, r := range reps {
		if len(r.Errors) > 0 {
			return &ExitError{Code: 1, Err: fmt.Errorf("%s: the engine failed on %d call(s): %s", r.Corpus, len(r.Errors), strings.Join(r.Errors[:min(3, len(r.Errors))], "; "))}
		}
	}
	return nil
}

func writeBehaviourReports(env Env, reps []*eval.BehaviourReport) {
	w := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	row := func(name string, cell func(r *eval.BehaviourReport) string) {
		fmt.Fprint(w, name)
		for _, r := range reps {
			fmt.Fprint(w, "\t"+cell(r))
		}
		fmt.Fprintln(w)
	}
	pct := func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
	row("behaviour", func(r *eval.BehaviourReport) string { return r.Corpus })
	row("files / sessions", func(r *eval.BehaviourReport) string { return fmt.Sprintf("%d / %d", r.Files, r.Sessions) })
	row("drift detected (of expected)", func(r *eval.BehaviourReport) string {
		return fmt.Sprintf("%d/%d = %s (%d insufficient)", r.Drift.Detected, r.Drift.Expected, pct(r.DetectionRate()), r.Drift.Insufficient)
	})
	row("drift false alarms (of benign)", func(r *eval.BehaviourReport) string {
		return fmt.Sprintf("%d/%d = %.1f per 1,000", r.Drift.FalseAlarms, r.Drift.Benign, r.FalseAlarmsPer1000())
	})
	row("unlike-self tp/fp/fn/tn", func(r *eval.BehaviourReport) string {
		u := r.UnlikeSelf
		return fmt.Sprintf("%d/%d/%d/%d", u.TP, u.FP, u.FN, u.TN)
	})
	row("unlike-self precision", func(r *eval.BehaviourReport) string { return pct(r.Precision()) })
	row("unlike-self recall", func(r *eval.BehaviourReport) string { return pct(r.Recall()) })
	// Per category (the union of the corpora's): a total can hide one
	// kind of agent that is always missed.
	var cats []string
	for _, r := range reps {
		for c := range r.Categories {
			if !slices.Contains(cats, c) {
				cats = append(cats, c)
			}
		}
	}
	slices.Sort(cats)
	for _, c := range cats {
		row("  "+c, func(r *eval.BehaviourReport) string {
			k := r.Categories[c]
			if k == nil {
				return "-"
			}
			d, u := k.Drift, k.UnlikeSelf
			return fmt.Sprintf("%d sessions; drift %d/%d, false %d/%d; unlike-self %d/%d/%d/%d", k.Sessions, d.Detected, d.Expected, d.FalseAlarms, d.Benign, u.TP, u.FP, u.FN, u.TN)
		})
	}
	row("hash", func(r *eval.BehaviourReport) string { return r.Hash[:min(19, len(r.Hash))] })
	row("decisions digest", func(r *eval.BehaviourReport) string { return r.Digest[:min(19, len(r.Digest))] })
	w.Flush()
	fmt.Fprintln(env.Stdout, "grading: drift = the episode's version is judged drift against the version before it after the episode (insufficient counts as no drift); unlike-self = a decision of the episode carries baseline.unlike_self (its score at or above signals.unlike_self in monitoring, or while learning after signals.unlike_self_min_sessions sessions)")
}
