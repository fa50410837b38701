package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

func newTokenCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage API tokens (offline, on the data directory)"}
	var data, role, agent, name, storeAddr string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a token and print it on stdout",
		Long: `Create a token. Roles: agent (evaluate and observe in its own agent's sessions;
needs --agent; what it observes is recorded as reported), hook (an agent runtime's hook:
evaluate, observe, relay the user's prompts as words, for the agent --agent names and its
sub-agents AGENT:…; default claude-code), user (create sessions and mandates, read, answer
approvals), approver (list and answer approvals, nothing else: for a person or a dashboard
that decides asks), admin (everything). Works on the data directory directly, so it needs
no running server — but the directory must hold a store already (start 'mandate serve
--data DIR' once): a mistyped --data is refused, not created.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tok, rec, err := auth.Issue(role, agent, name, time.Now())
			if err != nil {
				return err
			}
			addr, err := app.StoreAddress(storeAddr, env.Getenv)
			if err != nil {
				return err
			}
			var st tokenStore
			if addr != "" {
				st, err = postgres.Open(cmd.Context(), addr, postgres.Options{NoIntegrator: true})
			} else {
				st, err = openStore(cmd.Context(), data)
			}
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.CreateToken(cmd.Context(), rec); err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, tok)
			return nil
		},
	}
	create.Flags().StringVar(&data, "data", DefaultData, "data directory")
	create.Flags().StringVar(&storeAddr, "store", "", "the shared store to create it in (default $"+app.StoreEnv+"): every replica accepts it")
	create.Flags().StringVar(&role, "role", "", "agent, hook, user, approver (reads and answers approvals, nothing else) or admin")
	create.Flags().StringVar(&agent, "agent", "", "agent id an agent token acts for, or a hook token serves (hook default: claude-code)")
	create.Flags().StringVar(&name, "name", "", "a label for the token")
	create.MarkFlagRequired("role")
	cmd.AddCommand(create)
	return cmd
}

type tokenStore interface {
	CreateToken(ctx context.Context, t *store.Token) error
	Close() error
}

// openStore opens a data directory's existing store without the engine. A
// directory without one is refused rather than created: a token written to
// a store no server reads (a mistyped --data) would fail only later, at the
// first request, far from the mistake.
func openStore(ctx context.Context, data string) (*sqlite.Store, error) {
	path := filepath.Join(data, app.DatabaseFile)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--data %s holds no Mandate store (no %s): give the directory 'mandate serve --data' uses, or start 'mandate serve --data %s' once to create it", data, app.DatabaseFile, data)
		}
		return nil, fmt.Errorf("--data: %w", err)
	}
	return sqlite.Open(ctx, path, sqlite.Options{})
}
