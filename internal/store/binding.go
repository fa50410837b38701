package store

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/mandate-dev/mandate/internal/jcs"
)

// Every operational row a server acts on — a session, a mandate version, a
// decision, an observation, an approval, a tool's pinned definition and a
// recorded change of it — is bound to the evidence record
// that describes it: the row keeps the record's leaf hash, and whenever a
// backend loads the row it holds the row's columns against the record's
// content. A row edited in the database behind the log's back (an effect
// turned into allow, a widened mandate, a reopened session) no longer
// matches its record and is refused with a TamperError naming the table,
// the row and the column; the record itself cannot be edited without
// breaking the log's signed checkpoints. What a row does not hold (the
// session's status, which later records change) is derived from the log.

// ErrTampered marks a row that no longer matches the evidence log.
var ErrTampered = errors.New("the store was edited behind the evidence log's back")

// TamperError names a row that differs from its evidence record.
type TamperError struct {
	Table  string
	Row    string
	Column string
	// Detail says how the row and the record differ.
	Detail string
}

func (e *TamperError) Error() string {
	col := ""
	if e.Column != "" {
		col = ", column " + e.Column
	}
	return fmt.Sprintf("%s row %s%s: %s: %s", e.Table, e.Row, col, e.Detail, ErrTampered)
}

// Unwrap makes errors.Is(err, ErrTampered) hold.
func (e *TamperError) Unwrap() error { return ErrTampered }

// Record types of the bound rows, as package evidence writes them (its
// tests hold the two lists together).
const (
	RecordSession       = "session"
	RecordSessionStatus = "session_status"
	RecordMandate       = "mandate"
	RecordDecision      = "decision"
	RecordObservation   = "observation"
	RecordApproval      = "approval"
	RecordApprovalState = "approval_state"
	RecordToolPin       = "tool_pin"
	RecordToolChange    = "tool_change"
)

// Binding says how one table's rows are bound to their records: the record
// types that may describe a row, the row's JSON fields that name table
// columns (when the names differ), and the fields later changes rewrite,
// which the row's first record cannot vouch for.
type Binding struct {
	Table   string
	Types   []string
	Columns map[string]string
	Mutable []string
}

// The bindings of the operational tables.
var (
	SessionBinding = Binding{
		Table: "sessions", Types: []string{RecordSession},
		Columns: map[string]string{"session_id": "id", "working_directory": "working_dir", "home_directory": "home_dir", "parent_session_id": "parent_id", "counters": "state"},
		// Status and mandate version are held against the session's
		// latest status and mandate records; counters are derived from
		// its decisions; head is concurrency bookkeeping.
		Mutable: []string{"status", "mandate_version", "counters", "updated_at"},
	}
	MandateBinding = Binding{
		Table: "mandates", Types: []string{RecordMandate},
		Columns: map[string]string{"mandate": "body"},
	}
	DecisionBinding = Binding{
		Table: "decisions", Types: []string{RecordDecision},
		Columns: map[string]string{"decision_id": "id"},
	}
	ObservationBinding = Binding{
		Table: "observations", Types: []string{RecordObservation},
		Columns: map[string]string{"observation_id": "id"},
	}
	// An approval row is bound to its latest record: the approval as
	// created, or its last change of state.
	ApprovalBinding = Binding{
		Table: "approvals", Types: []string{RecordApproval, RecordApprovalState},
		Columns: map[string]string{"approval_id": "id"},
	}
	// A tool pin is the definition a session's calls to the tool are
	// classified with and later listings are held against: a pin
	// rewritten to a changed definition would hide a rug pull.
	ToolPinBinding = Binding{Table: "tool_pins", Types: []string{RecordToolPin}}
	// A tool change is what refuses calls to a tool whose definition
	// changed: a deleted or renamed one would let them through.
	ToolChangeBinding = Binding{
		Table: "tool_changes", Types: []string{RecordToolChange},
		Columns: map[string]string{"change_id": "id"},
	}
)

// envelope is the part of a record body a binding check reads.
type envelope struct {
	Type      string          `json:"type"`
	SessionID string          `json:"session_id"`
	Content   json.RawMessage `json:"content"`
}

// RecordContent checks that body hashes to leaf and returns the record's
// type and content.
func RecordContent(leaf, body []byte) (typ string, content json.RawMessage, err error) {
	if !bytes.Equal(rfc6962.DefaultHasher.HashLeaf(body), leaf) {
		return "", nil, errors.New("its evidence record's body no longer hashes to the row's leaf hash")
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return "", nil, fmt.Errorf("its evidence record is not a record: %w", err)
	}
	return env.Type, env.Content, nil
}

// Check holds row (a *Session, *MandateVersion, *Decision, *Observation or
// *Approval as the backend read it) against body, the evidence record whose
// leaf hash the row keeps (nil when the log holds no such record). It
// returns a *TamperError naming the first column that differs.
func (b Binding) Check(id string, row any, leaf, body []byte) error {
	fail := func(column, format string, args ...any) error {
		return &TamperError{Table: b.Table, Row: id, Column: column, Detail: fmt.Sprintf(format, args...)}
	}
	if len(leaf) == 0 {
		return fail("leaf", "the row names no evidence record")
	}
	if body == nil {
		return fail("leaf", "the evidence log holds no record with the row's leaf hash %s", short(leaf))
	}
	typ, content, err := RecordContent(leaf, body)
	if err != nil {
		return fail("leaf", "%v", err)
	}
	if !b.accepts(typ) {
		return fail("leaf", "the row's evidence record is a %s record, not a %s", typ, b.Types[0])
	}
	if typ == RecordApprovalState {
		// {"from": state, "approval": the row as it now is}
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(content, &inner); err != nil {
			return fail("", "its evidence record's content: %v", err)
		}
		content = inner["approval"]
	}
	// The row encoded as the recorder encodes a row is the record's content
	// byte for byte: decoding that content gives the row back, so the
	// member-by-member comparison below would find nothing. Anything else
	// (a mutable member changed since, an edit) takes that comparison.
	if recordedAs(row, content) {
		return nil
	}
	// The record's content decoded into the row's own type, so that both
	// sides are compared after the same decoding.
	rec := reflect.New(reflect.TypeOf(row).Elem())
	if err := json.Unmarshal(content, rec.Interface()); err != nil {
		return fail("", "its evidence record's content does not decode as a %s row: %v", b.Table, err)
	}
	have, err := fields(row)
	if err != nil {
		return fail("", "%v", err)
	}
	want, err := fields(rec.Interface())
	if err != nil {
		return fail("", "its evidence record: %v", err)
	}
	for _, f := range unionKeys(have, want) {
		if b.mutable(f) {
			continue
		}
		if !sameJSON(have[f], want[f]) {
			col := f
			if c, ok := b.Columns[f]; ok {
				col = c
			}
			return fail(col, "%s in the table, %s in its evidence record", clip(have[f]), clip(want[f]))
		}
	}
	return nil
}

// recordedAs reports whether row, encoded as package evidence encodes a
// record's content (encoding/json without HTML escaping, then the canonical
// form), is exactly content. It decides nothing on its own: a false answer
// sends the row to the full comparison.
func recordedAs(row any, content []byte) bool {
	var buf bytes.Buffer
	buf.Grow(len(content) + 64)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(row); err != nil {
		return false
	}
	var c jcs.Canonicalizer
	canon, err := c.Append(make([]byte, 0, len(content)), buf.Bytes(), true)
	return err == nil && bytes.Equal(canon, content)
}

func (b Binding) accepts(typ string) bool {
	for _, t := range b.Types {
		if t == typ {
			return true
		}
	}
	return false
}

func (b Binding) mutable(f string) bool {
	for _, m := range b.Mutable {
		if m == f {
			return true
		}
	}
	return false
}

// fields is v's JSON encoding, member by member.
func fields(v any) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func unionKeys(a, b map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	// In order, so that a row with several edited columns is always
	// reported by the same one.
	slices.Sort(keys)
	return keys
}

// sameJSON compares two JSON values by meaning. An absent member, null, []
// and {} are the same: the tables keep an empty list where a record may
// have none.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if len(a) > 0 {
		if err := json.Unmarshal(a, &x); err != nil {
			return false
		}
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &y); err != nil {
			return false
		}
	}
	return reflect.DeepEqual(normalize(x), normalize(y))
}

func normalize(v any) any {
	switch t := v.(type) {
	case []any:
		if len(t) == 0 {
			return nil
		}
		for i := range t {
			t[i] = normalize(t[i])
		}
	case map[string]any:
		if len(t) == 0 {
			return nil
		}
		for k, e := range t {
			if n := normalize(e); n == nil {
				delete(t, k)
			} else {
				t[k] = n
			}
		}
		if len(t) == 0 {
			return nil
		}
	}
	return v
}

func clip(v json.RawMessage) string {
	if len(v) == 0 {
		return "nothing"
	}
	if len(v) > 120 {
		return string(v[:117]) + "..."
	}
	return string(v)
}

func short(h []byte) string {
	s := hex.EncodeToString(h)
	if len(s) > 16 {
		s = s[:16]
	}
	return s
}

// Leaves are the leaf hashes of the records a change's rows are bound to,
// found among c.Evidence by type in the order package evidence records them.
type Leaves struct {
	Session, Mandate, Decision, Observation []byte
	// Approvals are the leaves of c.Approvals, ApprovalChanges of
	// c.ApprovalChanges, ToolPins of c.ToolPins and ToolChanges of
	// c.ToolChanges, in order.
	Approvals, ApprovalChanges [][]byte
	ToolPins, ToolChanges      [][]byte
}

// LeavesOf finds the leaves of c's rows. A row whose record is missing gets
// no leaf and is refused when loaded.
func LeavesOf(c *Change) Leaves {
	var l Leaves
	for _, r := range c.Evidence {
		switch r.Type {
		case RecordSession:
			l.Session = r.LeafHash
		case RecordMandate:
			l.Mandate = r.LeafHash
		case RecordDecision:
			l.Decision = r.LeafHash
		case RecordObservation:
			l.Observation = r.LeafHash
		case RecordApproval:
			l.Approvals = append(l.Approvals, r.LeafHash)
		case RecordApprovalState:
			l.ApprovalChanges = append(l.ApprovalChanges, r.LeafHash)
		case RecordToolPin:
			l.ToolPins = append(l.ToolPins, r.LeafHash)
		case RecordToolChange:
			l.ToolChanges = append(l.ToolChanges, r.LeafHash)
		}
	}
	return l
}

// At returns the i-th leaf of ls, or nil.
func At(ls [][]byte, i int) []byte {
	if i < len(ls) {
		return ls[i]
	}
	return nil
}

// SessionLog is what the evidence log says about one session, read by a
// backend when it loads the session: the record bodies of its creation, its
// latest status change and its latest mandate version, and how many records
// of each bound type name it.
type SessionLog struct {
	Created, Status, Mandate []byte
	Records                  map[string]int
	Gaps                     int
}

// SessionRows counts a session's rows in the bound tables.
type SessionRows struct {
	Mandates, Decisions, Observations, Approvals int
	ToolPins, ToolChanges                        int
	// Gaps counts the observations marked as gaps, held against the
	// observation records that say gap (SessionLog.Gaps).
	Gaps int
}

// CheckSession holds a loaded session row against its log: the row against
// its creation record, its status and mandate version against the latest
// records that set them, and its rows in the other tables against the
// number of records of theirs (a deleted decision, mandate version,
// observation, approval, tool pin or tool change leaves a record without
// its row).
func CheckSession(s *Session, leaf []byte, lg SessionLog, rows SessionRows) error {
	if err := SessionBinding.Check(s.ID, s, leaf, lg.Created); err != nil {
		return err
	}
	fail := func(table, column, format string, args ...any) error {
		return &TamperError{Table: table, Row: s.ID, Column: column, Detail: fmt.Sprintf(format, args...)}
	}
	// The status as the log last set it.
	var st struct {
		Status         string `json:"status"`
		MandateVersion int    `json:"mandate_version"`
	}
	src := lg.Created
	if lg.Status != nil {
		src = lg.Status
	}
	if _, content, err := RecordContent(rfc6962.DefaultHasher.HashLeaf(src), src); err != nil || json.Unmarshal(content, &st) != nil {
		return fail("sessions", "status", "its latest status record does not decode")
	}
	// A decision moves an idle session to active without a status record
	// of its own; either may act, so they are one state here.
	if mayAct(st.Status) != mayAct(s.Status) {
		return fail("sessions", "status", "%q in the table, %q in its latest status record", s.Status, st.Status)
	}
	version := st.MandateVersion
	if lg.Mandate != nil {
		var mv struct {
			Version int `json:"version"`
		}
		if _, content, err := RecordContent(rfc6962.DefaultHasher.HashLeaf(lg.Mandate), lg.Mandate); err != nil || json.Unmarshal(content, &mv) != nil {
			return fail("sessions", "mandate_version", "its latest mandate record does not decode")
		}
		version = max(version, mv.Version)
	}
	if s.MandateVersion != version {
		return fail("sessions", "mandate_version", "%d in the table, %d in its latest mandate record", s.MandateVersion, version)
	}
	for _, c := range []struct {
		table, typ string
		n          int
	}{
		{"mandates", RecordMandate, rows.Mandates},
		{"decisions", RecordDecision, rows.Decisions},
		{"observations", RecordObservation, rows.Observations},
		{"approvals", RecordApproval, rows.Approvals},
		{"tool_pins", RecordToolPin, rows.ToolPins},
		{"tool_changes", RecordToolChange, rows.ToolChanges},
	} {
		if want := lg.Records[c.typ]; c.n != want {
			return &TamperError{Table: c.table, Row: "of session " + s.ID, Detail: fmt.Sprintf("the table holds %d rows, the evidence log %d %s records: rows were deleted or inserted", c.n, want, c.typ)}
		}
	}
	if rows.Gaps != lg.Gaps {
		return &TamperError{Table: "observations", Row: "of session " + s.ID, Column: "gap", Detail: fmt.Sprintf("%d rows are marked as gaps, the evidence log records %d gaps", rows.Gaps, lg.Gaps)}
	}
	return nil
}

func mayAct(status string) string {
	if status == StatusIdle {
		return StatusActive
	}
	return status
}

// ApprovalColumns are the columns an approval row keeps beside its body,
// for finding rows; they must say what the body says.
type ApprovalColumns struct {
	ID, SessionID, DecisionID, Tool, ArgsHash, State, Scope string
	Deadline                                                time.Time
	Rev                                                     int
}

// CheckApproval holds an approval row — its body decoded into a, its
// other columns c — against its evidence record, and against later: the
// bodies of the session's approval_state records after it that may name
// it. One that does means the row was set back to an earlier state.
func CheckApproval(a *Approval, c ApprovalColumns, leaf, record []byte, later []json.RawMessage) error {
	fail := func(column, format string, args ...any) error {
		return &TamperError{Table: "approvals", Row: c.ID, Column: column, Detail: fmt.Sprintf(format, args...)}
	}
	for _, col := range []struct {
		name       string
		have, want any
	}{
		{"id", c.ID, a.ID}, {"session_id", c.SessionID, a.SessionID}, {"decision_id", c.DecisionID, a.DecisionID},
		{"tool", c.Tool, a.Tool}, {"args_hash", c.ArgsHash, a.ArgsHash}, {"state", c.State, a.State},
		{"scope", c.Scope, a.Scope}, {"deadline", c.Deadline.UnixNano(), a.Deadline.UnixNano()}, {"rev", c.Rev, a.Rev},
	} {
		if col.have != col.want {
			return fail(col.name, "%v in the column, %v in the row's body", col.have, col.want)
		}
	}
	if err := ApprovalBinding.Check(c.ID, a, leaf, record); err != nil {
		return err
	}
	for _, body := range later {
		var rec struct {
			Content struct {
				Approval *struct {
					ID    string `json:"approval_id"`
					State string `json:"state"`
					Rev   int    `json:"rev"`
				} `json:"approval"`
			} `json:"content"`
		}
		if json.Unmarshal(body, &rec) == nil && rec.Content.Approval != nil && rec.Content.Approval.ID == c.ID {
			l := rec.Content.Approval
			return fail("state", "the row is at revision %d (%s), the evidence log records a later state of it, revision %d (%s)", a.Rev, a.State, l.Rev, l.State)
		}
	}
	return nil
}
