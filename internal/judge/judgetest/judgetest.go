// Package judgetest starts the judge's test server — a small
// OpenAI-compatible chat-completions program (../testdata/judgeserver) —
// as a separate process, with scripted answers, for tests of the judge and
// of everything that uses it.
package judgetest

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Rule is one scripted answer: the first rule whose Match is a substring of
// the request's user message answers it, with Content as the message
// content, or Status as an HTTP error, or Raw as the whole body, after
// DelayMS.
type Rule struct {
	Match   string `json:"match"`
	Content string `json:"content,omitempty"`
	Status  int    `json:"status,omitempty"`
	DelayMS int    `json:"delay_ms,omitempty"`
	Raw     string `json:"raw,omitempty"`
}

// Server is a running test server.
type Server struct {
	// URL is the OpenAI-compatible base URL (…/v1).
	URL string
	log string
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

func build(t testing.TB) string {
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		src := filepath.Join(filepath.Dir(file), "..", "testdata", "judgeserver")
		dir, err := os.MkdirTemp("", "judgeserver")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "judgeserver")
		cmd := exec.Command("go", "build", "-o", binary, ".")
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = err
			binary = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build the judge test server: %v\n%s", buildErr, binary)
	}
	return binary
}

// Start builds (once) and starts the server with rules; it stops with the
// test.
func Start(t testing.TB, rules []Rule) *Server {
	t.Helper()
	bin := build(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	b, _ := json.Marshal(rules)
	if err := os.WriteFile(script, b, 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "requests.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-script", script, "-log", logPath)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				lines <- u
			}
		}
	}()
	select {
	case u := <-lines:
		return &Server{URL: u + "/v1", log: logPath}
	case <-time.After(20 * time.Second):
		t.Fatal("the judge test server did not start")
	}
	return nil
}

// Requests returns the request bodies the server received, in order.
func (s *Server) Requests(t testing.TB) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(s.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("request log: %v", err)
		}
		out = append(out, m)
	}
	return out
}

// RawRequests returns the request log as written, for scanning.
func (s *Server) RawRequests(t testing.TB) string {
	t.Helper()
	b, _ := os.ReadFile(s.log)
	return string(b)
}
