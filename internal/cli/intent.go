package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/mandate"
)

func newIntentCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{Use: "intent", Short: "Work with the user's intent"}
	var asJSON bool
	compile := &cobra.Command{
		Use:   "compile TEXT",
		Short: "Draft a mandate from plain instructions and show what was recognised, why, and what was not understood",
		Long: `Draft a mandate from plain instructions (nothing is stored). The draft lists what each
phrase became and why (recognised), and every phrase no stage used (not_understood), with
its clause and what the draft did without it.`,
		Example: `  mandate intent compile "Compare prices of the Dell U2723QE on two shops. Do not buy."
  mandate intent compile "Räum mein Postfach auf, aber lösch nichts."
  mandate intent compile --json "Clean up my Downloads folder, only delete files older than a year."`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := mandate.Compile(strings.Join(args, " "))
			if err != nil {
				return err
			}
			var out []byte
			if asJSON {
				// The body /v1/intent/compile answers.
				out, err = json.MarshalIndent(api.CompileResponse{Mandate: d.Mandate, Languages: d.Languages,
					Recognised: d.Recognised, NotUnderstood: d.NotUnderstood}, "", "  ")
				out = append(out, '\n')
			} else {
				out, err = d.YAML()
			}
			if err != nil {
				return fmt.Errorf("intent compile: %w", err)
			}
			_, err = env.Stdout.Write(out)
			return err
		},
	}
	compile.Flags().BoolVar(&asJSON, "json", false, "print the draft as JSON, the body /v1/intent/compile answers")
	cmd.AddCommand(compile)
	return cmd
}
