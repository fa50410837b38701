package store

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
)

// CheckCache remembers rows already held against their evidence records, so
// that a session loaded again (after an eviction or a failed commit) does not
// decode every decision's record again. An entry is the row's leaf hash and
// a digest of the row's columns as the database returned them: the record a
// leaf names never changes (its body hashes to the leaf), so the same columns
// under the same leaf check the same way. A row edited since it was checked
// has another digest and is checked again. It is bounded: cleared whole when
// full.
type CheckCache struct {
	mu  sync.Mutex
	m   map[[32]byte][32]byte
	max int
}

// NewCheckCache returns a cache of at most n rows.
func NewCheckCache(n int) *CheckCache {
	return &CheckCache{m: make(map[[32]byte][32]byte), max: n}
}

// Check is b.Check(id, row, leaf, body), skipped when the same columns
// (cols, in the scan's order) under the same leaf checked before.
func (c *CheckCache) Check(b Binding, id string, row any, leaf, body []byte, cols ...any) error {
	if c == nil || len(leaf) != 32 {
		return b.Check(id, row, leaf, body)
	}
	key := [32]byte(leaf)
	d := digest(b.Table, cols)
	c.mu.Lock()
	seen, ok := c.m[key]
	c.mu.Unlock()
	if ok && seen == d {
		return nil
	}
	if err := b.Check(id, row, leaf, body); err != nil {
		return err
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[key] = d
	c.mu.Unlock()
	return nil
}

func digest(table string, cols []any) [32]byte {
	h := sha256.New()
	var n [8]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	put([]byte(table))
	for _, v := range cols {
		switch x := v.(type) {
		case []byte:
			put(x)
		case string:
			put([]byte(x))
		case *string:
			put([]byte(*x))
		case *int:
			put(binary.BigEndian.AppendUint64(nil, uint64(*x)))
		case *int64:
			put(binary.BigEndian.AppendUint64(nil, uint64(*x)))
		case *bool:
			put([]byte(fmt.Sprint(*x)))
		default:
			put([]byte(fmt.Sprintf("%T %v", v, v)))
		}
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}
