package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/events"
	"github.com/mandate-dev/mandate/internal/server"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/ui"
)

// fixture is the real stack: an in-memory store, the engine with an event
// bus, the API and the dashboard on one loopback listener.
type fixture struct {
	srv    *httptest.Server
	a      *app.App
	tokens map[string]string
	// now is the dashboard's clock (unix nanoseconds): tests move it while
	// the server reads it.
	now atomic.Int64
}

// newFixture builds the stack; configure, if given, changes the app's
// configuration or the dashboard's options before they are used.
func newFixture(t testing.TB, configure ...func(*app.Config, *ui.Options)) *fixture {
	t.Helper()
	ctx := context.Background()
	bus := events.New(events.Options{})
	cfg := app.Config{Synchronous: "OFF", MaxArgsBytes: 2 << 20, Approvals: engine.ApprovalOptions{Events: bus}}
	var opts ui.Options
	for _, c := range configure {
		c(&cfg, &opts)
	}
	a, err := app.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	f := &fixture{a: a, tokens: map[string]string{}}
	f.now.Store(time.Now().UnixNano())
	for _, spec := range []struct{ key, role, agent string }{
		{"admin", "admin", ""}, {"user", "user", ""}, {"approver", "approver", ""}, {"hook", "hook", "mailer"}, {"agent", "agent", "mailer"}, {"revoked", "user", ""},
	} {
		tok, rec, err := auth.Issue(spec.role, spec.agent, spec.key, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Store.CreateToken(ctx, rec); err != nil {
			t.Fatal(err)
		}
		f.tokens[spec.key] = tok
	}
	srv := server.New(server.Options{Engine: a.Engine, Store: a.Store, Events: bus, MaxArgsBytes: 2 << 20, Version: "test", TokenCacheTTL: time.Millisecond})
	opts.Engine, opts.Tokens, opts.Events, opts.Evidence = a.Engine, a.Store, srv, &ui.Evidence{Log: a.Evidence, Store: a.Store}
	opts.Baselines, opts.BaselineConfig, opts.Now = a.Store.(store.Baselines), a.Engine.BaselineConfig(), func() time.Time { return time.Unix(0, f.now.Load()) }
	d, err := ui.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle("/ui/", d, false)
	f.srv = httptest.NewServer(srv)
	t.Cleanup(f.srv.Close)
	return f
}

// browser is a cookie-keeping client that does not follow redirects, so
// tests see them.
type browser struct {
	t    testing.TB
	f    *fixture
	c    *http.Client
	csrf string
}

func (f *fixture) browser(t testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, f: f, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	code int
	body string
	h    http.Header
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	p := page{code: resp.StatusCode, body: string(data), h: resp.Header}
	if m := csrfField.FindStringSubmatch(p.body); m != nil {
		b.csrf = m[1]
	}
	return p
}

func (b *browser) get(path string) page {
	req, _ := http.NewRequest("GET", b.f.srv.URL+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values, header ...string) page {
	req, _ := http.NewRequest("POST", b.f.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

func (b *browser) signIn(who string) {
	b.t.Helper()
	p := b.post("/ui/login", url.Values{"token": {b.f.tokens[who]}})
	if p.code != http.StatusSeeOther {
		b.t.Fatalf("sign in as %s: %d %s", who, p.code, p.body)
	}
}

// api calls the JSON API with a bearer token.
func (f *fixture) api(t testing.TB, method, path, who, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+f.tokens[who])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("%s %s: %s", method, path, data)
		}
	}
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return out
}

func (f *fixture) session(t testing.TB, agent, intent string) string {
	body, _ := json.Marshal(map[string]any{"agent_id": agent, "intent": intent})
	return f.api(t, "POST", "/v1/sessions", "user", string(body))["session_id"].(string)
}

const eveCall = `"tool":"send_email","args":{"to":"eve@competitor.example","subject":"Q3","body":"numbers"}`

// ask makes the agent's call that asks; it returns the decision.
func (f *fixture) ask(t testing.TB, sid string) map[string]any {
	out := f.api(t, "POST", "/v1/evaluate", "agent", `{"session_id":"`+sid+`",`+eveCall+`}`)
	if out["effect"] != "ask" || out["approval_id"] == nil {
		t.Fatalf("evaluate: %v", out)
	}
	return out
}

func TestSignIn(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	if p := b.get("/ui/sessions?agent=x"); p.code != http.StatusSeeOther || p.h.Get("Location") != "/ui/login?next=%2Fui%2Fsessions%3Fagent%3Dx" {
		t.Fatalf("signed out: %d %q", p.code, p.h.Get("Location"))
	}
	if p := b.get("/ui/login?next=%2Fui%2Fsessions"); p.code != 200 || !strings.Contains(p.body, `name="token"`) || !strings.Contains(p.body, `value="/ui/sessions"`) {
		t.Fatalf("login page: %d %s", p.code, p.body)
	}
	for _, bad := range []struct {
		who  string
		code int
		says string
	}{
		{"agent", http.StatusForbidden, "agent token cannot sign in"},
		{"hook", http.StatusForbidden, "hook token cannot sign in"},
		{"", http.StatusBadRequest, "Paste a token"},
	} {
		p := b.post("/ui/login", url.Values{"token": {f.tokens[bad.who]}})
		if p.code != bad.code || !strings.Contains(p.body, bad.says) || p.h.Get("Set-Cookie") != "" {
			t.Errorf("sign in as %q: %d %s (cookie %q)", bad.who, p.code, p.body, p.h.Get("Set-Cookie"))
		}
	}
	if p := b.post("/ui/login", url.Values{"token": {"mdt_not-a-token"}}); p.code != http.StatusUnauthorized || !strings.Contains(p.body, "Unknown or revoked") {
		t.Errorf("unknown token: %d", p.code)
	}
	// A cross-origin form cannot sign anyone in (login CSRF).
	if p := b.post("/ui/login", url.Values{"token": {f.tokens["user"]}}, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); p.code != http.StatusForbidden {
		t.Errorf("cross-origin sign-in: %d", p.code)
	}

	p := b.post("/ui/login", url.Values{"token": {f.tokens["user"]}, "next": {"/ui/sessions"}})
	if p.code != http.StatusSeeOther || p.h.Get("Location") != "/ui/sessions" {
		t.Fatalf("sign in: %d %q", p.code, p.h.Get("Location"))
	}
	cookie := p.h.Get("Set-Cookie")
	for _, want := range []string{ui.CookieName + "=", "Path=/ui/", "HttpOnly", "SameSite=Strict", "Max-Age=43200"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("cookie %q lacks %q", cookie, want)
		}
	}
	if strings.Contains(cookie, f.tokens["user"]) || strings.Contains(cookie, "Secure") {
		t.Errorf("cookie %q holds the token, or is Secure over plain HTTP", cookie)
	}
	home := b.get("/ui/")
	if home.code != 200 || !strings.Contains(home.body, "<h1>Live</h1>") {
		t.Fatalf("home: %d %s", home.code, home.body)
	}
	for _, h := range []string{"Content-Security-Policy", "X-Frame-Options"} {
		if home.h.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	if csp := home.h.Get("Content-Security-Policy"); strings.Contains(csp, "unsafe") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}

	// Sign-out needs the page's CSRF token; then the cookie opens nothing.
	if p := b.post("/ui/logout", url.Values{}); p.code != http.StatusForbidden {
		t.Errorf("logout without CSRF: %d", p.code)
	}
	if p := b.post("/ui/logout", url.Values{"csrf": {b.csrf}}); p.code != http.StatusSeeOther || p.h.Get("Location") != "/ui/login" {
		t.Errorf("logout: %d", p.code)
	}
	if p := b.get("/ui/"); p.code != http.StatusSeeOther {
		t.Errorf("after logout: %d", p.code)
	}
}

func TestSignInEnds(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.signIn("revoked")
	if p := b.get("/ui/sessions"); p.code != 200 {
		t.Fatalf("signed in: %d", p.code)
	}
	// Revoking the token ends the sign-in made with it.
	var id string
	for _, tok := range f.api(t, "GET", "/v1/tokens", "admin", "")["tokens"].([]any) {
		if tok.(map[string]any)["name"] == "revoked" {
			id = tok.(map[string]any)["id"].(string)
		}
	}
	f.api(t, "DELETE", "/v1/tokens/"+id, "admin", "")
	if p := b.get("/ui/sessions"); p.code != http.StatusSeeOther {
		t.Errorf("after revocation: %d", p.code)
	}
	// A sign-in expires.
	b2 := f.browser(t)
	b2.signIn("user")
	f.now.Add(int64(ui.DefaultSignInTTL + time.Minute))
	if p := b2.get("/ui/sessions"); p.code != http.StatusSeeOther {
		t.Errorf("after expiry: %d", p.code)
	}
	// An htmx request is told where to go instead of getting the login page.
	req, _ := http.NewRequest("GET", f.srv.URL+"/ui/approvals?part=queue", nil)
	req.Header.Set("HX-Request", "true")
	if p := b2.do(req); p.code != http.StatusUnauthorized || !strings.HasPrefix(p.h.Get("HX-Redirect"), "/ui/login") {
		t.Errorf("htmx signed out: %d %q", p.code, p.h.Get("HX-Redirect"))
	}
}
