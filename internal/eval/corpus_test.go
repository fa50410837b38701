package eval

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// episode returns a valid scenario line with the given id, category and
// calls (a JSON array).
func episode(id, category, calls string) string {
	return `{"id":"` + id + `","category":"` + category + `","intent":"do the task","agent":{"id":"agent-1"},"calls":` + calls + `}`
}

// writeFiles creates files (name → content) in a new directory.
func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoad(t *testing.T) {
	call := `[{"tool":"t","label":"allow"}]`
	good := episode("a-1", "a/benign", call) + "\n\n" + episode("a-2", "a/harmful", call) + "\r\n"
	tests := []struct {
		name     string
		files    map[string]string
		skipBad  bool
		wantErr  []string // each must appear in the error
		episodes int
		skipped  []string // positions of skipped lines, "file:line" relative to the dir
	}{
		{name: "blank lines and CRLF", files: map[string]string{"a.jsonl": good}, episodes: 2},
		{name: "other files and subdirectories are not read", files: map[string]string{
			"a.jsonl": good, "notes.md": "not json", "sub/b.jsonl": "not json either",
		}, episodes: 2},
		{
			name: "every bad line is reported with file and line",
			files: map[string]string{
				"a.jsonl": good + "{broken\n",
				"b.jsonl": episode("b-1", "b/benign", `[{"tool":"t"}]`) + "\n" + episode("b-2", "b/benign", call) + "\n",
			},
			wantErr: []string{"2 unusable scenario line(s)", "a.jsonl:4: invalid JSON", "b.jsonl:1: calls[0]: label is required"},
		},
		{
			name:    "skip-bad leaves them out and lists them",
			files:   map[string]string{"a.jsonl": good + "{broken\n", "b.jsonl": episode("b-1", "b/benign", `[{"tool":"t"}]`) + "\n" + episode("b-2", "b/benign", call)},
			skipBad: true, episodes: 3, skipped: []string{"a.jsonl:4", "b.jsonl:1"},
		},
		{
			name:    "duplicate ids across files",
			files:   map[string]string{"a.jsonl": good, "b.jsonl": episode("a-2", "b/benign", call)},
			wantErr: []string{`b.jsonl:1: id "a-2" is already used at`, "a.jsonl:3"},
		},
		{name: "a directory without scenario files", files: map[string]string{"x.txt": "x"}, wantErr: []string{"no *.jsonl files"}},
		{name: "only bad lines, skipped", files: map[string]string{"a.jsonl": "{\n"}, skipBad: true, wantErr: []string{"no episodes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			c, err := Load([]string{dir}, LoadOptions{SkipBad: tt.skipBad})
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Episodes) != tt.episodes {
				t.Errorf("%d episodes, want %d", len(c.Episodes), tt.episodes)
			}
			var skipped []string
			for _, s := range c.Skipped {
				rel, _ := filepath.Rel(dir, s.File)
				skipped = append(skipped, rel+":"+strconv.Itoa(s.Line))
			}
			if strings.Join(skipped, ",") != strings.Join(tt.skipped, ",") {
				t.Errorf("skipped %v, want %v", skipped, tt.skipped)
			}
		})
	}
}

func TestLoadBadLinesError(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.jsonl": "{\n"})
	_, err := Load([]string{dir}, LoadOptions{})
	var bad *BadLinesError
	if !errors.As(err, &bad) || len(bad.Lines) != 1 || bad.Lines[0].Line != 1 {
		t.Fatalf("err = %#v, want a BadLinesError for line 1", err)
	}
}

func TestLoadOrderAndHash(t *testing.T) {
	b := episode("b-1", "b/benign", `[{"tool":"t","label":"allow"}]`) + "\n"
	a := episode("a-1", "a/benign", `[{"tool":"t","label":"allow"}]`) + "\n"
	dir := writeFiles(t, map[string]string{"b.jsonl": b, "a.jsonl": a})
	// Given out of order, twice, and once as a directory: each file once,
	// sorted by path.
	c, err := Load([]string{filepath.Join(dir, "b.jsonl"), dir, filepath.Join(dir, ".", "a.jsonl")}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 2 || filepath.Base(c.Files[0]) != "a.jsonl" || filepath.Base(c.Files[1]) != "b.jsonl" {
		t.Fatalf("files = %v", c.Files)
	}
	if c.Episodes[0].ID != "a-1" || c.Episodes[1].ID != "b-1" {
		t.Errorf("episodes out of file order: %s, %s", c.Episodes[0].ID, c.Episodes[1].ID)
	}
	sum := sha256.Sum256([]byte(a + b))
	if want := "sha256:" + hex.EncodeToString(sum[:]); c.Hash != want {
		t.Errorf("hash = %s, want %s", c.Hash, want)
	}
	if pos := c.Episodes[1].Source; filepath.Base(pos.File) != "b.jsonl" || pos.Line != 1 {
		t.Errorf("source = %v", pos)
	}
}

func TestLoadMissingPath(t *testing.T) {
	if _, err := Load([]string{filepath.Join(t.TempDir(), "nope.jsonl")}, LoadOptions{}); err == nil {
		t.Fatal("no error for a missing file")
	}
	if _, err := Load(nil, LoadOptions{}); err == nil {
		t.Fatal("no error for no paths")
	}
}
