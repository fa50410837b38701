package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Values from an agent's call, a tool's output and the user's words are
// rendered inert: escaped, never markup, and cut when huge.
func TestHostileValuesRenderInert(t *testing.T) {
	f := newFixture(t)
	const script = `<script>alert(1)</script>`
	sid := f.session(t, "mailer", "Summarise my mail "+script+` <img src=x onerror=alert(2)>`)
	huge := strings.Repeat("A", 1<<20)
	args, _ := json.Marshal(map[string]any{"to": "alice@example.com", "subject": script, "link": "javascript:alert(3)", "body": huge})
	dec := f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`","tool":"send_email`+`\u003cb\u003e","args":`+string(args)+`}`)
	f.api(t, "POST", "/v1/observe", "agent", `{"decision_id":"`+dec["decision_id"].(string)+`","output":{"text":"<iframe src=javascript:alert(4)></iframe>`+strings.Repeat("B", 1<<19)+`"}}`)
	b := f.browser(t)
	b.signIn("user")
	for _, path := range []string{"/ui/", "/ui/sessions", "/ui/sessions/" + sid, "/ui/decisions/" + dec["decision_id"].(string), "/ui/agents/mailer", "/ui/approvals"} {
		p := b.get(path)
		if p.code != 200 {
			t.Errorf("GET %s: %d", path, p.code)
			continue
		}
		for _, bad := range []string{"<script>alert", "<img src=x", "<iframe", "<b>", `href="javascript:`} {
			if strings.Contains(p.body, bad) {
				t.Errorf("GET %s renders %q as markup", path, bad)
			}
		}
		if strings.Contains(p.body, strings.Repeat("A", 10<<10)) || strings.Contains(p.body, strings.Repeat("B", 10<<10)) {
			t.Errorf("GET %s renders a huge value whole", path)
		}
		if len(p.body) > 256<<10 {
			t.Errorf("GET %s is %d bytes", path, len(p.body))
		}
	}
	p := b.get("/ui/decisions/" + dec["decision_id"].(string))
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "javascript:alert(3)", "more bytes)"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("decision page lacks %q (escaped, cut)", want)
		}
	}
	// The post-login redirect stays on the dashboard.
	for _, next := range []string{"https://evil.example/", "//evil.example/ui/", "/\\evil.example", "javascript:alert(1)", "/v1/tokens", "/ui/login"} {
		anon := f.browser(t)
		r := anon.post("/ui/login", map[string][]string{"token": {f.tokens["user"]}, "next": {next}})
		if loc := r.h.Get("Location"); loc != "/ui/" {
			t.Errorf("next=%q redirects to %q", next, loc)
		}
	}
}

// The live page's rows and the cookie-authenticated event stream.
func TestLiveRowsAndEvents(t *testing.T) {
	f := newFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	b := f.browser(t)
	b.signIn("user")

	// The stream, with the sign-in cookie instead of a bearer token.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/ui/events?types=decision", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("/ui/events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	dec := f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"alice@example.com"}}`)
	id := dec["decision_id"].(string)
	sc := bufio.NewScanner(resp.Body)
	var got string
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "data: ") && strings.Contains(l, id) {
			got = l
			break
		}
	}
	if got == "" {
		t.Fatalf("the stream did not carry decision %s: %v", id, sc.Err())
	}
	// Signed out, the stream is refused.
	if p := f.browser(t).get("/ui/events"); p.code != http.StatusUnauthorized {
		t.Errorf("signed-out stream: %d", p.code)
	}

	// The row of a decision, or nothing when the page's filter leaves it out.
	for _, tt := range []struct {
		query string
		code  int
	}{
		{"", 200}, {"?effect=allow", 200}, {"?effect=deny", 204}, {"?agent=mailer", 200}, {"?agent=other", 204},
		{"?session=" + sid, 200}, {"?session=other", 204}, {"?effect=bogus", 400},
	} {
		p := b.get("/ui/live/rows/" + id + tt.query)
		if p.code != tt.code {
			t.Errorf("row%s: %d, want %d", tt.query, p.code, tt.code)
		}
		if tt.code == 200 && (!strings.HasPrefix(p.body, `<tr class="effect-allow" id="d-`+id+`">`) || strings.Contains(p.body, "<html")) {
			t.Errorf("row%s: %s", tt.query, p.body)
		}
	}
	if p := b.get("/ui/live/rows/nope"); p.code != 404 {
		t.Errorf("row of no decision: %d", p.code)
	}
}
