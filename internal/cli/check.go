package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
)

// Exit statuses of `mandate check`.
const (
	exitAsk  = 3
	exitDeny = 4
)

type callSpec struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

func newCheckCmd(env Env) *cobra.Command {
	var (
		intent, mandateFile, callJSON, cwd string
		policyDirs, catalogs               []string
		asJSON                             bool
	)
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Decide one call offline and explain the verdict",
		Long: `Decide one tool call against a mandate (from --intent words and/or a --mandate file)
with the built-in policy pack plus any --policy directories. Nothing is stored.
Exit status: 0 allow, 3 ask, 4 deny, 1 error.`,
		Example: `  mandate check --intent "Compare prices of the Dell U2723QE. Do not buy." \
    --call '{"tool":"checkout","args":{"item":"u2723qe","price":"579 USD"}}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if callJSON == "" {
				return fmt.Errorf("--call is required: a JSON object {\"tool\": …, \"args\": {…}} (or - to read it from stdin)")
			}
			call, err := parseCall(callJSON, env.Stdin)
			if err != nil {
				return err
			}
			m, err := loadMandate(intent, mandateFile)
			if err != nil {
				return err
			}
			pol, err := policy.Load(policyDirs...)
			if err != nil {
				return err
			}
			cls, err := action.NewClassifier(action.WithCatalogFiles(catalogs...))
			if err != nil {
				return err
			}
			if cwd == "" {
				cwd, _ = os.Getwd()
			}
			home, _ := os.UserHomeDir()
			d := &engine.Decider{Classifier: cls, Policy: pol}
			res, err := d.Decide(&engine.Input{
				Call:    action.Call{Tool: call.Tool, Args: call.Args, WorkingDir: cwd, HomeDir: home},
				Mandate: m,
				Session: policy.SessionFacts{Status: "active", Counts: map[string]int{}, Spend: map[string]float64{}},
				Now:     time.Now(),
			})
			if err != nil {
				res.Verdict = engine.DenyInternal()
				fmt.Fprintln(env.Stderr, "mandate:", err)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(map[string]any{
					"effect": res.Verdict.Effect, "rules": res.Verdict.Rules, "reasons": res.Verdict.Reasons,
					"action": res.Action, "scope": res.Scope, "mandate": m, "policy_hash": pol.Hash(),
				}); err != nil {
					return err
				}
			} else {
				printVerdict(env.Stdout, res)
			}
			switch res.Verdict.Effect {
			case policy.Allow:
				return nil
			case policy.Ask:
				return &ExitError{Code: exitAsk}
			default:
				return &ExitError{Code: exitDeny}
			}
		},
	}
	cmd.Flags().StringVar(&intent, "intent", "", "the user's instructions, in plain words")
	cmd.Flags().StringVar(&mandateFile, "mandate", "", "a mandate file (YAML or JSON)")
	cmd.Flags().StringVar(&callJSON, "call", "", `the call: '{"tool":"…","args":{…}}', or - for stdin`)
	cmd.Flags().StringVar(&cwd, "cwd", "", "the agent's working directory (default: the current directory)")
	cmd.Flags().StringArrayVar(&policyDirs, "policy", nil, "policy directory to load after the built-in pack (repeatable)")
	cmd.Flags().StringArrayVar(&catalogs, "catalog", nil, "tool catalog file to load after the built-in one (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verdict as JSON")
	return cmd
}

func parseCall(s string, stdin io.Reader) (*callSpec, error) {
	data := []byte(s)
	if s == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, 16<<20))
		if err != nil {
			return nil, fmt.Errorf("read call from stdin: %w", err)
		}
		data = b
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var c callSpec
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("--call: %v (want {\"tool\": \"name\", \"args\": {…}})", err)
	}
	if strings.TrimSpace(c.Tool) == "" {
		return nil, fmt.Errorf("--call: tool is required")
	}
	if c.Args == nil {
		c.Args = map[string]any{}
	}
	return &c, nil
}

// loadMandate builds the mandate from words, a file, or both.
func loadMandate(intent, file string) (*mandate.Mandate, error) {
	var m *mandate.Mandate
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--mandate: %w", err)
		}
		m, err = mandate.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("--mandate %s: %w", file, err)
		}
	}
	if m == nil && strings.TrimSpace(intent) == "" {
		return nil, fmt.Errorf("give --intent (the user's words) or --mandate FILE")
	}
	m, err := mandateFrom(intent, m)
	if err != nil {
		return nil, fmt.Errorf("--intent: %w", err)
	}
	return m, nil
}

// mandateFrom compiles the user's words, or keeps them beside a structured
// grant when there is one — the same rule the engine applies to sessions.
func mandateFrom(intent string, m *mandate.Mandate) (*mandate.Mandate, error) {
	if strings.TrimSpace(intent) == "" {
		if m == nil {
			return &mandate.Mandate{}, nil
		}
		return m, nil
	}
	if m != nil {
		m.Instructions = append(m.Instructions, mandate.Instruction{Text: intent, Source: "user"})
		return m, nil
	}
	d, err := mandate.Compile(intent)
	if err != nil {
		return nil, err
	}
	return d.Mandate, nil
}

func printVerdict(w io.Writer, res engine.Result) {
	a := res.Action
	fmt.Fprintf(w, "%s  %s (%s)\n", strings.ToUpper(string(res.Verdict.Effect)), a.Tool, a.Kind)
	for _, r := range res.Verdict.Reasons {
		fmt.Fprintf(w, "  reason: %s\n", r)
	}
	fmt.Fprintf(w, "  rules:  %s\n", strings.Join(res.Verdict.Rules, ", "))
	for _, n := range a.Notes {
		fmt.Fprintf(w, "  seen:   %s\n", n)
	}
}
