package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/client"
)

// approvalFlags are how `mandate approvals` finds its server and token:
// --server, else $MANDATE_URL, else the default; --token, else
// $MANDATE_TOKEN, else --token-file or $MANDATE_TOKEN_FILE.
type approvalFlags struct {
	server, token, tokenFile string
}

func (f *approvalFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.server, "server", "", "Mandate server URL (default $MANDATE_URL, else "+DefaultServer+")")
	cmd.PersistentFlags().StringVar(&f.token, "token", "", "a user, approver or admin token (default $MANDATE_TOKEN)")
	cmd.PersistentFlags().StringVar(&f.tokenFile, "token-file", "", "file holding the token (default $MANDATE_TOKEN_FILE)")
}

func (f *approvalFlags) client(env Env) (*client.Client, error) {
	server := orEnv(env, f.server, "MANDATE_URL", DefaultServer)
	tok := orEnv(env, f.token, "MANDATE_TOKEN", "")
	if tok == "" {
		path := orEnv(env, f.tokenFile, "MANDATE_TOKEN_FILE", "")
		if path == "" {
			return nil, errors.New("no token: give --token, $MANDATE_TOKEN or --token-file (an approver token: mandate token create --role approver)")
		}
		b, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("no token: %s does not exist", path)
			}
			return nil, fmt.Errorf("token file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
		if tok == "" {
			return nil, fmt.Errorf("token file %s is empty", path)
		}
	}
	return client.New(server, tok), nil
}

func newApprovalsCmd(env Env) *cobra.Command {
	var f approvalFlags
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List, approve and deny the calls Mandate asks a person about; watch them live",
		Long: `Every ask is an approval bound to the exact call: a person approves it (once, or for calls
like it in the session) or denies it; nobody answering by its deadline is a denial.

These commands talk to a running server (--server, else $MANDATE_URL, else ` + DefaultServer + `)
with a user, approver or admin token (--token, else $MANDATE_TOKEN, else --token-file or
$MANDATE_TOKEN_FILE). An approver token can read and answer approvals and nothing else:

  mandate token create --role approver --name me --data DIR > ~/.config/mandate/approver.token

An ID may be given as a unique prefix or suffix (at least 4 characters) of a pending
approval's id.`,
	}
	f.register(cmd)
	cmd.AddCommand(newApprovalsListCmd(env, &f), newApprovalsShowCmd(env, &f),
		newApprovalsAnswerCmd(env, &f, "approve"), newApprovalsAnswerCmd(env, &f, "deny"), newApprovalsWatchCmd(env, &f))
	return cmd
}

func newApprovalsListCmd(env Env, f *approvalFlags) *cobra.Command {
	var (
		state, session string
		limit          int
		asJSON         bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List approvals (pending ones by default), newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client(env)
			if err != nil {
				return err
			}
			if state == "all" {
				state = ""
			}
			list, err := c.Approvals(cmd.Context(), client.ApprovalFilter{State: state, SessionID: session, Limit: limit})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(env.Stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(env.Stdout, "no approvals")
				return nil
			}
			printApprovals(env.Stdout, list, time.Now())
			return nil
		},
	}
	cmd.Flags().StringVar(&state, "state", "pending", "pending, approved, denied, expired, withdrawn or all")
	cmd.Flags().StringVar(&session, "session", "", "only this session's")
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printApprovals(w io.Writer, list []*client.Approval, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tDEADLINE\tSESSION\tTOOL\tWHY")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.State, deadlineText(a, now), a.SessionID, a.Tool, clip(strings.Join(a.Reasons, "; "), 80))
	}
	tw.Flush()
}

func deadlineText(a *client.Approval, now time.Time) string {
	if a.State != client.Pending {
		if a.AnsweredBy != "" {
			return "by " + a.AnsweredBy
		}
		return a.Via
	}
	left := a.Deadline.Sub(now).Round(time.Second)
	if left <= 0 {
		return "expired"
	}
	return "in " + left.String()
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func newApprovalsShowCmd(env Env, f *approvalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show one approval as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := f.approval(cmd.Context(), env, args[0])
			if err != nil {
				return err
			}
			a, err := c.GetApproval(cmd.Context(), id)
			if err != nil {
				return err
			}
			return writeJSON(env.Stdout, a)
		},
	}
}

func newApprovalsAnswerCmd(env Env, f *approvalFlags, decision string) *cobra.Command {
	var note, scope string
	short := "Approve a pending call: once (this exact call), or --scope session (calls like it, for the rest of the session)"
	if decision == "deny" {
		short = "Deny a pending call"
	}
	cmd := &cobra.Command{
		Use:   decision + " ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := f.approval(cmd.Context(), env, args[0])
			if err != nil {
				return err
			}
			a, err := c.AnswerApproval(cmd.Context(), id, client.Answer{Decision: decision, Note: note, Scope: scope, Via: "cli"})
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "%s %s (%s in session %s)\n", a.State, a.ID, a.Tool, a.SessionID)
			if a.MandateVersion > 0 {
				fmt.Fprintf(env.Stdout, "  the session's mandate is now version %d: calls like this one are allowed for the rest of the session\n", a.MandateVersion)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "your words, kept verbatim with the answer")
	if decision == "approve" {
		cmd.Flags().StringVar(&scope, "scope", "once", "once (this exact call) or session (calls like it, for the rest of the session; amends the mandate)")
	}
	return cmd
}

// approval is a client and the id of the approval arg names, as
// resolveApproval reads it.
func (f *approvalFlags) approval(ctx context.Context, env Env, arg string) (*client.Client, string, error) {
	c, err := f.client(env)
	if err != nil {
		return nil, "", err
	}
	id, err := resolveApproval(ctx, c, arg)
	return c, id, err
}

// resolveApproval turns a unique prefix or suffix of a pending approval's
// id into the id (ids begin with their time, so the end tells recent ones
// apart); a full id passes as it is.
func resolveApproval(ctx context.Context, c *client.Client, arg string) (string, error) {
	if len(arg) >= 36 {
		return arg, nil
	}
	if len(arg) < 4 {
		return "", fmt.Errorf("approval id %q: give at least 4 characters of it", arg)
	}
	list, err := c.Approvals(ctx, client.ApprovalFilter{State: client.Pending, Limit: 1000})
	if err != nil {
		return "", err
	}
	var found []string
	for _, a := range list {
		if strings.HasPrefix(a.ID, arg) || strings.HasSuffix(a.ID, arg) {
			found = append(found, a.ID)
		}
	}
	switch len(found) {
	case 0:
		return arg, nil // let the server say it is unknown
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("approval id %q: %d pending approvals match it (%s); give more of it", arg, len(found), strings.Join(found, ", "))
}
