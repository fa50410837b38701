package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Spend and count caps hold across a delegation tree: a session's cap
// bounds what its whole subtree — itself and every session delegated from
// it, at any depth — spends or acts on. Each capped dimension of a session
// ("spend:EUR", "count:delete") has a budget row holding what the subtree
// has used of it. An allowed call draws on the budget of its own session
// and of each ancestor, inside the transaction that commits its decision:
// the draw names the value it was decided on (From) and the value it sets
// (To), and commits only if the budget still stands at From and To is
// within the session's cap. Otherwise the whole change fails with
// ErrBudget and is decided again on the budget as it now stands — so a
// retried decision never draws twice, and a failed one leaves no draw.
//
// Each draw is an evidence record (RecordDraw, in the budget's session),
// and a budget row is bound to the latest of them: a row set back, edited,
// deleted or inserted behind the log's back no longer matches the log.

// RecordDraw is the evidence record type of a Draw (one record per
// element of Change.Draws, as package evidence names them).
const RecordDraw = "draw"

// Draw is one allowed call's draw on one budget.
type Draw struct {
	// SessionID is the budget's session: the drawing session itself or
	// one of its ancestors.
	SessionID string `json:"session_id"`
	// Dim is the capped dimension (SpendDim, CountDim).
	Dim string `json:"dim"`
	// From is the budget's use the call was decided on, To what the
	// draw sets it to (From plus the call's amount or items).
	From float64 `json:"from"`
	To   float64 `json:"to"`
	// Cap is the budget session's own cap on Dim, when it has one; a
	// draw past it fails. An uncapped ancestor is drawn on all the same,
	// so that a cap it is given later counts what its subtree had used.
	Cap *float64 `json:"cap,omitempty"`
	// Drawer is the session whose call drew, DecisionID its decision.
	Drawer     string    `json:"drawer_session_id"`
	DecisionID string    `json:"decision_id"`
	CreatedAt  time.Time `json:"created_at"`
}

// Budget is what the delegation tree under SessionID has used of one
// capped dimension.
type Budget struct {
	SessionID string  `json:"session_id"`
	Dim       string  `json:"dim"`
	Used      float64 `json:"used"`
}

// SpendDim is the budget dimension of money spent in a currency.
func SpendDim(currency string) string { return "spend:" + currency }

// CountDim is the budget dimension of items acted on of a kind.
func CountDim(kind string) string { return "count:" + kind }

// DrawLeaves are the leaf hashes of c's draw records, in the order of
// c.Draws (package evidence records them in that order).
func DrawLeaves(c *Change) [][]byte {
	if len(c.Draws) == 0 {
		return nil
	}
	var out [][]byte
	for _, r := range c.Evidence {
		if r.Type == RecordDraw {
			out = append(out, r.LeafHash)
		}
	}
	return out
}

// CheckDraw refuses a draw no budget could take: a store checks it before
// writing anything of its change.
func CheckDraw(d *Draw) error {
	switch {
	case d.SessionID == "" || d.Dim == "":
		return fmt.Errorf("draw: session %q, dimension %q: both are required", d.SessionID, d.Dim)
	case !(d.To > d.From) || d.From < 0:
		return fmt.Errorf("draw on %s of session %s: from %v to %v does not draw anything", d.Dim, d.SessionID, d.From, d.To)
	case d.Cap != nil && d.To > *d.Cap:
		return fmt.Errorf("draw on %s of session %s: %v is past its cap of %v: %w", d.Dim, d.SessionID, d.To, *d.Cap, ErrBudget)
	}
	return nil
}

// BudgetMoved is the error of a draw whose budget no longer stands at
// its From (have is what it stands at).
func BudgetMoved(d *Draw, have float64) error {
	return fmt.Errorf("budget %s of session %s stands at %v, not %v as decided: %w", d.Dim, d.SessionID, have, d.From, ErrBudget)
}

// CheckBudget holds a budget row (nil when the table has none; leaf is
// the record it is bound to) against latest, the latest draw record the
// evidence log holds for the row's session and dimension (nil when none).
// It returns a *TamperError when they disagree.
func CheckBudget(sessionID, dim string, row *Budget, leaf []byte, latest *EvidenceRecord) error {
	fail := func(column, format string, args ...any) error {
		return &TamperError{Table: "budgets", Row: sessionID + " " + dim, Column: column, Detail: fmt.Sprintf(format, args...)}
	}
	var d Draw
	if latest != nil {
		typ, content, err := RecordContent(latest.LeafHash, latest.Body)
		if err != nil {
			return fail("leaf", "the latest draw record on it: %v", err)
		}
		if typ != RecordDraw {
			return fail("leaf", "its latest record is a %s record, not a %s", typ, RecordDraw)
		}
		if err := json.Unmarshal(content, &d); err != nil {
			return fail("", "its latest draw record does not decode: %v", err)
		}
		if d.SessionID != sessionID || d.Dim != dim {
			return fail("", "its latest draw record is on %s of session %s", d.Dim, d.SessionID)
		}
	}
	switch {
	case row == nil && latest == nil:
		return nil
	case row == nil:
		return fail("", "the table holds no row, the evidence log records draws on it up to %v: the row was deleted", d.To)
	case latest == nil:
		return fail("leaf", "the evidence log records no draw on it: the row was inserted")
	case len(leaf) == 0:
		return fail("leaf", "the row names no evidence record")
	case !bytes.Equal(leaf, latest.LeafHash):
		return fail("leaf", "the row is bound to record %s, the latest draw on it is %s: it was set back to an earlier draw, or rebound", short(leaf), short(latest.LeafHash))
	case row.Used != d.To:
		return fail("used", "%v in the table, %v in its evidence record", row.Used, d.To)
	}
	return nil
}

// DrawPattern is a byte string every draw record on dim contains (its
// content in canonical JSON), for finding the candidates in a log; each
// is decoded and checked all the same.
func DrawPattern(dim string) []byte {
	b, _ := json.Marshal(dim)
	return append([]byte(`"dim":`), b...)
}
