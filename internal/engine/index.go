package engine

import "sync"

// decisionIndex remembers the session, effect and tool of each recent
// decision, so observing a tool's result (which names only the decision)
// needs no store read. It holds the last n decisions; older ones are looked
// up in the store.
type decisionIndex struct {
	mu   sync.Mutex
	m    map[string]indexed
	ring []string
	next int
}

// indexed is what the index keeps of a decision.
type indexed struct {
	session, effect, tool string
	// family is the tool's family, for scanning its output.
	family string
}

func newDecisionIndex(n int) *decisionIndex {
	return &decisionIndex{m: make(map[string]indexed, n), ring: make([]string, n)}
}

func (x *decisionIndex) put(id string, session indexed) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old := x.ring[x.next]; old != "" {
		delete(x.m, old)
	}
	x.ring[x.next] = id
	x.m[id] = session
	x.next = (x.next + 1) % len(x.ring)
}

func (x *decisionIndex) get(id string) (indexed, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	s, ok := x.m[id]
	return s, ok
}
