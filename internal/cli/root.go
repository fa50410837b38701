// Package cli is the mandate command line: thin cobra commands over the app,
// engine and server packages.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// ExitError carries a specific exit status (check: 3 ask, 4 deny).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Env is the process environment the commands run in.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// Main runs the command line and returns the process exit status.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	root := newRoot(env)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(env.Stderr, "mandate:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(env.Stderr, "mandate:", err)
	return 1
}

func newRoot(env Env) *cobra.Command {
	var lf logFlags
	root := &cobra.Command{
		Use:           "mandate",
		Short:         "Decide whether an AI agent's tool call should happen, for this task, right now",
		Long:          "Mandate sits in an agent's tool-execution path: it classifies every call, holds it against the user's mandate and decides allow, deny or ask — and keeps a verifiable record.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := lf.parse(); err != nil {
				if code, ok := cmd.Annotations[exitOnFlagError]; ok {
					n, _ := strconv.Atoi(code)
					return &ExitError{Code: n, Err: err}
				}
				return err
			}
			return nil
		},
	}
	lf.register(root)
	logger := func() *slog.Logger { return lf.logger(env.Stderr, slog.LevelDebug) }
	root.AddCommand(
		newServeCmd(env, logger),
		newCheckCmd(env),
		newIntentCmd(env),
		newPolicyCmd(env),
		newTokenCmd(env),
		newStoreCmd(env),
		newBenchCmd(env, logger),
		newEvalCmd(env, logger),
		newHookCmd(env),
		newMCPCmd(env, logger),
		newEvidenceCmd(env),
		newApprovalsCmd(env),
		newVersionCmd(env),
	)
	root.AddCommand(newBehaviourCmds(env)...)
	return root
}

// Version is the build's version: the module version or VCS revision.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified == "true" {
			rev += "-dirty"
		}
		if v == "" || v == "(devel)" {
			return rev
		}
		return v + " (" + rev + ")"
	}
	if v == "" {
		return "(devel)"
	}
	return v
}

func newVersionCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			goVersion := ""
			if bi != nil {
				goVersion = bi.GoVersion
			}
			fmt.Fprintf(env.Stdout, "mandate %s %s\n", Version(), strings.TrimSpace(goVersion))
			return nil
		},
	}
}

// writeJSON writes v to w as the commands' --json output: indented two
// spaces, one value, ending in a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
