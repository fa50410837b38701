package hook_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/testpeer"
)

// TestInstallHTTPForm runs `mandate hook install claude-code --http`, then
// does what Claude Code does with the installed handler: fills the header's
// variable from its environment (only because allowedEnvVars lists it) and
// POSTs a recorded event to the URL. The server answers the event as the
// command form does; with the variable unset the header is empty and the
// answer is a deny.
func TestInstallHTTPForm(t *testing.T) {
	testpeer.Slow(t)
	s := newTestServer(t)
	bin := mandateBin.Binary(t)
	dir := t.TempDir()
	settings := filepath.Join(dir, "settings.json")
	cmd := exec.Command(bin, "hook", "install", "claude-code", "--http", "--settings", settings, "--server", s.url, "--token-file", s.tokenFile)
	cmd.Env = []string{"HOME=" + s.home, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "installed Mandate's http hooks for 7 events") {
		t.Fatalf("install --http: %v\n%s", err, out)
	}
	data, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type           string            `json:"type"`
				URL            string            `json:"url"`
				Headers        map[string]string `json:"headers"`
				AllowedEnvVars []string          `json:"allowedEnvVars"`
				Timeout        int               `json:"timeout"`
				OnFailure      string            `json:"onFailure"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &parsed); err != nil {
		t.Fatal(err)
	}
	h := parsed.Hooks["PreToolUse"][0].Hooks[0]
	if h.Type != "http" || h.OnFailure != "block" || h.Timeout != 30 || !strings.HasPrefix(h.URL, s.url+"/v1/hooks/claude-code?") {
		t.Fatalf("installed handler: %+v", h)
	}
	tok, _ := os.ReadFile(s.tokenFile)
	// Claude Code's substitution: $VAR from its environment when listed.
	fill := func(v, value string) string {
		for _, name := range h.AllowedEnvVars {
			v = strings.ReplaceAll(v, "$"+name, value)
		}
		return v
	}
	post := func(token string) map[string]any {
		t.Helper()
		body := bytes.ReplaceAll(s.payload(t, "pre_tool_use_read"), []byte(ccSession), []byte("http-install-test-session"))
		req, _ := http.NewRequest("POST", h.URL, bytes.NewReader(body))
		for k, v := range h.Headers {
			req.Header.Set(k, fill(v, token))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var ans struct {
			HookSpecificOutput map[string]any `json:"hookSpecificOutput"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &ans) != nil || ans.HookSpecificOutput == nil {
			t.Fatalf("answer %d: %s", resp.StatusCode, b)
		}
		return ans.HookSpecificOutput
	}
	if got := post(strings.TrimSpace(string(tok))); strings.Contains(got["permissionDecisionReason"].(string), "could not answer") || !strings.Contains(got["permissionDecisionReason"].(string), "(decision ") {
		t.Errorf("with the token, not a decision: %v", got)
	}
	if got := post(""); got["permissionDecision"] != "deny" || !strings.Contains(got["permissionDecisionReason"].(string), "no bearer token") {
		t.Errorf("with the variable unset: %v", got)
	}
}

// BenchmarkHookHTTP is BenchmarkHookProcess's event through the http form:
// the same server, the same event, POSTed as Claude Code's http handler
// does — no process. Run both for the difference a process start makes.
func BenchmarkHookHTTP(b *testing.B) {
	s := newTestServer(b)
	tok, err := os.ReadFile(s.tokenFile)
	if err != nil {
		b.Fatal(err)
	}
	post := func(body []byte) string {
		req, _ := http.NewRequest("POST", s.url+"/v1/hooks/claude-code", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return string(out)
	}
	event := bytes.ReplaceAll(s.payload(b, "pre_tool_use_read"), []byte(ccSession), []byte("bench-http"))
	post(bytes.ReplaceAll(s.payload(b, "user_prompt_submit"), []byte(ccSession), []byte("bench-http")))
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if out := post(event); !strings.Contains(out, `"allow"`) {
			b.Fatalf("answer %s", out)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
