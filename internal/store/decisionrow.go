package store

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mandate-dev/mandate/internal/jcs"
)

// A decision is stored once: its evidence record holds every field, and its
// row in the decisions table only what finds it — id, session and sequence,
// effect (listings filter on it), call id — with the record's leaf hash.
// Loading the row reads the decision out of the record (whose body must
// hash to the row's leaf, and whose leaf the signed log vouches for) and
// holds the row's columns against it, so an edit of either is refused as
// before. Args are the one exception: the record holds them in canonical
// form, and when the caller's bytes differ from that (another member order,
// spacing) the row keeps the caller's, so reads return them as given.

// DecisionRow is a decisions row as read: the columns that find it, and the
// args when they differ from the record's canonical form (nil otherwise).
type DecisionRow struct {
	ID, SessionID, Effect, CallID string
	Seq                           int
	Args                          []byte
}

// DecisionArgs is what a decision's row keeps of its args: nil when the
// record holds them byte for byte (their canonical form, as package
// evidence writes a record's content), otherwise the bytes as given. Empty
// args are recorded as null but were always read back as {}: the row keeps
// {} for them.
func DecisionArgs(c *jcs.Canonicalizer, args []byte) []byte {
	if len(args) == 0 {
		return []byte("{}")
	}
	canon, err := c.Append(make([]byte, 0, len(args)), args, false)
	if err == nil && bytes.Equal(canon, args) {
		return nil
	}
	return args
}

// LoadDecision is the decision a row describes: read out of body, the
// evidence record whose leaf hash the row keeps (nil when the log holds no
// such record), with the row's columns held against it. A row that differs
// from its record, names none, or names one that is not a decision's is a
// *TamperError naming the column.
func LoadDecision(row DecisionRow, leaf, body []byte) (*Decision, error) {
	fail := func(column, format string, args ...any) error {
		return &TamperError{Table: DecisionBinding.Table, Row: row.ID, Column: column, Detail: fmt.Sprintf(format, args...)}
	}
	if len(leaf) == 0 {
		return nil, fail("leaf", "the row names no evidence record")
	}
	if body == nil {
		return nil, fail("leaf", "the evidence log holds no record with the row's leaf hash %s", short(leaf))
	}
	typ, content, err := RecordContent(leaf, body)
	if err != nil {
		return nil, fail("leaf", "%v", err)
	}
	if typ != RecordDecision {
		return nil, fail("leaf", "the row's evidence record is a %s record, not a %s", typ, RecordDecision)
	}
	var d Decision
	if err := json.Unmarshal(content, &d); err != nil {
		return nil, fail("", "its evidence record's content does not decode as a decision: %v", err)
	}
	for _, c := range []struct {
		name       string
		have, want any
	}{
		{"id", row.ID, d.ID}, {"session_id", row.SessionID, d.SessionID}, {"seq", row.Seq, d.Seq},
		{"effect", row.Effect, d.Effect}, {"call_id", row.CallID, d.CallID},
	} {
		if c.have != c.want {
			return nil, fail(c.name, "%q in the table, %q in its evidence record", fmt.Sprint(c.have), fmt.Sprint(c.want))
		}
	}
	if row.Args != nil {
		if !sameJSON(row.Args, d.Args) {
			return nil, fail("args", "%s in the table, %s in its evidence record", clip(row.Args), clip(d.Args))
		}
		d.Args = json.RawMessage(row.Args)
	}
	// The table kept empty lists as []: so are they read.
	if d.Rules == nil {
		d.Rules = []string{}
	}
	if d.Reasons == nil {
		d.Reasons = []string{}
	}
	return &d, nil
}
