package eval

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecode holds the episode decoder total: any line either decodes into
// an episode the replay can use, or is refused with an error — never a
// panic, never a half-valid episode.
func FuzzDecode(f *testing.F) {
	f.Add(minimal)
	f.Add(`{"id":"e","category":"a/harmful","intent":"x","agent":{"id":"a"},"subagents":[{"name":"s","intent":"y"}],` +
		`"tools":[{"name":"t","parameters":{"type":"object"},"annotations":{"readOnlyHint":false}}],"context":{"working_directory":"/w"},` +
		`"calls":[{"tool":"t","subagent":"s","args":{"a":[1,{"b":null}]},"output":"\u00e9","label":null,"why":"w"}],"meta":{"x":1}}`)
	f.Add(`{"id":"e","category":"a/benign","mandate":{"allow":["send"],"scope":{"recipients":["bob@example.com"]}},"agent":{"id":"a"},"calls":[{"tool":"t","label":"block"}]}`)
	f.Add(`{"id":"e","category":"a/benign","intent":"x","agent":{"id":"a"},"calls":[{"tool":"t","label":"allow"}]} {}`)
	f.Add(`null`)
	f.Add(`{"calls":[{}]}`)
	// The shortest real line of each file, so mutations start from
	// realistic shapes; long seeds make the fuzzer spend its time
	// minimising.
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.jsonl"))
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			f.Fatal(err)
		}
		shortest := ""
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, MaxLine)
		for sc.Scan() {
			if l := sc.Text(); shortest == "" || len(l) < len(shortest) {
				shortest = l
			}
		}
		fh.Close()
		if len(shortest) <= 2048 {
			f.Add(shortest)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		e, err := Decode([]byte(line))
		if err != nil {
			if e != nil {
				t.Fatal("an episode and an error")
			}
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if strings.TrimSpace(e.ID) == "" || e.Agent.ID == "" || len(e.Calls) == 0 {
			t.Fatalf("accepted an unusable episode: %+v", e)
		}
		if checkCategory(e.Category) != nil || e.Area() == "" {
			t.Fatalf("accepted category %q", e.Category)
		}
		if strings.TrimSpace(e.Intent) == "" && e.Mandate == nil {
			t.Fatal("accepted an episode with neither intent nor mandate")
		}
		if e.WorkingDir != "" && !filepath.IsAbs(e.WorkingDir) {
			t.Fatalf("accepted working directory %q", e.WorkingDir)
		}
		declared := map[string]bool{}
		for _, s := range e.Subagents {
			declared[s.Name] = true
		}
		for i, c := range e.Calls {
			if c.Tool == "" || len(c.Args) == 0 || c.Args[0] != '{' {
				t.Fatalf("calls[%d] accepted as %+v", i, c)
			}
			if c.Label != LabelAllow && c.Label != LabelBlock && c.Label != Unscored {
				t.Fatalf("calls[%d]: label %q", i, c.Label)
			}
			if c.Subagent != "" && !declared[c.Subagent] {
				t.Fatalf("calls[%d]: undeclared sub-agent %q", i, c.Subagent)
			}
			if c.Output != nil && isNull(c.Output) {
				t.Fatalf("calls[%d]: null output kept", i)
			}
		}
		for _, td := range e.Tools {
			if strings.TrimSpace(td.Name) == "" {
				t.Fatal("accepted a tool without a name")
			}
		}
	})
}
