package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMCPStdioBadInvocations(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(cfg, []byte("mcp:\n  upstreams:\n    - {name: a.b, command: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		contains string
	}{
		{"no command", []string{"mcp", "stdio", "--intent", "x"}, "requires at least 1 arg"},
		{"command not after --", []string{"mcp", "stdio", "--intent", "x", "npx"}, "after --"},
		{"no mandate", []string{"mcp", "stdio", "--data", data, "--", "npx"}, "--intent"},
		{"bad mandate file", []string{"mcp", "stdio", "--mandate", "/nonexistent.yaml", "--data", data, "--", "npx"}, "nonexistent"},
		{"server and data", []string{"mcp", "stdio", "--intent", "x", "--server", "http://127.0.0.1:1", "--data", data, "--", "npx"}, "not both"},
		{"server without token", []string{"mcp", "stdio", "--intent", "x", "--server", "http://127.0.0.1:1", "--", "npx"}, "needs a token"},
		{"server unreachable", []string{"mcp", "stdio", "--intent", "x", "--server", "http://127.0.0.1:1", "--token", "mdt_x", "--", "npx"}, "create the session"},
		{"upstream that does not start", []string{"mcp", "stdio", "--intent", "x", "--data", data, "--", "/nonexistent/server"}, "/nonexistent/server"},
		{"bad serve config", []string{"serve", "--data", data, "--config", cfg}, "no dots"},
		{"missing serve config", []string{"serve", "--data", data, "--config", "/nonexistent.yaml"}, "nonexistent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(t, "", tt.args...)
			if code == 0 || !strings.Contains(out+errs, tt.contains) {
				t.Fatalf("exit %d, want an error with %q\nstdout: %s\nstderr: %s", code, tt.contains, out, errs)
			}
		})
	}
}

func TestUpstreamNameFor(t *testing.T) {
	for in, want := range map[string]string{
		"npx":                    "npx",
		"/usr/bin/node":          "node",
		"mcp-server.filesystem":  "mcp-server-filesystem",
		"/":                      "upstream",
		strings.Repeat("a", 100): strings.Repeat("a", 64),
	} {
		if got := upstreamNameFor(in); got != want {
			t.Errorf("upstreamNameFor(%q) = %q, want %q", in, got, want)
		}
	}
}
