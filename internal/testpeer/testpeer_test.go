package testpeer

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMissingPeer runs the helper in a child test binary, under CI and not,
// and checks that a missing peer fails under CI and skips otherwise.
func TestMissingPeer(t *testing.T) {
	if os.Getenv("TESTPEER_CHILD") != "" {
		Env(t, "TESTPEER_SURELY_UNSET_DSN", "start the peer")
		t.Fatal("Env returned for a missing peer")
	}
	for _, c := range []struct {
		ci       string
		wantFail bool
	}{{"true", true}, {"", false}, {"false", false}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingPeer$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTPEER_CHILD=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		failed := err != nil
		if failed != c.wantFail {
			t.Errorf("CI=%q: failed=%v, want %v\n%s", c.ci, failed, c.wantFail, out)
		}
		if !strings.Contains(string(out), "TESTPEER_SURELY_UNSET_DSN is not set: start the peer") {
			t.Errorf("CI=%q: the output does not say what is missing:\n%s", c.ci, out)
		}
	}
}

func TestEnvSet(t *testing.T) {
	t.Setenv("TESTPEER_DSN", "postgres://x")
	if got := Env(t, "TESTPEER_DSN", "x"); got != "postgres://x" {
		t.Fatalf("Env = %q", got)
	}
}

func TestProgramFound(t *testing.T) {
	if p := Program(t, "go", "", "install Go"); p == "" {
		t.Fatal("go not found, yet the test runs")
	}
}

// TestSlow runs a slow test in a child test binary with and without CI,
// MANDATE_TEST_SLOW and -short, and checks when it runs.
func TestSlow(t *testing.T) {
	if os.Getenv("TESTPEER_CHILD") != "" {
		Slow(t)
		if got := Size(2, 1); got != 2 {
			t.Fatalf("Size(2, 1) = %d in a full run", got)
		}
		t.Log("TESTPEER_RAN")
		return
	}
	for _, c := range []struct {
		ci, slow string
		short    bool
		wantRun  bool
	}{
		{"", "", false, false},
		{"true", "", false, true},
		{"", "1", false, true},
		{"", "0", false, false},
		{"true", "", true, false},
		{"", "1", true, false},
	} {
		args := []string{"-test.run=^TestSlow$", "-test.v"}
		if c.short {
			args = append(args, "-test.short")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "TESTPEER_CHILD=1", "CI="+c.ci, SlowEnv+"="+c.slow)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("CI=%q %s=%q short=%v: %v\n%s", c.ci, SlowEnv, c.slow, c.short, err, out)
			continue
		}
		if ran := strings.Contains(string(out), "TESTPEER_RAN"); ran != c.wantRun {
			t.Errorf("CI=%q %s=%q short=%v: ran=%v, want %v\n%s", c.ci, SlowEnv, c.slow, c.short, ran, c.wantRun, out)
		}
	}
}
