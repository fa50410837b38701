package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/mandate"
)

func newIntentCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{Use: "intent", Short: "Work with the user's intent"}
	cmd.AddCommand(&cobra.Command{
		Use:   "compile TEXT",
		Short: "Draft a mandate from plain instructions and show what was recognised and why",
		Example: `  mandate intent compile "Compare prices of the Dell U2723QE on two shops. Do not buy."
  mandate intent compile "Räum mein Postfach auf, aber lösch nichts."`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := mandate.Compile(strings.Join(args, " "))
			if err != nil {
				return err
			}
			out, err := d.YAML()
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(env.Stdout, string(out))
			return err
		},
	})
	return cmd
}
