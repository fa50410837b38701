package postgres

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/servetest"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

func startReplica(t *testing.T, bin, dsn, data string) *servetest.Proc {
	t.Helper()
	return servetest.Start(t, 60*time.Second, bin, "serve", "--store", dsn, "--data", data, "--listen", "127.0.0.1:0", "--log-level", "warn")
}

func copyKeys(t *testing.T, from, to string) {
	t.Helper()
	for _, f := range []string{"evidence.key", "redact.key", "admin.token"} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFailover: 3 replicas on loopback against one database, a short load
// spread over them, kill -9 of one mid-load (the first started, the
// integrator as a rule). No acknowledged decision is lost, the others keep
// answering, every refusal says deny, and the log verifies afterwards. Then
// every database connection is cut: calls are refused while it lasts and
// succeed again by themselves.
func TestFailover(t *testing.T) {
	testpeer.Slow(t)
	dsn := pgtest.DSN(t)
	bin := servetest.Binary(t)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	reps := []*servetest.Proc{startReplica(t, bin, dsn, dirs[0])}
	copyKeys(t, dirs[0], dirs[1])
	copyKeys(t, dirs[0], dirs[2])
	reps = append(reps, startReplica(t, bin, dsn, dirs[1]), startReplica(t, bin, dsn, dirs[2]))
	tokb, _ := os.ReadFile(filepath.Join(dirs[0], "admin.token"))
	token := strings.TrimSpace(string(tokb))
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}

	sessions := servetest.Sessions(t, client, token, 9, func(i int) string { return reps[i%3].URL })
	var (
		mu         sync.Mutex
		acked      = map[string]bool{}
		afterKill  atomic.Int64
		killed     atomic.Bool
		badAnswers []string
	)
	dead := func(i int) bool { return i == 0 && killed.Load() }
	stop := servetest.Load(8, func(w, n int) {
		sess := sessions[(w+n)%len(sessions)]
		body := fmt.Sprintf(`{"session_id":%q,"tool":"Read","args":{"file_path":"/home/dev/project/pkg/auth/auth_%d.go"}}`, sess, n)
		for try := range 3 {
			i := (w + n + try) % 3
			if dead(i) {
				continue
			}
			a, err := servetest.Post(client, reps[i].URL, token, "/v1/evaluate", body)
			if err != nil {
				continue // the replica died under us: the next one
			}
			if a.Code == http.StatusOK {
				mu.Lock()
				acked[a.Body["decision_id"].(string)] = true
				mu.Unlock()
				if killed.Load() {
					afterKill.Add(1)
				}
			} else if a.Body["effect"] != "deny" {
				mu.Lock()
				badAnswers = append(badAnswers, fmt.Sprintf("%d %v", a.Code, a.Body))
				mu.Unlock()
			}
			break
		}
	})
	time.Sleep(1500 * time.Millisecond)
	if err := reps[0].Cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	killed.Store(true)
	<-reps[0].Done()
	time.Sleep(1500 * time.Millisecond)
	stop()
	mu.Lock()
	t.Logf("%d decisions acknowledged, %d after the kill", len(acked), afterKill.Load())
	for _, b := range badAnswers {
		t.Errorf("a failed evaluate did not say deny: %s", b)
	}
	mu.Unlock()
	if afterKill.Load() == 0 {
		t.Fatal("no decision was acknowledged after the kill: the other replicas stopped answering")
	}

	// Cut every connection of the replicas; calls fail closed, then recover.
	admin := pgtest.Conn(t, pgtest.Server(t))
	ctx := context.Background()
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`, schemaOf(t, dsn)); err != nil {
		t.Fatal(err)
	}
	recovered := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		a, err := servetest.Post(client, reps[1].URL, token, "/v1/evaluate", fmt.Sprintf(`{"session_id":%q,"tool":"Read","args":{"file_path":"/home/dev/project/x"}}`, sessions[0]))
		if err != nil {
			t.Fatal(err)
		}
		if a.Code == http.StatusOK {
			acked[a.Body["decision_id"].(string)] = true
			recovered = true
			break
		}
		if a.Body["effect"] != "deny" {
			t.Fatalf("while the database was cut off: %d %v, want a deny", a.Code, a.Body)
		}
	}
	if !recovered {
		t.Fatal("the replica did not recover after its connections were cut")
	}

	// Every acknowledged decision is in the database, and the log verifies
	// (the surviving replicas integrate what the killed one committed).
	st, err := Open(ctx, dsn, Options{NoIntegrator: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	missing := 0
	for id := range acked {
		if _, err := st.GetDecision(ctx, id); err != nil {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged decisions are not in the database", missing, len(acked))
	}
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := st.SyncEvidence(sctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // a checkpoint covering them (signed at least once a second)
	out, err := exec.Command(bin, "evidence", "verify", "--store", dsn, "--data", dirs[1]).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "VERIFIED") {
		t.Fatalf("evidence verify --store: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
