package mcpgw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mandate-dev/mandate/internal/auth"
)

// How an HTTP client tells the gateway whose task it works on. See
// docs/integrations/mcp.md.
const (
	// HeaderIntent carries the user's words for the session the gateway
	// creates for an MCP session. The value is percent-decoded (RFC 3986),
	// so words in any language fit in a header: write "%" as "%25".
	HeaderIntent = "Mandate-Intent"
	// HeaderSession names a Mandate session to act in: one created
	// beforehand with POST /v1/sessions (then no intent is needed), or —
	// with HeaderIntent — one the gateway creates under that id.
	HeaderSession = "Mandate-Session"
	// HeaderAgent is the agent id of a created session (default: the
	// client's name from initialize, else "mcp-client").
	HeaderAgent = "Mandate-Agent"
	// HeaderWorkingDir is the agent's working directory (absolute). Paths
	// under it count as in scope, so it is not assumed.
	HeaderWorkingDir = "Mandate-Working-Directory"
	// MetaSession is HeaderSession as a request's _meta key, for stateless
	// clients (protocol 2026-07-28) that carry their state in _meta.
	MetaSession = "mandate.dev/session"
)

// tokenPrincipal is the key under which the HTTP endpoint hands the
// caller's principal to the MCP handlers (in the SDK's TokenInfo.Extra).
const tokenPrincipal = "mandate.principal"

// statelessVersion is the first protocol version without sessions.
const statelessVersion = "2026-07-28"

// HTTPHandler serves the gateway over Streamable HTTP. The caller's
// principal is read with principal (the API's bearer-token check runs
// before); only user, hook and admin tokens may use it — the endpoint
// creates sessions with the user's intent. An MCP session keeps the token it
// started with: a request for it with another token is refused.
//
// Clients of protocol 2026-07-28 and later (no MCP sessions) are served
// statelessly and must name their Mandate session (MetaSession or
// HeaderSession); older clients get one Mandate session per MCP session.
func (g *Gateway) HTTPHandler(principal func(*http.Request) (auth.Principal, bool)) http.Handler {
	getServer := func(*http.Request) *mcp.Server { return g.server }
	stateful := mcp.NewStreamableHTTPHandler(getServer, nil)
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	verify := func(_ context.Context, _ string, r *http.Request) (*sdkauth.TokenInfo, error) {
		p, ok := principal(r)
		if !ok {
			return nil, fmt.Errorf("%w: no authenticated caller", sdkauth.ErrInvalidToken)
		}
		return &sdkauth.TokenInfo{UserID: p.TokenID, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{tokenPrincipal: p}}, nil
	}
	mcpHandler := sdkauth.RequireBearerToken(verify, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= statelessVersion {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := principal(r)
		if !ok {
			http.Error(w, "missing bearer token", http.StatusUnauthorized)
			return
		}
		switch p.Role {
		case auth.RoleUser, auth.RoleHook, auth.RoleAdmin:
		default:
			http.Error(w, fmt.Sprintf("the MCP endpoint needs a user, hook or admin token (this one is %s): it creates sessions with the user's intent", p.Role), http.StatusForbidden)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
}

// HTTPSessions resolves HTTP requests to Mandate sessions: the session a
// request names (MetaSession, HeaderSession), else one per MCP session,
// created on first use from the request's HeaderIntent.
type HTTPSessions struct {
	Backend Backend
	// Toolset, if set, is the fingerprint of the tools the gateway shows
	// (Gateway.ToolsetHash), recorded in each session's agent version.
	Toolset func() string

	mu    sync.Mutex
	slots map[string]*slot
	// OnEnd, if set, is called with a Mandate session whose MCP session
	// ended, after the session was completed.
	OnEnd func(sessionID string)
	// OnEndError, if set, is told a session that could not be completed
	// when its MCP session ended.
	OnEndError func(sessionID string, err error)
}

type slot struct {
	mu sync.Mutex
	id string
}

// Session implements SessionResolver.
func (h *HTTPSessions) Session(ctx context.Context, req mcp.Request) (string, error) {
	var hdr http.Header
	if ex := req.GetExtra(); ex != nil {
		hdr = ex.Header
	}
	explicit := metaString(req.GetParams(), MetaSession)
	if explicit == "" {
		explicit = strings.TrimSpace(hdr.Get(HeaderSession))
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	var key string
	switch {
	case explicit != "":
		key = "id:" + explicit
	case ss != nil && ss.ID() != "":
		key = "mcp:" + ss.ID()
	default:
		return "", fmt.Errorf("this request belongs to no session: without an MCP session (protocol %s and later), name a Mandate session in _meta[%q] or the %s header", statelessVersion, MetaSession, HeaderSession)
	}
	h.mu.Lock()
	if h.slots == nil {
		h.slots = map[string]*slot{}
	}
	s, ok := h.slots[key]
	if !ok {
		if len(h.slots) >= maxSlots {
			h.evictLocked()
		}
		s = &slot{}
		h.slots[key] = s
	}
	h.mu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id != "" {
		return s.id, nil
	}
	spec, err := specFromRequest(hdr, explicit, ss)
	if err != nil {
		return "", err
	}
	id, err := ensureSession(ctx, h.Backend, spec, h.Toolset)
	if err != nil {
		return "", err
	}
	s.id = id
	if !ok && explicit == "" && ss != nil {
		// The Mandate session is this MCP session's own: when the MCP
		// session ends (the client deleted it, or its transport closed)
		// the task is over, and the session is completed so its summary
		// is recorded. A session the request named is the caller's to
		// end.
		go func() {
			ss.Wait()
			h.mu.Lock()
			delete(h.slots, key)
			h.mu.Unlock()
			if err := endSession(ctx, h.Backend, id); err != nil && h.OnEndError != nil {
				h.OnEndError(id, err)
			}
			if h.OnEnd != nil {
				h.OnEnd(id)
			}
		}()
	}
	return id, nil
}

// maxSlots bounds the sessions HTTPSessions remembers. Forgetting a named
// session costs one lookup when it is used again; MCP sessions are forgotten
// when they end.
const maxSlots = 10000

// evictLocked forgets named sessions (never live MCP sessions' own, which
// would be created anew). The caller holds h.mu.
func (h *HTTPSessions) evictLocked() {
	for k := range h.slots {
		if strings.HasPrefix(k, "id:") {
			delete(h.slots, k)
		}
	}
}

func metaString(p mcp.Params, key string) string {
	if p == nil {
		return ""
	}
	m := p.GetMeta()
	if m == nil {
		return ""
	}
	s, _ := m[key].(string)
	return strings.TrimSpace(s)
}

// specFromRequest is the session a request asks for.
func specFromRequest(hdr http.Header, explicit string, ss *mcp.ServerSession) (SessionSpec, error) {
	intent, err := headerIntent(hdr.Get(HeaderIntent))
	if err != nil {
		return SessionSpec{}, err
	}
	spec := SessionSpec{ID: explicit, Intent: intent, WorkingDir: strings.TrimSpace(hdr.Get(HeaderWorkingDir))}
	if intent == "" {
		if explicit == "" {
			return SessionSpec{}, fmt.Errorf("no intent: send the user's words in the %s header, or name a session created with POST /v1/sessions in the %s header", HeaderIntent, HeaderSession)
		}
		spec.Existing = true
	}
	spec.AgentID = strings.TrimSpace(hdr.Get(HeaderAgent))
	if ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			if spec.AgentID == "" {
				spec.AgentID = agentID(ip.ClientInfo.Name)
			}
			spec.Client = clientVersion(ip.ClientInfo.Name, ip.ClientInfo.Version)
		}
	}
	if spec.AgentID == "" {
		spec.AgentID = "mcp-client"
	}
	return spec, nil
}

func headerIntent(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	s, err := url.PathUnescape(v)
	if err != nil {
		return "", fmt.Errorf("%s: %v (the value is percent-decoded: write %% as %%25)", HeaderIntent, err)
	}
	return strings.TrimSpace(s), nil
}

// agentID turns a client's name into an agent id Mandate accepts.
func agentID(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._:@-", r):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		if b.Len() >= 128 {
			break
		}
	}
	s := strings.Trim(b.String(), "._:@-")
	return s
}

// clientVersion is "name/version" of an MCP client, bounded (a client
// names itself; its words are not trusted to be short).
func clientVersion(name, version string) string {
	name, version = strings.TrimSpace(name), strings.TrimSpace(version)
	if name == "" && version == "" {
		return ""
	}
	s := name + "/" + version
	if len(s) > 128 {
		s = strings.ToValidUTF8(s[:128], "")
	}
	return s
}

var errNoSession = errors.New("session does not exist")
