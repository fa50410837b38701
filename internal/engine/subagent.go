package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/store"
)

// SubagentRequest starts the session of a sub-agent that an agent runtime
// launched, when the runtime reports the launch (the call that started it)
// and the sub-agent's start as separate events with nothing that links the
// two — as Claude Code does with a Task call and SubagentStart.
//
// The surface records each launch as a launch session when the launching
// call is decided: a child of the launching session whose id starts with
// LaunchPrefix, whose agent id is the sub-agent's and whose mandate is the
// launching session's narrowed by the launch's words. StartSubagent then
// claims the oldest such launch that is active and has no session under it
// yet, and starts the sub-agent's session under it, so the sub-agent works
// within the words it was launched with. Claims are made one at a time per
// launching session, so concurrent starts never claim the same launch.
type SubagentRequest struct {
	// ParentID is the launching session.
	ParentID string
	// ID is the sub-agent's session id (required: the surface finds the
	// session by it later).
	ID         string
	AgentID    string
	WorkingDir string
	// LaunchPrefix selects launch sessions by id; "" claims none.
	LaunchPrefix string
}

// SubagentInfo is a started sub-agent session.
type SubagentInfo struct {
	*SessionInfo
	// LaunchID is the launch session claimed, or "" when there was none:
	// the sub-agent then works under the launching session's own mandate.
	LaunchID string
}

// StartSubagent starts a sub-agent's session under the oldest unclaimed
// launch session of req.ParentID (see SubagentRequest), or under
// req.ParentID itself when there is none. A session with req.ID that
// already exists is a conflict.
func (e *Engine) StartSubagent(ctx context.Context, p auth.Principal, req SubagentRequest) (*SubagentInfo, error) {
	if !p.Can(auth.CreateSession) {
		return nil, forbidden(p, auth.CreateSession)
	}
	switch {
	case req.ParentID == "":
		return nil, invalid("the launching session's id is required")
	case req.ID == "":
		return nil, invalid("session_id is required: the sub-agent's session is found by it later")
	case !idPattern.MatchString(req.ID):
		return nil, invalid("session_id %q: use letters, digits and . _ : @ - (at most 128)", req.ID)
	}
	if _, err := e.store.GetSession(ctx, req.ID); err == nil {
		return nil, fmt.Errorf("%w: session %s", ErrConflict, req.ID)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	// Holding the launching session serialises claims among its children.
	l, err := e.acquire(ctx, req.ParentID)
	if err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	if !p.Owns(l.sess.Agent.ID) {
		return nil, notServed(p, "session "+req.ParentID, l.sess.Agent.ID)
	}
	launch, err := e.unclaimedLaunch(ctx, req)
	if err != nil {
		return nil, err
	}
	parent := req.ParentID
	if launch != "" {
		parent = launch
	} else if req.LaunchPrefix != "" {
		e.log.Info("sub-agent started with no launch to claim; it works under its launching session's mandate", "session", req.ID, "parent", req.ParentID, "agent", req.AgentID)
	}
	info, err := e.CreateSession(ctx, p, SessionRequest{ID: req.ID, AgentID: req.AgentID, WorkingDir: req.WorkingDir, ParentID: parent})
	if err != nil {
		return nil, err
	}
	return &SubagentInfo{SessionInfo: info, LaunchID: launch}, nil
}

// maxLaunches bounds how many of a session's children are looked at for a
// launch to claim.
const maxLaunches = 1000

// unclaimedLaunch returns the oldest active launch session of req's parent
// and agent that has no child yet, or "".
func (e *Engine) unclaimedLaunch(ctx context.Context, req SubagentRequest) (string, error) {
	if req.LaunchPrefix == "" {
		return "", nil
	}
	kids, err := e.store.ListSessions(ctx, store.SessionFilter{ParentID: req.ParentID, AgentID: req.AgentID, Status: store.StatusActive, Limit: maxLaunches})
	if err != nil {
		return "", fmt.Errorf("launch sessions of %s: %w", req.ParentID, err)
	}
	slices.Reverse(kids) // oldest first
	for _, k := range kids {
		if !strings.HasPrefix(k.ID, req.LaunchPrefix) {
			continue
		}
		under, err := e.store.ListSessions(ctx, store.SessionFilter{ParentID: k.ID, Limit: 1})
		if err != nil {
			return "", fmt.Errorf("launch session %s: %w", k.ID, err)
		}
		if len(under) == 0 {
			return k.ID, nil
		}
	}
	return "", nil
}
