package security

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/cli"
)

// Class: a bundle that leaves records out (issue 10.5). A session's bundle
// ends with its head, committed in the log at export, which lists every
// record the session had; whoever holds the bundle and drops a record — the
// last decision, the last mandate version, the status record, an
// observation, a tool pin or the change that broke one, the head itself — gets a bundle that `mandate evidence
// verify FILE --key KEY` refuses, naming what is missing.

// bundleRecord is one entry of a bundle as the cases see it.
type bundleRecord struct {
	raw   json.RawMessage
	index uint64
	typ   string
	// content is the record's content, for picking which to drop.
	content map[string]any
}

type bundleFile struct {
	head    map[string]json.RawMessage
	records []bundleRecord
}

func parseBundle(t *testing.T, data []byte) *bundleFile {
	t.Helper()
	var f struct {
		Records []json.RawMessage `json:"records"`
	}
	b := &bundleFile{}
	if err := json.Unmarshal(data, &b.head); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	for _, raw := range f.Records {
		var e struct {
			Index  uint64 `json:"index"`
			Record struct {
				Type    string         `json:"type"`
				Content map[string]any `json:"content"`
			} `json:"record"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		b.records = append(b.records, bundleRecord{raw, e.Index, e.Record.Type, e.Record.Content})
	}
	return b
}

// without writes the bundle with the records drop picks left out.
func (b *bundleFile) without(t *testing.T, drop func(i int, r bundleRecord) bool) ([]byte, []uint64) {
	t.Helper()
	var keep []json.RawMessage
	var dropped []uint64
	for i, r := range b.records {
		if drop(i, r) {
			dropped = append(dropped, r.index)
			continue
		}
		keep = append(keep, r.raw)
	}
	if len(dropped) == 0 {
		t.Fatal("the case dropped no record")
	}
	out := map[string]json.RawMessage{}
	for k, v := range b.head {
		out[k] = v
	}
	out["records"] = must(json.Marshal(keep))
	return must(json.Marshal(out)), dropped
}

// last is the position of the last record of typ (-1 if none).
func (b *bundleFile) last(typ string) int {
	at := -1
	for i, r := range b.records {
		if r.typ == typ {
			at = i
		}
	}
	return at
}

// verifyBundleFile runs `mandate evidence verify FILE --key KEY`.
func verifyBundleFile(t *testing.T, data []byte, vkey string) (int, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "bundle.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), []string{"evidence", "verify", file, "--key", vkey},
		cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	return code, out.String() + errb.String()
}

// exportedSession is a session with every kind of record a bundle holds:
// decisions with observations, an ask with its approval, a gap, two tool
// pins and a change that broke one, a second mandate version, and a status
// change last.
func exportedSession(t *testing.T, in *instance) (string, []byte) {
	t.Helper()
	sid := in.session("mailer", "Send the Q3 summary to alice@example.com. Do not push to git.")
	for i := range 3 {
		id, _ := in.decide("admin", sid, "Read", map[string]any{"file_path": fmt.Sprintf("/home/dev/docs/q3-%d.md", i)})
		in.must(http.StatusOK, "POST", "/v1/observe", "admin", map[string]any{"decision_id": id, "output": fmt.Sprintf("part %d", i)})
	}
	if r := in.evaluate("admin", sid, "send_email", toEve); r.str("effect") != "ask" {
		t.Fatalf("want an ask: %s", r.raw)
	}
	in.must(http.StatusOK, "POST", "/v1/observe", "admin", map[string]any{"session_id": sid, "call_id": "toolu_unknown", "tool": "Bash", "args": map[string]any{"command": "ls"}, "output": "x"})
	in.must(http.StatusOK, "POST", "/v1/sessions/"+sid+"/tools", "admin", map[string]any{"tools": []any{searchTool, weatherTool}})
	in.must(http.StatusOK, "POST", "/v1/sessions/"+sid+"/tools", "admin", map[string]any{"tools": []any{rugPulled, weatherTool}})
	in.must(http.StatusOK, "POST", "/v1/sessions/"+sid+"/mandate", "user", map[string]any{"intent": "Also read the changelog"})
	id, _ := in.decide("admin", sid, "Read", map[string]any{"file_path": "/home/dev/docs/CHANGELOG.md"})
	in.must(http.StatusOK, "POST", "/v1/observe", "admin", map[string]any{"decision_id": id, "output": "changes"})
	in.must(http.StatusOK, "POST", "/v1/sessions/"+sid+"/status", "user", map[string]any{"status": "suspended"})
	var buf bytes.Buffer
	b, err := in.App.Evidence.Export(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return sid, buf.Bytes()
}

func TestBundleOmissionsFail(t *testing.T) {
	in := start(t, "")
	_, data := exportedSession(t, in)
	vkey := in.App.Evidence.Key().VerifierKey()
	if code, out := verifyBundleFile(t, data, vkey); code != 0 || !strings.Contains(out, "complete:") {
		t.Fatalf("the whole bundle: exit %d\n%s", code, out)
	}
	b := parseBundle(t, data)
	is := func(pos int) func(int, bundleRecord) bool {
		return func(i int, _ bundleRecord) bool { return i == pos }
	}
	firstOf := func(typ string) int {
		for i, r := range b.records {
			if r.typ == typ {
				return i
			}
		}
		t.Fatalf("the bundle has no %s record", typ)
		return -1
	}
	lastDecision := b.records[b.last("decision")]
	tests := []struct {
		name string
		drop func(int, bundleRecord) bool
		want []string
	}{
		{"the last decision", is(b.last("decision")), []string{
			fmt.Sprintf("the session's last decision (%s, seq %v)", lastDecision.content["decision_id"], lastDecision.content["seq"]), "is missing from the bundle"}},
		{"the last decision and its observation", func(i int, r bundleRecord) bool {
			return i == b.last("decision") || (r.typ == "observation" && r.content["decision_id"] == lastDecision.content["decision_id"])
		}, []string{"the session's last decision", "the session's last observation"}},
		{"a decision in the middle", func(_ int, r bundleRecord) bool { return r.typ == "decision" && r.content["seq"] == 2.0 },
			[]string{"(a decision record) is missing", "decision seq 2 is missing"}},
		{"the last mandate version", is(b.last("mandate")), []string{"the session's last mandate version (version 2)"}},
		{"the first mandate version", is(firstOf("mandate")), []string{"(a mandate record) is missing", "mandate version 1 is missing"}},
		{"the status record", is(b.last("session_status")), []string{"the session's last status record (suspended)"}},
		{"every status record", func(_ int, r bundleRecord) bool { return r.typ == "session_status" }, []string{"the session's last status record", "(a session_status record) is missing"}},
		{"an observation", is(firstOf("observation")), []string{"(an observation record) is missing"}},
		{"the last observation", is(b.last("observation")), []string{"the session's last observation ("}},
		{"the gap", func(_ int, r bundleRecord) bool { return r.typ == "observation" && r.content["gap"] == true }, []string{"(an observation record) is missing"}},
		{"the approval", is(firstOf("approval")), []string{"(an approval record) is missing"}},
		{"a tool pin", is(firstOf("tool_pin")), []string{"(a tool_pin record) is missing"}},
		{"the tool change", is(firstOf("tool_change")), []string{"(a tool_change record) is missing"}},
		{"the creation record", is(firstOf("session")), []string{"the session's creation record", "no session record"}},
		{"the head", is(b.last("session_head")), []string{"no session head"}},
		{"the head and the records after the mandate", func(i int, _ bundleRecord) bool { return i > b.last("mandate") }, []string{"no session head"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cut, dropped := b.without(t, tc.drop)
			code, out := verifyBundleFile(t, cut, vkey)
			if code != 1 || !strings.Contains(out, "NOT VERIFIED") {
				t.Fatalf("without records %v: exit %d, want 1 (not verified):\n%s", dropped, code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("without records %v: the report does not say %q:\n%s", dropped, w, out)
				}
			}
			// Each record left out is named by its index (the head
			// names those it commits).
			if tc.name != "the head" && !strings.Contains(tc.name, "the head and") {
				for _, idx := range dropped {
					if !strings.Contains(out, fmt.Sprintf("record %d", idx)) {
						t.Errorf("record %d was left out and is not named:\n%s", idx, out)
					}
				}
			}
		})
	}
	// Whichever single record is left out, the bundle fails.
	t.Run("every record, one at a time", func(t *testing.T) {
		for pos, r := range b.records {
			cut, _ := b.without(t, is(pos))
			if code, out := verifyBundleFile(t, cut, vkey); code != 1 || !strings.Contains(out, fmt.Sprintf("record %d", r.index)) && r.typ != "session_head" {
				t.Errorf("without record %d (%s): exit %d:\n%s", r.index, r.typ, code, out)
			}
		}
	})
}

// An export with nothing new since the last one commits no second head: the
// session's last record is already its head.
func TestBundleHeadIsReused(t *testing.T) {
	in := start(t, "")
	sid, first := exportedSession(t, in)
	size := in.App.Evidence.Size()
	b, err := in.App.Evidence.Export(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	b.WriteTo(&again)
	if in.App.Evidence.Size() != size {
		t.Errorf("a second export with nothing new appended %d records", in.App.Evidence.Size()-size)
	}
	if n1, n2 := len(parseBundle(t, first).records), len(parseBundle(t, again.Bytes()).records); n1 != n2 {
		t.Errorf("the second bundle has %d records, the first %d", n2, n1)
	}
	// After another decision, the next export commits a new head that
	// lists the earlier one.
	in.decide("admin", sid, "Read", readDocs)
	b, err = in.App.Evidence.Export(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	var third bytes.Buffer
	b.WriteTo(&third)
	recs := parseBundle(t, third.Bytes()).records
	heads := 0
	for _, r := range recs {
		if r.typ == "session_head" {
			heads++
		}
	}
	if heads != 2 || recs[len(recs)-1].typ != "session_head" {
		t.Errorf("after a new decision: %d heads, last record %s", heads, recs[len(recs)-1].typ)
	}
	if code, out := verifyBundleFile(t, third.Bytes(), in.App.Evidence.Key().VerifierKey()); code != 0 {
		t.Errorf("the third bundle: exit %d\n%s", code, out)
	}
}
