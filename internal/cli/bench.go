package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/redact"
	"github.com/mandate-dev/mandate/internal/server"
	"github.com/mandate-dev/mandate/internal/store/postgres"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

type benchFlags struct {
	urls        []string
	token       string
	data        string
	store       string
	replicas    int
	sticky      bool
	concurrency int
	sessions    int
	duration    time.Duration
	asJSON      bool
	cpuProfile  string
	// loadInProcess drives the load from this process instead of a child
	// process: the old way, where the server's CPU cannot be told apart
	// from the generator's.
	loadInProcess bool
}

// benchIntent and benchWorkingDir are every bench session's.
const (
	benchIntent     = "Fix the failing test in ./pkg/auth and run the tests"
	benchWorkingDir = "/home/dev/project"
)

// benchCalls is the workload: a coding agent's ordinary mix, with some
// calls the built-in pack refuses, so every effect's path is exercised.
var benchCalls = []string{
	`{"tool":"Read","args":{"file_path":"pkg/auth/token.go"}}`,
	`{"tool":"Grep","args":{"pattern":"func Verify","path":"pkg"}}`,
	`{"tool":"Edit","args":{"file_path":"pkg/auth/token.go","old_string":"return nil","new_string":"return err"}}`,
	`{"tool":"Bash","args":{"command":"go test ./pkg/auth/... 2>&1 | tail -20","description":"run tests"}}`,
	`{"tool":"Bash","args":{"command":"git status && git diff --stat"}}`,
	`{"tool":"Read","args":{"file_path":".env"}}`,
	`{"tool":"Bash","args":{"command":"rm -rf / --no-preserve-root"}}`,
	`{"tool":"mcp__gmail__send_email","args":{"to":"eve@competitor.example","subject":"keys","body":"see attached"}}`,
}

func newBenchCmd(env Env, logger func() *slog.Logger) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Load-test /v1/evaluate over loopback HTTP and report throughput and latency",
		Long: `Drive POST /v1/evaluate with concurrent clients and report throughput, p50 and p99.
Without --url it starts its own server on a loopback port with a fresh data directory
(every decision persisted with fsync, as in production) and measures that; with
--store postgres://… that server uses the shared store, and --replicas N starts N of
them on it (each with its own data directory and the same keys, as a deployment).

Several --url (replicas behind no load balancer, or several load balancers) spread
the requests round-robin, so one session's calls land on every replica in turn — the
worst case for the replicas' caches; --sticky keeps each session on one replica, as a
load balancer with session affinity would. The report gives each URL's share.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd.Context(), env, logger(), f)
		},
	}
	cmd.Flags().StringArrayVar(&f.urls, "url", nil, "server URL (repeatable: replicas; default: start one in-process)")
	cmd.Flags().StringVar(&f.store, "store", "", "in-process servers use this shared store (postgres://…)")
	cmd.Flags().IntVar(&f.replicas, "replicas", 1, "in-process servers to start on --store")
	cmd.Flags().BoolVar(&f.sticky, "sticky", false, "send each session's calls to one URL (session affinity) instead of round-robin")
	cmd.Flags().StringVar(&f.token, "token", "", "admin or user token for --url (default $MANDATE_TOKEN)")
	cmd.Flags().StringVar(&f.data, "data", "", "data directory for the in-process server (default: a temporary one)")
	cmd.Flags().IntVar(&f.concurrency, "concurrency", 32, "concurrent clients")
	cmd.Flags().IntVar(&f.sessions, "sessions", 64, "sessions the load is spread over")
	cmd.Flags().DurationVar(&f.duration, "duration", 10*time.Second, "how long to drive load")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the load phase to this file (go tool pprof; with the in-process server it covers the server alone, the load coming from a child process)")
	cmd.Flags().BoolVar(&f.loadInProcess, "load-in-process", false, "with the in-process server, drive the load from this process too (no child process; server CPU per decision is then not reported)")
	return cmd
}

// BenchReport is what `mandate bench` measured.
type BenchReport struct {
	Requests  int            `json:"requests"`
	Errors    int            `json:"errors"`
	Seconds   float64        `json:"seconds"`
	PerSecond float64        `json:"decisions_per_second"`
	P50Micros int64          `json:"p50_us"`
	P90Micros int64          `json:"p90_us"`
	P99Micros int64          `json:"p99_us"`
	MaxMicros int64          `json:"max_us"`
	Effects   map[string]int `json:"effects"`
	// Commits and AvgBatch are the store's group commits during the run
	// (in-process server only).
	Commits     uint64  `json:"commits,omitempty"`
	AvgBatch    float64 `json:"avg_batch,omitempty"`
	Concurrency int     `json:"concurrency"`
	Sessions    int     `json:"sessions"`
	Server      string  `json:"server"`
	// PerURL counts answered requests per server URL (several --url or
	// --replicas).
	PerURL map[string]int `json:"per_url,omitempty"`
	Sticky bool           `json:"sticky,omitempty"`
	// ServerCPUMicros is the in-process server's CPU (user + system, all
	// its threads) per decision while it served the load, which came from
	// a child process; GeneratorCPUMicros is that child's CPU per decision.
	ServerCPUMicros    float64 `json:"server_cpu_us_per_decision,omitempty"`
	GeneratorCPUMicros float64 `json:"generator_cpu_us_per_decision,omitempty"`
	// DecideCPUMicros is the in-process decision alone (classify, hold
	// against the mandate, policy; no HTTP, no store) on the same calls,
	// in CPU per call, measured before the load.
	DecideCPUMicros float64 `json:"decide_cpu_us_per_call,omitempty"`
	// Load is the machine's 1-minute load average when the run ended, for
	// reading the figures (Linux).
	Load string `json:"load_average,omitempty"`
}

func runBench(ctx context.Context, env Env, log *slog.Logger, f benchFlags) error {
	if f.concurrency < 1 || f.sessions < 1 || f.duration <= 0 || f.replicas < 1 {
		return errors.New("--concurrency, --sessions, --duration and --replicas must be positive")
	}
	if f.replicas > 1 && f.store == "" {
		return errors.New("--replicas needs --store postgres://…: replicas share a database")
	}
	if len(f.urls) > 0 && (f.store != "" || f.data != "") {
		return errors.New("--store and --data are for the in-process server; with --url the servers have their own")
	}
	var bases []string
	for _, u := range f.urls {
		bases = append(bases, strings.TrimRight(u, "/"))
	}
	token := orEnv(env, f.token, "MANDATE_TOKEN", "")
	where := strings.Join(bases, ", ")
	stats := func() sqlite.Stats { return sqlite.Stats{} }
	if len(bases) == 0 {
		addr, err := app.StoreAddress(f.store, nil)
		if err != nil {
			return err
		}
		servers, err := startBenchServers(ctx, log, f.data, addr, f.replicas)
		if err != nil {
			return err
		}
		defer func() {
			for _, bs := range servers {
				bs.stop()
			}
		}()
		token, where = servers[0].token, "in-process, fsync on"
		if addr != "" {
			where = fmt.Sprintf("in-process, %d replica(s) on postgres %s", f.replicas, servers[0].app.Store.(*postgres.Store).Where())
		}
		for _, bs := range servers {
			bases = append(bases, bs.url)
		}
		if st, ok := servers[0].app.Store.(*sqlite.Store); ok {
			stats = st.Stats
		} else if st, ok := servers[0].app.Store.(*postgres.Store); ok && len(servers) == 1 {
			stats = func() sqlite.Stats { ps := st.Stats(); return sqlite.Stats{Commits: ps.Commits, Changes: ps.Changes} }
		}
		if !f.loadInProcess {
			return benchWithChild(ctx, env, f, servers, where, stats)
		}
	}
	base := bases[0]
	if token == "" {
		return errors.New("--token (or MANDATE_TOKEN) is required with --url")
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: f.concurrency * 2, MaxIdleConnsPerHost: f.concurrency * 2}, Timeout: 30 * time.Second}
	sessions := make([]string, f.sessions)
	for i := range sessions {
		body := fmt.Sprintf(`{"agent_id":"bench-%d","intent":%q,"working_directory":%q}`, i%8, benchIntent, benchWorkingDir)
		var resp struct {
			SessionID string `json:"session_id"`
		}
		if err := postJSON(ctx, client, base+"/v1/sessions", token, []byte(body), &resp); err != nil {
			return fmt.Errorf("create bench session: %w", err)
		}
		sessions[i] = resp.SessionID
	}
	payloads := make([][]byte, 0, len(sessions)*len(benchCalls))
	home := make([]int, 0, cap(payloads)) // the URL a sticky session's calls go to
	for i, s := range sessions {
		for _, c := range benchCalls {
			payloads = append(payloads, []byte(`{"session_id":"`+s+`",`+c[1:]))
			home = append(home, i%len(bases))
		}
	}
	perURL := make([]atomic.Int64, len(bases))

	var (
		next    atomic.Int64
		mu      sync.Mutex
		lat     []time.Duration
		errs    int
		effects = map[string]int{}
		wg      sync.WaitGroup
	)
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	deadline := time.Now().Add(f.duration)
	prog := startProgress(env.Stderr, "bench", 0, "requests")
	defer prog.Stop()
	before := stats()
	start := time.Now()
	for w := 0; w < f.concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			localEff := map[string]int{}
			localErr := 0
			// Until the deadline, and at least once through the workload's
			// calls, so every kind of call is measured however slow the
			// machine.
			for (time.Now().Before(deadline) || next.Load() < int64(len(payloads))) && ctx.Err() == nil {
				n := int(next.Add(1))
				p := payloads[n%len(payloads)]
				u := n % len(bases)
				if f.sticky {
					u = home[n%len(payloads)]
				}
				t0 := time.Now()
				var d struct {
					Effect string `json:"effect"`
				}
				if err := postJSON(ctx, client, bases[u]+"/v1/evaluate", token, p, &d); err != nil {
					localErr++
					continue
				}
				perURL[u].Add(1)
				local = append(local, time.Since(t0))
				localEff[d.Effect]++
				prog.Add(1)
			}
			mu.Lock()
			lat = append(lat, local...)
			errs += localErr
			for k, v := range localEff {
				effects[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	prog.Stop()
	elapsed := time.Since(start)
	after := stats()
	slices.Sort(lat)
	pct := func(q float64) int64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()
	}
	rep := BenchReport{
		Requests: len(lat), Errors: errs, Seconds: elapsed.Seconds(), PerSecond: float64(len(lat)) / elapsed.Seconds(),
		P50Micros: pct(0.50), P90Micros: pct(0.90), P99Micros: pct(0.99), Effects: effects,
		Concurrency: f.concurrency, Sessions: f.sessions, Server: where, Sticky: f.sticky,
	}
	if len(bases) > 1 {
		rep.PerURL = map[string]int{}
		for i, b := range bases {
			rep.PerURL[b] = int(perURL[i].Load())
		}
	}
	if len(lat) > 0 {
		rep.MaxMicros = lat[len(lat)-1].Microseconds()
	}
	if rep.Commits = after.Commits - before.Commits; rep.Commits > 0 {
		rep.AvgBatch = float64(after.Changes-before.Changes) / float64(rep.Commits)
	}
	rep.Load = loadAverage()
	if err := printBench(env, f, rep, bases, perURL); err != nil {
		return err
	}
	if errs > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d requests failed", errs)}
	}
	return nil
}

func printBench(env Env, f benchFlags, rep BenchReport, bases []string, perURL []atomic.Int64) error {
	effects := rep.Effects
	if f.asJSON {
		return writeJSON(env.Stdout, rep)
	}
	fmt.Fprintf(env.Stdout, "server:      %s\n", rep.Server)
	fmt.Fprintf(env.Stdout, "load:        %d clients over %d sessions for %.1fs\n", rep.Concurrency, rep.Sessions, rep.Seconds)
	fmt.Fprintf(env.Stdout, "decisions:   %d (%d errors), %.0f/s\n", rep.Requests, rep.Errors, rep.PerSecond)
	fmt.Fprintf(env.Stdout, "latency:     p50 %dµs  p90 %dµs  p99 %dµs  max %dµs\n", rep.P50Micros, rep.P90Micros, rep.P99Micros, rep.MaxMicros)
	fmt.Fprintf(env.Stdout, "effects:     allow %d  ask %d  deny %d\n", effects["allow"], effects["ask"], effects["deny"])
	if rep.Commits > 0 {
		fmt.Fprintf(env.Stdout, "store:       %d group commits, %.1f changes each\n", rep.Commits, rep.AvgBatch)
	}
	if len(bases) > 1 {
		spread := "round-robin per request"
		if f.sticky {
			spread = "each session on one replica"
		}
		fmt.Fprintf(env.Stdout, "replicas:    %d, %s:", len(bases), spread)
		for i, b := range bases {
			n := int64(rep.PerURL[b])
			if perURL != nil {
				n = perURL[i].Load()
			}
			fmt.Fprintf(env.Stdout, " %s %d", strings.TrimPrefix(b, "http://"), n)
		}
		fmt.Fprintln(env.Stdout)
	}
	if rep.ServerCPUMicros > 0 {
		fmt.Fprintf(env.Stdout, "server CPU:  %.0fµs per decision (user+sys of the server process while it served the load; the load generator, a child process, used %.0fµs per decision)\n", rep.ServerCPUMicros, rep.GeneratorCPUMicros)
	}
	if rep.DecideCPUMicros > 0 {
		fmt.Fprintf(env.Stdout, "decide:      %.1fµs CPU per call in process (classify + mandate + policy on the same calls, no HTTP or store)\n", rep.DecideCPUMicros)
	}
	if rep.Load != "" {
		fmt.Fprintf(env.Stdout, "machine:     load average %s at the end\n", rep.Load)
	}
	return nil
}

func postJSON(ctx context.Context, c *http.Client, url, token string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, bytes.TrimSpace(b))
	}
	return json.Unmarshal(b, out)
}

type benchServer struct {
	meter *evalMeter
	dir   string
	app   *app.App
	url   string
	token string
	stop  func()
}

// startBenchServer runs a real server (store with fsync, engine, HTTP) on a
// loopback port, so the benchmark measures what production does.
// startBenchServers starts n servers: one on the embedded store (n = 1, no
// shared store), or n replicas on the shared store, each with its own data
// directory holding copies of the first one's keys.
func startBenchServers(ctx context.Context, log *slog.Logger, data, shared string, n int) ([]*benchServer, error) {
	var out []*benchServer
	stopAll := func() {
		for _, bs := range out {
			bs.stop()
		}
	}
	for i := range n {
		dir := data
		if i > 0 {
			d, err := os.MkdirTemp("", "mandate-bench-replica-")
			if err != nil {
				stopAll()
				return nil, err
			}
			for _, f := range []string{evidence.KeyFile, redact.KeyFile, app.AdminTokenFile} {
				b, err := os.ReadFile(filepath.Join(out[0].dir, f))
				if err == nil {
					err = os.WriteFile(filepath.Join(d, f), b, 0o600)
				}
				if err != nil {
					os.RemoveAll(d)
					stopAll()
					return nil, err
				}
			}
			dir = d
		}
		bs, err := startBenchServer(ctx, log, dir, shared)
		if err != nil {
			stopAll()
			return nil, err
		}
		if i > 0 && data == "" {
			stop := bs.stop
			bs.stop = func() { stop(); os.RemoveAll(dir) }
		}
		out = append(out, bs)
	}
	return out, nil
}

func startBenchServer(ctx context.Context, log *slog.Logger, data, shared string) (*benchServer, error) {
	cleanup := func() {}
	if data == "" {
		dir, err := os.MkdirTemp("", "mandate-bench-")
		if err != nil {
			return nil, err
		}
		data = dir
		cleanup = func() { os.RemoveAll(dir) }
	}
	// The setup (a session per client) would print a line per session at
	// info level and bury the report; the server's warnings still show.
	if !log.Enabled(ctx, slog.LevelDebug) {
		log = slog.New(minLevel{log.Handler(), slog.LevelWarn})
	}
	a, err := app.Open(ctx, app.Config{DataDir: data, Store: shared, Logger: log})
	if err != nil {
		cleanup()
		return nil, err
	}
	fail := func(err error) (*benchServer, error) {
		a.Close()
		cleanup()
		return nil, err
	}
	path, _, err := a.EnsureAdminToken(ctx)
	if err != nil {
		return fail(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	meter := &evalMeter{}
	hs := &http.Server{Handler: meter.wrap(server.New(server.Options{Engine: a.Engine, Store: a.Store, Logger: log, Evidence: a.Evidence})), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return &benchServer{
		meter: meter,
		dir:   data,
		app:   a,
		url:   "http://" + ln.Addr().String(),
		token: strings.TrimSpace(string(b)),
		stop: func() {
			hs.Close()
			a.Close()
			cleanup()
		},
	}, nil
}

// startCPUProfile profiles the CPU into the file at path until stop is
// called; an empty path profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	pf, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		pf.Close()
	}, nil
}
