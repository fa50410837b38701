package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/store"
)

// CookieName is the sign-in cookie. Its value is a random handle for a
// sign-in held in the server's memory, never the token.
const CookieName = "mandate_ui"

// signIn is one person's sign-in: the token it was made with (by hash, so
// a revoked token ends it), its CSRF token and its expiry.
type signIn struct {
	tokenHash []byte
	csrf      string
	expires   time.Time
}

// signIns are the sign-ins the server holds, bounded: past max the one
// that expires first is dropped (its holder signs in again).
type signIns struct {
	ttl time.Duration
	max int
	mu  sync.Mutex
	m   map[string]*signIn
}

func newSignIns(ttl time.Duration, max int) *signIns {
	return &signIns{ttl: ttl, max: max, m: map[string]*signIn{}}
}

func (s *signIns) add(tokenHash []byte, now time.Time) (id string, si *signIn) {
	id, si = randomID(), &signIn{tokenHash: tokenHash, csrf: randomID(), expires: now.Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= s.max {
		var oldest string
		for k, v := range s.m {
			if !now.Before(v.expires) {
				delete(s.m, k)
			} else if oldest == "" || v.expires.Before(s.m[oldest].expires) {
				oldest = k
			}
		}
		if len(s.m) >= s.max {
			delete(s.m, oldest)
		}
	}
	s.m[id] = si
	return id, si
}

func (s *signIns) get(id string, now time.Time) (*signIn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	si, ok := s.m[id]
	if ok && !now.Before(si.expires) {
		delete(s.m, id)
		return nil, false
	}
	return si, ok
}

func (s *signIns) drop(id string) {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

func randomID() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// viewer is the signed-in person a page is rendered for.
type viewer struct {
	P    auth.Principal
	CSRF string
}

// CanRead: sessions, decisions and the live feed (user, admin).
func (v *viewer) CanRead() bool { return v.P.Can(auth.Read) }

// CanAnswer: approve and deny (user, approver, admin).
func (v *viewer) CanAnswer() bool { return v.P.Can(auth.AnswerApprovals) }

// CanSuspend: change a session's status (user, admin).
func (v *viewer) CanSuspend() bool { return v.P.Can(auth.ChangeStatus) && v.P.Can(auth.Read) }

func (v *viewer) checkCSRF(r *http.Request) bool {
	got := r.PostFormValue("csrf")
	if got == "" {
		got = r.Header.Get("X-CSRF-Token")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(v.CSRF)) == 1
}

// mayRead reports whether a role may use the dashboard: the roles of
// people. Agents' and hooks' tokens live where the agent can reach them, so
// they never sign in.
func mayRead(r auth.Role) bool {
	return r == auth.RoleUser || r == auth.RoleApprover || r == auth.RoleAdmin
}

var errSignedOut = errors.New("signed out")

// principal checks a token (by hash) as the API does: known, not revoked,
// and a person's role.
func (d *Dashboard) principal(r *http.Request, hash []byte) (auth.Principal, error) {
	t, err := d.tokens.TokenByHash(r.Context(), hash)
	if err != nil {
		return auth.Principal{}, err
	}
	if t.RevokedAt != nil {
		return auth.Principal{}, errSignedOut
	}
	return auth.Principal{TokenID: t.ID, Role: auth.Role(t.Role), AgentID: t.AgentID, Name: t.Name}, nil
}

// viewer returns the request's signed-in person, or answers the request
// itself: a browser is sent to sign in (and back), an htmx request told to
// go there, the event stream refused.
func (d *Dashboard) viewer(w http.ResponseWriter, r *http.Request) (*viewer, bool) {
	if c, err := r.Cookie(CookieName); err == nil {
		if si, ok := d.signin.get(c.Value, d.now()); ok {
			p, err := d.principal(r, si.tokenHash)
			switch {
			case err == nil && mayRead(p.Role):
				return &viewer{P: p, CSRF: si.csrf}, true
			case err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, errSignedOut):
				d.log.Error("dashboard: token lookup failed", "err", err)
				d.errorPage(w, r, nil, http.StatusInternalServerError, "The store did not answer; try again.")
				return nil, false
			}
			d.signin.drop(c.Value) // revoked or gone
		}
	}
	login := "/ui/login?next=" + url.QueryEscape(r.URL.RequestURI())
	switch {
	case r.Header.Get("HX-Request") == "true":
		w.Header().Set("HX-Redirect", login)
		w.WriteHeader(http.StatusUnauthorized)
	case r.Method == http.MethodGet && r.URL.Path != "/ui/events":
		http.Redirect(w, r, login, http.StatusSeeOther)
	default:
		d.errorPage(w, r, nil, http.StatusUnauthorized, "You are not signed in (or your sign-in ended): sign in again.")
	}
	return nil, false
}

func (d *Dashboard) loginPage(w http.ResponseWriter, r *http.Request) {
	d.render(w, r, nil, http.StatusOK, "login", loginData{Next: safeNext(r.URL.Query().Get("next"))})
}

type loginData struct {
	Next  string
	Error string
}

// login checks the posted token and signs its holder in: a cookie naming
// a server-side sign-in, then a redirect to the page they came for.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		d.render(w, r, nil, http.StatusBadRequest, "login", loginData{Error: "The form could not be read: " + err.Error()})
		return
	}
	next := safeNext(r.PostFormValue("next"))
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" {
		d.render(w, r, nil, http.StatusBadRequest, "login", loginData{Next: next, Error: "Paste a token (mandate token create --role user, approver or admin)."})
		return
	}
	hash := auth.HashToken(token)
	p, err := d.principal(r, hash)
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, errSignedOut):
		d.render(w, r, nil, http.StatusUnauthorized, "login", loginData{Next: next, Error: "Unknown or revoked token."})
		return
	case err != nil:
		d.log.Error("dashboard: token lookup failed", "err", err)
		d.render(w, r, nil, http.StatusInternalServerError, "login", loginData{Next: next, Error: "The store did not answer; try again."})
		return
	case !mayRead(p.Role):
		d.render(w, r, nil, http.StatusForbidden, "login", loginData{Next: next, Error: "A " + string(p.Role) + " token cannot sign in to the dashboard: use a user, approver or admin token."})
		return
	}
	id, si := d.signin.add(hash, d.now())
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: id, Path: "/ui/",
		Expires: si.expires, MaxAge: int(d.signin.ttl / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	d.log.Info("dashboard sign-in", "token", p.TokenID, "role", p.Role)
	if next == "" {
		next = "/ui/"
		if !p.Can(auth.Read) {
			next = "/ui/approvals"
		}
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the sign-in (when the form carries its CSRF token) and
// clears the cookie either way.
func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	r.ParseForm()
	if c, err := r.Cookie(CookieName); err == nil {
		if si, ok := d.signin.get(c.Value, d.now()); ok {
			v := viewer{CSRF: si.csrf}
			if !v.checkCSRF(r) {
				d.errorPage(w, r, nil, http.StatusForbidden, "This sign-out form has no valid CSRF token: reload the page and try again.")
				return
			}
			d.signin.drop(c.Value)
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/ui/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}

// safeNext keeps a post-login redirect on the dashboard: a path under /ui/
// of this server, never another host (an open redirect).
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/ui/") ||
		strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") || strings.HasPrefix(u.Path, "/ui/login") {
		return ""
	}
	return u.RequestURI()
}
