package ui_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/eval"
	"github.com/mandate-dev/mandate/internal/ui"
)

// The policy page shows the configured `mandate eval` report: revision,
// policy hash, each part's rates; a missing or malformed file is a clear
// message naming it, never a 500.
func TestPolicyPageEvalReport(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "eval.json")
	f := newFixture(t, func(_ *app.Config, o *ui.Options) { o.EvalReport = report })
	rep := &eval.Report{
		Revision: "v1.2.3-4-gabc<script>", PolicyHash: f.a.Engine.Policy().Hash(),
		Figures: eval.Figures{HarmfulApprovals: 1, HarmfulApprovalRate: 0.0125, WrongfulDenyRate: 0.5, InterruptRate: 0.25},
		Parts: map[string]*eval.Figures{
			eval.PartHeldOut: {HarmfulApprovalRate: 0.03, WrongfulDenyRate: 0.04, InterruptRate: 0.05},
			eval.PartDev:     {HarmfulApprovalRate: 0.0125, WrongfulDenyRate: 0.5, InterruptRate: 0.25, HarmfulApprovals: 1},
		},
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	b.signIn("user")
	for _, tt := range []struct {
		name    string
		content []byte // nil: no file
		want    []string
		not     []string
	}{
		{"missing", nil, []string{"The eval report could not be read", report, "no such file"}, nil},
		{"not JSON", []byte("harmful approvals 1.25%\n"), []string{report, "not a JSON report", "invalid character"}, []string{"<table>\n<thead><tr><th scope=\"col\">Part"}},
		{"other JSON", []byte(`{"calls": 3}`), []string{report, "not a mandate eval report"}, nil},
		{"report", buf.Bytes(), []string{"revision <code>v1.2.3-4-gabc&lt;script&gt;</code>", "the policy in force", "<td>dev</td>", "<td>held-out</td>", "1.25% (1)", "50.00%", "25.00%", "3.00%", "4.00%", "5.00%"}, []string{"v1.2.3-4-gabc<script>", "not the policy in force"}},
	} {
		os.Remove(report)
		if tt.content != nil {
			if err := os.WriteFile(report, tt.content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := b.get("/ui/policy")
		if p.code != 200 {
			t.Errorf("%s: policy page %d", tt.name, p.code)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(p.body, w) {
				t.Errorf("%s: policy page lacks %q", tt.name, w)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(p.body, w) {
				t.Errorf("%s: policy page has %q", tt.name, w)
			}
		}
		if tt.name == "report" && strings.Index(p.body, "<td>dev</td>") > strings.Index(p.body, "<td>held-out</td>") {
			t.Errorf("held-out listed before dev")
		}
	}
	// A report of another policy says so.
	rep.PolicyHash = "sha256:0000"
	buf.Reset()
	rep.WriteJSON(&buf)
	os.WriteFile(report, buf.Bytes(), 0o644)
	if p := b.get("/ui/policy"); !strings.Contains(p.body, "not the policy in force") {
		t.Errorf("a report of another policy is not flagged")
	}
}

// Without a configured report the page says how to configure one.
func TestPolicyPageNoEvalReport(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.signIn("user")
	if p := b.get("/ui/policy"); p.code != 200 || !strings.Contains(p.body, "No eval report configured") || !strings.Contains(p.body, "--eval-report eval.json") {
		t.Errorf("policy page without a report: %d", p.code)
	}
}
