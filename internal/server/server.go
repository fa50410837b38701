// Package server is Mandate's HTTP API: sessions, mandates, evaluate,
// observe, decisions, tokens, health and metrics, under /v1 with JSON bodies
// and bearer-token auth. Handlers are thin: the engine decides, the server
// translates into the wire types of package api. Every route is registered
// with its openapi.Operation (routes.go), from which the document served at
// /v1/openapi.json is generated (go generate) — see package api for how to
// add a route.
package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/events"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/openapi"
	"github.com/mandate-dev/mandate/internal/store"
)

// Options configure the API.
type Options struct {
	Engine *engine.Engine
	// Store serves tokens and /healthz. Nil uses the engine's store, which
	// must then provide them too (every store.Store does).
	Store  Store
	Logger *slog.Logger
	// Gatherer serves /metrics; nil serves an empty set.
	Gatherer prometheus.Gatherer
	// MaxArgsBytes caps a call's arguments (and an observation's output);
	// request bodies may be this plus a small envelope. Default 1 MiB.
	MaxArgsBytes int
	// Version is reported by /healthz.
	Version string
	// TokenCacheTTL bounds how long a revoked token keeps working
	// (default 5 s).
	TokenCacheTTL time.Duration
	// Evidence serves /v1/evidence; nil answers those routes with 503.
	Evidence *evidence.Log
	// StoreHealth, if set, describes the store for /healthz; an error
	// makes the server unavailable.
	StoreHealth func(ctx context.Context) (*api.StoreHealth, error)
	// BodyTimeout bounds reading a request's body (default
	// DefaultBodyTimeout): a client that sends it a byte at a time does not
	// hold a connection and a handler indefinitely.
	BodyTimeout time.Duration
	// Events serves /v1/events; nil answers it with 503.
	Events *events.Bus
	// Webhooks reports delivery status at /v1/webhooks; nil reports none.
	Webhooks Webhooks
}

// DefaultBodyTimeout is how long a request body may take to arrive.
const DefaultBodyTimeout = 30 * time.Second

// Server is the HTTP API.
type Server struct {
	eng     *engine.Engine
	st      Store
	log     *slog.Logger
	maxBody int64
	maxArgs int
	bodyTTL time.Duration
	version string
	mux     *http.ServeMux
	tokens  tokenCache
	// storeHealth describes the store for /healthz (Options.StoreHealth).
	storeHealth func(ctx context.Context) (*api.StoreHealth, error)
	// ops are the routes as the OpenAPI document describes them.
	ops []openapi.Operation
	// bus feeds /v1/events; webhooks report on /v1/webhooks.
	bus      *events.Bus
	webhooks Webhooks
}

// New builds the API.
func New(opts Options) *Server {
	st := opts.Store
	if st == nil {
		var ok bool
		if st, ok = opts.Engine.Store().(Store); !ok {
			panic("server: Options.Store is nil and the engine's store serves no tokens")
		}
	}
	s := &Server{
		eng:     opts.Engine,
		st:      st,
		log:     opts.Logger,
		maxArgs: opts.MaxArgsBytes,
		version: opts.Version,
		mux:     http.NewServeMux(),

		storeHealth: opts.StoreHealth,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxArgs <= 0 {
		s.maxArgs = 1 << 20
	}
	s.maxBody = int64(s.maxArgs) + 64<<10
	if s.bodyTTL = opts.BodyTimeout; s.bodyTTL <= 0 {
		s.bodyTTL = DefaultBodyTimeout
	}
	s.tokens = tokenCache{ttl: opts.TokenCacheTTL, entries: map[[32]byte]cachedToken{}}
	if s.tokens.ttl <= 0 {
		s.tokens.ttl = 5 * time.Second
	}
	gatherer := opts.Gatherer
	if gatherer == nil {
		gatherer = prometheus.NewRegistry()
	}
	s.bus, s.webhooks = opts.Events, opts.Webhooks
	s.routes(gatherer, opts.Evidence)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route for %s %s; see /v1/openapi.json", r.Method, r.URL.Path))
	})
	return s
}

// Handle registers an extra route (other surfaces mount here, e.g. /mcp).
// Authenticated handlers get the principal with PrincipalFrom.
func (s *Server) Handle(pattern string, h http.Handler, authenticated bool) {
	if !authenticated {
		s.mux.Handle(pattern, h)
		return
	}
	s.mux.Handle(pattern, s.authenticate(func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	}))
}

type principalKey struct{}

// PrincipalFrom returns the authenticated caller of a request served by a
// handler registered with Handle(…, true).
func PrincipalFrom(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	return p, ok
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s.mux.ServeHTTP(w, r)
}

type handlerFunc func(w http.ResponseWriter, r *http.Request, p auth.Principal)

// handle registers an authenticated route and its operation. Every such
// route may also answer 401 (no or a bad token), 500 and 503.
func (s *Server) handle(op openapi.Operation, h handlerFunc) {
	for _, st := range []int{http.StatusUnauthorized, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		if !slices.Contains(op.Errors, st) {
			op.Errors = append(op.Errors, st)
		}
	}
	s.ops = append(s.ops, op)
	s.mux.Handle(op.Method+" "+op.Path, s.authenticate(h))
}

// public registers a route that needs no token.
func (s *Server) public(op openapi.Operation, h http.Handler) {
	s.ops = append(s.ops, op)
	s.mux.Handle(op.Method+" "+op.Path, h)
}

func (s *Server) authenticate(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authz := r.Header.Get("Authorization")
		token, ok := strings.CutPrefix(authz, "Bearer ")
		if !ok || strings.TrimSpace(token) == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mandate"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing bearer token: send 'Authorization: Bearer <token>' (create one with 'mandate token create')")
			return
		}
		p, err := s.principal(r.Context(), token)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, errRevoked) {
				s.log.Error("token lookup failed", "err", err)
				writeError(w, http.StatusInternalServerError, "internal", "token lookup failed")
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="mandate", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "unknown or revoked token")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
		if r.ContentLength != 0 {
			// Reading the body has a deadline; decode lifts it once the
			// body is in, so a handler that then waits (for a decision,
			// an approval) is not cut off.
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.bodyTTL))
		}
		h(w, r, p)
	})
}

var errRevoked = errors.New("token revoked")

type cachedToken struct {
	p       auth.Principal
	expires time.Time
}

// tokenCache keeps recent lookups so the hot path does not hit the store;
// entries live for ttl, which bounds how long a revoked token still works.
type tokenCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[[32]byte]cachedToken
}

func (s *Server) principal(ctx context.Context, token string) (auth.Principal, error) {
	hash := auth.HashToken(token)
	key := sha256.Sum256(hash) // fixed-size map key
	now := time.Now()
	s.tokens.mu.Lock()
	c, ok := s.tokens.entries[key]
	s.tokens.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.p, nil
	}
	t, err := s.st.TokenByHash(ctx, hash)
	if err != nil {
		return auth.Principal{}, err
	}
	if t.RevokedAt != nil {
		return auth.Principal{}, errRevoked
	}
	p := auth.Principal{TokenID: t.ID, Role: auth.Role(t.Role), AgentID: t.AgentID, Name: t.Name}
	s.tokens.mu.Lock()
	if len(s.tokens.entries) > 10000 {
		clear(s.tokens.entries)
	}
	s.tokens.entries[key] = cachedToken{p: p, expires: now.Add(s.tokens.ttl)}
	s.tokens.mu.Unlock()
	return p, nil
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	h := api.Health{Status: "ok", Version: s.version, PolicyHash: s.eng.Policy().Hash()}
	var err error
	if s.storeHealth != nil {
		h.Store, err = s.storeHealth(ctx)
	} else {
		_, err = s.st.EvidenceSize(ctx)
	}
	if err != nil {
		h.Status, h.Error = "unavailable", err.Error()
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

// decode reads a JSON body strictly: unknown fields, trailing data and
// oversized bodies are errors that name the problem.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, dst any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err == nil && dec.More() {
		err = errors.New("unexpected data after the JSON object")
	}
	if err == nil {
		if _, rerr := io.Copy(io.Discard, r.Body); rerr != nil {
			err = rerr
		}
	}
	if err == nil {
		http.NewResponseController(w).SetReadDeadline(time.Time{})
		return true
	}
	var tooBig *http.MaxBytesError
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "timeout", fmt.Sprintf("the request body did not arrive within %s", s.bodyTTL))
		return false
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body over %d bytes (args are capped at %d bytes)", tooBig.Limit, s.maxArgs))
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "invalid_request", "empty body: expected a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		writeError(w, http.StatusBadRequest, "invalid_request", "malformed JSON: the body ends before the object does")
	case errors.As(err, &syn):
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, err))
	case errors.As(err, &typ):
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("field %q: expected %s, got JSON %s", typ.Field, typ.Type, typ.Value))
	default:
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "json: ")
		writeError(w, http.StatusBadRequest, "invalid_request", msg)
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// reply answers v with status, or — when err is set — the error.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, status, v)
}

// replyAs answers v in its wire form, wire(v), or the error: wire is not
// called when err is set, so it may take v to be whole.
func replyAs[T, W any](s *Server, w http.ResponseWriter, r *http.Request, status int, v T, err error, wire func(T) W) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, status, wire(v))
}

// byID is the handler of a read that get answers for the path's {id}.
func byID[T any](s *Server, get func(context.Context, auth.Principal, string) (T, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		v, err := get(r.Context(), p, r.PathValue("id"))
		s.reply(w, r, http.StatusOK, v, err)
	}
}

// orEmpty is l, or an empty list: lists are [] on the wire, never null.
func orEmpty[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, api.Error{Error: api.ErrorDetail{Code: code, Message: msg}})
}

// fail maps an engine error to a status and body.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code := http.StatusInternalServerError, "internal"
	switch {
	case errors.Is(err, engine.ErrInvalid):
		status, code = http.StatusBadRequest, "invalid_request"
	case errors.Is(err, engine.ErrForbidden):
		status, code = http.StatusForbidden, "forbidden"
	case errors.Is(err, store.ErrNotFound):
		status, code = http.StatusNotFound, "not_found"
	case errors.Is(err, store.ErrConflict):
		status, code = http.StatusConflict, "conflict"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		status, code = http.StatusServiceUnavailable, "unavailable"
	}
	msg := err.Error()
	if status == http.StatusInternalServerError {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeError(w, status, code, msg)
}

func queryInt(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: query parameter %s=%q: want a non-negative integer", engine.ErrInvalid, name, v)
	}
	return n, nil
}
