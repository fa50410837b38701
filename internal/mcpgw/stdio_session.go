package mcpgw

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioSession is the stdio gateway's one Mandate session, created on the
// first request that needs one — tools/list or a tool call, both after the
// client's initialize — so that its agent version carries what the HTTP
// gateway's sessions carry: the client's name/version from clientInfo and
// the hash of the tools the gateway shows (docs/behaviour.md). A client
// that changes either is a new version of the agent, an evidence record
// once its first session is folded.
//
// Creating the session late moves the failure of a Mandate that cannot be
// reached, or refuses the session, from start-up to the first request;
// the caller checks the server first (mandate mcp stdio calls whoami) so
// that an unreachable Mandate still fails at once.
type StdioSession struct {
	Backend Backend
	// Spec is the session to create; its Client and ToolsetHash are
	// filled from the connection.
	Spec SessionSpec
	// Toolset, if set, is the fingerprint of the tools the gateway shows
	// (Gateway.ToolsetHash).
	Toolset func() string
	// OnCreate, if set, is told the session's id once it exists.
	OnCreate func(id string)

	mu sync.Mutex
	id string
}

// Session implements SessionResolver. A failed creation is not
// remembered: the next request tries again.
func (s *StdioSession) Session(ctx context.Context, req mcp.Request) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id != "" {
		return s.id, nil
	}
	spec := s.Spec
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			spec.Client = clientVersion(ip.ClientInfo.Name, ip.ClientInfo.Version)
			if spec.AgentID == "" {
				spec.AgentID = agentID(ip.ClientInfo.Name)
			}
		}
	}
	if spec.AgentID == "" {
		spec.AgentID = "mcp-client"
	}
	id, err := ensureSession(ctx, s.Backend, spec, s.Toolset)
	if err != nil {
		return "", err
	}
	s.id = id
	if s.OnCreate != nil {
		s.OnCreate(id)
	}
	return id, nil
}

// ID is the session's id, "" until the first request created it.
func (s *StdioSession) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// End completes the session, if one was created, once the client went
// away (its input closed): the stdio gateway serves one client for one
// task, and MCP has no completion event. Completing records the session's
// summary as evidence; a suspended or terminated session keeps its status.
func (s *StdioSession) End(ctx context.Context) error {
	id := s.ID()
	if id == "" {
		return nil
	}
	return endSession(ctx, s.Backend, id)
}
