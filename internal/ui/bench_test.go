package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
)

// BenchmarkLargeSession measures the pages of a session of 10,000 calls:
// its page (first and last page of calls, with the summary), the last
// decision (its trace covers all 10,000), and the live page. Run:
//
//	go test ./internal/ui -run '^$' -bench LargeSession -benchtime 20x
func BenchmarkLargeSession(b *testing.B) {
	f := newFixture(b)
	sid := f.session(b, "mailer", "Send the Q3 summary to alice@example.com")
	agent := auth.Principal{TokenID: "bench", Role: auth.RoleAgent, AgentID: "mailer"}
	ctx := context.Background()
	const calls = 10000
	var last string
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				d, err := f.a.Engine.Evaluate(ctx, agent, engine.EvaluateRequest{SessionID: sid, Tool: "send_email", Args: map[string]any{"to": "alice@example.com", "subject": fmt.Sprintf("part %d", i)}})
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				last = d.ID
				mu.Unlock()
			}
		}()
	}
	for i := range calls {
		work <- i
	}
	close(work)
	wg.Wait()
	br := f.browser(b)
	br.signIn("user")
	for _, page := range []struct{ name, path string }{
		{"session-first-page", "/ui/sessions/" + sid},
		{"session-last-page", fmt.Sprintf("/ui/sessions/%s?after=%d", sid, calls-100)},
		{"decision", "/ui/decisions/" + last},
		{"decision-trace-10k-steps", "/ui/decisions/" + last + "/trace"},
		{"live", "/ui/"},
		{"live-filtered-by-session", "/ui/?session=" + sid},
		{"session-summary", "/ui/sessions/" + sid + "/summary"},
	} {
		b.Run(page.name, func(b *testing.B) {
			for b.Loop() {
				if p := br.get(page.path); p.code != http.StatusOK {
					b.Fatalf("%s: %d", page.path, p.code)
				}
			}
		})
	}
}
