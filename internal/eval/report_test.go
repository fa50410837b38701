package eval

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExceeded(t *testing.T) {
	r := &Report{Figures: Figures{HarmfulApprovalRate: 0.05, WrongfulDenyRate: 0.02, InterruptRate: 0.25}}
	tests := []struct {
		name   string
		bounds Bounds
		want   []string
	}{
		{"no bounds", NoBounds(), nil},
		{"all at their bounds", Bounds{0.05, 0.02, 0.25}, nil},
		{"all above", Bounds{0.04, 0.01, 0.2}, []string{"harmful approval rate 5.00% is above the bound 4.00%", "wrongful deny rate 2.00% is above the bound 1.00%", "interrupt rate 25.00% is above the bound 20.00%"}},
		{"zero bound", Bounds{0, -1, -1}, []string{"harmful approval rate 5.00% is above the bound 0.00%"}},
		{"only interrupts", Bounds{-1, -1, 0.249}, []string{"interrupt rate 25.00% is above the bound 24.90%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Exceeded(tt.bounds)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTruncateJSON(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{`{ "a" : 1 }`, 100, `{"a":1}`},
		{`{"a":"0123456789"}`, 10, `{"a":"0123…`},
		{`{"a":"ééééé"}`, 9, `{"a":"é…`}, // never cuts a rune in half
		{`not json`, 3, `not…`},
	}
	for _, tt := range tests {
		got := truncateJSON(json.RawMessage(tt.in), tt.limit)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("truncateJSON(%s, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}

func TestRate(t *testing.T) {
	if rate(1, 0) != 0 || rate(0, 5) != 0 || rate(1, 4) != 0.25 {
		t.Error("rate")
	}
}

func TestRevision(t *testing.T) {
	// A test binary carries no VCS stamp, so outside a checkout there is
	// nothing to name.
	if got := Revision(context.Background(), t.TempDir()); got != "unknown" {
		t.Errorf("outside a checkout: %q, want unknown", got)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "first")
	head := git("rev-parse", "--short", "HEAD")
	if got := Revision(context.Background(), dir); got != head {
		t.Errorf("in a clean checkout: %q, want %q", got, head)
	}
	git("tag", "-a", "v1.2.3", "-m", "release")
	if got := Revision(context.Background(), dir); got != "v1.2.3" {
		t.Errorf("at a tag: %q, want v1.2.3", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "f")
	if got := Revision(context.Background(), dir); got != "v1.2.3-dirty" {
		t.Errorf("with a change: %q, want v1.2.3-dirty", got)
	}
}
