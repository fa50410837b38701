package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/server"
)

// DefaultListen is loopback: exposing Mandate beyond the machine is a
// deliberate choice, never a default.
const DefaultListen = "127.0.0.1:7410"

// DefaultData is the data directory when --data is not given.
const DefaultData = "./mandate-data"

type instanceFlags struct {
	data       string
	policyDirs []string
	catalogs   []string
	maxArgs    int
	protect    []string
}

func (f *instanceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.data, "data", DefaultData, "data directory (SQLite database, tokens, keys)")
	cmd.Flags().StringArrayVar(&f.policyDirs, "policy", nil, "policy directory to load after the built-in pack (repeatable)")
	cmd.Flags().StringArrayVar(&f.catalogs, "catalog", nil, "tool catalog file to load after the built-in one (repeatable)")
	cmd.Flags().IntVar(&f.maxArgs, "max-args-bytes", 1<<20, "largest accepted call arguments or tool output, in bytes")
	cmd.Flags().StringArrayVar(&f.protect, "protect", nil, "a path agents' calls must not touch, beside the data and policy directories (repeatable; e.g. a hook token file)")
}

func (f *instanceFlags) config(log *slog.Logger) app.Config {
	return app.Config{DataDir: f.data, PolicyDirs: f.policyDirs, CatalogFiles: f.catalogs, MaxArgsBytes: f.maxArgs, Protect: f.protect, Logger: log}
}

func newServeCmd(env Env, logger func() *slog.Logger) *cobra.Command {
	var (
		inst       instanceFlags
		listen     string
		configFile string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the decision service (HTTP API, metrics) on an embedded store",
		Long: `Run the decision service. State lives in a SQLite database in --data; the first
start creates an admin token there (mode 0600). SIGHUP reloads the policy.
With --config, the MCP servers listed under mcp.upstreams are served at /mcp
(Streamable HTTP) behind Mandate; see docs/integrations/mcp.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), env, logger(), inst, listen, configFile)
		},
	}
	inst.register(cmd)
	cmd.Flags().StringVar(&listen, "listen", DefaultListen, "address to listen on (loopback by default)")
	cmd.Flags().StringVar(&configFile, "config", "", "configuration file (YAML): MCP upstreams to serve at /mcp")
	return cmd
}

func serve(ctx context.Context, env Env, log *slog.Logger, inst instanceFlags, listen, configFile string) error {
	mcpConfig, err := readServeConfig(configFile)
	if err != nil {
		return err
	}
	cfg := inst.config(log)
	cfg.Listen = listen
	cfg.Metrics = true
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	tokenPath, created, err := a.EnsureAdminToken(ctx)
	if err != nil {
		return err
	}
	srv := server.New(server.Options{Engine: a.Engine, Evidence: a.Evidence, Logger: log, Gatherer: a.Registry, MaxArgsBytes: inst.maxArgs, Version: Version()})
	if gw, err := mountMCP(ctx, srv, a, mcpConfig, inst.maxArgs, log); err != nil {
		return err
	} else if gw != nil {
		defer gw.Close()
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	if host, _, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			log.Warn("listening beyond loopback: anyone who can reach this address can try tokens; put TLS and a firewall in front", "addr", ln.Addr().String())
		}
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	fmt.Fprintf(env.Stdout, "mandate %s listening on http://%s\n", Version(), ln.Addr())
	fmt.Fprintf(env.Stdout, "  data:   %s\n", inst.data)
	fmt.Fprintf(env.Stdout, "  policy: %s (built-in pack%s)\n", a.Engine.Policy().Hash()[:12], extraDirs(inst.policyDirs))
	if created {
		fmt.Fprintf(env.Stdout, "  admin token created in %s (mode 0600): export MANDATE_TOKEN=$(cat %s)\n", tokenPath, tokenPath)
	} else {
		fmt.Fprintf(env.Stdout, "  admin token: %s\n", tokenPath)
	}
	fmt.Fprintf(env.Stdout, "  agent tokens: mandate token create --role agent --agent ID --data %s\n", inst.data)

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	for {
		select {
		case <-hup:
			if p, err := a.ReloadPolicy(); err != nil {
				log.Error("policy reload failed; keeping the old policy", "err", err)
			} else {
				log.Info("policy reloaded", "hash", p.Hash())
			}
		case err := <-errc:
			if !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serve: %w", err)
			}
			return nil
		case <-ctx.Done():
			log.Info("shutting down")
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := hs.Shutdown(sctx); err != nil {
				log.Warn("shutdown", "err", err)
			}
			return nil
		}
	}
}

func extraDirs(dirs []string) string {
	s := ""
	for _, d := range dirs {
		s += " + " + d
	}
	return s
}
