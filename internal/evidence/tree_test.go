package evidence

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// memLeaves is a leaf store in memory, counting reads.
type memLeaves struct {
	leaves [][]byte
	reads  int
}

func (m *memLeaves) read(_ context.Context, from, to uint64) ([][]byte, error) {
	m.reads++
	if to > uint64(len(m.leaves)) || from > to {
		return nil, fmt.Errorf("read [%d, %d) of %d", from, to, len(m.leaves))
	}
	return m.leaves[from:to], nil
}

func leafN(i int) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(i))
	return rfc6962.DefaultHasher.HashLeaf(b[:])
}

func buildTree(t testing.TB, n int) (*tree, *memLeaves) {
	t.Helper()
	m := &memLeaves{}
	tr := newTree(m.read)
	for i := range n {
		h := leafN(i)
		m.leaves = append(m.leaves, h)
		// Append in uneven batches, as commits do.
		if err := tr.append(uint64(i), [][]byte{h}); err != nil {
			t.Fatal(err)
		}
	}
	return tr, m
}

// refRoot is the root of the first n leaves computed without the tree.
func refRoot(leaves [][]byte) []byte {
	if len(leaves) == 0 {
		return rfc6962.DefaultHasher.EmptyRoot()
	}
	f := &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	r := f.NewEmptyRange(0)
	for _, l := range leaves {
		r.Append(l, nil)
	}
	root, _ := r.GetRootHash(nil)
	return root
}

func TestTreeRootsAndProofs(t *testing.T) {
	ctx := context.Background()
	const n = 150 // several complete blocks and a partial one
	tr, m := buildTree(t, n)
	size, root, err := tr.head()
	if err != nil || size != n || string(root) != string(refRoot(m.leaves)) {
		t.Fatalf("head = %d, %x, %v; want %d, %x", size, root, err, n, refRoot(m.leaves))
	}
	h := rfc6962.DefaultHasher
	for _, s := range []uint64{0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 64, 100, 127, 128, 129, 149, 150} {
		p, err := tr.prover(s)
		if err != nil {
			t.Fatal(err)
		}
		want := refRoot(m.leaves[:s])
		got, err := p.root(ctx)
		if err != nil || string(got) != string(want) {
			t.Fatalf("root at %d = %x, %v; want %x", s, got, err, want)
		}
		var all []uint64
		for i := uint64(0); i < s; i++ {
			all = append(all, i)
			pr, err := p.inclusion(ctx, i)
			if err != nil {
				t.Fatalf("inclusion %d at %d: %v", i, s, err)
			}
			if err := proof.VerifyInclusion(h, i, s, m.leaves[i], pr, want); err != nil {
				t.Fatalf("inclusion %d at %d does not verify: %v", i, s, err)
			}
		}
		many, err := p.inclusions(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		for i, pr := range many {
			if err := proof.VerifyInclusion(h, uint64(i), s, m.leaves[i], pr, want); err != nil {
				t.Fatalf("batched inclusion %d at %d: %v", i, s, err)
			}
		}
		for _, s1 := range []uint64{0, 1, 7, 16, 17, 64, 99, s} {
			if s1 > s {
				continue
			}
			pr, err := p.consistency(ctx, s1)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyConsistency(h, s1, s, pr, refRoot(m.leaves[:s1]), want); err != nil {
				t.Fatalf("consistency %d→%d: %v", s1, s, err)
			}
		}
	}
	if _, err := tr.prover(n + 1); err == nil {
		t.Error("prover beyond the size: no error")
	}
}

func TestTreeBatchReadsFewBlocks(t *testing.T) {
	ctx := context.Background()
	tr, m := buildTree(t, 4096)
	p, _ := tr.prover(4096)
	m.reads = 0
	// Every record of two long runs: one read per run.
	var idx []uint64
	for i := uint64(100); i < 600; i++ {
		idx = append(idx, i)
	}
	for i := uint64(3000); i < 3100; i++ {
		idx = append(idx, i)
	}
	if _, err := p.inclusions(ctx, idx); err != nil {
		t.Fatal(err)
	}
	if m.reads != 2 {
		t.Errorf("%d reads for two runs of records, want 2", m.reads)
	}
}

func TestTreeAppendOutOfStep(t *testing.T) {
	tr, _ := buildTree(t, 5)
	if err := tr.append(3, [][]byte{leafN(3)}); err == nil {
		t.Error("append at an old index: no error")
	}
	if err := tr.append(9, [][]byte{leafN(9)}); err == nil {
		t.Error("append past the end: no error")
	}
	if err := tr.append(5, [][]byte{{1, 2, 3}}); err == nil {
		t.Error("short leaf hash: no error")
	}
}

func TestTreeDetectsChangedLeaves(t *testing.T) {
	ctx := context.Background()
	tr, m := buildTree(t, 64)
	m.leaves[20] = leafN(999) // the store's leaf hash changed after commit
	p, _ := tr.prover(64)
	if _, err := p.inclusion(ctx, 21); !errors.Is(err, ErrTampered) {
		t.Errorf("proof over a changed block: err = %v, want ErrTampered", err)
	}
}

func TestTreeLoad(t *testing.T) {
	ctx := context.Background()
	_, m := buildTree(t, 1000)
	tr := newTree(m.read)
	if err := tr.load(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	_, root, _ := tr.head()
	if string(root) != string(refRoot(m.leaves)) {
		t.Error("loaded tree has another root")
	}
}

func BenchmarkTreeAppend(b *testing.B) {
	tr := newTree(nil)
	h := sha256.Sum256([]byte("leaf"))
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		if err := tr.append(i, [][]byte{h[:]}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkInclusionProof(b *testing.B) {
	ctx := context.Background()
	tr, _ := buildTree(b, 1<<20)
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		p, err := tr.prover(1 << 20)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.inclusion(ctx, (i*7919)%(1<<20)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
