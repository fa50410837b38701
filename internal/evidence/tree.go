package evidence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// The tree keeps in memory every complete node at blockLevel and above
// (about 4 bytes per record) and the leaves of the last, incomplete block.
// Nodes below blockLevel are recomputed from the leaf hashes of their block,
// read from the store when a proof needs them: a proof touches at most a few
// blocks, so it costs a few small reads, and memory stays small however long
// the log grows.
const (
	blockLevel = 4
	blockSize  = 1 << blockLevel
)

// leafReader returns the leaf hashes of records [from, to) from the store.
type leafReader func(ctx context.Context, from, to uint64) ([][]byte, error)

// ErrTampered wraps every finding that stored evidence differs from what
// was logged.
var ErrTampered = errors.New("evidence was modified")

// tree is the log's RFC 6962 Merkle tree.
type tree struct {
	hasher *rfc6962.Hasher
	fact   *compact.RangeFactory
	read   leafReader

	mu    sync.RWMutex
	rng   *compact.Range
	upper [][][32]byte // upper[k][i] is node (blockLevel+k, i)
	tail  [][]byte     // leaves of the incomplete last block
}

func newTree(read leafReader) *tree {
	h := rfc6962.DefaultHasher
	f := &compact.RangeFactory{Hash: h.HashChildren}
	return &tree{hasher: h, fact: f, read: read, rng: f.NewEmptyRange(0)}
}

// size is the number of leaves.
func (t *tree) size() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.rng.End()
}

// head returns the size and root hash.
func (t *tree) head() (uint64, []byte, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.headLocked()
}

func (t *tree) headLocked() (uint64, []byte, error) {
	if t.rng.End() == 0 {
		return 0, t.hasher.EmptyRoot(), nil
	}
	root, err := t.rng.GetRootHash(nil)
	if err != nil {
		return 0, nil, fmt.Errorf("evidence tree root: %w", err)
	}
	return t.rng.End(), root, nil
}

// append adds leaf hashes at index first, which must be the current size.
func (t *tree) append(first uint64, hashes [][]byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if first != t.rng.End() {
		return fmt.Errorf("evidence tree has %d leaves, cannot append at %d", t.rng.End(), first)
	}
	for _, h := range hashes {
		if len(h) != t.hasher.Size() {
			return fmt.Errorf("evidence leaf %d: hash is %d bytes, want %d", t.rng.End(), len(h), t.hasher.Size())
		}
		if err := t.rng.Append(h, t.keep); err != nil {
			return fmt.Errorf("evidence tree: %w", err)
		}
		if t.rng.End()%blockSize == 0 {
			t.tail = t.tail[:0]
		} else {
			t.tail = append(t.tail, h)
		}
	}
	return nil
}

// keep records complete nodes at blockLevel and above as Append makes them.
func (t *tree) keep(id compact.NodeID, h []byte) {
	if id.Level < blockLevel {
		return
	}
	k := int(id.Level - blockLevel)
	for len(t.upper) <= k {
		t.upper = append(t.upper, nil)
	}
	// Append makes nodes left to right, so the index is the next slot.
	t.upper[k] = append(t.upper[k], [32]byte(h))
}

// load appends the leaves the store holds beyond the tree's size, up to n.
func (t *tree) load(ctx context.Context, n uint64) error {
	const chunk = 1 << 16
	for from := t.size(); from < n; {
		to := min(n, from+chunk)
		hashes, err := t.read(ctx, from, to)
		if err != nil {
			return err
		}
		if err := t.append(from, hashes); err != nil {
			return err
		}
		from = to
	}
	return nil
}

// prover answers proofs for one tree size, reading and caching the blocks
// of leaves it needs.
type prover struct {
	t    *tree
	size uint64
	// treeSize, tailBlock and tail are the tree as it was when the prover
	// was made; the tail block is not in the store's complete blocks.
	treeSize uint64
	tail     [][]byte
	blocks   map[uint64]*block
}

// block is the subtree of one block of leaves: nodes[l] are its complete
// nodes at level l, left to right (nodes[0] the leaves).
type block struct {
	nodes [blockLevel][][]byte
}

func (p *prover) newBlock(leaves [][]byte) *block {
	b := &block{}
	b.nodes[0] = leaves
	for l := 1; l < blockLevel; l++ {
		below := b.nodes[l-1]
		up := make([][]byte, len(below)/2)
		for i := range up {
			up[i] = p.t.hasher.HashChildren(below[2*i], below[2*i+1])
		}
		b.nodes[l] = up
	}
	return b
}

// root is the block's node at blockLevel; the block must be complete.
func (b *block) root(h func(l, r []byte) []byte) []byte {
	top := b.nodes[blockLevel-1]
	return h(top[0], top[1])
}

// prover returns a prover for proofs against the tree of the given size,
// which must not exceed the current size.
func (t *tree) prover(size uint64) (*prover, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if size > t.rng.End() {
		return nil, fmt.Errorf("tree size %d is beyond the log's %d records", size, t.rng.End())
	}
	return &prover{t: t, size: size, treeSize: t.rng.End(), tail: slices.Clone(t.tail), blocks: map[uint64]*block{}}, nil
}

// inclusion returns the inclusion proof of leaf index in the tree of p.size.
func (p *prover) inclusion(ctx context.Context, index uint64) ([][]byte, error) {
	nodes, err := proof.Inclusion(index, p.size)
	if err != nil {
		return nil, err
	}
	return p.rehash(ctx, nodes)
}

// inclusions returns inclusion proofs for many leaves, fetching the blocks
// they need in as few reads as possible.
func (p *prover) inclusions(ctx context.Context, indices []uint64) ([][][]byte, error) {
	all := make([]proof.Nodes, len(indices))
	var ids []compact.NodeID
	for i, idx := range indices {
		nodes, err := proof.Inclusion(idx, p.size)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", idx, err)
		}
		all[i] = nodes
		ids = append(ids, nodes.IDs...)
	}
	if err := p.prefetch(ctx, ids); err != nil {
		return nil, err
	}
	out := make([][][]byte, len(indices))
	for i, nodes := range all {
		pr, err := p.rehash(ctx, nodes)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", indices[i], err)
		}
		out[i] = pr
	}
	return out, nil
}

// consistency returns the consistency proof from size1 to p.size.
func (p *prover) consistency(ctx context.Context, size1 uint64) ([][]byte, error) {
	nodes, err := proof.Consistency(size1, p.size)
	if err != nil {
		return nil, err
	}
	return p.rehash(ctx, nodes)
}

// root returns the root hash of the tree of p.size.
func (p *prover) root(ctx context.Context) ([]byte, error) {
	if p.size == 0 {
		return p.t.hasher.EmptyRoot(), nil
	}
	ids := compact.RangeNodes(0, p.size, nil)
	hashes, err := p.hashes(ctx, ids)
	if err != nil {
		return nil, err
	}
	h := hashes[len(hashes)-1]
	for i := len(hashes) - 2; i >= 0; i-- {
		h = p.t.hasher.HashChildren(hashes[i], h)
	}
	return h, nil
}

func (p *prover) rehash(ctx context.Context, nodes proof.Nodes) ([][]byte, error) {
	hashes, err := p.hashes(ctx, nodes.IDs)
	if err != nil {
		return nil, err
	}
	return nodes.Rehash(hashes, p.t.hasher.HashChildren)
}

func blockOf(id compact.NodeID) uint64 { return (id.Index << id.Level) >> blockLevel }

// hashes returns the hashes of complete nodes.
func (p *prover) hashes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	if err := p.prefetch(ctx, ids); err != nil {
		return nil, err
	}
	out := make([][]byte, len(ids))
	p.t.mu.RLock()
	for i, id := range ids {
		if id.Level < blockLevel {
			continue
		}
		k, idx := int(id.Level-blockLevel), id.Index
		if k >= len(p.t.upper) || idx >= uint64(len(p.t.upper[k])) {
			p.t.mu.RUnlock()
			return nil, fmt.Errorf("evidence tree: node (%d, %d) is not complete", id.Level, id.Index)
		}
		h := p.t.upper[k][idx]
		out[i] = h[:]
	}
	p.t.mu.RUnlock()
	for i, id := range ids {
		if id.Level >= blockLevel {
			continue
		}
		b := blockOf(id)
		level := p.blocks[b].nodes[id.Level]
		at := id.Index - b*(blockSize>>id.Level)
		if at >= uint64(len(level)) {
			return nil, fmt.Errorf("evidence tree: node (%d, %d) is not complete", id.Level, id.Index)
		}
		out[i] = level[at]
	}
	return out, nil
}

// prefetch loads the blocks that nodes below blockLevel lie in, reading
// runs of consecutive blocks at once, and checks every complete block
// against the node the tree kept for it.
func (p *prover) prefetch(ctx context.Context, ids []compact.NodeID) error {
	var need []uint64
	tailBlock := p.treeSize / blockSize
	for _, id := range ids {
		if id.Level >= blockLevel {
			continue
		}
		b := blockOf(id)
		if _, ok := p.blocks[b]; ok {
			continue
		}
		if b == tailBlock && p.treeSize%blockSize != 0 {
			p.blocks[b] = p.newBlock(p.tail)
			continue
		}
		need = append(need, b)
	}
	if len(need) == 0 {
		return nil
	}
	slices.Sort(need)
	need = slices.Compact(need)
	for i := 0; i < len(need); {
		j := i + 1
		for j < len(need) && need[j] == need[j-1]+1 {
			j++
		}
		from, to := need[i]*blockSize, (need[j-1]+1)*blockSize
		leaves, err := p.t.read(ctx, from, to)
		if err != nil {
			return fmt.Errorf("read evidence leaves [%d, %d): %w", from, to, err)
		}
		if uint64(len(leaves)) != to-from {
			return fmt.Errorf("read evidence leaves [%d, %d): got %d", from, to, len(leaves))
		}
		for k, b := range need[i:j] {
			blk := p.newBlock(leaves[k*blockSize : (k+1)*blockSize])
			if err := p.check(b, blk); err != nil {
				return err
			}
			p.blocks[b] = blk
		}
		i = j
	}
	return nil
}

// check compares a block read from the store with the node the tree kept
// for it when the block's records were committed.
func (p *prover) check(b uint64, blk *block) error {
	got := blk.root(p.t.hasher.HashChildren)
	p.t.mu.RLock()
	var want []byte
	if len(p.t.upper) > 0 && b < uint64(len(p.t.upper[0])) {
		w := p.t.upper[0][b]
		want = w[:]
	}
	p.t.mu.RUnlock()
	if want == nil {
		return fmt.Errorf("evidence tree: block %d is not complete", b)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%w: the leaf hashes of records [%d, %d) in the store differ from those logged; run 'mandate evidence verify'", ErrTampered, b*blockSize, (b+1)*blockSize)
	}
	return nil
}
