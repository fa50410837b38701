package evidence

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/mandate-dev/mandate/internal/store"
)

// BundleFormat names the bundle layout this package writes and reads.
const BundleFormat = "mandate-evidence-bundle/1"

// Bundle is a session's evidence, self-contained: its records with their
// inclusion proofs and the signed checkpoint the proofs lead to.
type Bundle struct {
	SessionID string
	// Checkpoint is the signed note every proof is against.
	Checkpoint *Checkpoint
	Entries    []BundleEntry
}

// BundleEntry is one record of a bundle.
type BundleEntry struct {
	Index    uint64
	LeafHash []byte
	Proof    [][]byte
	// Body is the record's canonical JSON.
	Body []byte
}

// Export makes the bundle of a session: every record the store holds for
// it, proved against the latest checkpoint (published now if the latest does
// not cover them all).
func (l *Log) Export(ctx context.Context, sessionID string) (*Bundle, error) {
	recs, err := l.st.SessionEvidence(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("evidence of session %q: %w", sessionID, store.ErrNotFound)
	}
	indices := make([]uint64, len(recs))
	for i, r := range recs {
		if err := checkStored(r); err != nil {
			return nil, err
		}
		indices[i] = r.Index
	}
	cp, err := l.Checkpoint(ctx, indices[len(indices)-1]+1)
	if err != nil {
		return nil, err
	}
	p, err := l.tree.prover(cp.Size)
	if err != nil {
		return nil, err
	}
	proofs, err := p.inclusions(ctx, indices)
	if err != nil {
		return nil, err
	}
	b := &Bundle{SessionID: sessionID, Checkpoint: cp, Entries: make([]BundleEntry, len(recs))}
	for i, r := range recs {
		b.Entries[i] = BundleEntry{Index: r.Index, LeafHash: r.LeafHash, Proof: proofs[i], Body: r.Body}
	}
	return b, nil
}

// WriteTo writes the bundle as JSON, one record to a line, so that a
// problem found later can be shown by its line.
func (b *Bundle) WriteTo(w io.Writer) (int64, error) {
	buf := make([]byte, 0, 64<<10)
	var total int64
	flush := func() error {
		n, err := w.Write(buf)
		total += int64(n)
		buf = buf[:0]
		return err
	}
	buf = append(buf, `{"format":`...)
	buf = appendString(buf, BundleFormat)
	buf = append(buf, `,"session_id":`...)
	buf = appendString(buf, b.SessionID)
	buf = append(buf, `,"origin":`...)
	buf = appendString(buf, b.Checkpoint.Origin)
	buf = append(buf, `,"tree_size":`...)
	buf = strconv.AppendUint(buf, b.Checkpoint.Size, 10)
	buf = append(buf, `,"checkpoint":`...)
	buf = appendString(buf, string(b.Checkpoint.Note))
	buf = append(buf, `,"records":[`...)
	for i, e := range b.Entries {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, "\n"+`{"index":`...)
		buf = strconv.AppendUint(buf, e.Index, 10)
		buf = append(buf, `,"leaf_hash":"`...)
		buf = hex.AppendEncode(buf, e.LeafHash)
		buf = append(buf, `","inclusion_proof":[`...)
		for j, h := range e.Proof {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '"')
			buf = base64.StdEncoding.AppendEncode(buf, h)
			buf = append(buf, '"')
		}
		buf = append(buf, `],"record":`...)
		buf = append(buf, e.Body...)
		buf = append(buf, '}')
		if len(buf) > 48<<10 {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	buf = append(buf, "\n]}\n"...)
	return total, flush()
}

// BundleReport is what a bundle verification established.
type BundleReport struct {
	SessionID string
	// Origin, TreeSize and CheckpointTime are from the signed checkpoint.
	Origin         string
	TreeSize       uint64
	CheckpointTime time.Time
	Records        int
	// Types counts records by type; Reported counts those labelled
	// reported (the rest were observed).
	Types    map[string]int
	Reported int
	// Decisions is the highest decision sequence number in the bundle;
	// all from 1 to it are present.
	Decisions int
}

// VerificationError lists everything a verification found wrong.
type VerificationError struct {
	Problems []string
}

func (e *VerificationError) Error() string {
	const show = 20
	msg := fmt.Sprintf("verification failed: %d problem(s):\n  %s", len(e.Problems), strings.Join(e.Problems[:min(show, len(e.Problems))], "\n  "))
	if len(e.Problems) > show {
		msg += fmt.Sprintf("\n  … and %d more", len(e.Problems)-show)
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrTampered) hold for failed verifications.
func (e *VerificationError) Unwrap() error { return ErrTampered }

type bundleFile struct {
	Format     string            `json:"format"`
	SessionID  string            `json:"session_id"`
	Origin     string            `json:"origin"`
	TreeSize   uint64            `json:"tree_size"`
	Checkpoint string            `json:"checkpoint"`
	Records    []json.RawMessage `json:"records"`
}

type bundleEntryFile struct {
	Index    *uint64         `json:"index"`
	LeafHash string          `json:"leaf_hash"`
	Proof    []string        `json:"inclusion_proof"`
	Record   json.RawMessage `json:"record"`
}

// VerifyBundle checks a bundle offline with nothing but the verifier key:
// the checkpoint's signature; for every record, that it is canonical JSON,
// that it hashes to its leaf hash and that its inclusion proof leads to the
// signed root; that every record belongs to the bundle's session; and that
// the session's decisions and mandate versions have no gaps. Any problem
// fails it, and the error names the records concerned.
func VerifyBundle(data []byte, v note.Verifier) (*BundleReport, error) {
	var f bundleFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, &VerificationError{Problems: []string{locate(data, err)}}
	}
	if f.Format != BundleFormat {
		return nil, fmt.Errorf("bundle format %q, want %q", f.Format, BundleFormat)
	}
	cp, err := OpenCheckpoint([]byte(f.Checkpoint), v)
	if err != nil {
		return nil, &VerificationError{Problems: []string{"checkpoint: " + err.Error()}}
	}
	rep := &BundleReport{SessionID: f.SessionID, Origin: cp.Origin, TreeSize: cp.Size, CheckpointTime: cp.Time, Types: map[string]int{}}
	var problems []string
	if f.TreeSize != cp.Size {
		problems = append(problems, fmt.Sprintf("tree_size %d differs from the signed checkpoint's %d", f.TreeSize, cp.Size))
	}
	if f.SessionID == "" {
		problems = append(problems, "no session_id")
	}
	var (
		last      int64 = -1
		seqs      []int
		versions  []int
		decisions = map[string]bool{}
		observed  []observationRef
		sessions  int
	)
	for i, raw := range f.Records {
		e, env, name, errs := verifyEntry(i, raw, f.SessionID, cp)
		problems = append(problems, errs...)
		if e == nil {
			continue
		}
		if int64(*e.Index) <= last {
			problems = append(problems, fmt.Sprintf("%s: out of order after index %d (records were reordered or repeated)", name, last))
		}
		last = int64(*e.Index)
		if env == nil {
			continue
		}
		rep.Records++
		rep.Types[env.Type]++
		if env.Origin == Reported {
			rep.Reported++
		}
		switch env.Type {
		case TypeSession:
			sessions++
		case TypeDecision:
			var d struct {
				ID  string `json:"decision_id"`
				Seq int    `json:"seq"`
			}
			if json.Unmarshal(env.Content, &d) == nil {
				seqs = append(seqs, d.Seq)
				decisions[d.ID] = true
			}
		case TypeMandate:
			var m struct {
				Version int `json:"version"`
			}
			if json.Unmarshal(env.Content, &m) == nil {
				versions = append(versions, m.Version)
			}
		case TypeObservation:
			var o struct {
				DecisionID string `json:"decision_id"`
			}
			if json.Unmarshal(env.Content, &o) == nil && o.DecisionID != "" {
				observed = append(observed, observationRef{name, o.DecisionID})
			}
		}
	}
	if len(f.Records) == 0 {
		problems = append(problems, "the bundle has no records")
	} else if sessions == 0 {
		problems = append(problems, "no session record: the session's first record is missing from the bundle")
	}
	problems = append(problems, gaps("decision seq", seqs)...)
	problems = append(problems, gaps("mandate version", versions)...)
	for _, o := range observed {
		if !decisions[o.decision] {
			problems = append(problems, fmt.Sprintf("%s: observes decision %s, which is not in the bundle", o.name, o.decision))
		}
	}
	if len(seqs) > 0 {
		rep.Decisions = slices.Max(seqs)
	}
	if len(problems) > 0 {
		return rep, &VerificationError{Problems: problems}
	}
	return rep, nil
}

type observationRef struct{ name, decision string }

// verifyEntry checks one record of a bundle. It returns the entry (nil if
// it cannot be read), its envelope (nil if the record cannot be parsed), a
// name for messages and the problems found.
func verifyEntry(i int, raw json.RawMessage, session string, cp *Checkpoint) (*bundleEntryFile, *Envelope, string, []string) {
	name := fmt.Sprintf("record #%d in the bundle", i+1)
	var e bundleEntryFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, nil, name, []string{fmt.Sprintf("%s: %v", name, err)}
	}
	if e.Index == nil {
		return nil, nil, name, []string{name + ": no index"}
	}
	name = fmt.Sprintf("record %d", *e.Index)
	var problems []string
	canon, err := Canonical(e.Record)
	if err != nil {
		return &e, nil, name, []string{fmt.Sprintf("%s: not valid JSON: %v", name, err)}
	}
	var env *Envelope
	if env, err = ParseBody(canon); err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", name, err))
	} else {
		name = describe2(*e.Index, env)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, e.Record); err != nil || !bytes.Equal(compact.Bytes(), canon) {
		problems = append(problems, fmt.Sprintf("%s: not written in canonical form: it was edited after export", name))
	}
	leaf := LeafHash(canon)
	want, err := hex.DecodeString(e.LeafHash)
	leafOK := err == nil && bytes.Equal(want, leaf)
	pr := make([][]byte, len(e.Proof))
	proofErr := error(nil)
	for j, s := range e.Proof {
		if pr[j], err = base64.StdEncoding.DecodeString(s); err != nil {
			proofErr = fmt.Errorf("element %d is not base64", j)
		}
	}
	if *e.Index >= cp.Size {
		proofErr = fmt.Errorf("index is beyond the checkpoint's %d records", cp.Size)
	} else if proofErr == nil {
		proofErr = proof.VerifyInclusion(rfc6962.DefaultHasher, *e.Index, cp.Size, leaf, pr, cp.Root)
	}
	switch {
	case !leafOK && proofErr != nil:
		problems = append(problems, fmt.Sprintf("%s: changed after it was logged: its content no longer hashes to its leaf, and is not in the signed log", name))
	case proofErr != nil:
		problems = append(problems, fmt.Sprintf("%s: its inclusion proof %s: its index or proof was changed", name, proofFailure(proofErr)))
	case !leafOK:
		problems = append(problems, fmt.Sprintf("%s: its leaf_hash field was edited (the record itself is in the signed log)", name))
	}
	if env != nil {
		if env.SessionID != session {
			problems = append(problems, fmt.Sprintf("%s: belongs to session %q, not %q", name, env.SessionID, session))
		}
		if env.Origin == Reported && env.Type != TypeReported && env.Type != TypeObservation {
			problems = append(problems, fmt.Sprintf("%s: a %s cannot be reported content", name, env.Type))
		}
		if env.Type == TypeReported && env.Origin != Reported {
			problems = append(problems, fmt.Sprintf("%s: a reported statement labelled %s", name, env.Origin))
		}
	}
	return &e, env, name, problems
}

// proofFailure says why a proof failed, without the hashes.
func proofFailure(err error) string {
	var mismatch proof.RootMismatchError
	if errors.As(err, &mismatch) {
		return "does not lead to the signed root"
	}
	return "is malformed (" + err.Error() + ")"
}

// describe2 names a record for messages: its index, type and identity.
func describe2(index uint64, env *Envelope) string {
	var id struct {
		Decision    string `json:"decision_id"`
		Observation string `json:"observation_id"`
		Change      string `json:"change_id"`
		Version     int    `json:"version"`
		Seq         int    `json:"seq"`
		Tool        string `json:"tool"`
		Status      string `json:"status"`
	}
	json.Unmarshal(env.Content, &id)
	s := fmt.Sprintf("record %d (%s", index, env.Type)
	switch env.Type {
	case TypeDecision:
		s += fmt.Sprintf(" %s, seq %d, tool %s", id.Decision, id.Seq, id.Tool)
	case TypeObservation:
		s += " " + id.Observation
	case TypeMandate:
		s += fmt.Sprintf(" version %d", id.Version)
	case TypeSessionStatus:
		s += " " + id.Status
	case TypeToolPin, TypeToolChange:
		s += " " + id.Tool
	}
	return s + ")"
}

// gaps reports numbers missing from 1 to the largest of ns, and repeats.
func gaps(what string, ns []int) []string {
	if len(ns) == 0 {
		return nil
	}
	sorted := slices.Clone(ns)
	slices.Sort(sorted)
	var out []string
	next := 1
	for i, n := range sorted {
		if i > 0 && n == sorted[i-1] {
			out = append(out, fmt.Sprintf("%s %d appears more than once", what, n))
			continue
		}
		if n > next {
			if n == next+1 {
				out = append(out, fmt.Sprintf("%s %d is missing: records were left out", what, next))
			} else {
				out = append(out, fmt.Sprintf("%s %d to %d are missing: records were left out", what, next, n-1))
			}
		}
		next = n + 1
	}
	return out
}

var indexOnLine = regexp.MustCompile(`"index":(\d+)`)

// locate turns a JSON decoding error into a message that names the line of
// the bundle, and the record on it when the line has one.
func locate(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	off := -1
	switch {
	case errors.As(err, &syn):
		off = int(syn.Offset)
	case errors.As(err, &typ):
		off = int(typ.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "bundle: malformed JSON: the file ends before the bundle does (truncated?)"
	}
	if off <= 0 || off > len(data) {
		return "bundle: " + err.Error()
	}
	// The offset is just past the byte that broke the JSON.
	off--
	line := bytes.Count(data[:off], []byte("\n")) + 1
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	end := bytes.IndexByte(data[off:], '\n')
	if end < 0 {
		end = len(data)
	} else {
		end += off
	}
	what := fmt.Sprintf("bundle line %d", line)
	if m := indexOnLine.FindSubmatch(data[start:end]); m != nil {
		what = fmt.Sprintf("record %s (bundle line %d)", m[1], line)
	}
	return fmt.Sprintf("%s: malformed JSON: %v", what, err)
}
