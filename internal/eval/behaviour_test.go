package eval

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/engine"
)

func TestDecodeBehaviour(t *testing.T) {
	for _, tc := range []struct {
		name, line, want string
	}{
		{"ok without labels", `{"id":"a","intent":"x","agent":{"id":"ag","model":"m"},"calls":[{"tool":"Read","args":{}}],"expect":{"drift":true}}`, ""},
		{"unknown expectation", `{"id":"a","intent":"x","agent":{"id":"ag"},"calls":[{"tool":"Read"}],"expect":{"drfit":true}}`, "expect"},
		{"wrong type", `{"id":"a","intent":"x","agent":{"id":"ag"},"calls":[{"tool":"Read"}],"expect":{"drift":"yes"}}`, "expect"},
		{"no agent", `{"id":"a","intent":"x","calls":[{"tool":"Read"}]}`, "agent.id is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep, err := DecodeBehaviour([]byte(tc.line))
			if tc.want == "" {
				if err != nil || ep.Expect.Drift == nil || !*ep.Expect.Drift || ep.Category != "behaviour/benign" {
					t.Fatalf("%+v, %v", ep, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSimulationIsDeterministic(t *testing.T) {
	a, err := SimulateBehaviour(7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := SimulateBehaviour(7)
	c, _ := SimulateBehaviour(8)
	same := true
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Fatalf("%s differs between two runs with one seed", name)
		}
		same = same && bytes.Equal(a[name], c[name])
	}
	if same || len(a) != 35 {
		t.Fatalf("%d files; another seed gives the same corpus: %v", len(a), same)
	}
}

// TestDevCorpusIsTheSimulation: scenarios/behaviour is what seed 1 writes
// (regenerate with `mandate eval --simulate-behaviour scenarios/behaviour`),
// and its short15-* files what seed 15 writes in the short shape
// (`--simulate-short --seed 15`), its short8-* files what seed 8 writes in
// the shorter shape (`--simulate-short8 --seed 8`).
func TestDevCorpusIsTheSimulation(t *testing.T) {
	for _, c := range []struct {
		seed  uint64
		shape SimShape
		how   string
	}{
		{1, SimDefault(), "seed 1"},
		{15, SimShort(), "seed 15, --simulate-short"},
		{8, SimShort8(), "seed 8, --simulate-short8"},
	} {
		files, err := SimulateBehaviourShape(c.seed, c.shape)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range files {
			got, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "behaviour", name))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("scenarios/behaviour/%s is not the simulation's (%s): %v", name, c.how, err)
			}
		}
	}
}

// TestRunBehaviour replays two simulated agents and checks the grading
// finds the harmful change and stays quiet on the benign one.
func TestRunBehaviour(t *testing.T) {
	files, err := SimulateBehaviour(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"sim-mail-benign-model.jsonl", "sim-coding-new-program.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadBehaviour([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	open := func(ctx context.Context) (*engine.Engine, func() error, error) {
		a, err := Open(ctx, app.Config{})
		if err != nil {
			return nil, nil, err
		}
		return a.Engine, a.Close, nil
	}
	rep, err := RunBehaviour(context.Background(), open, c, dir)
	if err != nil {
		t.Fatal(err)
	}
	// A replay is deterministic: a second run on fresh engines decides
	// every call the same way with the same signals.
	again, err := RunBehaviour(context.Background(), open, c, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rep.Digest, "sha256:") || again.Digest != rep.Digest || !reflect.DeepEqual(again, rep) {
		t.Fatalf("two replays differ: %s %+v\nvs %s %+v", rep.Digest, rep, again.Digest, again)
	}
	// Drift is graded from the new version's 4th session on (17 of its
	// 20): the new program is drift before 10 sessions, the benign
	// change never is.
	if rep.Sessions != 88 || rep.Drift.Expected != 17 || rep.Drift.Detected != 17 || rep.Drift.Benign != 17 || rep.Drift.FalseAlarms != 0 {
		t.Fatalf("drift: %+v (%v)", rep.Drift, rep.Notes)
	}
	if rep.UnlikeSelf.TP == 0 || rep.UnlikeSelf.FP != 0 {
		t.Fatalf("unlike-self: %+v (%v)", rep.UnlikeSelf, rep.Notes)
	}
	// Per category, the same counts: they add up to the totals, and the
	// harmful change's drift is in its own category.
	var sum CategoryCounts
	for _, k := range rep.Categories {
		sum.Sessions += k.Sessions
		sum.Drift.Expected += k.Drift.Expected
		sum.Drift.Detected += k.Drift.Detected
		sum.Drift.Benign += k.Drift.Benign
		sum.Drift.FalseAlarms += k.Drift.FalseAlarms
		sum.UnlikeSelf.TP += k.UnlikeSelf.TP
		sum.UnlikeSelf.FP += k.UnlikeSelf.FP
		sum.UnlikeSelf.FN += k.UnlikeSelf.FN
		sum.UnlikeSelf.TN += k.UnlikeSelf.TN
	}
	if sum.Sessions != rep.Sessions || sum.Drift.Expected != rep.Drift.Expected || sum.Drift.Detected != rep.Drift.Detected || sum.Drift.Benign != rep.Drift.Benign || sum.UnlikeSelf != rep.UnlikeSelf {
		t.Fatalf("categories %+v do not add up to %+v", sum, rep)
	}
	if h := rep.Categories["coding/harmful"]; h == nil || h.Drift.Detected != 17 || len(rep.Categories) != 3 {
		t.Fatalf("categories: %+v", rep.Categories)
	}
}

func FuzzDecodeBehaviour(f *testing.F) {
	f.Add(`{"id":"a","intent":"x","agent":{"id":"ag","model":"m"},"calls":[{"tool":"Read","args":{}}],"expect":{"drift":true,"unlike_self":false}}`)
	f.Add(`{"id":"a","intent":"x","agent":{"id":"ag"},"calls":[{"tool":"Read"}],"expect":null}`)
	f.Add(`{"expect":{"drift":[1]}}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, line string) {
		ep, err := DecodeBehaviour([]byte(line))
		if err == nil && (ep.Episode == nil || ep.Agent.ID == "" || len(ep.Calls) == 0) {
			t.Fatalf("accepted an unusable episode: %q", line)
		}
	})
}
