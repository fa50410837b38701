package eval

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPartBelowCheckoutRoot holds that only the directories below the
// checkout decide the part: a checkout under a directory named heldout is
// dev, its own heldout/ tree is held out.
func TestPartBelowCheckoutRoot(t *testing.T) {
	for _, marker := range rootMarkers {
		t.Run(marker, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "heldout", "review", "mandate")
			dev := filepath.Join(root, "scenarios", "flow.jsonl")
			held := filepath.Join(root, "heldout", "scenarios", "flow.jsonl")
			for _, f := range []string{dev, held, filepath.Join(root, marker)} {
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, []byte("{}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := partOf(dev); got != PartDev {
				t.Errorf("partOf(%s) = %s, want %s", dev, got, PartDev)
			}
			if got := partOf(held); got != PartHeldOut {
				t.Errorf("partOf(%s) = %s, want %s", held, got, PartHeldOut)
			}
		})
	}
}

// TestPartWithoutRoot: with no checkout around the file the path as given
// decides (the temporary directory has neither go.mod nor .git above it).
func TestPartWithoutRoot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	for rel, want := range map[string]string{
		"scenarios/a.jsonl":          PartDev,
		"heldout/scenarios/a.jsonl":  PartHeldOut,
		"testdata/HeldOut-2/a.jsonl": PartHeldOut,
		"held/out.jsonl":             PartDev,
	} {
		if got := partOf(filepath.Join(dir, rel)); got != want {
			t.Errorf("partOf(%s) = %s, want %s", rel, got, want)
		}
	}
}
