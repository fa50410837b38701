package eval

import (
	"encoding/json"
	"strings"
	"testing"
)

// minimal is a valid episode; tests derive variants from it.
const minimal = `{"id":"e1","category":"email/benign","intent":"reply to Bob","agent":{"id":"a1"},"calls":[{"tool":"send_email","args":{"to":"bob@example.com"},"label":"allow"}]}`

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		wantErr string // substring; "" means it decodes
		check   func(t *testing.T, e *Episode)
	}{
		{name: "minimal", line: minimal, check: func(t *testing.T, e *Episode) {
			if e.ID != "e1" || e.Category != "email/benign" || e.Area() != "email" || e.Agent.ID != "a1" {
				t.Errorf("got %+v", e)
			}
			if len(e.Calls) != 1 || e.Calls[0].Label != LabelAllow || string(e.Calls[0].Args) != `{"to":"bob@example.com"}` {
				t.Errorf("calls = %+v", e.Calls)
			}
			if e.Calls[0].Output != nil {
				t.Errorf("output = %s, want none", e.Calls[0].Output)
			}
		}},
		{
			name: "unknown fields are ignored at every level",
			line: `{"id":"e1","category":"email/benign","intent":"x","agent":{"id":"a1","colour":"red"},"extra":[1,2],"meta":{"author":"w"},` +
				`"context":{"working_directory":"/w","shell":"zsh"},"calls":[{"tool":"t","label":"block","why":"w","confidence":0.9}]}`,
			check: func(t *testing.T, e *Episode) {
				if e.WorkingDir != "/w" || e.Calls[0].Label != LabelBlock || e.Calls[0].Why != "w" {
					t.Errorf("got %+v", e)
				}
			},
		},
		{
			name: "tools with inputSchema, parameters and annotations",
			line: `{"id":"e1","category":"shopping/benign","intent":"x","agent":{"id":"a1"},"tools":[` +
				`{"name":"checkout","description":"Buy.","parameters":{"type":"object"}},` +
				`{"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}},"annotations":{"readOnlyHint":true}}],` +
				`"calls":[{"tool":"checkout","label":null}]}`,
			check: func(t *testing.T, e *Episode) {
				if len(e.Tools) != 2 || e.Tools[0].InputSchema == nil || e.Tools[0].Description != "Buy." {
					t.Fatalf("tools = %+v", e.Tools)
				}
				if a := e.Tools[1].Annotations; a == nil || a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
					t.Errorf("annotations = %+v", a)
				}
				if e.Calls[0].Label != Unscored || e.Calls[0].Label.String() != "null" {
					t.Errorf("label = %q", e.Calls[0].Label)
				}
			},
		},
		{
			name: "absent and null args are an empty object; null output is none",
			line: `{"id":"e1","category":"x/harmful","intent":"x","agent":{"id":"a"},"calls":[{"tool":"t","label":"allow"},{"tool":"t","args":null,"output":null,"label":"allow"},{"tool":"t","output":{"ok":true},"label":"allow"}]}`,
			check: func(t *testing.T, e *Episode) {
				for i := range 2 {
					if string(e.Calls[i].Args) != "{}" || e.Calls[i].Output != nil {
						t.Errorf("calls[%d] = %+v", i, e.Calls[i])
					}
				}
				if string(e.Calls[2].Output) != `{"ok":true}` {
					t.Errorf("output = %s", e.Calls[2].Output)
				}
			},
		},
		{
			name: "sub-agents",
			line: `{"id":"e1","category":"coding/harmful","intent":"x","agent":{"id":"a"},"subagents":[{"name":"r","intent":"read only"}],"calls":[{"tool":"Task","label":"allow"},{"tool":"Edit","subagent":"r","label":"block"}]}`,
			check: func(t *testing.T, e *Episode) {
				if e.Calls[1].Subagent != "r" || len(e.Subagents) != 1 {
					t.Errorf("got %+v", e)
				}
			},
		},
		{
			name: "a structured mandate instead of words",
			line: `{"id":"e1","category":"x/benign","mandate":{"allow":["read"],"scope":{"paths":["/w/**"]}},"agent":{"id":"a"},"calls":[{"tool":"Read","label":"allow"}]}`,
			check: func(t *testing.T, e *Episode) {
				if e.Mandate == nil || len(e.Mandate.Allow) != 1 || e.Intent != "" {
					t.Errorf("mandate = %+v", e.Mandate)
				}
			},
		},
		{name: "not JSON", line: `{"id":`, wantErr: "invalid JSON"},
		{name: "not an object", line: `[1,2]`, wantErr: "an episode is a JSON object"},
		{name: "two objects on a line", line: minimal + minimal, wantErr: "one episode a line"},
		{name: "trailing garbage", line: minimal + ` x`, wantErr: "invalid JSON"},
		{name: "missing id", line: strings.Replace(minimal, `"id":"e1",`, ``, 1), wantErr: "id is required"},
		{name: "blank id", line: strings.Replace(minimal, `"id":"e1"`, `"id":"  "`, 1), wantErr: "id is required"},
		{name: "id of the wrong type", line: strings.Replace(minimal, `"id":"e1"`, `"id":7`, 1), wantErr: "id: want a string"},
		{name: "missing category", line: strings.Replace(minimal, `"category":"email/benign",`, ``, 1), wantErr: "category is required"},
		{name: "category without area", line: strings.Replace(minimal, `"email/benign"`, `"benign"`, 1), wantErr: "want <area>/benign or <area>/harmful"},
		{name: "category of unknown kind", line: strings.Replace(minimal, `"email/benign"`, `"email/mixed"`, 1), wantErr: "want <area>/benign"},
		{name: "missing agent", line: strings.Replace(minimal, `"agent":{"id":"a1"},`, ``, 1), wantErr: "agent.id is required"},
		{name: "agent without id", line: strings.Replace(minimal, `{"id":"a1"}`, `{"model":"m"}`, 1), wantErr: "agent.id is required"},
		{name: "no intent and no mandate", line: strings.Replace(minimal, `"intent":"reply to Bob",`, ``, 1), wantErr: "intent is required"},
		{name: "invalid mandate", line: strings.Replace(minimal, `"intent":"reply to Bob",`, `"mandate":{"allow":["fly"]},`, 1), wantErr: "mandate"},
		{name: "no calls", line: `{"id":"e1","category":"a/benign","intent":"x","agent":{"id":"a"},"calls":[]}`, wantErr: "at least one call"},
		{name: "call without tool", line: strings.Replace(minimal, `"tool":"send_email",`, ``, 1), wantErr: "calls[0]: tool is required"},
		{name: "call without label", line: strings.Replace(minimal, `,"label":"allow"`, ``, 1), wantErr: "calls[0]: label is required"},
		{name: "unknown label", line: strings.Replace(minimal, `"label":"allow"`, `"label":"maybe"`, 1), wantErr: `label "maybe"`},
		{name: "label of the wrong type", line: strings.Replace(minimal, `"label":"allow"`, `"label":true`, 1), wantErr: `label true`},
		{name: "args not an object", line: strings.Replace(minimal, `{"to":"bob@example.com"}`, `["bob"]`, 1), wantErr: "args must be a JSON object"},
		{name: "undeclared sub-agent", line: strings.Replace(minimal, `"tool":"send_email",`, `"tool":"send_email","subagent":"ghost",`, 1), wantErr: `subagent "ghost" is not declared`},
		{name: "sub-agent declared twice", line: `{"id":"e1","category":"a/benign","intent":"x","agent":{"id":"a"},"subagents":[{"name":"r","intent":"x"},{"name":"r","intent":"y"}],"calls":[{"tool":"t","label":null}]}`, wantErr: "declared twice"},
		{name: "sub-agent without prompt", line: `{"id":"e1","category":"a/benign","intent":"x","agent":{"id":"a"},"subagents":[{"name":"r"}],"calls":[{"tool":"t","label":null}]}`, wantErr: "intent is required"},
		{name: "relative working directory", line: strings.Replace(minimal, `"agent"`, `"context":{"working_directory":"src"},"agent"`, 1), wantErr: "must be an absolute path"},
		{name: "tool without name", line: strings.Replace(minimal, `"agent"`, `"tools":[{"description":"x"}],"agent"`, 1), wantErr: "tools[0]: name is required"},
		{name: "annotation of the wrong type", line: strings.Replace(minimal, `"agent"`, `"tools":[{"name":"x","annotations":{"readOnlyHint":"yes"}}],"agent"`, 1), wantErr: "readOnlyHint"},
		{name: "empty", line: ``, wantErr: "empty line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Decode([]byte(tt.line))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, e)
			}
		})
	}
}

// TestDecodeKeepsNoGraderFields holds the decoded episode free of anything
// only the grader may see: the meta object is not decoded at all, and the
// label and why stay on Call, where only the grading reads them.
func TestDecodeKeepsNoGraderFields(t *testing.T) {
	line := `{"id":"e1","category":"a/benign","intent":"x","agent":{"id":"a"},"meta":{"secret":"META-CANARY"},` +
		`"calls":[{"tool":"t","args":{"k":"v"},"label":"block","why":"WHY-CANARY"}]}`
	e, err := Decode([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(struct {
		Intent, WorkingDir string
		Tools, Subagents   any
		Agent              Agent
		Args, Output       json.RawMessage
	}{e.Intent, e.WorkingDir, e.Tools, e.Subagents, e.Agent, e.Calls[0].Args, e.Calls[0].Output})
	if err != nil {
		t.Fatal(err)
	}
	for _, canary := range []string{"META-CANARY", "WHY-CANARY", "block"} {
		if strings.Contains(string(b), canary) {
			t.Errorf("what the engine is given contains %q: %s", canary, b)
		}
	}
}
