package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/events"
)

type received struct {
	header http.Header
	body   []byte
}

// receiver is a webhook endpoint that answers with the codes given, in
// order (then 200), and keeps what it got.
type receiver struct {
	mu    sync.Mutex
	codes []int
	got   []received
	hits  atomic.Int32
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.hits.Add(1)
	r.mu.Lock()
	code := http.StatusOK
	if len(r.codes) > 0 {
		code, r.codes = r.codes[0], r.codes[1:]
	}
	r.got = append(r.got, received{req.Header.Clone(), body})
	r.mu.Unlock()
	w.WriteHeader(code)
}

func (r *receiver) wait(t *testing.T, n int) []received {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		if len(r.got) >= n {
			out := append([]received(nil), r.got...)
			r.mu.Unlock()
			return out
		}
		r.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("received %d deliveries, want %d", r.hits.Load(), n)
	return nil
}

func start(t *testing.T, targets []Target) (*events.Bus, *Notifier) {
	t.Helper()
	bus := events.New(events.Options{})
	n, err := New(Options{Targets: targets, Bus: bus, Backoff: 10 * time.Millisecond, Link: func(id string) string { return "https://mandate.example/approvals/" + id }, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	for bus.Subscribers() == 0 {
		time.Sleep(time.Millisecond)
	}
	return bus, n
}

var secret = []byte("whsec-test-0123456789")

func approvalData(id string) map[string]any {
	return map[string]any{"approval_id": id, "session_id": "s1", "tool": "send_email", "state": "pending", "reasons": []string{"recipient eve@x.example was never named by the user"}}
}

func TestSignedDeliveryVerifies(t *testing.T) {
	r := &receiver{}
	srv := httptest.NewServer(r)
	defer srv.Close()
	bus, n := start(t, []Target{{URL: srv.URL + "/hook", Secret: secret, Events: []string{EventApproval}}})
	bus.Publish("approval", "s1", approvalData("a1"))
	bus.Publish("decision", "s1", map[string]any{"effect": "deny"}) // not subscribed
	got := r.wait(t, 1)[0]
	if err := client.VerifyWebhook(secret, got.header.Get(client.WebhookHeader), got.body, time.Now(), 0); err != nil {
		t.Fatalf("a genuine delivery does not verify: %v", err)
	}
	var p Payload
	if err := json.Unmarshal(got.body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Type != "approval" || p.Link != "https://mandate.example/approvals/a1" || p.ID == "" || p.SessionID != "s1" || got.header.Get("Mandate-Event") != "approval" {
		t.Errorf("payload %+v headers %v", p, got.header)
	}
	waitStatus(t, n, "delivered")
	st := n.Status()
	if len(st) != 1 || st[0].Delivered != 1 || st[0].Deliveries[0].Status != "delivered" || !st[0].Signed {
		t.Errorf("status %+v", st)
	}

	// Forged, tampered, stale and replayed deliveries are refused.
	h := got.header.Get(client.WebhookHeader)
	cases := []struct {
		name   string
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"other secret", Sign([]byte("guess"), time.Now(), got.body), got.body, time.Now(), client.ErrWebhookSignature},
		{"body changed", h, append([]byte(nil), strings.Replace(string(got.body), "send_email", "transfer", 1)...), time.Now(), client.ErrWebhookSignature},
		{"no signature", "", got.body, time.Now(), client.ErrWebhookSignature},
		{"garbage", "t=abc,v1=zz", got.body, time.Now(), client.ErrWebhookSignature},
		{"replayed an hour later", h, got.body, time.Now().Add(time.Hour), client.ErrWebhookStale},
		{"timestamp moved forward", strings.Replace(h, "t=", "t=9", 1), got.body, time.Now(), client.ErrWebhookSignature},
	}
	for _, c := range cases {
		if err := client.VerifyWebhook(secret, c.header, c.body, c.now, 0); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	v := &client.WebhookVerifier{Secret: secret}
	if err := v.Verify(h, got.body); err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(h, got.body); !errors.Is(err, client.ErrWebhookReplayed) {
		t.Errorf("replay within the tolerance: %v", err)
	}
}

func TestRetriesWithBackoff(t *testing.T) {
	r := &receiver{codes: []int{500, 503, 429}}
	srv := httptest.NewServer(r)
	defer srv.Close()
	bus, n := start(t, []Target{{URL: srv.URL, Secret: secret, Events: []string{EventApproval}, Attempts: 5}})
	bus.Publish("approval", "s1", approvalData("a2"))
	got := r.wait(t, 4)
	// Each attempt is signed afresh and verifies.
	for _, g := range got {
		if err := client.VerifyWebhook(secret, g.header.Get(client.WebhookHeader), g.body, time.Now(), 0); err != nil {
			t.Errorf("attempt does not verify: %v", err)
		}
	}
	waitStatus(t, n, "delivered")
	if d := n.Status()[0].Deliveries[0]; d.Attempts != 4 || d.Code != 200 {
		t.Errorf("delivery %+v", d)
	}
}

func TestPermanentRefusalIsNotRetried(t *testing.T) {
	r := &receiver{codes: []int{400, 400, 400}}
	srv := httptest.NewServer(r)
	defer srv.Close()
	bus, n := start(t, []Target{{URL: srv.URL, Secret: secret, Events: []string{EventApproval}}})
	bus.Publish("approval", "s1", approvalData("a3"))
	waitStatus(t, n, "failed")
	if r.hits.Load() != 1 {
		t.Errorf("a 400 was retried: %d attempts", r.hits.Load())
	}
	if d := n.Status()[0].Deliveries[0]; d.Code != 400 || d.Error == "" {
		t.Errorf("delivery %+v", d)
	}
}

func TestGivesUpAfterAttempts(t *testing.T) {
	bus, n := start(t, []Target{{URL: "http://127.0.0.1:1/hooks/T0123/XoXoSeCrEtToKeN0123456789", Secret: secret, Events: []string{EventApproval}, Attempts: 3, Timeout: time.Second}})
	bus.Publish("approval", "s1", approvalData("a4"))
	waitStatus(t, n, "failed")
	d := n.Status()[0].Deliveries[0]
	if d.Attempts != 3 || strings.Contains(d.Error, "XoXoSeCrEtToKeN") || !strings.Contains(d.Error, "/hooks/T0123/…") {
		t.Errorf("delivery %+v (the error must not repeat the URL's path)", d)
	}
}

func TestSlackFormatAndDenies(t *testing.T) {
	r := &receiver{}
	srv := httptest.NewServer(r)
	defer srv.Close()
	bus, _ := start(t, []Target{{URL: srv.URL, Format: "slack", Events: []string{EventApproval, EventDeny, EventGap}}})
	bus.Publish("approval", "s1", approvalData("a5"))
	bus.Publish("decision", "s1", map[string]any{"effect": "allow", "tool": "read"})
	bus.Publish("decision", "s1", map[string]any{"effect": "deny", "tool": "checkout", "reasons": []string{"the user ruled this out: <Do not buy>"}})
	bus.Publish("gap", "s1", map[string]any{"gap_reason": "denied: decision d1 denied it, and it ran"})
	got := r.wait(t, 3)
	var texts []string
	for _, g := range got {
		var m map[string]string
		if err := json.Unmarshal(g.body, &m); err != nil || m["text"] == "" {
			t.Fatalf("slack body %s", g.body)
		}
		if g.header.Get(client.WebhookHeader) != "" {
			t.Error("signed without a secret")
		}
		texts = append(texts, m["text"])
	}
	if !strings.Contains(texts[0], "send_email") || !strings.Contains(texts[0], "<https://mandate.example/approvals/a5|open the approval>") {
		t.Errorf("approval text %q", texts[0])
	}
	if !strings.Contains(texts[1], "checkout") || !strings.Contains(texts[1], "&lt;Do not buy&gt;") {
		t.Errorf("deny text %q", texts[1])
	}
	if !strings.Contains(texts[2], "without Mandate's allow") {
		t.Errorf("gap text %q", texts[2])
	}
}

func waitStatus(t *testing.T, n *Notifier, want string) {
	t.Helper()
	for range 500 {
		st := n.Status()
		if len(st[0].Deliveries) > 0 && st[0].Deliveries[0].Status == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("delivery never became %s: %+v", want, n.Status())
}
