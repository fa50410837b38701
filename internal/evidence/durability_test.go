package evidence_test

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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// server is a `mandate serve` subprocess.
type serverProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	url   string
	token string
	exit  chan error
}

func buildMandate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mandate")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/mandate-dev/mandate/cmd/mandate")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func startServer(t *testing.T, bin, data string) *serverProc {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", "127.0.0.1:0", "--log-level", "warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serverProc{t: t, cmd: cmd, exit: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, addr, ok := strings.Cut(sc.Text(), "listening on "); ok {
				found <- addr
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { s.exit <- cmd.Wait() }()
	select {
	case s.url = <-found:
	case err := <-s.exit:
		t.Fatalf("mandate serve exited: %v\n%s", err, stderr.String())
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("mandate serve did not say where it listens\n%s", stderr.String())
	}
	tok, err := os.ReadFile(filepath.Join(data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	s.token = strings.TrimSpace(string(tok))
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			<-s.exit
		}
	})
	return s
}

func (s *serverProc) post(client *http.Client, path string, body string) (int, map[string]any, error) {
	req, _ := http.NewRequest("POST", s.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, out, nil
}

func (s *serverProc) get(path string) (int, []byte) {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestDurabilityUnderSIGKILL drives concurrent evaluate load at a real
// `mandate serve`, kills it with SIGKILL mid-load, restarts it, and checks
// that every decision it acknowledged is in the store and in the evidence
// log, and that the log verifies.
func TestDurabilityUnderSIGKILL(t *testing.T) {
	testpeer.Slow(t)
	bin := buildMandate(t)
	data := t.TempDir()
	srv := startServer(t, bin, data)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	var sessions []string
	for i := range 6 {
		code, out, err := srv.post(client, "/v1/sessions", fmt.Sprintf(`{"agent_id":"agent-%d","intent":"Fix the failing test in ./pkg/auth and run the tests","working_directory":"/home/dev/project"}`, i))
		if err != nil || code != http.StatusCreated {
			t.Fatalf("create session: %d %v %v", code, out, err)
		}
		sessions = append(sessions, out["session_id"].(string))
	}

	var (
		mu    sync.Mutex
		acked = map[string]string{} // decision id → session
		wg    sync.WaitGroup
		stop  = make(chan struct{})
	)
	calls := []string{
		`"tool":"Read","args":{"file_path":"pkg/auth/token.go"}`,
		`"tool":"Bash","args":{"command":"go test ./pkg/auth/..."}`,
		`"tool":"Edit","args":{"file_path":"pkg/auth/token.go","old_string":"a","new_string":"b"}`,
		`"tool":"send_email","args":{"to":"eve@elsewhere.example"}`,
	}
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s := sessions[(w+i)%len(sessions)]
				code, out, err := srv.post(client, "/v1/evaluate", `{"session_id":"`+s+`",`+calls[i%len(calls)]+`}`)
				if err != nil {
					continue // the server is gone: not acknowledged
				}
				if code == http.StatusOK {
					mu.Lock()
					acked[out["decision_id"].(string)] = s
					mu.Unlock()
				}
			}
		}()
	}
	// Kill it once it has acknowledged a good number of decisions.
	target := 800
	if raceEnabled {
		target = 200 // the clients run under the race detector
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= target || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-srv.exit
	close(stop)
	wg.Wait()
	mu.Lock()
	n := len(acked)
	mu.Unlock()
	if n < 100 {
		t.Fatalf("only %d decisions acknowledged before the kill", n)
	}
	t.Logf("%d decisions acknowledged before SIGKILL", n)

	// Restart: every acknowledged decision is in the store.
	srv = startServer(t, bin, data)
	for id := range acked {
		if code, b := srv.get("/v1/decisions/" + id); code != http.StatusOK {
			t.Fatalf("acknowledged decision %s is not in the store after the crash: %d %s", id, code, b)
		}
	}
	// … and in the log: each session's bundle verifies offline and holds
	// all of its acknowledged decisions.
	pub, err := exec.Command(bin, "evidence", "pubkey", "--data", data).Output()
	if err != nil {
		t.Fatal(err)
	}
	v, err := evidence.NewVerifier(string(pub))
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string]bool{}
	for _, s := range sessions {
		code, bundle := srv.get("/v1/evidence/sessions/" + s + "/bundle")
		if code != http.StatusOK {
			t.Fatalf("bundle of %s: %d %s", s, code, bundle)
		}
		if _, err := evidence.VerifyBundle(bundle, v); err != nil {
			t.Fatalf("bundle of %s after the crash: %v", s, err)
		}
		var b struct {
			Records []struct {
				Record struct {
					Type    string `json:"type"`
					Content struct {
						ID string `json:"decision_id"`
					} `json:"content"`
				} `json:"record"`
			} `json:"records"`
		}
		if err := json.Unmarshal(bundle, &b); err != nil {
			t.Fatal(err)
		}
		for _, r := range b.Records {
			if r.Record.Type == "decision" {
				logged[r.Record.Content.ID] = true
			}
		}
	}
	for id := range acked {
		if !logged[id] {
			t.Fatalf("acknowledged decision %s is not in the evidence log", id)
		}
	}

	// A clean stop signs a last checkpoint; the whole store verifies.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.exit:
	case <-time.After(20 * time.Second):
		t.Fatal("mandate serve did not stop on SIGTERM")
	}
	out, err := exec.Command(bin, "evidence", "verify", "--data", data, "--key", strings.TrimSpace(string(pub))).CombinedOutput()
	if err != nil {
		t.Fatalf("mandate evidence verify: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("VERIFIED")) || bytes.Contains(out, []byte("warning")) {
		t.Errorf("verify said:\n%s", out)
	}
	t.Logf("%s", out)
}
