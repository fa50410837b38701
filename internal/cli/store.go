package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/redact"
	"github.com/mandate-dev/mandate/internal/store/postgres"
	"github.com/mandate-dev/mandate/internal/store/storecopy"
)

func newStoreCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Manage the shared PostgreSQL store: migrate the schema, copy an embedded store into it"}
	cmd.AddCommand(newStoreMigrateCmd(env), newStoreCopyCmd(env))
	return cmd
}

// sharedStore is the --store flag's address, else $MANDATE_STORE; one is
// required.
func sharedStore(env Env, flag, name string) (string, error) {
	addr, err := app.StoreAddress(flag, env.Getenv)
	if err != nil {
		return "", err
	}
	if addr == "" {
		return "", fmt.Errorf("give %s postgres://USER@HOST:PORT/DB (or set %s)", name, app.StoreEnv)
	}
	return addr, nil
}

func newStoreMigrateCmd(env Env) *cobra.Command {
	var addr, keys string
	cmd := &cobra.Command{
		Use:   "migrate [--store DSN]",
		Short: "Apply the shared store's schema migrations, and nothing else",
		Long: `Apply the schema migrations the database lacks, each in its own transaction, under an
advisory lock (replicas starting at once apply each once). 'mandate serve --store' does
the same on start; run this alone to migrate ahead of a rollout, or as a role allowed to
create tables when the replicas' role is not. A database migrated by a newer release is
refused. With --data DIR it also creates the keys every replica needs a copy of
(evidence.key, redact.key; mode 0600) in DIR if they are missing, and prints the
verifier key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dsn, err := sharedStore(env, addr, "--store")
			if err != nil {
				return err
			}
			from, to, err := postgres.Migrate(cmd.Context(), dsn)
			if err != nil {
				return err
			}
			if from == to {
				fmt.Fprintf(env.Stdout, "schema is up to date (version %d)\n", to)
			} else {
				fmt.Fprintf(env.Stdout, "schema migrated from version %d to %d\n", from, to)
			}
			if keys == "" {
				return nil
			}
			if err := os.MkdirAll(keys, 0o700); err != nil {
				return fmt.Errorf("--data: %w", err)
			}
			k, err := evidence.LoadOrCreateKey(keys)
			if err != nil {
				return err
			}
			if _, err := redact.LoadOrCreateKey(keys); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "keys in %s (copy %s and %s to every replica's --data)\nverifier key: %s\n", keys, evidence.KeyFile, redact.KeyFile, k.VerifierKey())
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "store", "", "the shared store (default $"+app.StoreEnv+")")
	cmd.Flags().StringVar(&keys, "data", "", "also create the replicas' keys in this directory if missing")
	return cmd
}

func newStoreCopyCmd(env Env) *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "copy --from DATA_DIR --to DSN",
		Short: "Copy an embedded store into an empty shared store, evidence and checkpoints included",
		Long: `Copy the SQLite store of a data directory into a new PostgreSQL store: every row, the
evidence log with the indices it had, and every signed checkpoint, in one transaction
(all or nothing). The target must be empty. Afterwards the copied log is verified
against the old checkpoints with the data directory's key, so the history stays
provable. Copy the directory's evidence.key and redact.key to every replica's --data.
Stop the embedded server first (or copy again): changes made after the copy's snapshot
stay behind.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return errors.New("give --from DATA_DIR, the embedded store's data directory")
			}
			dsn, err := sharedStore(env, to, "--to")
			if err != nil {
				return err
			}
			return copyStore(cmd.Context(), env, from, dsn)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "data directory of the embedded store")
	cmd.Flags().StringVar(&to, "to", "", "the shared store (default $"+app.StoreEnv+")")
	return cmd
}

func copyStore(ctx context.Context, env Env, from, dsn string) error {
	key, err := evidence.LoadKey(from)
	if err != nil {
		return fmt.Errorf("--from %s: %w", from, err)
	}
	start := time.Now()
	prog := startProgress(env.Stderr, "copying", 0, "rows")
	rep, err := storecopy.Copy(ctx, filepath.Join(from, app.DatabaseFile), dsn, storecopy.WithProgress(prog.Add))
	prog.Stop()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "copied %s into the shared store in %s:\n", from, time.Since(start).Round(time.Millisecond))
	for _, t := range rep.Tables {
		fmt.Fprintf(env.Stdout, "  %-13s %d\n", t, rep.Rows[t])
	}
	st, err := postgres.OpenReadOnly(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	prog = startProgress(env.Stderr, "verifying the copied log", 0, "")
	vrep, err := evidence.VerifyStore(ctx, st, key.Verifier(), nil)
	prog.Stop()
	if err != nil {
		fmt.Fprintln(env.Stdout, "NOT VERIFIED  the copied log")
		return &ExitError{Code: 1, Err: err}
	}
	fmt.Fprintf(env.Stdout, "VERIFIED  the copied log: %d records, %d checkpoints signed by %s match them\n", vrep.Records, vrep.Checkpoints, key.Verifier().Name())
	fmt.Fprintf(env.Stdout, "next: copy %s and %s to every replica's --data, then mandate serve --store ... --data DIR\n",
		filepath.Join(from, evidence.KeyFile), filepath.Join(from, redact.KeyFile))
	return nil
}
