package hook_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/hook"
)

// TestSessionFingerprint: a session the hook creates records the model the
// SessionStart event names and a hash of the project's CLAUDE.md and
// settings; changing CLAUDE.md gives the next session another version.
func TestSessionFingerprint(t *testing.T) {
	h, a := inProcess(t)
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte("Run the tests before you commit.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(name string, model any) (string, string) {
		t.Helper()
		answer(t, h, event(t, hook.EventSessionStart, map[string]any{"session_id": sid(t, name), "cwd": dir, "source": "startup", "model": model}))
		s, err := a.Store.GetSession(ctx, hook.MainSessionID(sid(t, name)))
		if err != nil {
			t.Fatal(err)
		}
		return s.Agent.Model, s.Agent.SystemPromptHash
	}
	model, first := start("a", "claude-opus-4-1")
	if model != "claude-opus-4-1" || !strings.HasPrefix(first, "sha256:") {
		t.Fatalf("agent version: model %q, instructions %q", model, first)
	}
	if model, again := start("b", map[string]any{"id": "claude-opus-4-1", "display_name": "Opus"}); model != "claude-opus-4-1" || again != first {
		t.Fatalf("same instructions, model as an object: %q %q (want %q)", model, again, first)
	}
	if err := os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte("Commit with --no-verify.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, changed := start("c", 42); changed == first || changed == "" {
		t.Fatalf("a changed CLAUDE.md kept the hash %q", changed)
	}
}

// TestSessionToolset: the session's tool-set hash is the tool set the
// settings configure — the tools permission rules name, the MCP servers of
// .mcp.json — so allowing another tool or adding an MCP server is a new
// version of the agent, and the same configuration is the same one.
func TestSessionToolset(t *testing.T) {
	h, a := inProcess(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := func(name string) string {
		t.Helper()
		answer(t, h, event(t, hook.EventSessionStart, map[string]any{"session_id": sid(t, name), "cwd": dir, "source": "startup"}))
		s, err := a.Store.GetSession(ctx, hook.MainSessionID(sid(t, name)))
		if err != nil {
			t.Fatal(err)
		}
		return s.Agent.ToolsetHash
	}
	if got := start("none"); got != "" {
		t.Fatalf("no settings, tool set %q", got)
	}
	write(".claude/settings.json", `{"permissions": {"allow": ["Bash(go test:*)", "Read"], "deny": ["WebFetch"]}}`)
	first := start("a")
	if !strings.HasPrefix(first, "sha256:") {
		t.Fatalf("tool set of settings that allow tools: %q", first)
	}
	// The same tools in other rules and order: the same tool set.
	write(".claude/settings.json", `{"permissions": {"deny": ["WebFetch(domain:x.example)"], "allow": ["Read", "Bash(go build:*)", "Bash(go test:*)"]}}`)
	if got := start("b"); got != first {
		t.Fatalf("same tools, tool set %q, want %q", got, first)
	}
	write(".mcp.json", `{"mcpServers": {"github": {"command": "gh-mcp"}}}`)
	withMCP := start("c")
	if withMCP == first || withMCP == "" {
		t.Fatalf("an MCP server added kept the tool set %q", withMCP)
	}
	write(".claude/settings.json", `{"permissions": {"allow": ["Read", "Bash(go test:*)", "WebFetch"]}}`)
	if got := start("d"); got == withMCP || got == "" {
		t.Fatalf("WebFetch allowed instead of denied kept the tool set %q", got)
	}
	write(".claude/settings.json", `{not json`)
	if got := start("e"); !strings.HasPrefix(got, "sha256:") {
		t.Fatalf("unparsable settings must leave .mcp.json's servers: %q", got)
	}
}
