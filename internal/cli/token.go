package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

func newTokenCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage API tokens (offline, on the data directory)"}
	var data, role, agent, name string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a token and print it on stdout",
		Long: `Create a token. Roles: agent (evaluate and observe in its own agent's sessions;
needs --agent), hook (an agent runtime's hook: evaluate, observe, relay the user's prompts),
user (create sessions and mandates, read), admin (everything). Works on the data directory
directly, so it needs no running server.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tok, rec, err := auth.Issue(role, agent, name, time.Now())
			if err != nil {
				return err
			}
			st, err := openStore(cmd.Context(), data)
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
	create.Flags().StringVar(&role, "role", "", "agent, hook, user or admin")
	create.Flags().StringVar(&agent, "agent", "", "agent id an agent token acts for")
	create.Flags().StringVar(&name, "name", "", "a label for the token")
	create.MarkFlagRequired("role")
	cmd.AddCommand(create)
	return cmd
}

// openStore opens a data directory's store without the engine, creating
// both if needed (a token can be made before the first serve).
func openStore(ctx context.Context, data string) (*sqlite.Store, error) {
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(data, app.DatabaseFile)
	return sqlite.Open(ctx, path, sqlite.Options{})
}
