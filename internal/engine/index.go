package engine

import "sync"

// decisionIndex remembers which session each recent decision belongs to, so
// observing a tool's result (which names only the decision) needs no store
// read. It holds the last n decisions; older ones are looked up in the store.
type decisionIndex struct {
	mu   sync.Mutex
	m    map[string]string
	ring []string
	next int
}

func newDecisionIndex(n int) *decisionIndex {
	return &decisionIndex{m: make(map[string]string, n), ring: make([]string, n)}
}

func (x *decisionIndex) put(id, session string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old := x.ring[x.next]; old != "" {
		delete(x.m, old)
	}
	x.ring[x.next] = id
	x.m[id] = session
	x.next = (x.next + 1) % len(x.ring)
}

func (x *decisionIndex) get(id string) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	s, ok := x.m[id]
	return s, ok
}
