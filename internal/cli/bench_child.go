package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/cputime"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

// benchWithChild measures the in-process servers with the load coming
// from a child process — this binary's `bench --url …` — so that this
// process's CPU time is the servers' alone: the figure `mandate bench`
// reports as server CPU per decision. It counts from the first
// /v1/evaluate the servers see to the child's exit, so the child's setup
// (a session per --sessions) is left out.
func benchWithChild(ctx context.Context, env Env, f benchFlags, servers []*benchServer, where string, stats func() sqlite.Stats) error {
	decide, err := decideCPU(servers[0])
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary to run the load generator (or give --load-in-process): %w", err)
	}
	args := []string{"bench", "--json", "--concurrency", strconv.Itoa(f.concurrency), "--sessions", strconv.Itoa(f.sessions), "--duration", f.duration.String()}
	for _, bs := range servers {
		args = append(args, "--url", bs.url)
	}
	if f.sticky {
		args = append(args, "--sticky")
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	// The token goes by the environment, not the command line, where any
	// user's ps would show it.
	cmd.Env = append(os.Environ(), "MANDATE_TOKEN="+servers[0].token)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, env.Stderr
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	before := stats()
	runErr := cmd.Run()
	end := cputime.Total()
	after := stats()
	var rep BenchReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		if runErr != nil {
			return fmt.Errorf("load generator (%s bench --url …): %w", exe, runErr)
		}
		return fmt.Errorf("load generator: its report is not JSON: %w", err)
	}
	rep.Server, rep.Sticky = where, f.sticky
	if rep.Commits = after.Commits - before.Commits; rep.Commits > 0 {
		rep.AvgBatch = float64(after.Changes-before.Changes) / float64(rep.Commits)
	}
	var first time.Duration
	for _, bs := range servers {
		if t, ok := bs.meter.started(); ok && (first == 0 || t < first) {
			first = t
		}
	}
	if rep.Requests > 0 && first > 0 {
		rep.ServerCPUMicros = float64((end - first).Microseconds()) / float64(rep.Requests)
		if ps := cmd.ProcessState; ps != nil {
			rep.GeneratorCPUMicros = float64((ps.UserTime() + ps.SystemTime()).Microseconds()) / float64(rep.Requests)
		}
	}
	rep.DecideCPUMicros = decide
	rep.Load = loadAverage()
	var bases []string
	for _, bs := range servers {
		bases = append(bases, bs.url)
	}
	if err := printBench(env, f, rep, bases, nil); err != nil {
		return err
	}
	if rep.Errors > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d requests failed", rep.Errors)}
	}
	if runErr != nil {
		return fmt.Errorf("load generator: %w", runErr)
	}
	return nil
}

// evalMeter notes this process's CPU time at the first /v1/evaluate a
// server answers: where the load phase starts.
type evalMeter struct {
	once  sync.Once
	mu    sync.Mutex
	first time.Duration
}

func (m *evalMeter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/evaluate" {
			m.once.Do(func() {
				m.mu.Lock()
				m.first = cputime.Total()
				m.mu.Unlock()
			})
		}
		h.ServeHTTP(w, r)
	})
}

func (m *evalMeter) started() (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.first, m.first > 0
}

// decideCPU is the deterministic pipeline's CPU per call on the workload's
// calls, with the server's own classifier and policy: the in-process
// decision the server's figure is set beside.
func decideCPU(bs *benchServer) (float64, error) {
	e := bs.app.Engine
	d := &engine.Decider{Classifier: e.Classifier(), Policy: e.Policy()}
	draft, err := mandate.Compile(benchIntent)
	if err != nil {
		return 0, fmt.Errorf("bench intent: %w", err)
	}
	calls := make([]action.Call, 0, len(benchCalls))
	for _, c := range benchCalls {
		var call struct {
			Tool string         `json:"tool"`
			Args map[string]any `json:"args"`
		}
		if err := json.Unmarshal([]byte(c), &call); err != nil {
			return 0, fmt.Errorf("bench call %s: %w", c, err)
		}
		calls = append(calls, action.Call{Tool: call.Tool, Args: call.Args, WorkingDir: benchWorkingDir, HomeDir: "/home/dev"})
	}
	facts := policy.SessionFacts{ID: "bench", Status: "active", Counts: map[string]int{}, Spend: map[string]float64{}}
	const n = 4000
	now := time.Now()
	start := cputime.Total()
	for i := range n {
		if _, err := d.Decide(&engine.Input{Call: calls[i%len(calls)], Mandate: draft.Mandate, Session: facts, Now: now}); err != nil {
			return 0, fmt.Errorf("decide: %w", err)
		}
	}
	return float64((cputime.Total() - start).Microseconds()) / n, nil
}

// loadAverage is the 1-minute load average (Linux), or "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return ""
}
