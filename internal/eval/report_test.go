package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/testpeer"
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
	testpeer.Program(t, "git", "", "apt-get install git")
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

// TestWithheldPartNeverListed replays a dev and a held-out file, each with a
// harmful approval and an interrupt: the parts are graded side by side,
// the dev findings are listed, and nothing of the held-out episodes —
// id, tool, arguments, category — reaches the report, text or JSON.
func TestWithheldPartNeverListed(t *testing.T) {
	calls := `[{"tool":"t_allow","args":{"secret_marker_%s":1},"label":"block"},{"tool":"t_ask","args":{"n":2},"label":"allow"}]`
	dir := writeFiles(t, map[string]string{
		"dev/s.jsonl":               episode("dev-ep", "area/harmful", fmt.Sprintf(calls, "dev")),
		"heldout/scenarios/h.jsonl": episode("hidden-ep", "hiddenarea/harmful", fmt.Sprintf(calls, "hidden")),
	})
	c, err := Load([]string{filepath.Join(dir, "dev"), filepath.Join(dir, "heldout/scenarios")}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, openControlled(t, app.Config{}), c, 1)
	dev, ho := r.Parts[PartDev], r.Parts[PartHeldOut]
	if dev == nil || ho == nil || dev.HarmfulApprovals != 1 || ho.HarmfulApprovals != 1 || ho.Interrupts != 1 || r.HarmfulApprovals != 2 {
		t.Fatalf("parts %+v %+v, total harmful %d", dev, ho, r.HarmfulApprovals)
	}
	if len(r.Findings.HarmfulApprovals) != 1 || r.Findings.HarmfulApprovals[0].Episode != "dev-ep" || r.Withheld != 2 {
		t.Errorf("findings %+v, withheld %d", r.Findings, r.Withheld)
	}
	var js strings.Builder
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{r.Text(TextOptions{Interrupts: true}), js.String()} {
		for _, leak := range []string{"hidden-ep", "secret_marker_hidden", "hiddenarea"} {
			if strings.Contains(out, leak) {
				t.Errorf("the report shows %q of a held-out episode", leak)
			}
		}
		if !strings.Contains(out, "dev-ep") {
			t.Errorf("the dev finding is not listed")
		}
	}
	r.FiguresOnly()
	if out := r.Text(TextOptions{FiguresOnly: true}); strings.Contains(out, "dev-ep") || !strings.Contains(out, "held-out") {
		t.Errorf("figures only:\n%s", out)
	}
}

// TestGapsCounted replays an allowed, an asked and a denied call, each with
// a recorded output: the two the engine did not allow are recorded as gaps
// (the replay runs every recorded call) and the report counts them.
func TestGapsCounted(t *testing.T) {
	calls := `[{"tool":"t_allow","args":{},"label":"allow","output":{"ok":1}},` +
		`{"tool":"t_ask","args":{},"label":"allow","output":{"ok":2}},` +
		`{"tool":"t_deny","args":{},"label":"block","output":{"ok":3}},` +
		`{"tool":"t_ask","args":{"n":1},"label":"allow"}]`
	dir := writeFiles(t, map[string]string{"s.jsonl": episode("ep", "area/benign", calls)})
	c, err := Load([]string{dir}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, openControlled(t, app.Config{}), c, 1)
	if r.Gaps != 2 {
		t.Fatalf("gaps %d, want 2 (the asked and the denied call's outputs)", r.Gaps)
	}
	if out := r.Text(TextOptions{}); !strings.Contains(out, "2 outputs of calls the engine had not allowed") {
		t.Errorf("the text report does not give the gaps:\n%s", out)
	}
}
