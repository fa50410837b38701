package sqlstore

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mandate-dev/mandate/internal/jcs"
	"github.com/mandate-dev/mandate/internal/store"
)

// Encoded is a Change with its JSON columns marshalled by the submitter, so
// a store's writer goroutine spends its time in the database, not in
// encoding.
type Encoded struct {
	C                   *store.Change
	Agent, Tools, State []byte
	Mandate             []byte
	// Args is the decision row's args column: nil when its evidence
	// record holds them as given (store.DecisionArgs).
	Args   []byte
	Output []byte
	// Approvals and ApprovalChanges are the bodies of C's approval rows,
	// in order.
	Approvals, ApprovalChanges [][]byte
	// Leaves bind C's rows to their evidence records (store.Binding).
	Leaves store.Leaves
}

// Encode checks c's draws and marshals its JSON columns.
func Encode(c *store.Change) (*Encoded, error) {
	e := &Encoded{C: c, Leaves: store.LeavesOf(c)}
	for _, d := range c.Draws {
		if err := store.CheckDraw(d); err != nil {
			return nil, err
		}
	}
	var err error
	if s := c.Session; s != nil {
		if e.State, err = json.Marshal(s.State); err != nil {
			return nil, fmt.Errorf("encode session state: %w", err)
		}
		if c.NewSession {
			if e.Agent, err = json.Marshal(s.Agent); err != nil {
				return nil, fmt.Errorf("encode agent: %w", err)
			}
			if e.Tools, err = json.Marshal(s.Tools); err != nil {
				return nil, fmt.Errorf("encode tools: %w", err)
			}
		}
	}
	if m := c.Mandate; m != nil {
		if e.Mandate, err = json.Marshal(m.Mandate); err != nil {
			return nil, fmt.Errorf("encode mandate: %w", err)
		}
	}
	if d := c.Decision; d != nil {
		// The rest of the decision is stored once, in its evidence
		// record.
		var canon jcs.Canonicalizer
		e.Args = store.DecisionArgs(&canon, d.Args)
	}
	if err := e.encodeApprovals(); err != nil {
		return nil, err
	}
	if o := c.Observation; o != nil {
		e.Output = JSONOrNull(o.Output)
	}
	return e, nil
}

func (e *Encoded) encodeApprovals() error {
	for _, a := range e.C.Approvals {
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encode approval %s: %w", a.ID, err)
		}
		e.Approvals = append(e.Approvals, b)
	}
	for _, ac := range e.C.ApprovalChanges {
		if ac.Approval == nil {
			return errors.New("encode approval change: no approval")
		}
		b, err := json.Marshal(ac.Approval)
		if err != nil {
			return fmt.Errorf("encode approval %s: %w", ac.Approval.ID, err)
		}
		e.ApprovalChanges = append(e.ApprovalChanges, b)
	}
	return nil
}

// JSONOrNull is b, or the JSON null for an empty b: a NOT NULL JSON column
// holds null rather than nothing.
func JSONOrNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

// ObservationArgs is an observation's args column: NULL when it has none.
func ObservationArgs(o *store.Observation) []byte {
	if len(o.Args) > 0 {
		return o.Args
	}
	return nil
}

// Job is one submitted change and where its outcome goes.
type Job struct {
	E   *Encoded
	Res chan error
}
