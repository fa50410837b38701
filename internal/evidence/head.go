package evidence

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

// A bundle proves it is complete because the session's head is committed in
// the log when it is exported: a session_head record, written by Export
// before the bundle is made, lists by type the index of every record the log
// held for the session before it, with the session's last decision, mandate
// version and status. The head is in the signed log like any record (its
// inclusion proof leads to the checkpoint), so a verifier holding only the
// bundle and the key knows every record the session had up to the head; a
// record left out of the bundle is named by its index and type, and the
// head itself left out fails too. An export finds the head current (the
// session's last record is a head naming everything before it) and writes
// nothing, or appends one; the log never changes what is already in it.

// TypeSessionHead is the record committing a session's records at export.
const TypeSessionHead = "session_head"

// ErrHeadNotCommitted is returned by Export on a log opened read-only when the
// session has records newer than its last committed head: the bundle could
// not prove it is complete.
var ErrHeadNotCommitted = errors.New("the session's head is not committed in the log since its last record")

// sessionHead is a session_head record's content.
type sessionHead struct {
	SessionID string `json:"session_id"`
	// Records is how many records of the session precede the head.
	Records int `json:"records"`
	// Indices are their indices by record type, ascending.
	Indices map[string][]uint64 `json:"indices"`
	// The session's last decision, mandate version and status as the
	// records before the head state them (zero when it has none).
	LastDecision   *headDecision `json:"last_decision,omitempty"`
	MandateVersion int           `json:"mandate_version,omitempty"`
	Status         string        `json:"status,omitempty"`
	// LastObservation is the id of the session's last observation.
	LastObservation string `json:"last_observation,omitempty"`
}

type headDecision struct {
	ID  string `json:"decision_id"`
	Seq int    `json:"seq"`
}

// Appender is a store the log can append a record to (every store.Store is
// one). Export commits a session's head through it.
type Appender interface {
	Submit(c *store.Change) <-chan error
}

// evidenceSyncer is a store whose records reach its log asynchronously (a
// shared store): SyncEvidence returns once every record committed so far has
// an index.
type evidenceSyncer interface {
	SyncEvidence(ctx context.Context) error
}

// headOf describes recs, a session's records in index order. Only the last
// record of each type the head names is decoded.
func headOf(session string, recs []*store.EvidenceRecord) (*sessionHead, error) {
	h := &sessionHead{SessionID: session, Records: len(recs), Indices: map[string][]uint64{}}
	for _, r := range recs {
		h.Indices[r.Type] = append(h.Indices[r.Type], r.Index)
	}
	seen := map[string]bool{}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		typ := r.Type
		if typ == TypeSession {
			typ = TypeSessionStatus // the status it was created with
		}
		switch typ {
		case TypeDecision, TypeMandate, TypeObservation, TypeSessionStatus:
		default:
			continue
		}
		if seen[typ] {
			continue
		}
		info, err := parseInfo(r.Body)
		if err != nil {
			return nil, fmt.Errorf("evidence: record %d of session %s: %w", r.Index, session, err)
		}
		seen[typ] = true
		c := &info.Content
		switch typ {
		case TypeDecision:
			h.LastDecision = &headDecision{ID: c.Decision, Seq: c.Seq}
		case TypeMandate:
			h.MandateVersion = c.Version
		case TypeObservation:
			h.LastObservation = c.Observation
		case TypeSessionStatus:
			h.Status = c.Status
		}
		if len(seen) == 4 {
			break
		}
	}
	return h, nil
}

// readHead decodes a session_head record's content.
func readHead(body []byte) (*sessionHead, error) {
	env, err := ParseBody(body)
	if err != nil {
		return nil, err
	}
	var h sessionHead
	if err := json.Unmarshal(env.Content, &h); err != nil {
		return nil, fmt.Errorf("session head: %w", err)
	}
	return &h, nil
}

// listed is the type of every record h commits, by index.
func (h *sessionHead) listed() map[uint64]string {
	m := make(map[uint64]string, h.Records)
	for typ, idx := range h.Indices {
		for _, i := range idx {
			m[i] = typ
		}
	}
	return m
}

// commits says whether h lists every record of recs, the records before it,
// and nothing else: those it does not list may only be heads written by
// concurrent exports, which commit nothing the session did.
func (h *sessionHead) commits(recs []*store.EvidenceRecord) bool {
	listed, n := h.listed(), 0
	for _, r := range recs {
		if listed[r.Index] == r.Type {
			n++
		} else if r.Type != TypeSessionHead {
			return false
		}
	}
	return n == h.Records && n == len(listed)
}

// currentHead returns the position in recs (a session's records in index
// order) of the last head that commits every record before it, when only
// heads follow it; -1 if the session's last records are not committed.
func currentHead(recs []*store.EvidenceRecord) int {
	for i := len(recs) - 1; i >= 0 && recs[i].Type == TypeSessionHead; i-- {
		if h, err := readHead(recs[i].Body); err == nil && h.commits(recs[:i]) {
			return i
		}
	}
	return -1
}

// commitHead makes sure the session's head is committed: it returns the
// session's records up to and including a head committing all before it,
// appending one when the last records are not committed.
func (l *Log) commitHead(ctx context.Context, session string, recs []*store.EvidenceRecord) ([]*store.EvidenceRecord, error) {
	if i := currentHead(recs); i >= 0 {
		return recs[:i+1], nil
	}
	app, ok := l.st.(Appender)
	if l.readOnly || !ok {
		return nil, fmt.Errorf("evidence of session %s: %w: export it through the server (--server), or with the server stopped", session, ErrHeadNotCommitted)
	}
	l.headMu.Lock()
	defer l.headMu.Unlock()
	// A decision committed between reading the records and the head would
	// precede the head without being in it: read again and commit anew
	// (a few times; a session that busy is exported when it pauses).
	for try := 0; try < 5; try++ {
		if try > 0 {
			var err error
			if recs, err = l.sessionRecords(ctx, session); err != nil {
				return nil, err
			}
			if i := currentHead(recs); i >= 0 {
				return recs[:i+1], nil
			}
		}
		h, err := headOf(session, recs)
		if err != nil {
			return nil, err
		}
		rec, err := NewRecord(TypeSessionHead, Observed, session, l.now(), h)
		if err != nil {
			return nil, err
		}
		select {
		case err = <-app.Submit(&store.Change{Actor: "export", Evidence: []*store.EvidenceRecord{rec}}):
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("evidence of session %s: commit its head: %w", session, err)
		}
		// The session's records after those read, up to the head.
		newer, err := l.sessionRecordsAfter(ctx, session, recs[len(recs)-1].Index, rec.LeafHash)
		if err != nil {
			return nil, err
		}
		recs = append(recs, newer...)
		if i := len(recs) - 1; recs[i].Type == TypeSessionHead && h.commits(recs[:i]) {
			return recs, nil
		}
	}
	return nil, fmt.Errorf("evidence of session %s: %w: its records kept changing while the head was written; export again", session, ErrHeadNotCommitted)
}

// syncSession brings every record a shared store has committed into the
// log before a session's records are read (a no-op for a store that is not
// shared).
func (l *Log) syncSession(ctx context.Context, session string) error {
	sy, ok := l.st.(evidenceSyncer)
	if !ok {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := sy.SyncEvidence(sctx); err != nil {
		return fmt.Errorf("evidence of session %s: %w", session, err)
	}
	return nil
}

// sessionRecords reads a session's records once every record committed so
// far is in the log and in this process's tree.
func (l *Log) sessionRecords(ctx context.Context, session string) ([]*store.EvidenceRecord, error) {
	if err := l.syncSession(ctx, session); err != nil {
		return nil, err
	}
	recs, err := l.st.SessionEvidence(ctx, session)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("evidence of session %q: %w", session, store.ErrNotFound)
	}
	if err := l.follow(ctx, session, recs[len(recs)-1].Index+1); err != nil {
		return nil, err
	}
	return recs, nil
}

// bundled is a record of a bundle being verified.
type bundled struct {
	index uint64
	info  *recordInfo
	name  string
	canon []byte
}

// checkHead holds a bundle's records (in index order) against the
// session's last head among them: every record the head commits must be in
// the bundle, and nothing but heads of concurrent exports may be in it
// uncommitted or after it. Each record missing is named by its index and
// what it was.
func checkHead(session string, entries []bundled, rep *BundleReport) []string {
	at := -1
	for i, e := range entries {
		if e.info.Type == TypeSessionHead {
			at = i
		}
	}
	if at < 0 {
		return []string{"no session head: nothing in the bundle proves it holds every record of its session (the head committed at export, the bundle's last record, was left out, or the bundle was not written by 'mandate evidence export')"}
	}
	head := entries[at]
	h, err := readHead(head.canon)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", head.name, err)}
	}
	rep.Head, rep.HeadTime = head.index, head.info.Time
	var problems []string
	if h.SessionID != session {
		problems = append(problems, fmt.Sprintf("%s: the head of session %q, not %q", head.name, h.SessionID, session))
	}
	listed := h.listed()
	if len(listed) != h.Records {
		problems = append(problems, fmt.Sprintf("%s: it counts %d records but lists %d", head.name, h.Records, len(listed)))
	}
	present := make(map[uint64]*recordInfo, len(entries))
	for _, e := range entries[:at] {
		present[e.index] = e.info
		if typ, ok := listed[e.index]; !ok && e.info.Type != TypeSessionHead {
			problems = append(problems, fmt.Sprintf("%s: not committed by the session's head (record %d): it does not belong before it", e.name, head.index))
		} else if ok && typ != e.info.Type {
			problems = append(problems, fmt.Sprintf("%s: the session's head (record %d) commits a %s record at this index", e.name, head.index, typ))
		}
	}
	for _, e := range entries[at+1:] {
		if e.info.Type != TypeSessionHead {
			problems = append(problems, fmt.Sprintf("%s: after the session's head (record %d): nothing proves the records after the head complete (a later head was left out?)", e.name, head.index))
		}
	}
	// The records committed but absent, in index order.
	last := map[string]uint64{}
	for typ, idx := range h.Indices {
		if len(idx) > 0 {
			last[typ] = slices.Max(idx)
		}
	}
	missing := make([]uint64, 0)
	for i := range listed {
		if i >= head.index {
			problems = append(problems, fmt.Sprintf("%s: commits record %d, at or after itself", head.name, i))
		} else if present[i] == nil {
			missing = append(missing, i)
		}
	}
	slices.Sort(missing)
	const show = 50
	for n, i := range missing {
		if n == show {
			problems = append(problems, fmt.Sprintf("… and %d more records committed by the session's head are missing", len(missing)-show))
			break
		}
		problems = append(problems, fmt.Sprintf("%s is missing from the bundle: the session's head (record %d) commits it", h.describe(i, listed[i], last[listed[i]] == i), head.index))
	}
	return problems
}

// describe names a record the head commits, by its index and type, and
// for the last of a type what the head says it was.
func (h *sessionHead) describe(index uint64, typ string, isLast bool) string {
	switch {
	case typ == TypeDecision && isLast && h.LastDecision != nil:
		return fmt.Sprintf("record %d, the session's last decision (%s, seq %d),", index, h.LastDecision.ID, h.LastDecision.Seq)
	case typ == TypeMandate && isLast && h.MandateVersion > 0:
		return fmt.Sprintf("record %d, the session's last mandate version (version %d),", index, h.MandateVersion)
	case typ == TypeSessionStatus && isLast:
		return fmt.Sprintf("record %d, the session's last status record (%s),", index, h.Status)
	case typ == TypeObservation && isLast && h.LastObservation != "":
		return fmt.Sprintf("record %d, the session's last observation (%s),", index, h.LastObservation)
	case typ == TypeSession:
		return fmt.Sprintf("record %d, the session's creation record,", index)
	}
	article := "a"
	if typ != "" && strings.ContainsRune("aeiou", rune(typ[0])) {
		article = "an"
	}
	return fmt.Sprintf("record %d (%s %s record)", index, article, typ)
}

// sessionRecordsAfter reads the session's records after index, up to and
// including the one with leaf hash head, from the log's newest records (the
// few committed since the session's were read).
func (l *Log) sessionRecordsAfter(ctx context.Context, session string, index uint64, head []byte) ([]*store.EvidenceRecord, error) {
	if err := l.syncSession(ctx, session); err != nil {
		return nil, err
	}
	var out []*store.EvidenceRecord
	for from := index + 1; ; {
		recs, err := l.st.EvidenceFrom(ctx, from, 1024)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, fmt.Errorf("evidence of session %s: its head, just committed, is not in the log", session)
		}
		for _, r := range recs {
			from = r.Index + 1
			if r.SessionID != session {
				continue
			}
			out = append(out, r)
			if bytes.Equal(r.LeafHash, head) {
				return out, l.follow(ctx, session, from)
			}
		}
	}
}

// follow waits, boundedly, until the log's tree holds need records (it
// follows the store's commits, a shared store's through its integrator).
func (l *Log) follow(ctx context.Context, session string, need uint64) error {
	if l.readOnly && l.Size() < need {
		// A read-only log follows nothing: it reads what the store
		// holds now.
		if err := l.tree.load(ctx, need); err != nil {
			return fmt.Errorf("evidence: load the log: %w", err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for l.Size() < need {
		if time.Now().After(deadline) {
			return fmt.Errorf("evidence of session %s: the log has %d records, the store %d: the tree is not following the store", session, l.Size(), need)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}
