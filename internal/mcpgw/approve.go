package mcpgw

import (
	"context"
	"encoding/json"
)

// Approver resolves calls the policy said to ask about. It is the seam for
// the approval queue: the gateway consults it on every ask and runs the call
// only on Approved.
type Approver interface {
	Approve(ctx context.Context, r ApprovalRequest) (Approval, error)
}

// ApprovalRequest is a call that awaits a person's decision.
type ApprovalRequest struct {
	SessionID  string
	DecisionID string
	Tool       string
	Args       json.RawMessage
	Reasons    []string
}

// ApprovalStatus is where an ask stands.
type ApprovalStatus string

// The statuses an Approver returns.
const (
	// Pending: nobody has decided yet; the call is not run.
	Pending ApprovalStatus = "pending"
	// Approved: a person allowed this call; it runs.
	Approved ApprovalStatus = "approved"
	// Rejected: a person refused this call.
	Rejected ApprovalStatus = "rejected"
)

// Approval is an Approver's answer.
type Approval struct {
	Status ApprovalStatus
	// Reason is shown with a rejection.
	Reason string
}

// PendingApprover leaves every ask pending: until an approval queue exists,
// an ask is never run, and the agent is told it awaits approval.
type PendingApprover struct{}

// Approve implements Approver.
func (PendingApprover) Approve(context.Context, ApprovalRequest) (Approval, error) {
	return Approval{Status: Pending}, nil
}
