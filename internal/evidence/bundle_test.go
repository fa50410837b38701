package evidence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/store"
)

// exportBundle makes a session with every kind of record and returns its
// bundle text.
func exportBundle(t *testing.T) (*instance, string, []byte) {
	t.Helper()
	in := open(t, t.TempDir())
	other := in.session("other", "Read the docs")
	s := in.session("mailer", "Send the Q3 summary to alice@example.com")
	in.calls(other, 2)
	in.calls(s, 4)
	ctx := context.Background()
	if _, err := in.App.Engine.AmendMandate(ctx, in.admin, s, engine.AmendRequest{Intent: "You may also read ~/reports"}); err != nil {
		t.Fatal(err)
	}
	in.calls(s, 2)
	if _, err := in.App.Engine.SetStatus(ctx, in.admin, s, store.StatusCompleted); err != nil {
		t.Fatal(err)
	}
	b, err := in.App.Evidence.Export(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return in, s, buf.Bytes()
}

func TestBundleVerifies(t *testing.T) {
	in, s, data := exportBundle(t)
	rep, err := evidence.VerifyBundle(data, in.App.Evidence.Key().Verifier())
	if err != nil {
		t.Fatal(err)
	}
	// One of the calls asks: its approval is recorded with its decision.
	// The amendment records the session's new state beside its mandate.
	// Completing the session records its fact summary (a behaviour
	// record). The head, committed at export, ends the bundle.
	want := map[string]int{"session": 1, "mandate": 2, "decision": 6, "observation": 6, "session_status": 2, "approval": 1, "behaviour": 1, "session_head": 1}
	for typ, n := range want {
		if rep.Types[typ] != n {
			t.Errorf("%d %s records, want %d (all: %v)", rep.Types[typ], typ, n, rep.Types)
		}
	}
	if rep.SessionID != s || rep.Decisions != 6 || rep.Records != 20 {
		t.Errorf("report %+v", rep)
	}
	// The bundle reformatted (indented) still verifies: the records'
	// content is what is signed, not their layout.
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, data, "", "  "); err != nil {
		t.Fatal(err)
	}
	if _, err := evidence.VerifyBundle(pretty.Bytes(), in.App.Evidence.Key().Verifier()); err != nil {
		t.Errorf("indented bundle: %v", err)
	}
}

// TestBundleOneCharacterChanged changes one character at a time inside
// every record of a bundle: each change must fail verification with a
// message that names the record.
func TestBundleOneCharacterChanged(t *testing.T) {
	in, _, data := exportBundle(t)
	v := in.App.Evidence.Key().Verifier()
	lines := bytes.Split(data, []byte("\n"))
	tried := 0
	off := 0
	for _, line := range lines {
		start := off
		off += len(line) + 1
		var idx int
		if _, err := fmt.Sscanf(string(line), `{"index":%d,`, &idx); err != nil {
			continue
		}
		rec := bytes.Index(line, []byte(`"record":`))
		if rec < 0 {
			t.Fatal("no record on a record line")
		}
		from, to := rec+len(`"record":`), len(line)-1 // up to the entry's closing brace
		step := max(1, (to-from)/40)
		for p := from; p < to; p += step {
			mutated := bytes.Clone(data)
			mutated[start+p] = flip(mutated[start+p])
			tried++
			_, err := evidence.VerifyBundle(mutated, v)
			if err == nil {
				t.Fatalf("record %d with byte %d changed (%q → %q) verified:\n%s", idx, p-from, line[p], mutated[start+p], line[from:to])
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("record %d", idx)) {
				t.Fatalf("record %d changed at byte %d: the error does not name it: %v", idx, p-from, err)
			}
		}
	}
	if tried < 300 {
		t.Fatalf("only %d changes tried", tried)
	}
}

// flip changes a byte to another of its kind, so most changes keep the
// JSON well-formed and only the content differs.
func flip(c byte) byte {
	switch {
	case c >= 'a' && c <= 'z':
		return 'a' + (c-'a'+1)%26
	case c >= 'A' && c <= 'Z':
		return 'A' + (c-'A'+1)%26
	case c >= '0' && c <= '9':
		return '0' + (c-'0'+1)%10
	case c == '"':
		return '\''
	}
	return 'x'
}

func TestBundleTampering(t *testing.T) {
	in, _, data := exportBundle(t)
	v := in.App.Evidence.Key().Verifier()
	lines := strings.Split(string(data), "\n")
	var recordLines []int
	decisionLine := -1
	for i, l := range lines {
		if strings.HasPrefix(l, `{"index":`) {
			recordLines = append(recordLines, i)
			if decisionLine < 0 && strings.Contains(l, `"type":"decision"`) {
				decisionLine = i
			}
		}
	}
	join := func(ls []string) []byte { return []byte(strings.Join(ls, "\n")) }
	withoutLine := func(i int) []byte {
		ls := append(append([]string{}, lines[:i]...), lines[i+1:]...)
		// Keep the JSON well-formed: the dropped line ended with a comma.
		if i == recordLines[len(recordLines)-1] {
			ls[i-1] = strings.TrimSuffix(ls[i-1], ",")
		}
		return join(ls)
	}
	swapped := append([]string{}, lines...)
	a, b := recordLines[3], recordLines[4]
	swapped[a], swapped[b] = strings.TrimSuffix(lines[b], ",")+",", strings.TrimSuffix(lines[a], ",")+","
	_, otherKey, _ := evidence.GenerateKey()

	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"a decision left out", withoutLine(decisionLine), []string{"decision seq 1 is missing: records were left out"}},
		{"records reordered", join(swapped), []string{"out of order"}},
		{"checkpoint edited", []byte(strings.Replace(string(data), `\n`+fmt.Sprint(in.App.Evidence.Size())+`\n`, `\n`+fmt.Sprint(in.App.Evidence.Size()+1)+`\n`, 1)), []string{"checkpoint", "does not verify"}},
		{"proof element changed", []byte(strings.Replace(string(data), `"inclusion_proof":["`, `"inclusion_proof":["A`, 1)), []string{"record ", "inclusion proof"}},
		{"not a bundle", []byte(`{"format":"something else"}`), []string{"format"}},
		{"truncated file", data[:len(data)/2], []string{"malformed JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := evidence.VerifyBundle(tt.data, v)
			if err == nil {
				t.Fatal("verified")
			}
			if !containsAll(err.Error(), tt.want...) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
		})
	}
	t.Run("another key", func(t *testing.T) {
		_, err := evidence.VerifyBundle(data, otherKey.Verifier())
		if !errors.Is(err, evidence.ErrTampered) || !strings.Contains(err.Error(), "not signed by key") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("records of another session", func(t *testing.T) {
		// An entry of session "other" moved into this bundle.
		ob, err := in.App.Evidence.Export(context.Background(), firstOtherSession(t, in))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		ob.WriteTo(&buf)
		foreign := strings.Split(buf.String(), "\n")[2] // its second record
		ls := append([]string{}, lines...)
		ls[recordLines[0]] = strings.TrimSuffix(foreign, ",") + ","
		_, err = evidence.VerifyBundle(join(ls), v)
		if err == nil || !strings.Contains(err.Error(), "belongs to session") {
			t.Errorf("err = %v", err)
		}
	})
}

func firstOtherSession(t *testing.T, in *instance) string {
	list, err := in.App.Store.ListSessions(context.Background(), store.SessionFilter{AgentID: "other"})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions of other: %v %v", list, err)
	}
	return list[0].ID
}
