package baseline

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// AppendJSON appends p as json.Marshal writes it, byte for byte
// (TestAppendJSONMatchesMarshal), without reflection: the baseline fold
// stores an agent's two profiles at every round, and encoding/json's map
// encoding was most of a round's allocations.
func (p *Profile) AppendJSON(b []byte) ([]byte, error) {
	b, _, err := p.appendJSON(b, nil, "", false)
	return b, err
}

// ShapeJSON are a profile's shapes as AppendJSONReusing wrote them, by
// session (nil for a session two shapes name).
type ShapeJSON map[string][]byte

// AppendJSONReusing is AppendJSON taking each shape's bytes from prev but
// those of session changed, and returning the shapes' bytes for the next
// call. prev must be what the last call gave for p, and p must since have
// learned events of session changed only — as in a round of the baseline
// fold, which learns one session's decisions — so the other shapes are
// as they were (TestAppendJSONReusing). A nil prev writes every shape.
func (p *Profile) AppendJSONReusing(b []byte, prev ShapeJSON, changed string) ([]byte, ShapeJSON, error) {
	return p.appendJSON(b, prev, changed, true)
}

func (p *Profile) appendJSON(b []byte, prev ShapeJSON, changed string, keep bool) ([]byte, ShapeJSON, error) {
	var next ShapeJSON
	if keep {
		next = make(ShapeJSON, len(p.Shapes))
	}
	w := &jsonWriter{b: b}
	w.begin()
	w.str("agent", p.Agent)
	w.str("version", p.Version)
	if p.Frozen {
		w.key("frozen")
		w.b = append(w.b, "true"...)
	}
	w.ints(profileCounters[:], p.Sessions, p.Ordinary, p.Calls, p.Decided, p.Denied, p.Asked)
	w.counts(false, profileTallies[:], p.Tools, p.Kinds, p.Destinations)
	counts(w, "attempted", p.Attempted, true)
	uses(w, "dest_use", p.DestUse)
	uses(w, "trans_use", p.TransUse)
	counts(w, "domains", p.Domains, true)
	counts(w, "families", p.Families, true)
	uses(w, "tried_use", p.TriedUse)
	uses(w, "domain_use", p.DomainUse)
	counts(w, "tool_next", p.ToolNext, false)
	counts(w, "kind_next", p.KindNext, false)
	counts(w, "tool_from", p.ToolFrom, false)
	counts(w, "kind_from", p.KindFrom, false)
	counts(w, "tried_next", p.TriedNext, true)
	counts(w, "tried_from", p.TriedFrom, true)
	w.key("hours")
	w.b = append(w.b, '[')
	for i, h := range p.Hours {
		w.sep(i)
		w.b = strconv.AppendInt(w.b, int64(h), 10)
	}
	w.b = append(w.b, ']')
	w.key("shapes")
	if p.Shapes == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.b = append(w.b, '[')
		for i := range p.Shapes {
			w.sep(i)
			s, start := &p.Shapes[i], len(w.b)
			if enc := prev[s.Session]; enc != nil && s.Session != changed {
				w.b = append(w.b, enc...)
			} else {
				w.shape(s)
			}
			if keep {
				if _, dup := next[s.Session]; dup {
					next[s.Session] = nil
				} else {
					next[s.Session] = w.b[start:len(w.b):len(w.b)]
				}
			}
		}
		w.b = append(w.b, ']')
	}
	if p.Dropped != 0 {
		w.int("dropped", p.Dropped)
	}
	w.time("first_seen", p.FirstSeen)
	w.time("last_seen", p.LastSeen)
	if f := p.Fingerprint; f != nil {
		w.key("fingerprint")
		w.begin()
		w.strOmit("model", f.Model)
		w.strOmit("system_prompt_hash", f.SystemPromptHash)
		w.strOmit("toolset_hash", f.ToolsetHash)
		w.strOmit("retrieval_source", f.RetrievalSource)
		w.end()
	}
	w.strOmit("previous", p.Previous)
	if p.DriftAlerted {
		w.key("drift_alerted")
		w.b = append(w.b, "true"...)
	}
	if len(p.Versions) > 0 {
		w.key("versions")
		w.b = append(w.b, '[')
		for i, v := range p.Versions {
			w.sep(i)
			w.quote(v)
		}
		w.b = append(w.b, ']')
	}
	if p.SinceVersion != 0 {
		w.int("since_version", p.SinceVersion)
	}
	counts(w, "new_since_change", p.NewSinceChange, true)
	counts(w, "new_since_first", p.NewSinceFirst, true)
	w.end()
	if w.err != nil {
		return w.b, nil, w.err
	}
	return w.b, next, nil
}

func (w *jsonWriter) shape(s *Shape) {
	w.begin()
	w.str("session", s.Session)
	if s.N != 0 {
		w.int("n", s.N)
	}
	w.ints(shapeCounters[:], s.Calls, s.Learned, s.Denied, s.Asked)
	w.counts(true, shapeTallies[:], s.Kinds, s.Tried, s.Tools, s.Novel)
	w.strOmit("last_tool", s.LastTool)
	w.strOmit("last_kind", s.LastKind)
	w.strOmit("last_tried", s.LastTried)
	w.end()
}

// The member names of the integers and counts written in a row.
var (
	profileCounters = [...]string{"sessions", "ordinary", "calls", "decided", "denied", "asked"}
	profileTallies  = [...]string{"tools", "kinds", "destinations"}
	shapeCounters   = [...]string{"calls", "learned", "denied", "asked"}
	shapeTallies    = [...]string{"kinds", "tried", "tools", "novel"}
)

// ints writes the integers ns under the names keys, in order.
func (w *jsonWriter) ints(keys []string, ns ...int) {
	for i, n := range ns {
		w.int(keys[i], n)
	}
}

// counts writes the maps ms under the names keys, in order.
func (w *jsonWriter) counts(omit bool, keys []string, ms ...map[string]int) {
	for i, m := range ms {
		counts(w, keys[i], m, omit)
	}
}

// jsonWriter appends one JSON value; first says no member was written in
// the object being written, keys holds a map's keys while it is sorted.
type jsonWriter struct {
	b     []byte
	first bool
	keys  []string
	err   error
}

func (w *jsonWriter) begin() { w.b, w.first = append(w.b, '{'), true }
func (w *jsonWriter) end()   { w.b, w.first = append(w.b, '}'), false }

// key writes a member's name (a literal: nothing to escape).
func (w *jsonWriter) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

// sep writes the comma before a list's element i > 0.
func (w *jsonWriter) sep(i int) {
	if i > 0 {
		w.b = append(w.b, ',')
	}
}

func (w *jsonWriter) int(k string, n int) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, int64(n), 10)
}

func (w *jsonWriter) str(k, s string) {
	w.key(k)
	w.quote(s)
}

func (w *jsonWriter) strOmit(k, s string) {
	if s != "" {
		w.str(k, s)
	}
}

// quote writes s as encoding/json does: printable ASCII other than the
// quote, the backslash and <, >, & as is; anything else by json.Marshal
// itself, so its escapes (HTML, U+2028, invalid UTF-8) are its own.
func (w *jsonWriter) quote(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, err := json.Marshal(s)
			if err != nil && w.err == nil {
				w.err = err
			}
			w.b = append(w.b, q...)
			return
		}
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}

func (w *jsonWriter) time(k string, t time.Time) {
	w.key(k)
	q, err := t.MarshalJSON()
	if err != nil && w.err == nil {
		w.err = err
	}
	w.b = append(w.b, q...)
}

// members writes m's members in key order (encoding/json's), each value
// by val; a nil m is null, and with omit an empty one is left out.
func members[V any](w *jsonWriter, k string, m map[string]V, omit bool, val func(V)) {
	if omit && len(m) == 0 {
		return
	}
	w.key(k)
	if m == nil {
		w.b = append(w.b, "null"...)
		return
	}
	keys := w.keys[:0]
	for mk := range m {
		keys = append(keys, mk)
	}
	slices.Sort(keys)
	w.b = append(w.b, '{')
	for i, mk := range keys {
		w.sep(i)
		w.quote(mk)
		w.b = append(w.b, ':')
		val(m[mk])
	}
	w.b = append(w.b, '}')
	w.keys = keys[:0]
}

func counts(w *jsonWriter, k string, m map[string]int, omit bool) {
	members(w, k, m, omit, func(n int) { w.b = strconv.AppendInt(w.b, int64(n), 10) })
}

func uses(w *jsonWriter, k string, m map[string]DestUse) {
	members(w, k, m, true, func(u DestUse) {
		w.begin()
		w.int("s", u.Sessions)
		w.int("l", u.Last)
		if u.First != 0 {
			w.int("f", u.First)
		}
		if u.Consequential {
			w.key("c")
			w.b = append(w.b, "true"...)
		}
		if u.ReadOnly {
			w.key("r")
			w.b = append(w.b, "true"...)
		}
		w.end()
	})
}
