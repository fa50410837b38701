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
