// Package ui is Mandate's web dashboard: server-rendered html/template pages
// under /ui/ on the API's own listener — the live feed of decisions, the
// approval queue (answerable from the page), sessions with their mandates and
// timelines, decisions, and agents.
//
// A person signs in once with a user, approver or admin token; the token is
// checked and never kept by the browser: the server holds the sign-in in
// memory and the browser a random HttpOnly, SameSite=Strict cookie naming
// it. Every state-changing form carries a per-sign-in CSRF token and is
// refused cross-origin. Pages read through the engine with the signed-in
// principal, so a page shows exactly what that token may read over the API,
// and an answer from the page goes through the same checks as one over the
// API: an agent's or hook's credential cannot even sign in.
//
// htmx (vendored under static/, with its licence) and one small script of
// our own only enhance: every page reads, and every form posts, without
// JavaScript. The Content-Security-Policy allows no inline script or style.
package ui

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// HTMXVersion is the vendored htmx release (static/htmx-VERSION.min.js,
// from the npm package htmx.org).
const HTMXVersion = "2.0.11"

// Engine is what the pages read and do, always as the signed-in principal.
type Engine interface {
	ListSessions(ctx context.Context, p auth.Principal, f store.SessionFilter) ([]*store.Session, error)
	GetSession(ctx context.Context, p auth.Principal, id string) (*engine.SessionInfo, error)
	Input(ctx context.Context, p auth.Principal, req engine.EvaluateRequest) (*engine.Input, error)
	Mandates(ctx context.Context, p auth.Principal, id string) ([]*store.MandateVersion, error)
	SetStatus(ctx context.Context, p auth.Principal, id, status string) (*store.Session, error)
	Decisions(ctx context.Context, p auth.Principal, f store.DecisionFilter) ([]*store.Decision, error)
	GetDecision(ctx context.Context, p auth.Principal, id string) (*store.Decision, []*store.Observation, error)
	Gaps(ctx context.Context, p auth.Principal, f store.GapFilter) ([]*store.Observation, error)
	ListApprovals(ctx context.Context, p auth.Principal, f store.ApprovalFilter) ([]*store.Approval, error)
	GetApproval(ctx context.Context, p auth.Principal, id string, wait time.Duration) (*store.Approval, error)
	Answer(ctx context.Context, p auth.Principal, id string, req engine.AnswerRequest) (*store.Approval, error)
	// The behaviour routes' reads: baselines, drift, review, trace and
	// session summary.
	Agents(ctx context.Context, p auth.Principal) ([]api.AgentBaseline, error)
	Agent(ctx context.Context, p auth.Principal, id string) (*api.AgentBaseline, error)
	Drift(ctx context.Context, p auth.Principal, id string) (*api.DriftReport, error)
	AgentReview(ctx context.Context, p auth.Principal, id string) (*api.AgentReview, error)
	Trace(ctx context.Context, p auth.Principal, decisionID string) (*api.Trace, error)
	SessionSummary(ctx context.Context, p auth.Principal, id string) (*api.SessionSummary, error)
	// The policy in force and the classifier, for the policy page.
	Policy() *policy.Policy
	Classifier() *action.Classifier
}

// Tokens looks a token up by its hash (auth.HashToken), as the API does.
type Tokens interface {
	TokenByHash(ctx context.Context, hash []byte) (*store.Token, error)
}

// EventStream serves the API's event stream (GET /v1/events) to an
// already authenticated principal; the live pages read it through
// /ui/events with the sign-in cookie instead of a bearer token.
type EventStream interface {
	StreamEvents(w http.ResponseWriter, r *http.Request, p auth.Principal)
}

// Options configure the dashboard.
type Options struct {
	Engine Engine
	Tokens Tokens
	// Events feeds the live pages; nil shows them without live updates.
	Events EventStream
	// Evidence serves the evidence page and session bundles; nil says the
	// server has no evidence log.
	Evidence *Evidence
	// Baselines and BaselineConfig serve the agents' learned profiles and
	// drift on the agent pages; nil shows what the sessions say only.
	Baselines      Baselines
	BaselineConfig *baseline.Config
	// EvalReport names a report file written by `mandate eval --json`
	// (or --out FILE.json), summarised on the policy page; empty: none.
	EvalReport string
	Logger     *slog.Logger
	// SignInTTL is how long a sign-in lasts (default DefaultSignInTTL).
	SignInTTL time.Duration
	// MaxSignIns bounds the sign-ins kept in memory (default 10,000):
	// past it the oldest is dropped.
	MaxSignIns int
	// Now is the clock (default time.Now), for tests of expiry.
	Now func() time.Time
}

// DefaultSignInTTL is how long a sign-in lasts by default.
const DefaultSignInTTL = 12 * time.Hour

// Dashboard is the web UI's handler, to be mounted at /ui/.
type Dashboard struct {
	eng    Engine
	tokens Tokens
	events EventStream
	// evidence is the log and its store (nil: none).
	evidence *Evidence
	// baselines and baselineCfg read and compare the agents' profiles.
	baselines   Baselines
	baselineCfg *baseline.Config
	// evalReport is the eval report file the policy page reads ("": none).
	evalReport string
	log        *slog.Logger
	now        func() time.Time
	pages      map[string]*template.Template
	signin     *signIns
	mux        *http.ServeMux
	// csrf refuses cross-origin state-changing requests (Origin and
	// Sec-Fetch-Site), beside the per-sign-in token every form carries.
	csrf *http.CrossOriginProtection
}

// New builds the dashboard. It fails only if the embedded templates do not
// parse, which a test catches.
func New(opts Options) (*Dashboard, error) {
	if opts.Engine == nil || opts.Tokens == nil {
		return nil, errors.New("ui: Options.Engine and Options.Tokens are required")
	}
	d := &Dashboard{eng: opts.Engine, tokens: opts.Tokens, events: opts.Events, evidence: opts.Evidence, baselines: opts.Baselines, baselineCfg: opts.BaselineConfig, evalReport: opts.EvalReport, log: opts.Logger, now: opts.Now, mux: http.NewServeMux(), csrf: http.NewCrossOriginProtection()}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	ttl := opts.SignInTTL
	if ttl <= 0 {
		ttl = DefaultSignInTTL
	}
	max := opts.MaxSignIns
	if max <= 0 {
		max = 10000
	}
	d.signin = newSignIns(ttl, max)
	var err error
	if d.pages, err = parsePages(); err != nil {
		return nil, err
	}
	d.routes()
	return d, nil
}

// routes: every page and form of the dashboard. Paths named in the issue's
// interface (/ui/login, /ui/logout, /ui/approvals/{id}, /ui/sessions/{id},
// /ui/decisions/{id}, /ui/agents/{id}) are linked to from notifications:
// keep them.
func (d *Dashboard) routes() {
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/ui/static/", http.FileServerFS(static))
	d.mux.Handle("GET /ui/static/", cacheForever(files))
	d.mux.HandleFunc("GET /ui/login", d.loginPage)
	d.mux.Handle("POST /ui/login", d.csrf.Handler(http.HandlerFunc(d.login)))
	d.mux.Handle("POST /ui/logout", d.csrf.Handler(http.HandlerFunc(d.logout)))

	d.page("GET /ui/{$}", d.livePage)
	d.page("GET /ui/live/rows/{id}", d.liveRow)
	d.page("GET /ui/events", d.streamEvents)
	d.page("GET /ui/sessions", d.sessionsPage)
	d.page("GET /ui/sessions/{id}", d.sessionPage)
	d.form("POST /ui/sessions/{id}/status", d.setStatus)
	d.page("GET /ui/decisions/{id}", d.decisionPage)
	d.page("GET /ui/decisions/{id}/trace", d.decisionTrace)
	d.page("GET /ui/approvals", d.approvalsPage)
	d.page("GET /ui/approvals/{id}", d.approvalPage)
	d.form("POST /ui/approvals/{id}", d.answer)
	d.page("GET /ui/sessions/{id}/bundle", d.bundle)
	d.page("GET /ui/sessions/{id}/summary", d.sessionSummary)
	d.page("GET /ui/evidence", d.evidencePage)
	d.form("POST /ui/evidence/verify", d.verifyStore)
	d.page("GET /ui/policy", d.policyPage)
	d.page("GET /ui/agents", d.agentsPage)
	d.page("GET /ui/agents/{id}", d.agentPage)
	d.mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		d.notFound(w, r, nil, fmt.Sprintf("There is no page at %s.", r.URL.Path))
	})
}

// ServeHTTP implements http.Handler: the security headers every answer
// carries, then the route.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	d.mux.ServeHTTP(w, r)
}

// contentSecurityPolicy allows scripts, styles and connections from the
// dashboard itself only: no inline script or style, no eval, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func cacheForever(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// File names carry their version (htmx-2.0.11.min.js); our own
		// files change with the binary, so they are revalidated.
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// pageFunc serves a page to a signed-in person.
type pageFunc func(w http.ResponseWriter, r *http.Request, v *viewer)

// page registers a route that needs a sign-in; without one a browser is
// sent to the login page and back.
func (d *Dashboard) page(pattern string, h pageFunc) {
	d.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		v, ok := d.viewer(w, r)
		if !ok {
			return
		}
		h(w, r, v)
	})
}

// form registers a state-changing route: a sign-in, a same-origin request
// and the sign-in's CSRF token are all required.
func (d *Dashboard) form(pattern string, h pageFunc) {
	d.mux.Handle(pattern, d.csrf.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := d.viewer(w, r)
		if !ok {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			d.errorPage(w, r, v, http.StatusBadRequest, "The form could not be read: "+err.Error())
			return
		}
		if !v.checkCSRF(r) {
			d.errorPage(w, r, v, http.StatusForbidden, "This form has no valid CSRF token (it may be from an earlier sign-in): reload the page and try again.")
			return
		}
		h(w, r, v)
	})))
}

// maxForm bounds a posted form (a note is at most a few KB).
const maxForm = 64 << 10
