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
	"github.com/mandate-dev/mandate/internal/store"
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
		f        checkFlags
		callJSON string
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Decide one call offline and explain the verdict",
		Long: `Decide one tool call against a mandate (from --intent words and/or a --mandate file)
with the built-in policy pack plus any --policy directories, as a server started with the
same --data, --listen, --protect, --policy and --catalog decides the first call of a session
created with these words, --cwd, --home and --agent: the same input, so the same verdict.
It says which facts it lacks (no working directory, no listen address, …). Nothing is stored.
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
			pol, err := policy.Load(f.policyDirs...)
			if err != nil {
				return err
			}
			cls, err := action.NewClassifier(action.WithCatalogFiles(f.catalogs...))
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("cwd") {
				f.cwd, _ = os.Getwd()
			}
			if !cmd.Flags().Changed("home") {
				f.home, _ = os.UserHomeDir()
			}
			in, err := f.input(call, time.Now())
			if err != nil {
				return err
			}
			d := &engine.Decider{Classifier: cls, Policy: pol}
			res, err := d.Decide(in)
			if err != nil {
				res.Verdict = engine.DenyInternal()
				fmt.Fprintln(env.Stderr, "mandate:", err)
			}
			missing := in.Missing()
			if missing == nil {
				missing = []string{}
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(checkOutput{
					Effect: res.Verdict.Effect, Rules: res.Verdict.Rules, Reasons: res.Verdict.Reasons,
					Action: res.Action, Scope: res.Scope, Mandate: in.Mandate, PolicyHash: pol.Hash(),
					Self: in.Self, Missing: missing,
				}); err != nil {
					return err
				}
			} else {
				printVerdict(env.Stdout, res)
				for _, m := range missing {
					fmt.Fprintf(env.Stdout, "  missing: %s\n", m)
				}
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
	cmd.Flags().StringVar(&f.intent, "intent", "", "the user's instructions, in plain words")
	cmd.Flags().StringVar(&f.mandateFile, "mandate", "", "a mandate file (YAML or JSON)")
	cmd.Flags().StringVar(&callJSON, "call", "", `the call: '{"tool":"…","args":{…}}', or - for stdin`)
	cmd.Flags().StringVar(&f.cwd, "cwd", "", "the agent's working directory (default: the current directory)")
	cmd.Flags().StringVar(&f.home, "home", "", "the user's home directory, for ~ in paths (default: yours)")
	cmd.Flags().StringVar(&f.agent, "agent", "", "the agent id the session is for (as a session's agent_id)")
	cmd.Flags().StringArrayVar(&f.policyDirs, "policy", nil, "policy directory to load after the built-in pack (repeatable)")
	cmd.Flags().StringArrayVar(&f.catalogs, "catalog", nil, "tool catalog file to load after the built-in one (repeatable)")
	f.inst.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verdict as JSON")
	return cmd
}

// checkFlags are what `mandate check` decides a call in.
type checkFlags struct {
	intent, mandateFile, cwd, home, agent string
	policyDirs, catalogs                  []string
	inst                                  instanceSelf
}

// input is the call's input: as a server with these flags would build it
// for the first call of a session created with these words.
func (f *checkFlags) input(call *callSpec, now time.Time) (*engine.Input, error) {
	given, err := loadMandate(f.intent, f.mandateFile)
	if err != nil {
		return nil, err
	}
	off, err := f.inst.offline(f.policyDirs, f.catalogs)
	if err != nil {
		return nil, err
	}
	in, err := off.Input(engine.OfflineCall{
		Intent: f.intent, Mandate: given, Tool: call.Tool, Args: call.Args,
		WorkingDir: f.cwd, HomeDir: f.home, Agent: store.Agent{ID: f.agent}, Now: now,
	})
	if err != nil {
		return nil, fmt.Errorf("--intent/--mandate: %w", err)
	}
	return in, nil
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

// loadMandate reads the --mandate file, if any; words or a file must be
// given.
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
	return m, nil
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

// checkOutput is what `mandate check --json` prints: the verdict and what it
// was decided on. The fields are in the order of their names, as the map it
// replaces printed them.
type checkOutput struct {
	Action     action.Action    `json:"action"`
	Effect     policy.Effect    `json:"effect"`
	Mandate    *mandate.Mandate `json:"mandate"`
	Missing    []string         `json:"missing"`
	PolicyHash string           `json:"policy_hash"`
	Reasons    []string         `json:"reasons"`
	Rules      []string         `json:"rules"`
	Scope      mandate.Report   `json:"scope"`
	Self       policy.SelfFacts `json:"self"`
}
