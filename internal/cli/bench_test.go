package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
)

// TestBenchInProcess drives a short load against the in-process server
// from a child process (this test binary, acting as mandate): every request
// is answered, every effect of the workload shows up, the store reports its
// group commits, the server's and the generator's CPU per decision and the
// in-process decision are reported, and the profile is written.
func TestBenchInProcess(t *testing.T) {
	t.Setenv(asMandate, "1")
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	code, out, errs := run(t, "", "bench", "--duration", "300ms", "--concurrency", "4", "--sessions", "4", "--json", "--cpuprofile", prof)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if strings.Contains(errs, "session created") {
		t.Errorf("setup lines leak into the output:\n%s", errs)
	}
	var rep BenchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Requests == 0 || rep.Errors != 0 || rep.Commits == 0 || rep.P50Micros <= 0 {
		t.Errorf("report %+v", rep)
	}
	for _, e := range []string{"allow", "ask", "deny"} {
		if rep.Effects[e] == 0 {
			t.Errorf("no %s decisions in %v", e, rep.Effects)
		}
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("cpu profile: %v", err)
	}
	if rep.ServerCPUMicros <= 0 || rep.GeneratorCPUMicros <= 0 || rep.DecideCPUMicros <= 0 {
		t.Errorf("CPU per decision not reported: server %v, generator %v, decide %v", rep.ServerCPUMicros, rep.GeneratorCPUMicros, rep.DecideCPUMicros)
	}
	code, out, errs = run(t, "", "bench", "--duration", "200ms", "--concurrency", "2", "--sessions", "2")
	if code != 0 || !strings.Contains(out, "server CPU:") || !strings.Contains(out, "µs per decision") {
		t.Errorf("the text report does not give server CPU per decision: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestBenchLoadInProcess: --load-in-process drives the load from the same
// process, without the child, and so reports no server CPU.
func TestBenchLoadInProcess(t *testing.T) {
	code, out, errs := run(t, "", "bench", "--load-in-process", "--duration", "200ms", "--concurrency", "2", "--sessions", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	var rep BenchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Requests == 0 || rep.Errors != 0 || rep.ServerCPUMicros != 0 {
		t.Errorf("report %+v", rep)
	}
}

func TestBenchBadFlags(t *testing.T) {
	t.Setenv(asMandate, "1")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--concurrency", "0"}, "--concurrency"},
		{[]string{"bench", "--url", "http://127.0.0.1:1"}, "--token"},
		{[]string{"bench", "--duration", "100ms", "--cpuprofile", "/nonexistent-dir/cpu.prof"}, "--cpuprofile"},
		{[]string{"bench", "--replicas", "2"}, "--store"},
		{[]string{"bench", "--url", "http://127.0.0.1:1", "--store", "postgres://x@127.0.0.1/x"}, "in-process"},
		{[]string{"bench", "--store", "mysql://x"}, "PostgreSQL address"},
	}
	for _, tt := range tests {
		code, out, errs := run(t, "", tt.args...)
		if code == 0 || !strings.Contains(out+errs, tt.want) {
			t.Errorf("%v: exit %d, output %q, want an error naming %s", tt.args, code, out+errs, tt.want)
		}
	}
}

// TestBenchReplicas drives a short load over two in-process replicas on one
// PostgreSQL database, round-robin: both answer, nothing fails.
func TestBenchReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Setenv(asMandate, "1")
	code, out, errs := run(t, "", "bench", "--store", dsn, "--replicas", "2", "--duration", "300ms", "--concurrency", "4", "--sessions", "4", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	var rep BenchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Requests == 0 || rep.Errors != 0 || len(rep.PerURL) != 2 {
		t.Fatalf("report %+v", rep)
	}
	for u, n := range rep.PerURL {
		if n == 0 {
			t.Errorf("replica %s answered nothing", u)
		}
	}
}
