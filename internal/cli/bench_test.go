package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchInProcess drives a short load against the in-process server:
// every request is answered, every effect of the workload shows up, the
// store reports its group commits and the profile is written.
func TestBenchInProcess(t *testing.T) {
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
}

func TestBenchBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--concurrency", "0"}, "--concurrency"},
		{[]string{"bench", "--url", "http://127.0.0.1:1"}, "--token"},
		{[]string{"bench", "--duration", "100ms", "--cpuprofile", "/nonexistent-dir/cpu.prof"}, "--cpuprofile"},
	}
	for _, tt := range tests {
		code, out, errs := run(t, "", tt.args...)
		if code == 0 || !strings.Contains(out+errs, tt.want) {
			t.Errorf("%v: exit %d, output %q, want an error naming %s", tt.args, code, out+errs, tt.want)
		}
	}
}
