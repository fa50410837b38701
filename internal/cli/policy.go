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
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/policies"
)

func newPolicyCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "Test and inspect policies"}
	var (
		verbose  bool
		catalogs []string
		inst     instanceSelf
	)
	test := &cobra.Command{
		Use:   "test [DIR…]",
		Short: "Run policy fixture cases (*_test.yaml) like opa test; exit 1 on a failure",
		Long: `Load the built-in pack plus the rule files in each DIR, then run every *_test.yaml
case found in the DIRs through the real pipeline (classify, mandate, policy), each built as
a server started with the same --data, --listen, --protect, DIRs and --catalog builds the
input of a session's call (mandate check does the same); a case's own self: replaces the
instance's self-protection facts. With no DIR, run the built-in pack's own fixtures.`,
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
			off, err := inst.offline(dirs, catalogs)
			if err != nil {
				return err
			}
			rep := policytest.Run(cmd.Context(), cases, fixtureDecider(&engine.Decider{Classifier: cls, Policy: pol}, off, time.Now()))
			rep.Write(env.Stdout, verbose)
			if n := rep.Failed(); n > 0 {
				return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d cases failed (policy %s)", n, len(cases), pol.Hash()[:12])}
			}
			return nil
		},
	}
	test.Flags().BoolVarP(&verbose, "verbose", "v", false, "show every case, not only failures")
	test.Flags().StringArrayVar(&catalogs, "catalog", nil, "tool catalog file to load after the built-in one (repeatable)")
	inst.register(test)
	cmd.AddCommand(test)
	return cmd
}

// fixtureDecider decides a fixture case exactly as the engine decides a live
// call, minus the store.
func fixtureDecider(d *engine.Decider, off *engine.Offline, now time.Time) policytest.DecideFunc {
	return func(_ context.Context, c *policytest.Case) (policy.Verdict, *action.Action, error) {
		in, err := fixtureInput(off, c, now)
		if err != nil {
			return policy.Verdict{}, nil, err
		}
		res, err := d.Decide(in)
		if err != nil {
			return engine.DenyInternal(), &res.Action, err
		}
		return res.Verdict, &res.Action, nil
	}
}

// fixtureInput is a case's input: its call in the session it describes,
// with its own self-protection facts when it states them.
func fixtureInput(off *engine.Offline, c *policytest.Case, now time.Time) (*engine.Input, error) {
	var self *policy.SelfFacts
	if f := c.Self; len(f.Addresses)+len(f.Hosts)+len(f.Ports)+len(f.Paths) > 0 {
		self = &f
	}
	a := c.Agent
	return off.Input(engine.OfflineCall{
		Intent: c.Intent, Mandate: c.Mandate, Tool: c.Call.Tool, Args: c.Call.Args, Tools: c.Tools,
		WorkingDir: c.WorkingDirectory, HomeDir: c.HomeDirectory,
		Agent:   store.Agent{ID: a.ID, Model: a.Model, SystemPromptHash: a.PromptHash, ToolsetHash: a.ToolsetHash, RetrievalSource: a.Retrieval},
		Session: c.Session, Self: self, Now: now,
	})
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
