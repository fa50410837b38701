package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The example, exactly as written.
const example = `
approvals:
  timeout: 10m                 # default deadline of a pending approval
notify:
  - url: http://127.0.0.1:9000/mandate     # POSTed JSON for each event listed
    secret_env: MANDATE_WEBHOOK_SECRET     # HMAC key, read from the environment
    events: [approval]                     # approval, approval.answered, deny, gap
judge:
  url: http://127.0.0.1:8000/v1            # an OpenAI-compatible base URL
  model: qwen2.5-7b-instruct
  api_key_env: MANDATE_JUDGE_KEY           # optional
  mode: auto                               # off | advisory | auto
  eligible: all                            # all asks, or a list of rule names
  timeout: 5s
`

func TestExample(t *testing.T) {
	f, err := Parse([]byte(example), env(map[string]string{"MANDATE_WEBHOOK_SECRET": "s3cret-hmac", "MANDATE_JUDGE_KEY": "sk-judge-key"}))
	if err != nil {
		t.Fatal(err)
	}
	if f.Approvals.Timeout != 10*time.Minute {
		t.Errorf("approvals.timeout %s", f.Approvals.Timeout)
	}
	if len(f.Notify) != 1 || f.Notify[0].URL != "http://127.0.0.1:9000/mandate" || f.Notify[0].Secret.Reveal() != "s3cret-hmac" || f.Notify[0].Events[0] != "approval" || f.Notify[0].Format != "json" {
		t.Errorf("notify %+v", f.Notify)
	}
	j := f.Judge
	if j == nil || j.URL != "http://127.0.0.1:8000/v1" || j.Model != "qwen2.5-7b-instruct" || j.Mode != "auto" || !j.Eligible.All || j.Timeout != 5*time.Second || j.APIKey.Reveal() != "sk-judge-key" {
		t.Errorf("judge %+v", j)
	}
	// Secrets never print.
	for _, s := range []string{fmt.Sprintf("%v %+v %#v", f.Notify[0], f.Notify[0], f.Judge), mustJSON(t, f)} {
		if strings.Contains(s, "s3cret-hmac") || strings.Contains(s, "sk-judge-key") {
			t.Errorf("a secret was printed: %s", s)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEligibleList(t *testing.T) {
	f, err := Parse([]byte("judge:\n  url: http://127.0.0.1:8000/v1\n  model: m\n  eligible: [builtin.recipient-outside, my.rule]\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if f.Judge.Mode != "advisory" || f.Judge.Eligible.All || len(f.Judge.Eligible.Rules) != 2 {
		t.Errorf("judge %+v", f.Judge)
	}
	f, err = Parse([]byte("judge:\n  mode: off\n"), env(nil))
	if err != nil || f.Judge != nil {
		t.Errorf("mode off: %+v %v", f.Judge, err)
	}
}

func TestMCPSectionStillParses(t *testing.T) {
	f, err := Parse([]byte("mcp:\n  upstreams:\n    - name: fs\n      command: npx\n      args: [-y, x]\napprovals:\n  timeout: 2m\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.MCP.Upstreams) != 1 || f.MCP.Upstreams[0].Name != "fs" || f.Approvals.Timeout != 2*time.Minute {
		t.Errorf("%+v %+v", f.MCP, f.Approvals)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"aprovals:\n  timeout: 1m\n", "aprovals"},
		{"approvals:\n  timeout: 1m\n  deadline: 2m\n", "deadline"},
		{"approvals:\n  timeout: soon\n", "soon"},
		{"approvals:\n  timeout: 30d\n", "30d"},
		{"approvals:\n  link: https://x.example/approvals\n", "{id}"},
		{"notify:\n  - url: http://127.0.0.1:9/x\n    secret_env: NOPE\n", "NOPE is not set"},
		{"notify:\n  - url: http://127.0.0.1:9/x\n", "secret_env is required"},
		{"notify:\n  - url: ftp://x\n    secret_env: S\n", "http(s)"},
		{"notify:\n  - url: http://127.0.0.1:9/x\n    secret_env: S\n    events: [approvals]\n", `"approvals"`},
		{"notify:\n  - url: http://127.0.0.1:9/x\n    secret_env: S\n    format: teams\n", "teams"},
		{"judge:\n  url: http://127.0.0.1:8000/v1\n  model: m\n  mode: yolo\n", "yolo"},
		{"judge:\n  model: m\n", "url"},
		{"judge:\n  url: http://127.0.0.1:8000/v1\n  model: m\n  eligible: some\n", "some"},
		{"judge:\n  url: http://127.0.0.1:8000/v1\n  model: m\n  api_key_env: NOKEY\n", "NOKEY is not set"},
		{"judge:\n  url: http://127.0.0.1:8000/v1\n  model: m\n  temperature: 2\n", "temperature"},
	} {
		_, err := Parse([]byte(tc.doc), env(map[string]string{"S": "x"}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to name %q", tc.doc, err, tc.want)
		}
	}
}
