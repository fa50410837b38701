package server

import (
	"net/http"
	"testing"
)

func TestObserveByCallIDAndGaps(t *testing.T) {
	f := newFixture(t)
	f.codingSession(t, "cc:s1")
	code, out := f.do(t, "POST", "/v1/evaluate", "hook", `{"session_id":"cc:s1","tool":"Read","args":{"file_path":"pkg/auth/auth.go"},"call_id":"toolu_1"}`)
	if code != 200 || out["effect"] != "allow" {
		t.Fatalf("evaluate: %d %v", code, out)
	}
	decision := out["decision_id"].(string)
	code, out = f.do(t, "GET", "/v1/decisions/"+decision, "user", "")
	d := out["decision"].(map[string]any)
	if code != 200 || d["call_id"] != "toolu_1" || d["surface"] != "hook" {
		t.Fatalf("a hook's decision keeps its call id and surface: %d %v", code, d)
	}

	tests := []struct {
		name, body string
		code       int
		gap        bool
		reason     string
	}{
		{"matched by call id", `{"session_id":"cc:s1","call_id":"toolu_1","tool":"Read","args":{"file_path":"pkg/auth/auth.go"},"output":"package auth"}`, 200, false, ""},
		{"never decided", `{"session_id":"cc:s1","call_id":"toolu_2","tool":"Bash","args":{"command":"ls"},"output":{"stdout":"a"}}`, 200, true, "never decided"},
		{"decision id and call id together", `{"decision_id":"` + decision + `","session_id":"cc:s1","call_id":"toolu_1","output":1}`, 400, false, ""},
		{"unknown session", `{"session_id":"nope","call_id":"toolu_1","tool":"Read","output":1}`, 404, false, ""},
		{"no tool", `{"session_id":"cc:s1","call_id":"toolu_3","output":1}`, 400, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out := f.do(t, "POST", "/v1/observe", "hook", tc.body)
			if code != tc.code {
				t.Fatalf("status %d, want %d: %v", code, tc.code, out)
			}
			if code != 200 {
				return
			}
			if out["gap"] != tc.gap || (tc.gap && out["gap_reason"] != tc.reason) {
				t.Fatalf("got %v", out)
			}
			if !tc.gap && out["decision_id"] != decision {
				t.Fatalf("matched the wrong decision: %v", out)
			}
		})
	}

	code, out = f.do(t, "GET", "/v1/gaps?session_id=cc:s1", "user", "")
	gaps, _ := out["gaps"].([]any)
	if code != 200 || len(gaps) != 1 {
		t.Fatalf("gaps: %d %v", code, out)
	}
	g := gaps[0].(map[string]any)
	if g["tool"] != "Bash" || g["call_id"] != "toolu_2" || g["gap"] != true || g["args"].(map[string]any)["command"] != "ls" {
		t.Fatalf("gap record: %v", g)
	}
	if code, _ := f.do(t, "GET", "/v1/gaps", "hook", ""); code != http.StatusForbidden {
		t.Fatalf("a hook token must not list gaps: %d", code)
	}
	if code, _ := f.do(t, "GET", "/v1/gaps?limit=x", "user", ""); code != http.StatusBadRequest {
		t.Fatalf("bad limit: %d", code)
	}
}

func TestSubagentRoute(t *testing.T) {
	f := newFixture(t)
	for _, body := range []string{
		`{"session_id":"cc:s1","agent_id":"claude-code","intent":"Fix the failing test in ./pkg/auth","working_directory":"/home/dev/api"}`,
		`{"session_id":"cc:s1:task:t1","agent_id":"claude-code:Explore","intent":"Read pkg/auth","parent_session_id":"cc:s1"}`,
	} {
		if code, out := f.do(t, "POST", "/v1/sessions", "hook", body); code != http.StatusCreated {
			t.Fatalf("create: %d %v", code, out)
		}
	}
	req := `{"session_id":"cc:s1:agent:a1","agent_id":"claude-code:Explore","launch_prefix":"cc:s1:task:","working_directory":"/home/dev/api"}`
	code, out := f.do(t, "POST", "/v1/sessions/cc:s1/subagents", "hook", req)
	if code != http.StatusCreated || out["launch_id"] != "cc:s1:task:t1" || out["session_id"] != "cc:s1:agent:a1" {
		t.Fatalf("start sub-agent: %d %v", code, out)
	}
	if code, out := f.do(t, "POST", "/v1/sessions/cc:s1/subagents", "hook", req); code != http.StatusConflict {
		t.Fatalf("second start: %d %v", code, out)
	}
	if code, _ := f.do(t, "POST", "/v1/sessions/cc:s1/subagents", "agent:mailer", `{"session_id":"x","agent_id":"mailer"}`); code != http.StatusForbidden {
		t.Fatalf("an agent token may not start sessions: %d", code)
	}
	if code, _ := f.do(t, "POST", "/v1/sessions/cc:s1/subagents", "hook", `{"session_id":"y","agent_id":"a","extra":1}`); code != http.StatusBadRequest {
		t.Fatalf("unknown field: %d", code)
	}
}
