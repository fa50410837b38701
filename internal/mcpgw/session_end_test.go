package mcpgw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/store"
)

// waitStatus waits for session id to reach status (the HTTP gateway
// completes a session in the background once its MCP session ended).
func waitStatus(t *testing.T, a *app.App, id, status string) *store.Session {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := a.Store.GetSession(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status == status || time.Now().After(deadline) {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// recordedSummary reports whether session id's summary was recorded as an
// evidence record (the summary route names the record then).
func recordedSummary(t *testing.T, a *app.App, id string) bool {
	t.Helper()
	sum, err := a.Engine.SessionSummary(context.Background(), gatewayAdmin, id)
	if err != nil {
		t.Fatal(err)
	}
	return sum.Recorded != nil
}

// greetOverHTTP opens an MCP session over Streamable HTTP with the headers
// given, calls greet once and returns the client session and the Mandate
// session the call was decided in.
func greetOverHTTP(ctx context.Context, t *testing.T, a *app.App, srv *httptest.Server, h http.Header, agent string) (*mcp.ClientSession, string) {
	t.Helper()
	h.Set("Authorization", "Bearer test")
	c := mcp.NewClient(&mcp.Implementation{Name: "end-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: headerRT{h: h, base: http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil || res.IsError {
		t.Fatalf("greet: %+v, %v", res, err)
	}
	list, err := a.Store.ListSessions(ctx, store.SessionFilter{AgentID: agent})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions of %s: %d, %v", agent, len(list), err)
	}
	return cs, list[0].ID
}

// TestHTTPSessionEndCompletes: when an MCP client ends its session over
// Streamable HTTP (DELETE), the Mandate session the gateway created for it
// is completed and its summary recorded as evidence, as Claude Code's
// SessionEnd does; a session the client named is the caller's and keeps
// its status, and so does a suspended one.
func TestHTTPSessionEndCompletes(t *testing.T) {
	ctx := context.Background()
	a, sessions, g := httpGateway(ctx, t)
	forgot := make(chan string, 4)
	sessions.OnEnd = func(id string) { g.Forget(id); forgot <- id }
	sessions.OnEndError = func(id string, err error) { t.Errorf("session %s not completed: %v", id, err) }
	srv := serveAsAdmin(t, g)

	cs, id := greetOverHTTP(ctx, t, a, srv, http.Header{HeaderIntent: {"Greet%20Ada."}, HeaderAgent: {"end-agent"}}, "end-agent")
	if s, _ := a.Store.GetSession(ctx, id); s.Status != store.StatusActive {
		t.Fatalf("while the MCP session is open: %s", s.Status)
	}
	if recordedSummary(t, a, id) {
		t.Fatal("a summary recorded before the session ended")
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if s := waitStatus(t, a, id, store.StatusCompleted); s.Status != store.StatusCompleted {
		t.Fatalf("after the client ended its MCP session: %s, want completed", s.Status)
	}
	<-forgot
	if !recordedSummary(t, a, id) {
		t.Fatal("the completed session's summary was not recorded")
	}

	// A suspended session stays suspended: a disconnect does not lift a
	// stop a person or a rule put on it.
	cs, id = greetOverHTTP(ctx, t, a, srv, http.Header{HeaderIntent: {"Greet%20Ada."}, HeaderAgent: {"end-agent-2"}}, "end-agent-2")
	if _, err := a.Engine.SetStatus(ctx, gatewayAdmin, id, store.StatusSuspended); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	<-forgot
	if s, _ := a.Store.GetSession(ctx, id); s.Status != store.StatusSuspended {
		t.Fatalf("a suspended session after its client left: %s", s.Status)
	}

	// A session created beforehand and named by the client is not the
	// MCP session's own.
	info, err := a.Engine.CreateSession(ctx, gatewayAdmin, engine.SessionRequest{AgentID: "end-agent-3", Intent: "Greet Ada."})
	if err != nil {
		t.Fatal(err)
	}
	cs, id = greetOverHTTP(ctx, t, a, srv, http.Header{HeaderSession: {info.Session.ID}}, "end-agent-3")
	cs.Close()
	time.Sleep(200 * time.Millisecond) // what an ending would have done by now
	if s, _ := a.Store.GetSession(ctx, id); s.Status != store.StatusActive {
		t.Fatalf("a named session after its client left: %s", s.Status)
	}
}

// TestStdioSessionEndCompletes: the stdio gateway completes its session
// when the client closes its end, and records its summary.
func TestStdioSessionEndCompletes(t *testing.T) {
	ctx := context.Background()
	a := openApp(t)
	be := &EngineBackend{Engine: a.Engine, Default: gatewayAdmin}
	sessions := &StdioSession{Backend: be, Spec: SessionSpec{AgentID: "stdio-end", Intent: "Greet Ada."}}
	if err := sessions.End(ctx); err != nil {
		t.Fatalf("ending before any session exists: %v", err)
	}
	g := peerGateway(ctx, t, be, sessions)
	ct, st := mcp.NewInMemoryTransports()
	ran := make(chan error, 1)
	go func() { ran <- g.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-end-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil || res.IsError {
		t.Fatalf("greet: %+v, %v", res, err)
	}
	cs.Close()
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway did not end when its client closed")
	}
	if err := sessions.End(ctx); err != nil {
		t.Fatal(err)
	}
	if s, _ := a.Store.GetSession(ctx, sessions.ID()); s.Status != store.StatusCompleted {
		t.Fatalf("after the client closed: %s, want completed", s.Status)
	}
	if !recordedSummary(t, a, sessions.ID()) {
		t.Fatal("the completed session's summary was not recorded")
	}
}
