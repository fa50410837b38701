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
