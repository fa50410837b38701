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
	"github.com/mandate-dev/mandate/internal/events"
	"github.com/mandate-dev/mandate/internal/server"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/ui"
)

// DefaultListen is loopback: exposing Mandate beyond the machine is a
// deliberate choice, never a default.
const DefaultListen = "127.0.0.1:7410"

// DefaultData is the data directory when --data is not given.
const DefaultData = "./mandate-data"

type instanceFlags struct {
	data       string
	store      string
	policyDirs []string
	catalogs   []string
	maxArgs    int
	protect    []string
}

func (f *instanceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.data, "data", DefaultData, "data directory (SQLite database, tokens, keys; with --store: the keys only)")
	cmd.Flags().StringVar(&f.store, "store", "", "shared store: postgres://USER@HOST:PORT/DB[?…] (default $"+app.StoreEnv+"; empty: the embedded SQLite store in --data)")
	cmd.Flags().StringArrayVar(&f.policyDirs, "policy", nil, "policy directory to load after the built-in pack (repeatable)")
	cmd.Flags().StringArrayVar(&f.catalogs, "catalog", nil, "tool catalog file to load after the built-in one (repeatable)")
	cmd.Flags().IntVar(&f.maxArgs, "max-args-bytes", 1<<20, "largest accepted call arguments or tool output, in bytes")
	cmd.Flags().StringArrayVar(&f.protect, "protect", nil, "a path agents' calls must not touch, beside the data and policy directories (repeatable; e.g. a hook token file)")
}

func (f *instanceFlags) config(env Env, log *slog.Logger) (app.Config, error) {
	addr, err := app.StoreAddress(f.store, env.Getenv)
	if err != nil {
		return app.Config{}, err
	}
	return app.Config{DataDir: f.data, Store: addr, PolicyDirs: f.policyDirs, CatalogFiles: f.catalogs, MaxArgsBytes: f.maxArgs, Protect: f.protect, Logger: log}, nil
}

func newServeCmd(env Env, logger func() *slog.Logger) *cobra.Command {
	var (
		inst       instanceFlags
		listen     string
		configFile string
		withUI     bool
		evalReport string
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
			return serve(cmd.Context(), env, logger(), inst, listen, configFile, withUI, evalReport)
		},
	}
	inst.register(cmd)
	cmd.Flags().StringVar(&listen, "listen", DefaultListen, "address to listen on (loopback by default)")
	cmd.Flags().BoolVar(&withUI, "ui", true, "serve the web dashboard at / and /ui/ (sign in with a user, approver or admin token); --ui=false turns it off")
	cmd.Flags().StringVar(&evalReport, "eval-report", "", "a report written by 'mandate eval --json --out FILE.json', shown on the dashboard's policy page (read at every view)")
	cmd.Flags().StringVar(&configFile, "config", "", "configuration file (YAML): mcp upstreams to serve at /mcp, approvals, notify (webhooks), judge")
	return cmd
}

func serve(ctx context.Context, env Env, log *slog.Logger, inst instanceFlags, listen, configFile string, withUI bool, evalReport string) error {
	file, err := readConfig(configFile, env.Getenv)
	if err != nil {
		return err
	}
	bus := events.New(events.Options{})
	cfg, err := inst.config(env, log)
	if err != nil {
		return err
	}
	cfg.Listen = listen
	cfg.Metrics = true
	if cfg.Approvals, err = approvalOptions(file, bus); err != nil {
		return err
	}
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	tokenPath, created, err := a.EnsureAdminToken(ctx)
	if err != nil {
		return err
	}
	notifier, err := newNotifier(file, bus, a, listen, log)
	if err != nil {
		return err
	}
	srv := server.New(server.Options{Engine: a.Engine, Store: a.Store, Evidence: a.Evidence, Logger: log, Gatherer: a.Registry, MaxArgsBytes: inst.maxArgs, Version: Version(),
		StoreHealth: a.StoreHealth, Events: bus, Webhooks: notifier})
	if withUI {
		if err := mountUI(srv, a, evalReport, log); err != nil {
			return err
		}
	}
	bg, stopBackground := context.WithCancel(ctx)
	defer runApprovals(bg, a, notifier, log)()
	defer stopBackground()
	// A session completed just before a stop may lack its recorded
	// summary (two commits): record what is missing, in the background.
	summaries := make(chan struct{})
	go func() {
		defer close(summaries)
		n, err := a.Engine.RecordMissingSummaries(bg)
		if err != nil {
			log.Error("recording missing session summaries", "err", err)
		}
		if n > 0 {
			log.Info("recorded missing session summaries", "sessions", n)
		}
	}()
	defer func() { stopBackground(); <-summaries }()
	if gw, err := mountMCP(ctx, srv, a, file.MCP, inst.maxArgs, log); err != nil {
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
	if withUI {
		fmt.Fprintf(env.Stdout, "  dashboard: http://%s/ui/\n", ln.Addr())
	}
	fmt.Fprintf(env.Stdout, "  data:   %s\n", inst.data)
	if h, err := a.StoreHealth(ctx); err == nil && h.Backend == "postgres" {
		role := "follower"
		if h.Integrator {
			role = "evidence integrator"
		}
		fmt.Fprintf(env.Stdout, "  store:  postgres %s (replica %s, %s)\n", h.Database, h.Replica, role)
	}
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

// mountUI serves the dashboard at /ui/ on the API's listener, and / sends
// a browser there.
func mountUI(srv *server.Server, a *app.App, evalReport string, log *slog.Logger) error {
	opts := ui.Options{Engine: a.Engine, Tokens: a.Store, Events: srv, Evidence: &ui.Evidence{Log: a.Evidence, Store: a.Store},
		BaselineConfig: a.Engine.BaselineConfig(), EvalReport: evalReport, Logger: log}
	if bs, ok := a.Store.(store.Baselines); ok {
		opts.Baselines = bs
	}
	d, err := ui.New(opts)
	if err != nil {
		return err
	}
	srv.Handle("/ui/", d, false)
	srv.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusSeeOther), false)
	return nil
}
