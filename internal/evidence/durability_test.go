package evidence_test

import (
	"bytes"
	"encoding/json"
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
	"github.com/mandate-dev/mandate/internal/servetest"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// serverProc is a `mandate serve` subprocess on a data directory, with
// its admin token.
type serverProc struct {
	*servetest.Proc
	t     *testing.T
	token string
}

func startServer(t *testing.T, bin, data string) *serverProc {
	t.Helper()
	p := servetest.Start(t, 20*time.Second, bin, "serve", "--data", data, "--listen", "127.0.0.1:0", "--log-level", "warn")
	tok, err := os.ReadFile(filepath.Join(data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return &serverProc{Proc: p, t: t, token: strings.TrimSpace(string(tok))}
}

func (s *serverProc) post(client *http.Client, path string, body string) (*servetest.Answer, error) {
	return servetest.Post(client, s.URL, s.token, path, body)
}

func (s *serverProc) get(path string) (int, []byte) {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.URL+path, nil)
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
	bin := servetest.Binary(t)
	data := t.TempDir()
	srv := startServer(t, bin, data)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	sessions := servetest.Sessions(t, client, srv.token, 6, func(int) string { return srv.URL })
	var (
		mu    sync.Mutex
		acked = map[string]string{} // decision id → session
	)
	calls := []string{
		`"tool":"Read","args":{"file_path":"pkg/auth/token.go"}`,
		`"tool":"Bash","args":{"command":"go test ./pkg/auth/..."}`,
		`"tool":"Edit","args":{"file_path":"pkg/auth/token.go","old_string":"a","new_string":"b"}`,
		`"tool":"send_email","args":{"to":"eve@elsewhere.example"}`,
	}
	stop := servetest.Load(16, func(w, i int) {
		s := sessions[(w+i)%len(sessions)]
		a, err := srv.post(client, "/v1/evaluate", `{"session_id":"`+s+`",`+calls[i%len(calls)]+`}`)
		if err != nil {
			return // the server is gone: not acknowledged
		}
		if a.Code == http.StatusOK {
			mu.Lock()
			acked[a.Body["decision_id"].(string)] = s
			mu.Unlock()
		}
	})
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
	if err := srv.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-srv.Done()
	stop()
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
	if err := srv.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.Done():
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
