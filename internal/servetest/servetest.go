// Package servetest runs the real `mandate serve` binary for end-to-end
// tests (a crash mid-load, replicas failing over): it builds cmd/mandate,
// starts it on a loopback port and waits until it says where it listens,
// and posts JSON to it as a client holding a token.
//
// Tests that drive the service in-process use internal/app and
// internal/server instead; this is for what only a separate process shows
// (SIGKILL, several replicas on one store).
package servetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Build builds cmd/mandate into dir and returns the binary's path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "mandate")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	out, err := exec.Command("go", "build", "-o", bin, "github.com/mandate-dev/mandate/cmd/mandate").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

// Binary builds cmd/mandate into a temporary directory of the test.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Shared is cmd/mandate built at most once for all the tests of a package
// that keeps one (a variable of its tests); its TestMain calls Remove.
type Shared struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// Binary builds cmd/mandate the first time it is called, and returns it.
func (s *Shared) Binary(t testing.TB) string {
	t.Helper()
	s.once.Do(func() {
		s.dir, s.err = os.MkdirTemp("", "mandate-test-")
		if s.err == nil {
			s.bin, s.err = Build(s.dir)
		}
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.bin
}

// Remove deletes the binary, if it was built.
func (s *Shared) Remove() {
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Proc is a running `mandate serve`.
type Proc struct {
	// Cmd is the process, for signals.
	Cmd *exec.Cmd
	// URL is where it listens, as it printed it.
	URL  string
	done chan struct{}
	err  error
	mu   sync.Mutex
	errs bytes.Buffer
}

// Start runs bin with args (a serve command listening on 127.0.0.1:0) and
// waits at most wait until it prints "listening on URL"; the test fails if
// it exits or stays silent. The process is killed when the test ends if it
// is still running.
func Start(t testing.TB, wait time.Duration, bin string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Proc{Cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = lockedWriter{p}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, addr, ok := strings.Cut(sc.Text(), "listening on "); ok {
				found <- strings.TrimSpace(addr)
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case p.URL = <-found:
	case <-p.done:
		t.Fatalf("%s exited: %v\n%s", strings.Join(args, " "), p.err, p.Stderr())
	case <-time.After(wait):
		t.Fatalf("%s did not say where it listens in %v\n%s", strings.Join(args, " "), wait, p.Stderr())
	}
	return p
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Stderr is what the process wrote to standard error so far.
func (p *Proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errs.String()
}

// lockedWriter keeps the process's standard error, which its copying
// goroutine writes while a failing test may read it.
type lockedWriter struct{ p *Proc }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.errs.Write(b)
}

// Answer is a JSON reply: its status and its body as an object.
type Answer struct {
	Code int
	Body map[string]any
}

// Post sends body to url+path with the bearer token through c. An error is
// a request that got no answer, or an answer that is not a JSON object.
func Post(c *http.Client, url, token, path, body string) (*Answer, error) {
	req, err := http.NewRequest("POST", url+path, strings.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("post %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	a := &Answer{Code: resp.StatusCode}
	if err := json.Unmarshal(b, &a.Body); err != nil {
		return nil, fmt.Errorf("%d %s: %w", resp.StatusCode, b, err)
	}
	return a, nil
}

// Sessions opens n sessions, agent-0 to agent-(n-1) on one task, the i-th
// through the server at(i), and returns their ids; the test fails if one
// is refused.
func Sessions(t testing.TB, c *http.Client, token string, n int, at func(i int) string) []string {
	t.Helper()
	var ids []string
	for i := range n {
		a, err := Post(c, at(i), token, "/v1/sessions", fmt.Sprintf(`{"agent_id":"agent-%d","intent":"Fix the failing test in ./pkg/auth and run the tests","working_directory":"/home/dev/project"}`, i))
		if err != nil || a.Code != http.StatusCreated {
			t.Fatalf("create session %d through %s: %+v %v", i, at(i), a, err)
		}
		ids = append(ids, a.Body["session_id"].(string))
	}
	return ids
}

// Load runs workers goroutines, worker w calling call(w, i) for i = 0, 1,
// … until stop is called; stop waits for them to return.
func Load(workers int, call func(w, i int)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				call(w, i)
			}
		}()
	}
	return sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
}
