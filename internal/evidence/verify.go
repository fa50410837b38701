package evidence

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"slices"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/mandate-dev/mandate/internal/jcs"
	"github.com/mandate-dev/mandate/internal/store"
)

// StoreReport is what a whole-store verification established.
type StoreReport struct {
	// Records is how many records the store holds.
	Records uint64
	Types   map[string]int
	// Checkpoints is how many stored checkpoints were checked; Latest is
	// the one covering the most records.
	Checkpoints int
	Latest      *Checkpoint
	// Uncovered counts records after the latest checkpoint.
	Uncovered uint64
	// Since is the saved checkpoint, when one was given and the store is
	// consistent with it; SinceProof is the length of the consistency
	// proof from it to Latest.
	Since      *Checkpoint
	SinceProof int
	// Rows says the store's operational rows (sessions, mandates,
	// decisions, observations, approvals) were held against the log too.
	Rows bool
	// Warnings are findings that are not proof of tampering.
	Warnings []string
}

// RowVerifier is a store that can hold every operational row against the
// evidence log and every bound record against its row (store.Binding),
// reporting each row edited, inserted or deleted behind the log's back by
// table, row and column.
type RowVerifier interface {
	VerifyRows(ctx context.Context, report func(problem string)) error
}

// checkedSize is a tree size some checkpoint states a root for.
type checkedSize struct {
	label string
	cp    *Checkpoint
	// ok is set once the recomputed root matched.
	ok, seen bool
}

// VerifyStore recomputes the log from the stored records — each body's
// hash, the Merkle tree over them in index order — and holds it against
// every stored checkpoint (each signature checked with v) and, if since is
// given, against a checkpoint saved earlier outside the store, proving the
// log is an extension of it. It finds records edited, deleted, inserted or
// reordered, a truncated log, checkpoints not signed by v, and a store
// rolled back and extended differently (the last only with since). The
// error lists every problem found.
func VerifyStore(ctx context.Context, st Store, v note.Verifier, since []byte) (*StoreReport, error) {
	rep := &StoreReport{Types: map[string]int{}}
	var problems []string
	var saved *Checkpoint
	if len(since) > 0 {
		var err error
		if saved, err = OpenCheckpoint(since, v); err != nil {
			return nil, fmt.Errorf("saved checkpoint: %w", err)
		}
	}

	// Every stored checkpoint, checked for its signature.
	bySize := map[uint64][]*checkedSize{}
	var all []*checkedSize
	for after := int64(0); ; {
		page, err := st.ListCheckpoints(ctx, after, 1000)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			break
		}
		for _, sc := range page {
			after = sc.ID
			label := fmt.Sprintf("checkpoint %d (%d records, stored %s)", sc.ID, sc.Size, sc.CreatedAt.Format(time.RFC3339))
			cp, err := OpenCheckpoint(sc.Note, v)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", label, err))
				continue
			}
			if cp.Size != sc.Size || !bytes.Equal(cp.Root, sc.RootHash) {
				problems = append(problems, fmt.Sprintf("%s: its size or root column differs from the signed note: edited", label))
			}
			c := &checkedSize{label: label, cp: cp}
			bySize[cp.Size] = append(bySize[cp.Size], c)
			all = append(all, c)
			rep.Checkpoints++
			if rep.Latest == nil || cp.Size >= rep.Latest.Size {
				rep.Latest = cp
			}
		}
	}
	var savedCheck *checkedSize
	if saved != nil {
		savedCheck = &checkedSize{label: fmt.Sprintf("the saved checkpoint (%d records, signed %s)", saved.Size, saved.Time.Format(time.RFC3339)), cp: saved}
		bySize[saved.Size] = append(bySize[saved.Size], savedCheck)
	}

	// The log, recomputed from the record bodies.
	t := newTree(st.EvidenceLeafHashes)
	compare := func(size uint64) error {
		cs := bySize[size]
		if len(cs) == 0 {
			return nil
		}
		_, root, err := t.head()
		if err != nil {
			return err
		}
		for _, c := range cs {
			c.seen = true
			c.ok = bytes.Equal(root, c.cp.Root)
		}
		return nil
	}
	if err := compare(0); err != nil {
		return nil, err
	}
	var pos uint64
	var rc recordChecker
	for {
		recs, err := st.EvidenceFrom(ctx, pos, 4096)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			switch {
			case r.Index > pos:
				if r.Index == pos+1 {
					problems = append(problems, fmt.Sprintf("record %d is missing: deleted", pos))
				} else {
					problems = append(problems, fmt.Sprintf("records %d to %d are missing: deleted", pos, r.Index-1))
				}
			case r.Index < pos:
				return nil, fmt.Errorf("the store returned record %d after record %d", r.Index, pos)
			}
			// The tree is over the bodies as stored, in index order,
			// whatever the leaf hash column says.
			leaf := rc.leafHash(r.Body)
			problems = append(problems, rc.check(r, leaf, rep)...)
			if err := t.append(t.size(), [][]byte{leaf}); err != nil {
				return nil, err
			}
			if err := compare(t.size()); err != nil {
				return nil, err
			}
			pos = r.Index + 1
		}
	}
	rep.Records = t.size()

	// What the checkpoints say against what was recomputed.
	slices.SortStableFunc(all, func(a, b *checkedSize) int { return cmp.Compare(a.cp.Size, b.cp.Size) })
	var lastGood *checkedSize
	for _, c := range all {
		switch {
		case !c.seen:
			problems = append(problems, fmt.Sprintf("%s: the store holds only %d records: records were removed from the end (truncated)", c.label, rep.Records))
		case !c.ok:
			problems = append(problems, fmt.Sprintf("%s: the first %d records no longer hash to its root: %s", c.label, c.cp.Size, since2(lastGood)))
		default:
			lastGood = c
		}
	}
	if saved != nil {
		switch {
		case !savedCheck.seen:
			problems = append(problems, fmt.Sprintf("%s: the store holds only %d records: it was rolled back or truncated", savedCheck.label, rep.Records))
		case !savedCheck.ok:
			problems = append(problems, fmt.Sprintf("%s: the store's first %d records differ from it: history was rewritten (rolled back and extended differently, or edited)", savedCheck.label, saved.Size))
		}
	}
	if rep.Latest != nil && rep.Latest.Size < rep.Records {
		rep.Uncovered = rep.Records - rep.Latest.Size
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the last %d records are not covered by a signed checkpoint yet (normal while the server runs, or after a crash until it restarts)", rep.Uncovered))
	}
	if rep.Checkpoints == 0 && rep.Records > 0 {
		rep.Warnings = append(rep.Warnings, "the store holds no signed checkpoint: nothing proves these records were not rewritten")
	}
	// The rows the server acts on, against the records (after the log's
	// own findings, which come first in the report).
	if rv, ok := st.(RowVerifier); ok {
		if err := rv.VerifyRows(ctx, func(p string) { problems = append(problems, p) }); err != nil {
			return nil, err
		}
		rep.Rows = true
	}
	if len(problems) > 0 {
		return rep, &VerificationError{Problems: problems}
	}

	// The saved checkpoint and the latest are consistent by recomputation;
	// check it the way an auditor with only the two checkpoints would.
	if saved != nil && rep.Latest != nil && saved.Size <= rep.Latest.Size {
		p, err := t.prover(rep.Latest.Size)
		if err != nil {
			return rep, err
		}
		pr, err := p.consistency(ctx, saved.Size)
		if err != nil {
			return rep, fmt.Errorf("consistency proof: %w", err)
		}
		if err := proof.VerifyConsistency(rfc6962.DefaultHasher, saved.Size, rep.Latest.Size, pr, saved.Root, rep.Latest.Root); err != nil {
			return rep, &VerificationError{Problems: []string{fmt.Sprintf("the consistency proof from the saved checkpoint to the latest does not verify: %v", err)}}
		}
		rep.Since, rep.SinceProof = saved, len(pr)
	}
	return rep, nil
}

// recordChecker checks stored records one at a time, reusing its hasher
// and canonicalisation buffers from one record to the next.
type recordChecker struct {
	h     hash.Hash
	c     jcs.Canonicalizer
	canon []byte
}

// leafHash is LeafHash(body), in a new 32-byte slice (the tree keeps it).
func (rc *recordChecker) leafHash(body []byte) []byte {
	if rc.h == nil {
		rc.h = sha256.New()
	}
	rc.h.Reset()
	rc.h.Write([]byte{rfc6962.RFC6962LeafHashPrefix})
	rc.h.Write(body)
	return rc.h.Sum(make([]byte, 0, sha256.Size))
}

// check checks one stored record on its own, leaf being its body's hash:
// the body hashes to the stored leaf hash, is a canonical record (what
// ParseBody accepts), and agrees with its columns.
func (rc *recordChecker) check(r *store.EvidenceRecord, leaf []byte, rep *StoreReport) []string {
	var problems []string
	if !bytes.Equal(leaf, r.LeafHash) {
		problems = append(problems, fmt.Sprintf("record %d (%s): its body no longer hashes to its leaf hash: edited", r.Index, r.Type))
	}
	canon, err := rc.c.Append(rc.canon[:0], r.Body, true)
	if err != nil {
		return append(problems, fmt.Sprintf("record %d: record body: %v", r.Index, err))
	}
	rc.canon = canon
	if !bytes.Equal(canon, r.Body) {
		return append(problems, fmt.Sprintf("record %d: record body is not in canonical form", r.Index))
	}
	info, err := parseEnvelope(r.Body)
	if err != nil {
		return append(problems, fmt.Sprintf("record %d: %v", r.Index, err))
	}
	rep.Types[info.Type]++
	if info.Type != r.Type || info.Origin != r.Origin || info.SessionID != r.SessionID {
		problems = append(problems, fmt.Sprintf("%s: its type, origin or session columns (%s, %s, %q) differ from its body: edited", info.name(r.Index), r.Type, r.Origin, r.SessionID))
	}
	return problems
}

func since2(last *checkedSize) string {
	if last == nil {
		return "a record among them was changed, removed, inserted or reordered"
	}
	return fmt.Sprintf("the first %d still match %s, so a record from index %d on was changed, removed, inserted or reordered", last.cp.Size, last.label, last.cp.Size)
}
