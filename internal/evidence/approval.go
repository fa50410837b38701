package evidence

import (
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// Record types of the approval queue and the judge.
const (
	// TypeApproval is an approval as created: an ask put to a person,
	// bound to its call, with who may answer and its deadline.
	TypeApproval = "approval"
	// TypeApprovalState is an approval's change of state — answered
	// (naming the answerer's token id and role, and how the answer came),
	// expired, withdrawn, or used by the decision that ran the call.
	TypeApprovalState = "approval_state"
	// TypeJudge is one exchange with a judge model: the prompt's hash, the
	// model, its answer and how long it took.
	TypeJudge = "judge"
)

// approvalStateContent is what an approval's change records: the row as it
// now is, and the state it left.
type approvalStateContent struct {
	From     string          `json:"from"`
	Approval *store.Approval `json:"approval"`
}

// recordApprovals adds the records of c's approval rows and judge
// exchanges. An answer relayed by a surface from a person's action
// elsewhere (Claude Code's own prompt) is recorded as reported.
func recordApprovals(c *store.Change, add func(typ, origin, session string, at time.Time, content any) error) error {
	for _, a := range c.Approvals {
		if err := add(TypeApproval, Observed, a.SessionID, a.CreatedAt, a); err != nil {
			return err
		}
	}
	for _, ac := range c.ApprovalChanges {
		a := ac.Approval
		if a == nil {
			// The store refuses such a change; the log still says it
			// was submitted.
			if err := add(TypeApprovalState, Observed, "", time.Time{}, approvalStateContent{From: ac.From}); err != nil {
				return err
			}
			continue
		}
		origin := Observed
		if a.Origin == Reported {
			origin = Reported
		}
		at := a.CreatedAt
		if a.AnsweredAt != nil {
			at = *a.AnsweredAt
		}
		if err := add(TypeApprovalState, origin, a.SessionID, at, approvalStateContent{From: ac.From, Approval: a}); err != nil {
			return err
		}
	}
	for _, j := range c.JudgeExchanges {
		if err := add(TypeJudge, Observed, j.SessionID, j.CreatedAt, j); err != nil {
			return err
		}
	}
	return nil
}
