package hook

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseEvent(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // an error substring; "" for success
	}{
		{"pre tool use", `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/x"},"tool_use_id":"t"}`, ""},
		{"unknown fields are ignored", `{"session_id":"s","hook_event_name":"Stop","stop_hook_active":true,"future":{"x":1}}`, ""},
		{"no tool input", `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Read"}`, ""},
		{"null tool input", `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":null}`, ""},
		{"stop needs no session", `{"hook_event_name":"Stop"}`, ""},
		{"empty", ``, "no event on stdin"},
		{"whitespace", " \n\t", "no event on stdin"},
		{"array", `[{}]`, "expected a JSON object"},
		{"truncated", `{"session_id":"s"`, "ends before the object does"},
		{"two objects", `{"hook_event_name":"Stop"} {}`, "more than one JSON value"},
		{"wrong type", `{"session_id":5,"hook_event_name":"Stop"}`, "field session_id"},
		{"no event name", `{"session_id":"s"}`, "no hook_event_name"},
		{"unknown event", `{"session_id":"s","hook_event_name":"PostToolUseFailure"}`, `unknown hook event "PostToolUseFailure"`},
		{"no session", `{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`, "has no session_id"},
		{"no tool name", `{"session_id":"s","hook_event_name":"PostToolUse","tool_input":{}}`, "has no tool_name"},
		{"tool input not an object", `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls"}`, "tool_input must be a JSON object"},
		{"sub-agent without id", `{"session_id":"s","hook_event_name":"SubagentStart","agent_type":"Explore"}`, "has no agent_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := ParseEvent([]byte(tc.in))
			if tc.want == "" {
				if err != nil || ev == nil {
					t.Fatalf("got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestRecordedPayloadsParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "claude-code", "*.json"))
	if err != nil || len(files) < 20 {
		t.Fatalf("recorded payloads: %d, %v", len(files), err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := ParseEvent(b)
		switch base := filepath.Base(f); base {
		case "malformed.json", "unknown_event.json":
			if err == nil {
				t.Errorf("%s parsed", base)
			}
		default:
			if err != nil {
				t.Errorf("%s: %v", base, err)
				continue
			}
			seen[ev.HookEventName] = true
		}
	}
	for _, ev := range []string{EventSessionStart, EventSessionEnd, EventUserPromptSubmit, EventPreToolUse, EventPostToolUse,
		EventSubagentStart, EventSubagentStop, EventStop, EventNotification, EventPreCompact} {
		if !seen[ev] {
			t.Errorf("no recorded payload for %s", ev)
		}
	}
}

func TestReadEventErrors(t *testing.T) {
	if ev, err := readEvent(strings.NewReader(`{"hook_event_name":"Stop"}`), 26); err != nil || ev.HookEventName != EventStop {
		t.Errorf("an event of exactly the limit: %v", err)
	}
	if _, err := ReadEvent(iotest.ErrReader(os.ErrClosed)); err == nil || !strings.Contains(err.Error(), "read event from stdin") {
		t.Errorf("read error: %v", err)
	}
	big := io.MultiReader(strings.NewReader(`{"hook_event_name":"Stop","x":"`), endless('a'))
	if _, err := readEvent(big, 1<<20); err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("oversized event: %v", err)
	}
}

// endless reads as the same byte forever.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	block := bytes.Repeat([]byte{byte(e)}, 64<<10)
	n := 0
	for n < len(p) {
		n += copy(p[n:], block)
	}
	return n, nil
}

func TestArgs(t *testing.T) {
	for in, want := range map[string]string{``: `{}`, `null`: `{}`, ` {"a":1} `: `{"a":1}`, `"ls"`: `{}`, `[1]`: `{}`} {
		ev := &Event{ToolInput: []byte(in)}
		if got := string(ev.Args()); got != want {
			t.Errorf("Args(%q) = %s, want %s", in, got, want)
		}
	}
}

// seedJSON adds every testdata/DIR/*.json file to f's seed corpus.
func seedJSON(f *testing.F, dir string) {
	f.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzParseEvent(f *testing.F) {
	seedJSON(f, "claude-code")
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := ParseEvent(data)
		if err != nil {
			if ev != nil {
				t.Fatal("an event with an error")
			}
			return
		}
		// An accepted event has what Answer relies on.
		if ev.HookEventName == "" {
			t.Fatal("accepted an event without a name")
		}
		switch ev.HookEventName {
		case EventStop, EventNotification, EventPreCompact:
		default:
			if strings.TrimSpace(ev.SessionID) == "" {
				t.Fatalf("accepted %s without a session", ev.HookEventName)
			}
		}
		if args := ev.Args(); len(args) == 0 || args[0] != '{' {
			t.Fatalf("Args() = %q", args)
		}
	})
}
