package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

const corpusDir = "../../scenarios"

// independentCount counts the corpus without the harness's decoder: plain
// JSON, line by line.
func independentCount(t *testing.T) (total Count, categories map[string]*Count) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	categories = map[string]*Count{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, MaxLine)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var ep struct {
				Category string `json:"category"`
				Calls    []struct {
					Label *string `json:"label"`
				} `json:"calls"`
			}
			if err := json.Unmarshal(sc.Bytes(), &ep); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			c := categories[ep.Category]
			if c == nil {
				c = &Count{}
				categories[ep.Category] = c
			}
			for _, cnt := range []*Count{&total, c} {
				cnt.Episodes++
				for _, call := range ep.Calls {
					cnt.Calls++
					switch {
					case call.Label == nil:
						cnt.Unscored++
					case *call.Label == "allow":
						cnt.AllowLabelled++
					case *call.Label == "block":
						cnt.BlockLabelled++
					default:
						t.Fatalf("%s: label %q", f, *call.Label)
					}
				}
				cnt.Scored = cnt.AllowLabelled + cnt.BlockLabelled
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	return total, categories
}

// TestRealCorpusCounts holds the harness's counts of the committed corpus
// to an independent count of the files.
func TestRealCorpusCounts(t *testing.T) {
	c, err := Load([]string{corpusDir}, LoadOptions{})
	if err != nil {
		t.Fatalf("the committed corpus must load cleanly: %v", err)
	}
	s := c.Stats()
	total, categories := independentCount(t)
	if s.Count != total {
		t.Errorf("harness counts %+v, files hold %+v", s.Count, total)
	}
	if got, want := slices.Sorted(maps.Keys(s.Categories)), slices.Sorted(maps.Keys(categories)); !slices.Equal(got, want) {
		t.Fatalf("categories %v, files have %v", got, want)
	}
	for k, cnt := range s.Categories {
		if *cnt != *categories[k] {
			t.Errorf("%s: harness counts %+v, files hold %+v", k, *cnt, *categories[k])
		}
	}
}

// TestRealCorpusReplay replays the committed corpus through the engine with
// the built-in policy and checks the report's invariants: its counts are
// the corpus's, every figure adds up, and every finding is listed. The race
// detector slows the engine, and the transpiled SQLite under it, some
// fifty-fold, so under it every eighth episode is replayed, and so outside
// a full run (testpeer.Full: CI or MANDATE_TEST_SLOW); `mandate eval
// scenarios/` in CI replays them all.
func TestRealCorpusReplay(t *testing.T) {
	c, err := Load([]string{corpusDir}, LoadOptions{})
	if err != nil {
		t.Fatalf("the committed corpus must load cleanly: %v", err)
	}
	if raceDetector || !testpeer.Full() {
		var some []*Episode
		for i, ep := range c.Episodes {
			if i%8 == 0 {
				some = append(some, ep)
			}
		}
		c.Episodes = some
	}
	a, err := Open(context.Background(), app.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r, err := Run(context.Background(), a.Engine, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := c.Stats()
	if r.Count != s.Count {
		t.Errorf("report counts %+v, corpus holds %+v", r.Count, s.Count)
	}
	for k, f := range r.Categories {
		if cnt := s.Categories[k]; cnt == nil || f.Count != *cnt {
			t.Errorf("%s: report counts %+v, corpus holds %+v", k, f.Count, cnt)
		}
	}
	if len(r.Categories) != len(s.Categories) || len(r.Areas) != len(s.Areas) {
		t.Errorf("%d categories and %d areas reported, corpus has %d and %d", len(r.Categories), len(r.Areas), len(s.Categories), len(s.Areas))
	}
	// Areas and categories partition the whole.
	for name, parts := range map[string]map[string]*Figures{"areas": r.Areas, "categories": r.Categories} {
		var sum Figures
		for _, f := range parts {
			sum.Count.Episodes += f.Episodes
			sum.Count.Calls += f.Calls
			sum.Count.Scored += f.Scored
			sum.Count.AllowLabelled += f.AllowLabelled
			sum.Count.BlockLabelled += f.BlockLabelled
			sum.Count.Unscored += f.Unscored
			sum.HarmfulApprovals += f.HarmfulApprovals
			sum.WrongfulDenies += f.WrongfulDenies
			sum.Interrupts += f.Interrupts
			sum.Decisions.Allow += f.Decisions.Allow
			sum.Decisions.Ask += f.Decisions.Ask
			sum.Decisions.Deny += f.Decisions.Deny
		}
		if sum.Count != r.Count || sum.HarmfulApprovals != r.HarmfulApprovals || sum.WrongfulDenies != r.WrongfulDenies ||
			sum.Interrupts != r.Interrupts || sum.Decisions != r.Decisions {
			t.Errorf("%s do not add up to the total: %+v vs %+v", name, sum, r.Figures)
		}
	}
	checkFigures(t, "total", &r.Figures)
	for k, f := range r.Categories {
		checkFigures(t, k, f)
	}
	for k, f := range r.Areas {
		checkFigures(t, k, f)
	}
	if len(r.Findings.HarmfulApprovals) != r.HarmfulApprovals || len(r.Findings.WrongfulDenies) != r.WrongfulDenies ||
		len(r.Findings.Interrupts) != r.Interrupts {
		t.Errorf("findings listed: %d harmful, %d wrongful, %d interrupts; figures say %d, %d, %d",
			len(r.Findings.HarmfulApprovals), len(r.Findings.WrongfulDenies), len(r.Findings.Interrupts),
			r.HarmfulApprovals, r.WrongfulDenies, r.Interrupts)
	}
	for _, f := range r.Findings.HarmfulApprovals {
		if f.Label != "block" || f.Effect != "allow" || len(f.Rules) == 0 || f.Tool == "" {
			t.Errorf("harmful approval finding %+v", f)
		}
	}
	if len(r.Errors) != 0 {
		t.Errorf("the engine failed on %d corpus calls, first: %+v", len(r.Errors), r.Errors[0])
	}
	if r.ScenariosHash != c.Hash || len(r.Files) != len(c.Files) {
		t.Errorf("scenario provenance: %s %v", r.ScenariosHash, r.Files)
	}
	text := r.Text(TextOptions{})
	for _, want := range []string{"harmful approval rate", r.PolicyHash, r.ScenariosHash, Grading, "calls/s"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	t.Logf("harmful %.4f, wrongful deny %.4f, interrupt %.4f; %d calls in %.2fs",
		r.HarmfulApprovalRate, r.WrongfulDenyRate, r.InterruptRate, r.Calls, r.Timing.Seconds)
}

func checkFigures(t *testing.T, name string, f *Figures) {
	t.Helper()
	c := f.Confusion
	if c.Allow.Allow+c.Allow.Ask+c.Allow.Deny != f.AllowLabelled || c.Block.Allow+c.Block.Ask+c.Block.Deny != f.BlockLabelled {
		t.Errorf("%s: confusion %+v does not match %d allow / %d block labels", name, c, f.AllowLabelled, f.BlockLabelled)
	}
	if f.Decisions.Allow+f.Decisions.Ask+f.Decisions.Deny != f.Calls {
		t.Errorf("%s: %+v decisions for %d calls", name, f.Decisions, f.Calls)
	}
	if f.HarmfulApprovals != c.Block.Allow || f.WrongfulDenies != c.Allow.Deny || f.Interrupts != c.Allow.Ask {
		t.Errorf("%s: counts %d/%d/%d against confusion %+v", name, f.HarmfulApprovals, f.WrongfulDenies, f.Interrupts, c)
	}
	if f.HarmfulApprovalRate != rate(f.HarmfulApprovals, f.BlockLabelled) || f.WrongfulDenyRate != rate(f.WrongfulDenies, f.AllowLabelled) ||
		f.InterruptRate != rate(f.Interrupts, f.AllowLabelled) {
		t.Errorf("%s: rates %+v", name, f)
	}
	for _, r := range []float64{f.HarmfulApprovalRate, f.WrongfulDenyRate, f.InterruptRate} {
		if r < 0 || r > 1 {
			t.Errorf("%s: rate %v out of [0, 1]", name, r)
		}
	}
}
