package mcpgw

import (
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	env := map[string]string{"GH_TOKEN": "ghp_x", "NOTES": "/home/u/notes"}
	getenv := func(k string) string { return env[k] }
	good := `
mcp:
  call_timeout: 30s
  upstreams:
    - name: filesystem
      command: npx
      args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/u/notes"]
      env: {NOTES_DIR: "${NOTES}"}
    - name: github
      url: https://api.example.com/mcp
      headers: {Authorization: "Bearer ${GH_TOKEN}"}
`
	c, err := ParseConfig([]byte(good), getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Upstreams) != 2 || c.CallTimeout != 30*time.Second || c.Upstreams[0].Env["NOTES_DIR"] != "/home/u/notes" || c.Upstreams[1].Headers["Authorization"] != "Bearer ghp_x" {
		t.Fatalf("parsed: %+v", c)
	}
	if c, err := ParseConfig(nil, getenv); err != nil || len(c.Upstreams) != 0 {
		t.Fatalf("empty file: %+v %v", c, err)
	}
	bad := []struct{ name, doc, msg string }{
		{"unknown top-level key", "mpc: {}", "field mpc not found"},
		{"unknown upstream key", "mcp:\n  upstreams:\n    - {name: a, command: x, cmd: y}", "field cmd not found"},
		{"dotted name", "mcp:\n  upstreams:\n    - {name: a.b, command: x}", "no dots"},
		{"empty name", "mcp:\n  upstreams:\n    - {command: x}", `name ""`},
		{"neither command nor url", "mcp:\n  upstreams:\n    - {name: a}", "give command"},
		{"both", "mcp:\n  upstreams:\n    - {name: a, command: x, url: 'http://h/mcp'}", "not both"},
		{"headers on a command", "mcp:\n  upstreams:\n    - {name: a, command: x, headers: {A: b}}", "headers are for url"},
		{"args on a url", "mcp:\n  upstreams:\n    - {name: a, url: 'http://h/mcp', args: [x]}", "args, env and dir"},
		{"url scheme", "mcp:\n  upstreams:\n    - {name: a, url: 'ftp://h/mcp'}", "want http(s)"},
		{"same name twice", "mcp:\n  upstreams:\n    - {name: a, command: x}\n    - {name: a, command: y}", "used twice"},
		{"unset variable", "mcp:\n  upstreams:\n    - {name: a, url: 'http://h/mcp', headers: {A: '${NOPE}'}}", "NOPE is not set"},
		{"negative timeout", "mcp:\n  call_timeout: -1s", "negative"},
		{"not yaml", "mcp: [", "config"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.doc), getenv)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want an error containing %q", err, tt.msg)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"mcp:\n  upstreams:\n    - {name: a, command: x, args: [y], env: {K: '${HOME}'}}",
		"mcp:\n  upstreams:\n    - {name: b, url: 'https://h/mcp', headers: {A: b}}\n  call_timeout: 1m",
		"mcp: {}", "", "mcp: [", "a: b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := ParseConfig([]byte(doc), func(string) string { return "v" })
		if err != nil {
			return
		}
		// Whatever parses is valid.
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed config does not validate: %v", err)
		}
	})
}

func TestAgentID(t *testing.T) {
	for in, want := range map[string]string{
		"claude-ai":      "claude-ai",
		"Cursor (1.2)":   "Cursor--1.2",
		"  ":             "",
		"émoji 🙂 client": "moji---client",
	} {
		if got := agentID(in); got != want {
			t.Errorf("agentID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHeaderIntent(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{"Read my notes", "Read my notes", ""},
		{"R%C3%A4um%20mein%20Postfach%20auf", "Räum mein Postfach auf", ""},
		{"100%25 sure", "100% sure", ""},
		{"50% off", "", "percent-decoded"},
	} {
		got, err := headerIntent(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: got %v, want error %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: got %q %v, want %q", tt.in, got, err, tt.want)
		}
	}
}
