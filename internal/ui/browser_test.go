package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mandate-dev/mandate/internal/testpeer"
)

// TestBrowser drives the dashboard in a real headless Chromium (Debian's
// chromium package) with chromedp: sign in, watch a decision arrive live,
// approve a pending ask and see the waiting /v1/evaluate return allow,
// suspend a session, verify the store, open a drift chart, read the queue
// at a phone's width. It fails on any script error or CSP violation the
// pages cause. Screenshots of each page go to $MANDATE_UI_SCREENSHOTS (a
// temporary directory when unset).
func TestBrowser(t *testing.T) {
	testpeer.Slow(t)
	chromium := testpeer.Program(t, "chromium", "MANDATE_TEST_CHROMIUM", "apt-get install chromium")
	shots := os.Getenv("MANDATE_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	// A hang detector, not a speed check: under CI's -race run beside every
	// other package the flow took over 3 minutes to reach the queue (9 s alone).
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()

	// Every script error and console error (CSP violations are reported
	// there) fails the test.
	var mu sync.Mutex
	var problems []string
	consoleDone := make(chan struct{})
	messages := chromedp.Console(ctx)
	go func() {
		defer close(consoleDone)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == "error" {
				mu.Lock()
				problems = append(problems, m.String()+" ("+m.URL+")")
				mu.Unlock()
			}
		}
	}()
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			png, err := chromedp.FullScreenshot(100)(ctx, tg)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
		})
	}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }

	// Sign in, from a link to a page: the login page sends you back there.
	run("sign in",
		chromedp.Navigate(f.srv.URL+"/ui/"),
		chromedp.WaitVisible(css(`#token`)),
		shot("login"),
		chromedp.SendKeys(css(`#token`), f.tokens["user"]),
		chromedp.Submit(css(`#token`)),
		chromedp.WaitVisible(css(`#feed`)),
	)
	// The live feed is connected once the script says so; then a decision
	// made over the API appears without a reload.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live-status").textContent.startsWith("Live")`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("live feed connects: %v", err)
	}
	dec := f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"alice@example.com","subject":"Q3 summary"}}`)
	rowSel := css(`#d-` + dec["decision_id"].(string))
	run("a decision arrives live", chromedp.WaitVisible(rowSel), shot("live"))
	row, err := chromedp.Run(ctx, chromedp.Text(rowSel))
	if err != nil || !strings.Contains(row, "send_email") || !strings.Contains(row, "allow") {
		t.Errorf("live row: %q %v", row, err)
	}

	// An ask waits in /v1/evaluate for a person's answer.
	type result struct {
		out map[string]any
		err error
	}
	waited := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("POST", f.srv.URL+"/v1/evaluate", strings.NewReader(`{"session_id":"`+sid+`",`+eveCall+`,"wait":"2m"}`))
		req.Header.Set("Authorization", "Bearer "+f.tokens["agent"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			waited <- result{err: err}
			return
		}
		defer resp.Body.Close()
		var out map[string]any
		err = json.NewDecoder(resp.Body).Decode(&out)
		waited <- result{out, err}
	}()
	// The queue page shows it as it arrives; approve it from its own page.
	run("open the queue and see the ask",
		chromedp.Navigate(f.srv.URL+"/ui/approvals"),
		chromedp.WaitVisible(css(`article.state-pending`)),
	)
	cards, err := chromedp.Run(ctx, chromedp.AttributesAll(css(`article.state-pending`)))
	if err != nil || len(cards) != 1 {
		t.Fatalf("pending cards: %v %v", cards, err)
	}
	id := strings.TrimPrefix(cards[0]["id"], "a-")
	run("open the approval and approve it",
		chromedp.Navigate(f.srv.URL+"/ui/approvals/"+id),
		chromedp.WaitVisible(css(`button.approve`)),
		chromedp.SendKeys(css(`input[name=note]`), "checked with Alice"),
		shot("approval"),
		chromedp.Click(css(`button[value=approve]`)),
		chromedp.WaitVisible(css(`article.state-approved`)),
	)
	select {
	case r := <-waited:
		if r.err != nil || r.out["effect"] != "allow" {
			t.Fatalf("the waiting evaluate returned %v %v", r.out, r.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the waiting evaluate did not return after the approval")
	}
	got := f.api(t, "GET", "/v1/approvals/"+id, "user", "")
	if got["note"] != "checked with Alice" || got["via"] != "dashboard" {
		t.Errorf("approval record: %v", got)
	}
	run("the queue lists it answered", chromedp.Navigate(f.srv.URL+"/ui/approvals"), chromedp.WaitVisible(css(`table.answered`)), shot("approvals"))

	// Suspend the session from its page.
	run("suspend",
		chromedp.Navigate(f.srv.URL+"/ui/sessions/"+sid),
		chromedp.WaitVisible(css(`button[value=suspended]`)),
		shot("session"),
		chromedp.Click(css(`button[value=suspended]`)),
		chromedp.WaitVisible(css(`button[value=active]`)),
	)
	if st := f.api(t, "GET", "/v1/sessions/"+sid, "user", "")["session"].(map[string]any)["status"]; st != "suspended" {
		t.Errorf("status after suspend: %v", st)
	}
	run("decision and agent pages",
		chromedp.Navigate(f.srv.URL+"/ui/decisions/"+dec["decision_id"].(string)),
		chromedp.WaitVisible(css(`p.verdict`)),
		shot("decision"),
		chromedp.Navigate(f.srv.URL+"/ui/agents/mailer"),
		chromedp.WaitVisible(css(`figure.chart svg`)),
		shot("agent"),
		chromedp.Navigate(f.srv.URL+"/ui/sessions"),
		chromedp.WaitVisible(css(`ul.tree`)),
		shot("sessions"),
	)
	// Verify the store from the evidence page.
	run("verify the store",
		chromedp.Navigate(f.srv.URL+"/ui/evidence"),
		chromedp.Click(css(`form[action="/ui/evidence/verify"] button`)),
		chromedp.WaitVisible(css(`#verify-result`)),
		shot("evidence"),
	)
	if res, err := chromedp.Run(ctx, chromedp.Text(css(`#verify-result`))); err != nil || !strings.Contains(res, "The store verifies") {
		t.Errorf("verify result: %q %v", res, err)
	}
	// A second version of the agent: its page draws the drift chart.
	sid2 := f.api(t, "POST", "/v1/sessions", "user", `{"agent_id":"mailer","agent":{"id":"mailer","model":"m-2"},"intent":"Send the Q3 summary to alice@example.com"}`)["session_id"].(string)
	f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid2+`","tool":"send_email","args":{"to":"alice@example.com","subject":"Q3"}}`)
	if err := f.a.Engine.FlushBaselines(context.Background()); err != nil {
		t.Fatal(err)
	}
	run("open the drift chart",
		chromedp.Navigate(f.srv.URL+"/ui/agents/mailer"),
		chromedp.WaitVisible(css(`svg[aria-label^="Jensen"]`)),
		shot("drift"),
	)
	// Readable on a phone: the approval queue at a phone's width.
	run("phone",
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(f.srv.URL+"/ui/approvals"),
		chromedp.WaitVisible(css(`table.answered`)),
		shot("approvals-phone"),
	)
	if wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)); err != nil || wide {
		t.Errorf("the approvals page scrolls sideways on a phone (%v)", err)
	}
	cancel()
	<-consoleDone
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("the page reported %s", p)
	}
	t.Logf("screenshots in %s", shots)
}
