package engine

import (
	"context"

	"github.com/mandate-dev/mandate/internal/store"
)

// Store is what the engine needs from a backend: to submit changes and to
// read back the sessions, mandate versions, decisions, observations and tool
// pins it serves. Tokens and the evidence log are other consumers' (the
// server, package evidence); every store.Store provides this.
type Store interface {
	// Submit queues a change; the channel reports its durability (see
	// store.Store).
	Submit(c *store.Change) <-chan error

	GetSession(ctx context.Context, id string) (*store.Session, error)
	ListSessions(ctx context.Context, f store.SessionFilter) ([]*store.Session, error)
	GetMandate(ctx context.Context, sessionID string, version int) (*store.MandateVersion, error)
	ListMandates(ctx context.Context, sessionID string) ([]*store.MandateVersion, error)
	GetDecision(ctx context.Context, id string) (*store.Decision, error)
	ListDecisions(ctx context.Context, f store.DecisionFilter) ([]*store.Decision, error)
	ListObservations(ctx context.Context, decisionID string) ([]*store.Observation, error)
	DecisionByCall(ctx context.Context, sessionID, callID string) (*store.Decision, error)
	ListGaps(ctx context.Context, f store.GapFilter) ([]*store.Observation, error)
	ListToolPins(ctx context.Context, sessionID string) ([]*store.ToolPin, error)
	ListToolChanges(ctx context.Context, sessionID string) ([]*store.ToolChange, error)
	// GetBudget reads a delegation tree's budget (treecaps.go).
	GetBudget(ctx context.Context, sessionID, dim string) (*store.Budget, error)
}

var _ Store = store.Store(nil)

// ApprovalStates is what a session summary reads of approvals: how each
// ask was answered. Every store.Approvals provides it; a store that keeps
// no approvals (the engine's appr.st is nil) has none, and the summary
// says "unknown" (answerOf, TestAnswerOf).
type ApprovalStates interface {
	GetApproval(ctx context.Context, id string) (*store.Approval, error)
}

var _ ApprovalStates = store.Approvals(nil)

// approvalStates is the engine's ApprovalStates, nil without approvals.
func (e *Engine) approvalStates() ApprovalStates {
	if e.appr.st == nil {
		return nil // a typed nil would pass as a reader
	}
	return e.appr.st
}
