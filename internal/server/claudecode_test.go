package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/hook"
)

// hookPost sends one event to the Claude Code hook route as Claude Code's
// http handler does, with token as the bearer ("" sends the empty header
// an unlisted $VAR becomes), and returns the status and raw answer.
func (f *fixture) hookPost(t *testing.T, query, token, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+ClaudeCodeHookPath+query, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

var decisionIDs = regexp.MustCompile(`(decision|gap) [A-Za-z0-9_-]+`)

// normalise makes two answers comparable: decision ids and session ids
// differ between the two sessions, nothing else may.
func normalise(b []byte, session string) string {
	s := strings.TrimSpace(string(b))
	s = strings.ReplaceAll(s, session, "SESSION")
	return decisionIDs.ReplaceAllString(s, "$1 ID")
}

// TestClaudeCodeHookSameAnswers plays one Claude Code session through the
// http hook route and, with another session id, through hook.ClaudeCode
// over a TCP client as `mandate hook claude-code` does: every answer is
// the same, event by event.
func TestClaudeCodeHookSameAnswers(t *testing.T) {
	f := newFixture(t)
	events := []map[string]any{
		{"hook_event_name": "SessionStart", "source": "startup"},
		{"hook_event_name": "UserPromptSubmit", "prompt": "Fix the failing test in ./pkg/auth and run the tests"},
		{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": map[string]any{"file_path": "/home/dev/api/pkg/auth/token.go"}, "tool_use_id": "toolu_1"},
		{"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": map[string]any{"file_path": "/home/dev/api/pkg/auth/token.go"}, "tool_use_id": "toolu_1", "tool_response": map[string]any{"content": "package auth"}},
		{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": "go test ./pkg/auth/..."}, "tool_use_id": "toolu_2"},
		{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf / --no-preserve-root"}, "tool_use_id": "toolu_3"},
		{"hook_event_name": "PreToolUse", "tool_name": "mcp__gmail__send_email", "tool_input": map[string]any{"to": "eve@competitor.example", "subject": "keys"}, "tool_use_id": "toolu_4"},
		// Ran although denied: a gap the user is told about.
		{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf / --no-preserve-root"}, "tool_use_id": "toolu_3", "tool_response": map[string]any{"stdout": ""}},
		{"hook_event_name": "Stop"},
		{"hook_event_name": "SessionEnd", "reason": "exit"},
	}
	direct := &hook.ClaudeCode{Client: client.New(f.srv.URL, f.tokens["hook"]), HomeDir: "/home/dev"}
	httpSession, cmdSession := "http-"+t.Name(), "cmd-"+t.Name()
	effects := map[string]int{}
	for i, ev := range events {
		body := func(session string) []byte {
			m := map[string]any{"session_id": session, "cwd": "/home/dev/api", "transcript_path": "/tmp/t.jsonl", "permission_mode": "default"}
			for k, v := range ev {
				m[k] = v
			}
			b, _ := json.Marshal(m)
			return b
		}
		code, got := f.hookPost(t, "?home=/home/dev", f.tokens["hook"], string(body(httpSession)))
		if code != http.StatusOK {
			t.Fatalf("event %d (%s): status %d: %s", i, ev["hook_event_name"], code, got)
		}
		var out bytes.Buffer
		if err := direct.Handle(context.Background(), bytes.NewReader(body(cmdSession)), &out); err != nil {
			t.Fatalf("event %d (%s) through the command's path: %v", i, ev["hook_event_name"], err)
		}
		want := out.Bytes()
		if len(bytes.TrimSpace(want)) == 0 {
			want = []byte("{}") // the command prints nothing; the route answers an empty object
		}
		if g, w := normalise(got, hook.MainSessionID(httpSession)), normalise(want, hook.MainSessionID(cmdSession)); g != w {
			t.Errorf("event %d (%s):\nhttp:    %s\ncommand: %s", i, ev["hook_event_name"], g, w)
		}
		var ans hook.Output
		if err := json.Unmarshal(got, &ans); err != nil {
			t.Fatalf("event %d: answer is not JSON: %s", i, got)
		}
		if ans.HookSpecificOutput != nil {
			effects[ans.HookSpecificOutput.PermissionDecision]++
		}
	}
	if effects["allow"] == 0 || effects["deny"] == 0 || effects["ask"] == 0 {
		t.Errorf("the session did not exercise every effect: %v", effects)
	}
	// The decisions were made in the session the route derived, with the
	// hook surface, as the command's are.
	code, out := f.do(t, "GET", "/v1/decisions?session_id="+hook.MainSessionID(httpSession), "user", "")
	if code != 200 {
		t.Fatalf("list decisions: %d %v", code, out)
	}
	ds := out["decisions"].([]any)
	if len(ds) != 4 {
		t.Fatalf("%d decisions in the http session, want 4", len(ds))
	}
	for _, d := range ds {
		if s := d.(map[string]any)["surface"]; s != "hook" {
			t.Errorf("decision surface %v, want hook", s)
		}
	}
}

// TestClaudeCodeHookFailsClosed: whatever goes wrong, the answer is 200
// with a refusal in the event's own shape — a PreToolUse is denied, never
// let through by an error status Claude Code would not read as a block.
func TestClaudeCodeHookFailsClosed(t *testing.T) {
	f := newFixture(t)
	pre := `{"session_id":"s-` + t.Name() + `","cwd":"/home/dev","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/etc/hostname"},"tool_use_id":"t1"}`
	prompt := `{"session_id":"s-` + t.Name() + `","cwd":"/home/dev","hook_event_name":"UserPromptSubmit","prompt":"hello"}`
	tests := []struct {
		name, query, token, body string
		deny, block              bool
		mention                  string
	}{
		{"empty bearer (unlisted $VAR)", "", "", pre, true, false, "allowedEnvVars"},
		{"unknown token", "", "mnd_nope", pre, true, false, "unknown or revoked token"},
		{"agent token", "", f.tokens["agent:mailer"], pre, true, false, "hook token"},
		{"prompt with an empty bearer is blocked", "", "", prompt, false, true, "no bearer token"},
		{"malformed event", "", f.tokens["hook"], `{"hook_event_name":"PreToolUse","session_id":`, false, false, "JSON ends"},
		{"tool event without tool_name", "", f.tokens["hook"], `{"hook_event_name":"PreToolUse","session_id":"x"}`, true, false, "no tool_name"},
		{"bad wait", "?wait=forever", f.tokens["hook"], pre, true, false, "wait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, data := f.hookPost(t, tt.query, tt.token, tt.body)
			if code != http.StatusOK {
				t.Fatalf("status %d, want 200 with a refusal: %s", code, data)
			}
			var ans hook.Output
			if err := json.Unmarshal(data, &ans); err != nil {
				t.Fatalf("not JSON: %s", data)
			}
			switch {
			case tt.deny:
				if ans.HookSpecificOutput == nil || ans.HookSpecificOutput.PermissionDecision != "deny" || ans.HookSpecificOutput.HookEventName != "PreToolUse" {
					t.Fatalf("want a PreToolUse deny, got %s", data)
				}
			case tt.block:
				if ans.Decision != "block" {
					t.Fatalf("want decision block, got %s", data)
				}
			default:
				if ans.SystemMessage == "" {
					t.Fatalf("want a refusal message, got %s", data)
				}
			}
			if !strings.Contains(string(data), tt.mention) {
				t.Errorf("the refusal does not say %q: %s", tt.mention, data)
			}
		})
	}
}

// TestClaudeCodeHookLimits: an event over the hook's limit is refused with
// 413 (the body is not read on), and events with nothing to do get {}.
func TestClaudeCodeHookLimits(t *testing.T) {
	f := newFixture(t)
	big := fmt.Sprintf(`{"hook_event_name":"PostToolUse","session_id":"x","tool_name":"Read","tool_response":"%s"}`, strings.Repeat("a", hook.MaxEventBytes))
	if code, data := f.hookPost(t, "", f.tokens["hook"], big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized event: %d %s", code, data)
	}
	for _, name := range []string{"Stop", "Notification", "PreCompact"} {
		code, data := f.hookPost(t, "", f.tokens["hook"], `{"hook_event_name":"`+name+`","session_id":"x"}`)
		if code != 200 || strings.TrimSpace(string(data)) != "{}" {
			t.Errorf("%s: %d %s", name, code, data)
		}
	}
}
