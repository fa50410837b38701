package approval

import (
	"context"
	"sync"
)

// Hub wakes the surfaces waiting on approvals in this process: a waiting
// POST /v1/evaluate, a long-polling GET /v1/approvals/{id}, the MCP
// gateway. Whoever commits a change to an approval calls Wake with its id
// after the change is durable; waiters then read the approval from the
// store. On a backend shared by several servers, the store's
// ApprovalWatcher feeds Wake with the other servers' changes.
type Hub struct {
	mu      sync.Mutex
	waiting map[string]map[chan struct{}]struct{}
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{waiting: map[string]map[chan struct{}]struct{}{}} }

// Watch returns a channel that receives once when approval id changes, and
// a function that stops watching (call it whatever happened).
func (h *Hub) Watch(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	set := h.waiting[id]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		h.waiting[id] = set
	}
	set[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		if set := h.waiting[id]; set != nil {
			delete(set, ch)
			if len(set) == 0 {
				delete(h.waiting, id)
			}
		}
		h.mu.Unlock()
	}
}

// Wake tells everyone watching approval id that it changed.
func (h *Hub) Wake(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.waiting[id] {
		select {
		case ch <- struct{}{}:
		default: // already told
		}
	}
}

// WakeAll tells every watcher to read its approval again: the feed of
// other servers' changes was interrupted, and an answer may have been
// missed meanwhile.
func (h *Hub) WakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range h.waiting {
		for ch := range set {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// Waiting counts the watchers of approval id (for tests and metrics).
func (h *Hub) Waiting(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.waiting[id])
}

// Wait blocks until approval id changes or ctx ends; it reports whether it
// changed. Callers read the approval again either way.
func (h *Hub) Wait(ctx context.Context, id string) bool {
	ch, stop := h.Watch(id)
	defer stop()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}
