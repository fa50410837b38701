package cli

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/policy/policytest"
	"github.com/mandate-dev/mandate/policies"
)

func newPolicyCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "Test and inspect policies"}
	var (
		verbose  bool
		catalogs []string
	)
	test := &cobra.Command{
		Use:   "test [DIR…]",
		Short: "Run policy fixture cases (*_test.yaml) like opa test; exit 1 on a failure",
		Long: `Load the built-in pack plus the rule files in each DIR, then run every *_test.yaml
case found in the DIRs through the real pipeline (classify, mandate, policy). With no DIR,
run the built-in pack's own fixtures.`,
		Example: `  mandate policy test ./my-policy
  mandate policy test            # the built-in pack's fixtures`,
		RunE: func(cmd *cobra.Command, dirs []string) error {
			pol, err := policy.Load(dirs...)
			if err != nil {
				return err
			}
			cls, err := action.NewClassifier(action.WithCatalogFiles(catalogs...))
			if err != nil {
				return err
			}
			var cases []*policytest.Case
			if len(dirs) == 0 {
				cases, err = builtinCases()
				if err != nil {
					return err
				}
			}
			for _, d := range dirs {
				cs, err := policytest.LoadCases(d)
				if err != nil {
					return err
				}
				cases = append(cases, cs...)
			}
			if len(cases) == 0 {
				return fmt.Errorf("no *_test.yaml cases in %s", strings.Join(dirs, ", "))
			}
			rep := policytest.Run(cmd.Context(), cases, fixtureDecider(&engine.Decider{Classifier: cls, Policy: pol}))
			rep.Write(env.Stdout, verbose)
			if n := rep.Failed(); n > 0 {
				return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d cases failed (policy %s)", n, len(cases), pol.Hash()[:12])}
			}
			return nil
		},
	}
	test.Flags().BoolVarP(&verbose, "verbose", "v", false, "show every case, not only failures")
	test.Flags().StringArrayVar(&catalogs, "catalog", nil, "tool catalog file to load after the built-in one (repeatable)")
	cmd.AddCommand(test)
	return cmd
}

// fixtureDecider decides a fixture case exactly as the engine decides a live
// call, minus the store.
func fixtureDecider(d *engine.Decider) policytest.DecideFunc {
	return func(_ context.Context, c *policytest.Case) (policy.Verdict, *action.Action, error) {
		m, err := mandateFrom(c.Intent, c.Mandate)
		if err != nil {
			return policy.Verdict{}, nil, fmt.Errorf("intent: %w", err)
		}
		s := c.Session
		if s.Status == "" {
			s.Status = "active"
		}
		if s.Counts == nil {
			s.Counts = map[string]int{}
		}
		if s.Spend == nil {
			s.Spend = map[string]float64{}
		}
		res, err := d.Decide(&engine.Input{
			Call:    action.Call{Tool: c.Call.Tool, Args: c.Call.Args, WorkingDir: c.WorkingDirectory, HomeDir: c.HomeDirectory, Tools: c.Tools},
			Mandate: m, Session: s, Agent: c.Agent, Self: c.Self, Now: time.Now(),
		})
		if err != nil {
			return engine.DenyInternal(), &res.Action, err
		}
		return res.Verdict, &res.Action, nil
	}
}

func builtinCases() ([]*policytest.Case, error) {
	var cases []*policytest.Case
	err := fs.WalkDir(policies.FS, "builtin", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.yaml") {
			return err
		}
		data, err := fs.ReadFile(policies.FS, path)
		if err != nil {
			return err
		}
		cs, err := policytest.ParseCases(path, data)
		if err != nil {
			return err
		}
		cases = append(cases, cs...)
		return nil
	})
	return cases, err
}
