package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

// Backend is the Mandate the gateway asks: an engine in the same process
// (embedded, or `mandate serve` itself) or a server over HTTP. Every error
// means the gateway must not run the call.
type Backend interface {
	// EnsureSession creates a session, or — when spec.ID names one that
	// exists — uses it. It returns the session's id.
	EnsureSession(ctx context.Context, spec SessionSpec) (string, error)
	// PinTools registers a tools/list result with a session before the
	// agent is shown it.
	PinTools(ctx context.Context, sessionID string, tools []action.ToolDef) (*api.PinReport, error)
	// Evaluate decides a call; args is a JSON object.
	Evaluate(ctx context.Context, sessionID, tool string, args json.RawMessage) (*api.Decision, error)
	// Observe records a call's result against its decision.
	Observe(ctx context.Context, decisionID string, output json.RawMessage) error
}

// SessionEnder is a Backend that can complete a session when its MCP
// client went away: MCP has no session-completion event, so the end of
// the transport (an HTTP MCP session deleted or expired, a stdio client's
// input closed) stands for it, as Claude Code's SessionEnd hook does for
// its sessions. Completing records the session's summary as evidence
// (docs/behaviour.md). Only an active or idle session is completed: a
// suspended or terminated one keeps its status.
type SessionEnder interface {
	EndSession(ctx context.Context, sessionID string) error
}

// endTimeout bounds completing a session whose client went away: nothing
// waits for it but the gateway's own bookkeeping.
const endTimeout = 30 * time.Second

// endSession completes sessionID through b when b can, with a context
// that outlives the request that created the session (its values — the
// principal — kept, its cancellation not).
func endSession(ctx context.Context, b Backend, sessionID string) error {
	e, ok := b.(SessionEnder)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endTimeout)
	defer cancel()
	if err := e.EndSession(ctx, sessionID); err != nil {
		return fmt.Errorf("complete session %s: %w", sessionID, err)
	}
	return nil
}

// endable reports whether a session of this status is completed when its
// client goes away.
func endable(status string) bool {
	return status == store.StatusActive || status == store.StatusIdle
}

// SessionSpec describes a session to create.
type SessionSpec struct {
	// ID is optional; empty lets Mandate choose.
	ID      string
	AgentID string
	// Client is the MCP client's name and version ("claude-ai/0.1.0",
	// from initialize's clientInfo) and ToolsetHash the fingerprint of the
	// tools the gateway shows (baseline.ToolsetHash): the agent version's
	// fingerprint as MCP can tell it. MCP names no model, so the client
	// stands in for it; either may be empty.
	Client      string
	ToolsetHash string
	// Intent is the user's words; Mandate a structured grant. Either or both.
	Intent     string
	Mandate    *mandate.Mandate
	WorkingDir string
	HomeDir    string
	// Existing means ID must name a session that exists already: the
	// request brought no words to create one with.
	Existing bool
}

// agent is the session's version fingerprint.
func (s SessionSpec) agent() store.Agent {
	return store.Agent{ID: s.AgentID, Model: s.Client, ToolsetHash: s.ToolsetHash}
}

type principalKey struct{}

// WithPrincipal returns ctx carrying the principal an EngineBackend acts as
// for this request (the /mcp endpoint's caller).
func WithPrincipal(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

func principalFrom(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	return p, ok
}

// ensureSession has be create (or use) the session spec describes, with
// the fingerprint of the tools the gateway shows when toolset is set: what
// the HTTP and stdio gateways do on a connection's first use.
func ensureSession(ctx context.Context, be Backend, spec SessionSpec, toolset func() string) (string, error) {
	if toolset != nil {
		spec.ToolsetHash = toolset()
	}
	id, err := be.EnsureSession(ctx, spec)
	if err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	return id, nil
}

// EngineBackend asks an engine in this process. It acts as the principal in
// the request's context (WithPrincipal) or, if there is none, as Default.
type EngineBackend struct {
	Engine *engine.Engine
	// Default is the principal for requests that carry none: for the
	// embedded stdio gateway, an admin acting for the user who wrote the
	// gateway's configuration. The zero Principal may do nothing.
	Default auth.Principal
	// Source labels the words of sessions this backend creates (see
	// engine.SessionRequest.Source); only admins may choose it.
	Source string
}

func (b *EngineBackend) principal(ctx context.Context) auth.Principal {
	if p, ok := principalFrom(ctx); ok {
		return p
	}
	return b.Default
}

// EnsureSession implements Backend.
func (b *EngineBackend) EnsureSession(ctx context.Context, spec SessionSpec) (string, error) {
	p := b.principal(ctx)
	if spec.Existing {
		if _, err := b.Engine.Store().GetSession(ctx, spec.ID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return "", fmt.Errorf("%w: %q (create it with POST /v1/sessions, or send the user's words in %s to create it)", errNoSession, spec.ID, HeaderIntent)
			}
			return "", err
		}
		return spec.ID, nil
	}
	source := ""
	if p.Role == auth.RoleAdmin {
		source = b.Source
	}
	info, err := b.Engine.CreateSession(ctx, p, engine.SessionRequest{
		ID: spec.ID, AgentID: spec.AgentID, Agent: spec.agent(), Intent: spec.Intent, Mandate: spec.Mandate,
		WorkingDir: spec.WorkingDir, HomeDir: spec.HomeDir, Source: source,
	})
	if err != nil {
		if spec.ID != "" && errors.Is(err, store.ErrConflict) {
			return spec.ID, nil
		}
		return "", err
	}
	return info.Session.ID, nil
}

// PinTools implements Backend.
func (b *EngineBackend) PinTools(ctx context.Context, sessionID string, tools []action.ToolDef) (*api.PinReport, error) {
	return b.Engine.PinTools(ctx, b.principal(ctx), sessionID, tools)
}

// Evaluate implements Backend.
func (b *EngineBackend) Evaluate(ctx context.Context, sessionID, tool string, args json.RawMessage) (*api.Decision, error) {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	d, err := b.Engine.Evaluate(ctx, b.principal(ctx), engine.EvaluateRequest{SessionID: sessionID, Tool: tool, Args: m, RawArgs: args, Surface: api.SurfaceMCP})
	if err != nil {
		return nil, err
	}
	return d.Wire(), nil
}

// EndSession implements SessionEnder.
func (b *EngineBackend) EndSession(ctx context.Context, sessionID string) error {
	sess, err := b.Engine.Store().GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	if !endable(sess.Status) {
		return nil
	}
	_, err = b.Engine.SetStatus(ctx, b.principal(ctx), sessionID, store.StatusCompleted)
	return err
}

// Observe implements Backend.
func (b *EngineBackend) Observe(ctx context.Context, decisionID string, output json.RawMessage) error {
	_, err := b.Engine.Observe(ctx, b.principal(ctx), engine.ObserveRequest{DecisionID: decisionID, Output: output, Origin: "observed"})
	return err
}

// ClientBackend asks a Mandate server over HTTP. Its token must be able to
// create sessions and evaluate (a user or hook token).
type ClientBackend struct {
	Client *client.Client
}

// EnsureSession implements Backend.
func (b *ClientBackend) EnsureSession(ctx context.Context, spec SessionSpec) (string, error) {
	if spec.Existing {
		if _, err := b.Client.GetSession(ctx, spec.ID); err != nil {
			if client.IsNotFound(err) {
				return "", fmt.Errorf("%w: %q", errNoSession, spec.ID)
			}
			return "", fmt.Errorf("cannot tell whether session %q exists: %w", spec.ID, err)
		}
		return spec.ID, nil
	}
	req := client.SessionRequest{
		SessionID: spec.ID, AgentID: spec.AgentID, Intent: spec.Intent,
		WorkingDirectory: spec.WorkingDir, HomeDirectory: spec.HomeDir,
	}
	if a := spec.agent(); a.Model != "" || a.ToolsetHash != "" {
		req.Agent = &a
	}
	if spec.Mandate != nil {
		raw, err := json.Marshal(spec.Mandate)
		if err != nil {
			return "", fmt.Errorf("encode mandate: %w", err)
		}
		req.Mandate = raw
	}
	s, err := b.Client.CreateSession(ctx, req)
	if err != nil {
		if spec.ID != "" && client.IsConflict(err) {
			return spec.ID, nil
		}
		return "", err
	}
	return s.SessionID, nil
}

// PinTools implements Backend.
func (b *ClientBackend) PinTools(ctx context.Context, sessionID string, tools []action.ToolDef) (*api.PinReport, error) {
	return b.Client.PinTools(ctx, sessionID, tools)
}

// Evaluate implements Backend.
func (b *ClientBackend) Evaluate(ctx context.Context, sessionID, tool string, args json.RawMessage) (*api.Decision, error) {
	return b.Client.EvaluateCall(ctx, client.Call{SessionID: sessionID, Tool: tool, Args: args, Surface: api.SurfaceMCP})
}

// Observe implements Backend.
func (b *ClientBackend) Observe(ctx context.Context, decisionID string, output json.RawMessage) error {
	return b.Client.Observe(ctx, decisionID, output)
}

// EndSession implements SessionEnder.
func (b *ClientBackend) EndSession(ctx context.Context, sessionID string) error {
	s, err := b.Client.GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	if s.Session == nil || !endable(s.Session.Status) {
		return nil
	}
	return b.Client.SetStatus(ctx, sessionID, store.StatusCompleted)
}
