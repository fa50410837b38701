package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/store"
)

func TestEvidenceReads(t *testing.T) {
	ctx := context.Background()
	s, _ := seeded(t, Options{}, newSession("s1"), newSession("s2"), decision("s1", 1), decision("s2", 1), decision("s1", 2))
	hashes, err := s.EvidenceLeafHashes(ctx, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := s.EvidenceRange(ctx, 1, 4)
	if err != nil || len(recs) != 3 || len(hashes) != 3 {
		t.Fatalf("got %d hashes and %d records (%v), want 3", len(hashes), len(recs), err)
	}
	for i, h := range hashes {
		if string(h) != string(evidence.LeafHash(recs[i].Body)) {
			t.Errorf("hash %d is not record %d's leaf hash", i+1, i+1)
		}
	}
	if _, err := s.EvidenceLeafHashes(ctx, 3, 9); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("range past the end: err = %v, want ErrNotFound", err)
	}
	if _, err := s.EvidenceLeafHashes(ctx, 3, 2); err == nil {
		t.Error("reversed range: no error")
	}

	recs, err = s.SessionEvidence(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var idx []uint64
	for _, r := range recs {
		if r.SessionID != "s1" {
			t.Errorf("record %d belongs to %q", r.Index, r.SessionID)
		}
		idx = append(idx, r.Index)
	}
	// Each session's creation has two records (session, mandate).
	if fmt.Sprint(idx) != "[0 1 4 6]" {
		t.Errorf("s1 records at %v, want [0 1 4 6]", idx)
	}
	if _, err := s.SessionEvidence(ctx, ""); err == nil {
		t.Error("empty session id: no error")
	}
}

func TestCheckpoints(t *testing.T) {
	ctx := context.Background()
	s, _ := seeded(t, Options{})
	if _, err := s.LatestCheckpoint(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no checkpoints yet: err = %v, want ErrNotFound", err)
	}
	now := time.Unix(1700000000, 5).UTC()
	for i := 1; i <= 5; i++ {
		cp := &store.Checkpoint{Size: uint64(i * 10), RootHash: []byte{byte(i)}, Note: []byte(fmt.Sprintf("note %d\n", i)), CreatedAt: now}
		if err := s.AddCheckpoint(ctx, cp); err != nil {
			t.Fatal(err)
		}
		if cp.ID != int64(i) {
			t.Errorf("checkpoint %d got id %d", i, cp.ID)
		}
	}
	latest, err := s.LatestCheckpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Size != 50 || string(latest.Note) != "note 5\n" || !latest.CreatedAt.Equal(now) {
		t.Errorf("latest = %+v", latest)
	}
	page, err := s.ListCheckpoints(ctx, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 || page[0].ID != 3 || page[1].ID != 4 {
		t.Errorf("page after 2 = %+v", page)
	}
}

func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	s, path := seeded(t, Options{}, newSession("s1"), decision("s1", 1), decision("s1", 2))
	s.Close()

	// A gap: the store opens without reading the whole table (the size is
	// the last index + 1), and reading the leaves over the gap fails —
	// what makes the evidence log's rebuild refuse the store at start
	// (internal/app TestOpenRefusesEvidenceGap). The read-only view opens.
	edit(t, path, `DELETE FROM evidence WHERE idx = 1`)
	rw, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := rw.EvidenceSize(ctx); err != nil || n != 4 {
		t.Errorf("size over a gap: %d, %v; want 4 (the last index + 1)", n, err)
	}
	if _, err := rw.EvidenceLeafHashes(ctx, 0, 3); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("leaves over a gap: err = %v, want ErrNotFound", err)
	}
	rw.Close()
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	recs, err := ro.EvidenceRange(ctx, 0, 10)
	if err != nil || len(recs) != 3 {
		t.Fatalf("read-only range: %d records, %v", len(recs), err)
	}
	from, err := ro.EvidenceFrom(ctx, 1, 10)
	if err != nil || len(from) != 2 || from[0].Index != 2 {
		t.Fatalf("EvidenceFrom(1) over a gap: %v, %v", from, err)
	}
	if _, err := ro.EvidenceLeafHashes(ctx, 0, 3); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("gap: err = %v, want ErrNotFound", err)
	}
	if err := store.Apply(ctx, ro, decision("s1", 3)); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Submit on a read-only store: %v, want ErrReadOnly", err)
	}
	if err := ro.AddCheckpoint(ctx, &store.Checkpoint{Size: 1, RootHash: []byte{1}, Note: []byte("n"), CreatedAt: time.Now()}); err == nil {
		t.Error("AddCheckpoint on a read-only store succeeded")
	}
	if _, err := OpenReadOnly(ctx, filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Error("OpenReadOnly of a missing file: no error")
	}
}
