package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/mcpgw"
	"github.com/mandate-dev/mandate/internal/server"
)

func newMCPCmd(env Env, logger func() *slog.Logger) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Put Mandate between an MCP client and its MCP servers",
		Long: `Put Mandate in an MCP client's tool path. 'mandate mcp stdio' wraps one stdio
server; 'mandate serve --config FILE' serves several at /mcp over Streamable HTTP.
See docs/integrations/mcp.md.`,
	}
	cmd.AddCommand(newMCPStdioCmd(env, logger))
	return cmd
}

type mcpStdioFlags struct {
	inst                 instanceFlags
	intent, mandateFile  string
	agent, server, token string
	workDir              string
	callTimeout          time.Duration
	maxObserve           int
	approvalWait         time.Duration
	elicit               bool
}

func newMCPStdioCmd(env Env, logger func() *slog.Logger) *cobra.Command {
	var f mcpStdioFlags
	cmd := &cobra.Command{
		Use:   "stdio [flags] -- CMD [ARGS...]",
		Short: "Run an MCP stdio server behind Mandate",
		Long: `Run CMD ARGS as an MCP stdio server and serve its tools, prompts and resources on
this process's stdin/stdout, deciding every tool call against the mandate first.
An MCP client launches this command in place of the server.

Without --server, Mandate runs embedded on --data. The gateway acts as an admin
inside that engine to create its session: the mandate comes from this command
line, which the user wrote in the client's configuration, so it is the user's
word; the agent never gets a credential. With --server, the token (--token or
MANDATE_TOKEN) must be a user or hook token. MANDATE_URL and MANDATE_TOKEN are
never passed on to the server process.`,
		Example: `  mandate mcp stdio --intent "Summarise the notes in ~/notes" --data ~/.mandate \
    -- npx -y @modelcontextprotocol/server-filesystem ~/notes`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return errors.New("put the server's command after --: mandate mcp stdio [flags] -- CMD [ARGS...]")
			}
			return runMCPStdio(cmd.Context(), env, logger(), f, cmd.Flags().Changed("data"), args)
		},
	}
	f.inst.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.intent, "intent", "", "the user's instructions, in plain words")
	fl.StringVar(&f.mandateFile, "mandate", "", "a mandate file (YAML or JSON)")
	fl.StringVar(&f.agent, "agent", "mcp-client", "the agent id the session is for")
	fl.StringVar(&f.server, "server", "", "a running Mandate server's URL (default $MANDATE_URL; empty: embedded on --data)")
	fl.StringVar(&f.token, "token", "", "token for --server (default $MANDATE_TOKEN): a user or hook token")
	fl.StringVar(&f.workDir, "working-dir", "", "the agent's working directory; everything under it counts as in scope (default: none)")
	fl.DurationVar(&f.callTimeout, "call-timeout", mcpgw.DefaultCallTimeout, "longest wait for the server to answer a tool call")
	fl.IntVar(&f.maxObserve, "max-observe-bytes", mcpgw.DefaultMaxObserveBytes, "results larger than this are recorded as a summary")
	fl.DurationVar(&f.approvalWait, "approval-wait", 0, "keep an asked call open this long for a person's answer (at most 15m; with --server, answer with 'mandate approvals')")
	fl.BoolVar(&f.elicit, "elicit", false, "ask the person through the MCP client's elicitation form when it supports one (the answer is recorded as reported by the client)")
	return cmd
}

func runMCPStdio(ctx context.Context, env Env, log *slog.Logger, f mcpStdioFlags, dataSet bool, argv []string) error {
	if f.approvalWait < 0 || f.approvalWait > 15*time.Minute {
		return errors.New("--approval-wait: want 0s to 15m")
	}
	if strings.TrimSpace(f.intent) == "" && f.mandateFile == "" {
		return errors.New("give --intent (the user's words) or --mandate FILE: a gateway without a mandate would grant nothing")
	}
	var m *mandate.Mandate
	if f.mandateFile != "" {
		data, err := os.ReadFile(f.mandateFile)
		if err != nil {
			return fmt.Errorf("--mandate: %w", err)
		}
		if m, err = mandate.Parse(data); err != nil {
			return fmt.Errorf("--mandate %s: %w", f.mandateFile, err)
		}
	}
	if f.workDir != "" {
		abs, err := filepath.Abs(f.workDir)
		if err != nil {
			return fmt.Errorf("--working-dir: %w", err)
		}
		f.workDir = abs
	}
	home, _ := os.UserHomeDir()
	spec := mcpgw.SessionSpec{AgentID: f.agent, Intent: f.intent, Mandate: m, WorkingDir: f.workDir, HomeDir: home}

	server := orEnv(env, f.server, "MANDATE_URL", "")
	if f.server != "" && dataSet {
		return errors.New("give --server or --data, not both")
	}
	var backend mcpgw.Backend
	if server != "" && !dataSet {
		token := orEnv(env, f.token, "MANDATE_TOKEN", "")
		if token == "" {
			return errors.New("--server needs a token: --token or MANDATE_TOKEN (a user or hook token)")
		}
		c := client.New(server, token)
		// The session is created at the client's first tools/list or
		// call (its version then carries clientInfo and the tool-set
		// hash); a Mandate that cannot be reached, or refuses the
		// token, must still fail at once, before the upstream starts.
		if _, err := c.Whoami(ctx); err != nil {
			return fmt.Errorf("create the session: cannot reach Mandate at %s: %w", server, err)
		}
		backend = &mcpgw.ClientBackend{Client: c}
	} else {
		cfg, err := f.inst.config(env, log)
		if err != nil {
			return err
		}
		a, err := app.Open(ctx, cfg)
		if err != nil {
			return err
		}
		defer a.Close()
		// The gateway's configuration is the user's: they wrote the
		// intent on this command line. Acting as admin inside its own
		// embedded engine lets it label those words as the user's.
		backend = &mcpgw.EngineBackend{Engine: a.Engine, Source: "user",
			Default: auth.Principal{TokenID: "mcp-stdio", Role: auth.RoleAdmin, Name: "mandate mcp stdio"}}
	}
	// The session is created at the client's first tools/list or call,
	// after its initialize: its agent version then carries the client's
	// clientInfo and the hash of the tools the gateway shows, as the HTTP
	// gateway's sessions do (docs/behaviour.md).
	sessions := &mcpgw.StdioSession{Backend: backend, Spec: spec,
		OnCreate: func(id string) { log.Info("mandate session", "session", id, "agent", f.agent) }}

	g, err := mcpgw.New(ctx, mcpgw.Options{
		Upstreams:             []mcpgw.Upstream{{Name: upstreamNameFor(argv[0]), Command: argv[0], Args: argv[1:]}},
		Backend:               backend,
		Sessions:              sessions,
		CallTimeout:           f.callTimeout,
		MaxObserveBytes:       f.maxObserve,
		ApprovalWait:          f.approvalWait,
		Elicit:                f.elicit,
		ForwardClientFeatures: true,
		Stderr:                env.Stderr,
		Logger:                log,
		Version:               Version(),
	})
	if err != nil {
		return err
	}
	defer g.Close()
	sessions.Toolset = g.ToolsetHash
	err = g.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		err = nil
	}
	if err == nil {
		// The client closed its end: its task is over. (A gateway that
		// failed leaves the session as it was, to be taken up again.)
		if eerr := sessions.End(ctx); eerr != nil {
			log.Warn("mandate session not completed", "session", sessions.ID(), "err", eerr)
		}
	}
	return err
}

// upstreamNameFor names the wrapped server in logs after its program.
func upstreamNameFor(cmd string) string {
	base := filepath.Base(cmd)
	var b strings.Builder
	for _, r := range base {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" || strings.Trim(s, "-") == "" {
		return "upstream"
	}
	return s
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mountMCP serves the configured upstreams at /mcp, one Mandate session per
// MCP session, as the authenticated caller. It returns nil when there are
// no upstreams.
func mountMCP(ctx context.Context, srv *server.Server, a *app.App, c *mcpgw.Config, maxArgs int, log *slog.Logger) (io.Closer, error) {
	if len(c.Upstreams) == 0 {
		return nil, nil
	}
	backend := &mcpgw.EngineBackend{Engine: a.Engine}
	sessions := &mcpgw.HTTPSessions{Backend: backend}
	g, err := mcpgw.New(ctx, mcpgw.Options{
		Upstreams:       c.Upstreams,
		Namespace:       true,
		Backend:         backend,
		Sessions:        sessions,
		CallTimeout:     c.CallTimeout,
		MaxObserveBytes: min(mcpgw.DefaultMaxObserveBytes, maxArgs/2),
		Reconnect:       true,
		ApprovalWait:    c.Wait(),
		Elicit:          c.Elicit,
		Logger:          log,
		Version:         Version(),
	})
	if err != nil {
		return nil, err
	}
	sessions.OnEnd = g.Forget
	sessions.OnEndError = func(id string, err error) { log.Warn("mandate session not completed", "session", id, "err", err) }
	sessions.Toolset = g.ToolsetHash
	srv.Handle("/mcp", g.HTTPHandler(func(r *http.Request) (auth.Principal, bool) { return server.PrincipalFrom(r.Context()) }), true)
	names := make([]string, len(c.Upstreams))
	for i, u := range c.Upstreams {
		names[i] = u.Name
	}
	log.Info("MCP gateway at /mcp", "upstreams", strings.Join(names, ", "))
	return g, nil
}
