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
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/server"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

type benchFlags struct {
	url, token  string
	data        string
	concurrency int
	sessions    int
	duration    time.Duration
	asJSON      bool
	cpuProfile  string
}

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
(every decision persisted with fsync, as in production) and measures that.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd.Context(), env, logger(), f)
		},
	}
	cmd.Flags().StringVar(&f.url, "url", "", "server URL (default: start one in-process)")
	cmd.Flags().StringVar(&f.token, "token", "", "admin or user token for --url (default $MANDATE_TOKEN)")
	cmd.Flags().StringVar(&f.data, "data", "", "data directory for the in-process server (default: a temporary one)")
	cmd.Flags().IntVar(&f.concurrency, "concurrency", 32, "concurrent clients")
	cmd.Flags().IntVar(&f.sessions, "sessions", 64, "sessions the load is spread over")
	cmd.Flags().DurationVar(&f.duration, "duration", 10*time.Second, "how long to drive load")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the load phase to this file (go tool pprof; with the in-process server it covers server and clients)")
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
}

func runBench(ctx context.Context, env Env, log *slog.Logger, f benchFlags) error {
	if f.concurrency < 1 || f.sessions < 1 || f.duration <= 0 {
		return errors.New("--concurrency, --sessions and --duration must be positive")
	}
	base, token := strings.TrimRight(f.url, "/"), f.token
	if token == "" {
		token = env.Getenv("MANDATE_TOKEN")
	}
	where := base
	stats := func() sqlite.Stats { return sqlite.Stats{} }
	if base == "" {
		bs, err := startBenchServer(ctx, log, f.data)
		if err != nil {
			return err
		}
		defer bs.stop()
		base, token, where = bs.url, bs.token, "in-process, fsync on"
		if st, ok := bs.app.Store.(*sqlite.Store); ok {
			stats = st.Stats
		}
	}
	if token == "" {
		return errors.New("--token (or MANDATE_TOKEN) is required with --url")
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: f.concurrency * 2, MaxIdleConnsPerHost: f.concurrency * 2}, Timeout: 30 * time.Second}
	sessions := make([]string, f.sessions)
	for i := range sessions {
		body := fmt.Sprintf(`{"agent_id":"bench-%d","intent":"Fix the failing test in ./pkg/auth and run the tests","working_directory":"/home/dev/project"}`, i%8)
		var resp struct {
			SessionID string `json:"session_id"`
		}
		if err := postJSON(ctx, client, base+"/v1/sessions", token, []byte(body), &resp); err != nil {
			return fmt.Errorf("create bench session: %w", err)
		}
		sessions[i] = resp.SessionID
	}
	payloads := make([][]byte, 0, len(sessions)*len(benchCalls))
	for _, s := range sessions {
		for _, c := range benchCalls {
			payloads = append(payloads, []byte(`{"session_id":"`+s+`",`+c[1:]))
		}
	}

	var (
		next    atomic.Int64
		mu      sync.Mutex
		lat     []time.Duration
		errs    int
		effects = map[string]int{}
		wg      sync.WaitGroup
	)
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	deadline := time.Now().Add(f.duration)
	before := stats()
	start := time.Now()
	for w := 0; w < f.concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			localEff := map[string]int{}
			localErr := 0
			for time.Now().Before(deadline) && ctx.Err() == nil {
				p := payloads[int(next.Add(1))%len(payloads)]
				t0 := time.Now()
				var d struct {
					Effect string `json:"effect"`
				}
				if err := postJSON(ctx, client, base+"/v1/evaluate", token, p, &d); err != nil {
					localErr++
					continue
				}
				local = append(local, time.Since(t0))
				localEff[d.Effect]++
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
		Concurrency: f.concurrency, Sessions: f.sessions, Server: where,
	}
	if len(lat) > 0 {
		rep.MaxMicros = lat[len(lat)-1].Microseconds()
	}
	if rep.Commits = after.Commits - before.Commits; rep.Commits > 0 {
		rep.AvgBatch = float64(after.Changes-before.Changes) / float64(rep.Commits)
	}
	if f.asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(env.Stdout, "server:      %s\n", rep.Server)
	fmt.Fprintf(env.Stdout, "load:        %d clients over %d sessions for %.1fs\n", rep.Concurrency, rep.Sessions, rep.Seconds)
	fmt.Fprintf(env.Stdout, "decisions:   %d (%d errors), %.0f/s\n", rep.Requests, rep.Errors, rep.PerSecond)
	fmt.Fprintf(env.Stdout, "latency:     p50 %dµs  p90 %dµs  p99 %dµs  max %dµs\n", rep.P50Micros, rep.P90Micros, rep.P99Micros, rep.MaxMicros)
	fmt.Fprintf(env.Stdout, "effects:     allow %d  ask %d  deny %d\n", effects["allow"], effects["ask"], effects["deny"])
	if rep.Commits > 0 {
		fmt.Fprintf(env.Stdout, "store:       %d group commits, %.1f changes each\n", rep.Commits, rep.AvgBatch)
	}
	if errs > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d requests failed", errs)}
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
	app   *app.App
	url   string
	token string
	stop  func()
}

// startBenchServer runs a real server (store with fsync, engine, HTTP) on a
// loopback port, so the benchmark measures what production does.
func startBenchServer(ctx context.Context, log *slog.Logger, data string) (*benchServer, error) {
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
	a, err := app.Open(ctx, app.Config{DataDir: data, Logger: log})
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
	hs := &http.Server{Handler: server.New(server.Options{Engine: a.Engine, Logger: log, Evidence: a.Evidence}), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return &benchServer{
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

// minLevel drops records below its level before they reach h.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(as), m.level}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.level}
}
