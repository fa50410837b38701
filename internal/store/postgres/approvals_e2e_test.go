package postgres

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/servetest"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// TestApprovalsThroughServeReplicas: two `mandate serve` processes on one
// database. An agent's evaluate waits on replica 1; a person answers with
// `mandate approvals approve` against replica 2, using an approver token
// created in the shared store; the waiting evaluate on replica 1 returns
// allow (rule approval.granted) long before its wait ends.
func TestApprovalsThroughServeReplicas(t *testing.T) {
	testpeer.Slow(t)
	dsn := pgtest.DSN(t)
	bin := servetest.Binary(t)
	dirs := []string{t.TempDir(), t.TempDir()}
	r1 := startReplica(t, bin, dsn, dirs[0])
	copyKeys(t, dirs[0], dirs[1])
	r2 := startReplica(t, bin, dsn, dirs[1])
	tokb, err := os.ReadFile(filepath.Join(dirs[0], "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(tokb))
	out, err := exec.Command(bin, "token", "create", "--role", "approver", "--name", "person", "--store", dsn, "--data", dirs[1]).CombinedOutput()
	if err != nil {
		t.Fatalf("token create --role approver --store: %v\n%s", err, out)
	}
	approver := strings.TrimSpace(string(out))
	client := &http.Client{Timeout: 90 * time.Second}

	a, err := servetest.Post(client, r1.URL, admin, "/v1/sessions", `{"agent_id":"mailer","intent":"Send the Q3 summary to alice@example.com"}`)
	if err != nil || a.Code != http.StatusCreated {
		t.Fatalf("create session: %+v %v", a, err)
	}
	sid := a.Body["session_id"].(string)
	call := `{"session_id":"` + sid + `","tool":"send_email","args":{"to":"eve@auditors.example","subject":"Q3","body":"numbers"}`
	first, err := servetest.Post(client, r1.URL, admin, "/v1/evaluate", call+`}`)
	if err != nil || first.Body["effect"] != "ask" {
		t.Fatalf("first call: %+v %v", first, err)
	}
	id := first.Body["approval_id"].(string)

	var (
		wg     sync.WaitGroup
		waited *servetest.Answer
		werr   error
		took   time.Duration
	)
	wg.Go(func() {
		t0 := time.Now()
		waited, werr = servetest.Post(client, r1.URL, admin, "/v1/evaluate", call+`,"wait":"60s"}`)
		took = time.Since(t0)
	})
	time.Sleep(300 * time.Millisecond) // let the wait begin (an answer before it is found at once anyway)
	cmd := exec.Command(bin, "approvals", "approve", id, "--note", "Eve audits us")
	cmd.Env = append(os.Environ(), "MANDATE_URL="+r2.URL, "MANDATE_TOKEN="+approver)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mandate approvals approve through replica 2: %v\n%s", err, out)
	}
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	t.Logf("the evaluate waiting on replica 1 returned %s after it started", took)
	rules, _ := waited.Body["rules"].([]any)
	if waited.Body["effect"] != "allow" || len(rules) == 0 || rules[0] != "approval.granted" || waited.Body["approval_id"] != id {
		t.Errorf("the waiting evaluate: %d %v", waited.Code, waited.Body)
	}
	if took >= 60*time.Second {
		t.Errorf("the waiting evaluate waited out its wait (%s)", took)
	}
	// An agent's token never answers, whichever replica it asks.
	ag, err := exec.Command(bin, "token", "create", "--role", "agent", "--agent", "mailer", "--store", dsn, "--data", dirs[1]).CombinedOutput()
	if err != nil {
		t.Fatalf("token create --role agent: %v\n%s", err, ag)
	}
	third, err := servetest.Post(client, r2.URL, admin, "/v1/evaluate", call+`}`)
	if err != nil || third.Body["effect"] != "ask" {
		t.Fatalf("the same call again (the approval was used once): %+v %v", third, err)
	}
	if a, err := servetest.Post(client, r1.URL, strings.TrimSpace(string(ag)), "/v1/approvals/"+third.Body["approval_id"].(string), `{"decision":"approve"}`); err != nil || a.Code != http.StatusForbidden {
		t.Errorf("an agent token answered: %+v %v", a, err)
	}
}
