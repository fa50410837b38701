package engine

import (
	"encoding/json"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// An agent may say why it makes a call. Mandate cannot check such a claim,
// so it never mixes it with what it observed: the statement is recorded as
// its own evidence record, labelled reported, committed with the decision
// it accompanies, and the decision is made without it.

// ReportedReasoning is the kind of statement EvaluateRequest.Reported is.
const ReportedReasoning = "reasoning"

// checkReported accepts an absent statement or any JSON value within the
// arguments' size cap.
func (e *Engine) checkReported(r json.RawMessage) error {
	if len(r) == 0 {
		return nil
	}
	if len(r) > e.maxArgs {
		return invalid("reported is %d bytes, over the %d-byte limit", len(r), e.maxArgs)
	}
	if !json.Valid(r) {
		return invalid("reported is not valid JSON")
	}
	return nil
}

// reportedFor is the statement to record beside decision d, if the call
// came with one.
func reportedFor(req EvaluateRequest, d *Decision, now time.Time) []*store.Reported {
	if len(req.Reported) == 0 || string(req.Reported) == "null" {
		return nil
	}
	return []*store.Reported{{SessionID: d.SessionID, DecisionID: d.ID, Kind: ReportedReasoning, Content: req.Reported, CreatedAt: now}}
}
