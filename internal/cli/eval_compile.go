package cli

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/eval"
)

// compileEvalFlags are `mandate eval --compile`'s own flags.
type compileEvalFlags struct {
	on          bool
	figuresOnly bool
	maxWider    int
}

func addCompileEvalFlags(fl *pflag.FlagSet, f *compileEvalFlags) {
	fl.BoolVar(&f.on, "compile", false, "grade compile cases (FORMATS.md §3) instead of scenarios: the draft of each instruction and its calls' decisions")
	fl.BoolVar(&f.figuresOnly, "figures-only", false, "print the figures only, no case (held-out cases are never listed)")
	fl.IntVar(&f.maxWider, "max-wider", -1, "with --compile: exit 4 if more drafts than this are wider than the words")
}

// runCompileEval is `mandate eval --compile FILE…`: per part (dev, held-out
// by path) and language, exact grants, drafts wider and narrower than the
// words, and drafts with words not understood.
func runCompileEval(cmd *cobra.Command, env Env, log *slog.Logger, f evalFlags, paths []string) error {
	if f.stats || f.interrupts || f.bounds != eval.NoBounds() || f.skipBad {
		return errors.New("--compile grades compile cases: --stats, --list-interrupts, --skip-bad and the --max-harmful/--max-wrongful-deny/--max-interrupt bounds are for scenarios")
	}
	corpus, err := eval.LoadCompile(paths)
	if err != nil {
		return err
	}
	engineLog := log
	if !cmd.Flags().Changed("log-level") {
		engineLog = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	a, err := eval.Open(cmd.Context(), app.Config{PolicyDirs: f.policyDirs, CatalogFiles: f.catalogs, Logger: engineLog})
	if err != nil {
		return err
	}
	defer a.Close()
	results, err := eval.RunCompile(cmd.Context(), a.Engine, corpus)
	if err != nil {
		return err
	}
	rep := eval.NewCompileReport(corpus, results, eval.CompileReportOptions{
		Revision: eval.Revision(cmd.Context(), ""), PolicyHash: a.Engine.Policy().Hash(), FiguresOnly: f.compile.figuresOnly,
	})
	if err := writeReport(env, f, rep.WriteJSON, rep.Text(), rep.Text()); err != nil {
		return err
	}
	if f.compile.maxWider >= 0 && rep.Wider() > f.compile.maxWider {
		return &ExitError{Code: exitBound, Err: fmt.Errorf("%d draft(s) wider than the words, above the bound of %d", rep.Wider(), f.compile.maxWider)}
	}
	return nil
}
