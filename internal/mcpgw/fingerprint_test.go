package mcpgw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/store"
)

// TestSessionFingerprint: a session the HTTP gateway creates records the
// agent's version as MCP can tell it — the client's name and version from
// initialize, and the fingerprint of the tools the gateway shows.
func TestSessionFingerprint(t *testing.T) {
	ctx := context.Background()
	a, sessions, g := httpGateway(ctx, t)
	sessions.Toolset = g.ToolsetHash
	hash := g.ToolsetHash()
	if !strings.HasPrefix(hash, "sha256:") {
		t.Fatalf("tool-set hash of a gateway with tools: %q", hash)
	}
	srv := serveAsAdmin(t, g)
	h := http.Header{HeaderIntent: {"Greet%20Ada."}, HeaderAgent: {"fp-agent"}, "Authorization": {"Bearer test"}}
	c := mcp.NewClient(&mcp.Implementation{Name: "fp-client", Version: "2.0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: headerRT{h: h, base: http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	list, err := a.Store.ListSessions(ctx, store.SessionFilter{AgentID: "fp-agent"})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions of fp-agent: %d, %v", len(list), err)
	}
	if got := list[0].Agent; got.Model != "fp-client/2.0" || got.ToolsetHash != hash {
		t.Fatalf("agent version: %+v, want model fp-client/2.0 and tool-set %s", got, hash)
	}
}

// peerGateway is a gateway before the in-memory peer upstream, deciding
// through be in the sessions given, closed when t ends.
// httpGateway is a Streamable HTTP gateway over the in-memory peer, on a
// fresh app; a test sets what it needs on the sessions before serving.
func httpGateway(ctx context.Context, t *testing.T) (*app.App, *HTTPSessions, *Gateway) {
	t.Helper()
	a := openApp(t)
	be := &EngineBackend{Engine: a.Engine}
	sessions := &HTTPSessions{Backend: be}
	return a, sessions, peerGateway(ctx, t, be, sessions)
}

// serveAsAdmin serves g over HTTP, every request authenticated as the
// gateway's admin.
func serveAsAdmin(t *testing.T, g *Gateway) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(g.HTTPHandler(func(*http.Request) (auth.Principal, bool) { return gatewayAdmin, true }))
	t.Cleanup(srv.Close)
	return srv
}

func peerGateway(ctx context.Context, t *testing.T, be Backend, sessions SessionResolver) *Gateway {
	t.Helper()
	up, _ := inMemory("peer")
	g, err := New(ctx, Options{Upstreams: []Upstream{up}, Backend: be, Sessions: sessions, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestStdioSessionFingerprint: the stdio gateway's session is created at
// the client's first tools/list, after initialize, so it records the same
// version as an HTTP one — clientInfo and the tool-set hash — and a client
// that changes its version is a new version of the agent.
func TestStdioSessionFingerprint(t *testing.T) {
	ctx := context.Background()
	a := openApp(t)
	be := &EngineBackend{Engine: a.Engine, Default: gatewayAdmin}
	connect := func(version string) *StdioSession {
		sessions := &StdioSession{Backend: be, Spec: SessionSpec{AgentID: "stdio-agent", Intent: "Greet Ada."}}
		g := peerGateway(ctx, t, be, sessions)
		sessions.Toolset = g.ToolsetHash
		ct, st := mcp.NewInMemoryTransports()
		go g.Run(ctx, st)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "fp-client", Version: version}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if sessions.ID() != "" {
			t.Fatalf("session created before the client asked for anything: %s", sessions.ID())
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if sessions.ID() == "" {
			t.Fatal("no session after tools/list")
		}
		s, err := a.Store.GetSession(ctx, sessions.ID())
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Agent; got.ID != "stdio-agent" || got.Model != "fp-client/"+version || got.ToolsetHash != g.ToolsetHash() || !strings.HasPrefix(got.ToolsetHash, "sha256:") {
			t.Fatalf("agent version: %+v, want fp-client/%s and tool-set %s", got, version, g.ToolsetHash())
		}
		return sessions
	}
	one, two := connect("1.0"), connect("1.1")
	if one.ID() == two.ID() {
		t.Fatal("two connections shared a session")
	}
}
