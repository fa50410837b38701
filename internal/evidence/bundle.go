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
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
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
//
// The bundle ends with the session's head (head.go), committed in the log
// now unless the session's last record already is one: the head lists every
// record before it, so that a bundle missing any fails verification. A log
// opened read-only cannot commit one and returns ErrHeadNotCommitted when
// the session has records after its last head.
func (l *Log) Export(ctx context.Context, sessionID string) (*Bundle, error) {
	recs, err := l.sessionRecords(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if recs, err = l.commitHead(ctx, sessionID, recs); err != nil {
		return nil, err
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
	// Head is the index of the session's head, the record committing every
	// record of the session before it (all of which are in the bundle),
	// and HeadTime when it was written (at export).
	Head     uint64
	HeadTime time.Time
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
	Format     string
	SessionID  string
	TreeSize   uint64
	Checkpoint string
	// Records are the spans of the records' entries in the bundle text.
	Records [][2]int
}

// readBundle reads a bundle's fields and finds its entries.
func readBundle(data []byte) (*bundleFile, error) {
	f := &bundleFile{}
	sc := &jsonScanner{data: data}
	end, err := sc.object(0, 0, func(name []byte, start, end int) error {
		v := data[start:end]
		var err error
		switch string(name) {
		case "format":
			f.Format, err = text(v)
		case "session_id":
			f.SessionID, err = text(v)
		case "checkpoint":
			f.Checkpoint, err = text(v)
		case "tree_size":
			f.TreeSize, err = integer(v)
		case "records":
			_, err = sc.array(start, 1, func(s, e int) error {
				f.Records = append(f.Records, [2]int{s, e})
				return nil
			})
		}
		if err != nil {
			var syn *SyntaxError
			if errors.As(err, &syn) {
				return err
			}
			return &SyntaxError{Offset: start, Msg: fmt.Sprintf("%s: %v", name, err)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if end = sc.space(end); end != len(data) {
		return nil, &SyntaxError{Offset: end, Msg: "unexpected data after the bundle"}
	}
	return f, nil
}

type bundleEntryFile struct {
	Index    *uint64
	LeafHash string
	// Proof holds the proof's JSON strings, quotes included.
	Proof  [][]byte
	Record []byte
}

// readEntry reads one entry of a bundle.
func readEntry(data []byte, span [2]int) (*bundleEntryFile, error) {
	raw := data[span[0]:span[1]]
	e := &bundleEntryFile{}
	sc := &jsonScanner{data: raw}
	_, err := sc.object(0, 0, func(name []byte, start, end int) error {
		v := raw[start:end]
		var err error
		switch string(name) {
		case "index":
			var n uint64
			if n, err = integer(v); err == nil {
				e.Index = &n
			}
		case "leaf_hash":
			e.LeafHash, err = text(v)
		case "inclusion_proof":
			_, err = sc.array(start, 1, func(s, e2 int) error {
				e.Proof = append(e.Proof, raw[s:e2])
				return nil
			})
		case "record":
			e.Record = v
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if e.Record == nil {
		return nil, errors.New("no record")
	}
	return e, nil
}

// VerifyBundle checks a bundle offline with nothing but the verifier key:
// the checkpoint's signature; for every record, that it is canonical JSON,
// that it hashes to its leaf hash and that its inclusion proof leads to the
// signed root; that every record belongs to the bundle's session; and that
// the session's decisions and mandate versions have no gaps. Any problem
// fails it, and the error names the records concerned.
func VerifyBundle(data []byte, v note.Verifier) (*BundleReport, error) {
	f, err := readBundle(data)
	if err != nil {
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
		entries   []bundled
	)
	for i, span := range f.Records {
		index, info, name, canon, errs := verifyEntry(i, span, data, f.SessionID, cp)
		problems = append(problems, errs...)
		if index < 0 {
			continue
		}
		if index <= last {
			problems = append(problems, fmt.Sprintf("%s: out of order after index %d (records were reordered or repeated)", name, last))
		}
		last = index
		if info == nil {
			continue
		}
		entries = append(entries, bundled{uint64(index), info, name, canon})
		rep.Records++
		rep.Types[info.Type]++
		if info.Origin == Reported {
			rep.Reported++
		}
		switch c := &info.Content; info.Type {
		case TypeSession:
			sessions++
		case TypeDecision:
			seqs = append(seqs, c.Seq)
			decisions[c.Decision] = true
		case TypeMandate:
			versions = append(versions, c.Version)
		case TypeObservation:
			if c.Decision != "" {
				observed = append(observed, observationRef{name, c.Decision})
			}
		}
	}
	if len(f.Records) == 0 {
		problems = append(problems, "the bundle has no records")
	} else if sessions == 0 {
		problems = append(problems, "no session record: the session's first record is missing from the bundle")
	}
	problems = append(problems, checkHead(f.SessionID, entries, rep)...)
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

// recordInfo is what verification reads from a record: its envelope and
// the fields of its content that identify it.
type recordInfo struct {
	V         int
	Type      string
	Origin    string
	SessionID string
	Time      time.Time
	Content   recordContent
}

// recordContent holds the fields of a record's content that identify it.
type recordContent struct {
	Decision    string // decision_id
	Observation string // observation_id
	Change      string // change_id
	Version     int
	Seq         int
	Tool        string
	Status      string
}

// parseInfo reads a canonical record body.
func parseInfo(canon []byte) (*recordInfo, error) { return readInfo(canon, false) }

// parseEnvelope is parseInfo holding the body to everything ParseBody
// does after its canonical check, without decoding it twice: no member but
// the envelope's, a content, a time as encoding/json reads one.
func parseEnvelope(canon []byte) (*recordInfo, error) { return readInfo(canon, true) }

func readInfo(canon []byte, strict bool) (*recordInfo, error) {
	var r recordInfo
	var content bool
	sc := &jsonScanner{data: canon}
	var at string
	_, err := sc.object(0, 0, func(name []byte, start, end int) error {
		v := canon[start:end]
		var err error
		switch string(name) {
		case "v":
			r.V, err = strconv.Atoi(string(v))
		case "type":
			r.Type, err = text(v)
		case "origin":
			r.Origin, err = text(v)
		case "session_id":
			r.SessionID, err = text(v)
		case "time":
			at, err = text(v)
		case "content":
			content = true
			err = r.Content.read(sc, canon, start)
		default:
			if strict {
				err = errors.New("not a member of a record body")
			}
		}
		if err == nil && strict && string(name) == "time" {
			var t time.Time
			err = t.UnmarshalJSON(v)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record body: %w", err)
	}
	if r.Time, err = time.Parse(time.RFC3339Nano, at); err != nil {
		return nil, fmt.Errorf("record body: time %q: %w", at, err)
	}
	switch {
	case strict && !content:
		return nil, errors.New("record body: no content")
	case r.V != FormatVersion:
		return nil, fmt.Errorf("record body: format version %d, want %d", r.V, FormatVersion)
	case r.Type == "":
		return nil, errors.New("record body: no type")
	case r.Origin != Observed && r.Origin != Reported:
		return nil, fmt.Errorf("record body: origin %q, want %s or %s", r.Origin, Observed, Reported)
	}
	return &r, nil
}

// read takes the identifying fields from the content object at start.
func (c *recordContent) read(sc *jsonScanner, data []byte, start int) error {
	if data[start] != '{' {
		return errors.New("not an object")
	}
	_, err := sc.object(start, 1, func(name []byte, start, end int) error {
		v := data[start:end]
		str := func(dst *string) error {
			if v[0] != '"' {
				return nil // another shape: not an identifier
			}
			s, err := text(v)
			*dst = s
			return err
		}
		switch string(name) {
		case "decision_id":
			return str(&c.Decision)
		case "observation_id":
			return str(&c.Observation)
		case "change_id":
			return str(&c.Change)
		case "tool":
			return str(&c.Tool)
		case "status":
			return str(&c.Status)
		case "version":
			c.Version, _ = strconv.Atoi(string(v))
		case "seq":
			c.Seq, _ = strconv.Atoi(string(v))
		}
		return nil
	})
	return err
}

// name names a record for messages: its index, type and identity.
func (r *recordInfo) name(index uint64) string {
	c := &r.Content
	s := fmt.Sprintf("record %d (%s", index, r.Type)
	switch r.Type {
	case TypeDecision:
		s += fmt.Sprintf(" %s, seq %d, tool %s", c.Decision, c.Seq, c.Tool)
	case TypeObservation:
		s += " " + c.Observation
	case TypeMandate:
		s += fmt.Sprintf(" version %d", c.Version)
	case TypeSessionStatus:
		s += " " + c.Status
	case TypeToolPin, TypeToolChange:
		s += " " + c.Tool
	}
	return s + ")"
}

// verifyEntry checks one record of a bundle. It returns the record's index
// (-1 if the entry cannot be read), what the record says (nil if it cannot
// be parsed), a name for messages and the problems found.
func verifyEntry(i int, span [2]int, data []byte, session string, cp *Checkpoint) (int64, *recordInfo, string, []byte, []string) {
	name := fmt.Sprintf("record #%d in the bundle", i+1)
	e, err := readEntry(data, span)
	if err != nil {
		return -1, nil, name, nil, []string{fmt.Sprintf("%s: %v", name, err)}
	}
	if e.Index == nil || *e.Index > math.MaxInt64 {
		return -1, nil, name, nil, []string{name + ": no index"}
	}
	index := int64(*e.Index)
	name = fmt.Sprintf("record %d", index)
	var problems []string
	canon, err := Canonical(e.Record)
	if err != nil {
		return index, nil, name, nil, []string{fmt.Sprintf("%s: not valid JSON: %v", name, err)}
	}
	info, err := parseInfo(canon)
	if err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", name, err))
	} else {
		name = info.name(*e.Index)
	}
	if !bytes.Equal(e.Record, canon) {
		// Reformatting (indentation) is not a change; anything else is.
		var compact bytes.Buffer
		if err := json.Compact(&compact, e.Record); err != nil || !bytes.Equal(compact.Bytes(), canon) {
			problems = append(problems, fmt.Sprintf("%s: not written in canonical form: it was edited after export", name))
		}
	}
	leaf := LeafHash(canon)
	want, err := hex.DecodeString(e.LeafHash)
	leafOK := err == nil && bytes.Equal(want, leaf)
	pr := make([][]byte, len(e.Proof))
	hashes := make([]byte, 32*len(e.Proof))
	proofErr := error(nil)
	for j, v := range e.Proof {
		pr[j] = hashes[32*j : 32*j+32]
		if len(v) != 46 || v[0] != '"' || v[45] != '"' {
			proofErr = fmt.Errorf("element %d is not a base64 SHA-256 hash", j)
		} else if n, err := base64.StdEncoding.Decode(pr[j], v[1:45]); err != nil || n != 32 {
			proofErr = fmt.Errorf("element %d is not a base64 SHA-256 hash", j)
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
	if info != nil {
		if info.SessionID != session {
			problems = append(problems, fmt.Sprintf("%s: belongs to session %q, not %q", name, info.SessionID, session))
		}
		if info.Origin == Reported && info.Type != TypeReported && info.Type != TypeObservation && info.Type != TypeApprovalState {
			problems = append(problems, fmt.Sprintf("%s: a %s cannot be reported content", name, info.Type))
		}
		if info.Type == TypeReported && info.Origin != Reported {
			problems = append(problems, fmt.Sprintf("%s: a reported statement labelled %s", name, info.Origin))
		}
	}
	return index, info, name, canon, problems
}

// proofFailure says why a proof failed, without the hashes.
func proofFailure(err error) string {
	var mismatch proof.RootMismatchError
	if errors.As(err, &mismatch) {
		return "does not lead to the signed root"
	}
	return "is malformed (" + err.Error() + ")"
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
	var syn *SyntaxError
	if !errors.As(err, &syn) {
		return "bundle: " + err.Error()
	}
	off := syn.Offset
	if off >= len(data) {
		return "bundle: malformed JSON: the file ends before the bundle does (truncated?)"
	}
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
	return fmt.Sprintf("%s: malformed JSON: %s", what, syn.Msg)
}
