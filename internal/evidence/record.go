package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/mandate-dev/mandate/internal/jcs"
	"github.com/mandate-dev/mandate/internal/store"
)

// Record types. Each names the stored row its content is.
const (
	TypeSession       = "session"        // a session as created
	TypeSessionStatus = "session_status" // a session's lifecycle status changed
	TypeMandate       = "mandate"        // a mandate version
	TypeDecision      = "decision"       // a call, its action, the mandate version, policy hash and verdict
	TypeObservation   = "observation"    // a tool's result
	TypeToolPin       = "tool_pin"       // a tool definition pinned for a session
	TypeToolChange    = "tool_change"    // a listing that broke a pin
	TypeReported      = "reported"       // an agent's or client's statement
	TypeBehaviour     = "behaviour"      // a baseline event: a new agent version, drift, a reset or freeze, a session's summary
	TypeDraw          = store.RecordDraw // what an allowed call took from its delegation tree's budgets
)

// Origins: where a record's content came from. A record has exactly one.
const (
	// Observed content is what Mandate itself saw or did: calls it
	// received, its decisions, sessions and mandates given to it, tool
	// results seen at the tool boundary.
	Observed = "observed"
	// Reported content is a claim by an agent or client about something
	// Mandate did not see, such as an agent's stated reasoning.
	Reported = "reported"
)

// FormatVersion is the "v" of every record this package writes.
const FormatVersion = 1

// Envelope is a record's body, decoded. The body is the canonical JSON of
// these fields.
type Envelope struct {
	V         int             `json:"v"`
	Type      string          `json:"type"`
	Origin    string          `json:"origin"`
	SessionID string          `json:"session_id,omitempty"`
	Time      time.Time       `json:"time"`
	Content   json.RawMessage `json:"content"`
}

// ParseBody decodes and checks a record body: it must be canonical JSON with
// the envelope's fields and a known origin.
func ParseBody(body []byte) (*Envelope, error) {
	canon, err := Canonical(body)
	if err != nil {
		return nil, fmt.Errorf("record body: %w", err)
	}
	if !bytes.Equal(canon, body) {
		return nil, errors.New("record body is not in canonical form")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var env Envelope
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("record body: %w", err)
	}
	switch {
	case env.V != FormatVersion:
		return nil, fmt.Errorf("record body: format version %d, want %d", env.V, FormatVersion)
	case env.Type == "":
		return nil, errors.New("record body: no type")
	case env.Origin != Observed && env.Origin != Reported:
		return nil, fmt.Errorf("record body: origin %q, want %s or %s", env.Origin, Observed, Reported)
	case len(env.Content) == 0:
		return nil, errors.New("record body: no content")
	}
	return &env, nil
}

// LeafHash is the RFC 6962 leaf hash of a record body.
func LeafHash(body []byte) []byte { return rfc6962.DefaultHasher.HashLeaf(body) }

// NewRecord builds a record: content (any JSON-encodable value, or
// json.RawMessage) is encoded in canonical form inside the envelope, and the
// body hashed once.
func NewRecord(typ, origin, sessionID string, at time.Time, content any) (*store.EvidenceRecord, error) {
	var e recordEncoder
	return e.record(typ, origin, sessionID, at, content)
}

// recordEncoder holds the buffers of record encoding, for reuse.
type recordEncoder struct {
	c   jcs.Canonicalizer
	buf bytes.Buffer
	enc *json.Encoder
	// tmp is the scratch a body is written in (kept up to 1 MiB).
	tmp []byte
}

// generic is content as encoding/json writes it without HTML escaping: the
// generic path's input to the canonicaliser. The bytes are e's until its
// next use.
func (e *recordEncoder) generic(content any) (json.RawMessage, error) {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	e.buf.Reset()
	if err := e.enc.Encode(content); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

func (e *recordEncoder) record(typ, origin, sessionID string, at time.Time, content any) (*store.EvidenceRecord, error) {
	if typ == "" {
		return nil, errors.New("evidence record: no type")
	}
	if origin != Observed && origin != Reported {
		return nil, fmt.Errorf("evidence record %s: origin %q, want %s or %s", typ, origin, Observed, Reported)
	}
	at = at.UTC()
	// Members in canonical (sorted) order: content, origin, session_id,
	// time, type, v.
	const head = `{"content":`
	// The body is written in e's scratch buffer and copied out at its
	// size.
	body := append(e.tmp[:0], head...)
	raw, isRaw := content.(json.RawMessage)
	if !isRaw {
		// The typed encoder first; the generic path for what it does
		// not know (typed.go).
		var err error
		if body, err = appendTyped(&e.c, body, content); err != nil {
			if raw, err = e.generic(content); err != nil {
				return nil, fmt.Errorf("evidence record %s: encode content: %w", typ, err)
			}
			isRaw = true
			body = append(e.tmp[:0], head...)
		}
	}
	if isRaw {
		var err error
		if body, err = e.c.Append(body, raw, false); err != nil {
			return nil, fmt.Errorf("evidence record %s: content: %w", typ, err)
		}
	}
	body = append(body, `,"origin":`...)
	body = appendString(body, origin)
	if sessionID != "" {
		body = append(body, `,"session_id":`...)
		body = appendString(body, sessionID)
	}
	body = append(body, `,"time":"`...)
	body = at.AppendFormat(body, time.RFC3339Nano)
	body = append(body, `","type":`...)
	body = appendString(body, typ)
	body = append(body, `,"v":1}`...)
	if cap(body) <= 1<<20 {
		e.tmp = body
	}
	body = bytes.Clone(body)
	return &store.EvidenceRecord{Type: typ, SessionID: sessionID, Origin: origin, Body: body, LeafHash: LeafHash(body), CreatedAt: at}, nil
}

// Recorder describes every part of a store.Change as evidence records; it is
// the engine's Recorder. It runs after redaction, in the submitting
// goroutine, so the records commit in the same transaction as what they
// describe.
type Recorder struct {
	now  func() time.Time
	pool sync.Pool // *recordEncoder
}

// NewRecorder returns a Recorder; now is the clock for parts that carry no
// time of their own (nil means time.Now).
func NewRecorder(now func() time.Time) *Recorder {
	if now == nil {
		now = time.Now
	}
	return &Recorder{now: now}
}

// statusContent is what a session update that is not part of a decision or
// mandate version records: the new lifecycle state.
type statusContent struct {
	SessionID      string    `json:"session_id"`
	Status         string    `json:"status"`
	MandateVersion int       `json:"mandate_version"`
	UpdatedAt      time.Time `json:"updated_at"`
	// By is who changed it, when the change says.
	By string `json:"by,omitempty"`
}

// Record implements the engine's Recorder.
func (r *Recorder) Record(c *store.Change) ([]*store.EvidenceRecord, error) {
	var out []*store.EvidenceRecord
	e, _ := r.pool.Get().(*recordEncoder)
	if e == nil {
		e = &recordEncoder{}
	}
	defer r.pool.Put(e)
	add := func(typ, origin, session string, at time.Time, content any) error {
		if at.IsZero() {
			at = r.now()
		}
		rec, err := e.record(typ, origin, session, at, content)
		if err != nil {
			return err
		}
		out = append(out, rec)
		return nil
	}
	if s := c.Session; s != nil {
		switch {
		case c.NewSession:
			if err := add(TypeSession, Observed, s.ID, s.CreatedAt, s); err != nil {
				return nil, err
			}
		case c.Decision == nil:
			// A session update without a decision is a lifecycle change
			// or a new mandate version: its status record is what the
			// session's row is held against when loaded. With a
			// decision it carries counters, which are derived from the
			// decisions (and at most moves an idle session to active).
			if err := add(TypeSessionStatus, Observed, s.ID, s.UpdatedAt, statusContent{s.ID, s.Status, s.MandateVersion, s.UpdatedAt, c.Actor}); err != nil {
				return nil, err
			}
		}
	}
	if m := c.Mandate; m != nil {
		if err := add(TypeMandate, Observed, m.SessionID, m.CreatedAt, m); err != nil {
			return nil, err
		}
	}
	if d := c.Decision; d != nil {
		if err := add(TypeDecision, Observed, d.SessionID, d.CreatedAt, d); err != nil {
			return nil, err
		}
	}
	if o := c.Observation; o != nil {
		origin := o.Origin
		if origin == "" {
			origin = Observed
		}
		if err := add(TypeObservation, origin, o.SessionID, o.CreatedAt, o); err != nil {
			return nil, err
		}
	}
	for _, p := range c.ToolPins {
		if err := add(TypeToolPin, Observed, p.SessionID, p.CreatedAt, p); err != nil {
			return nil, err
		}
	}
	for _, tc := range c.ToolChanges {
		if err := add(TypeToolChange, Observed, tc.SessionID, tc.CreatedAt, tc); err != nil {
			return nil, err
		}
	}
	for _, rp := range c.Reported {
		if err := add(TypeReported, Reported, rp.SessionID, rp.CreatedAt, rp); err != nil {
			return nil, err
		}
	}
	if err := recordApprovals(c, add); err != nil {
		return nil, err
	}
	for _, b := range c.Behaviour {
		if err := add(TypeBehaviour, Observed, b.SessionID, b.CreatedAt, b); err != nil {
			return nil, err
		}
	}
	for _, d := range c.Draws {
		if err := add(TypeDraw, Observed, d.SessionID, d.CreatedAt, d); err != nil {
			return nil, err
		}
	}
	return out, nil
}
