// Package events is Mandate's event bus: what the engine (and later the
// baseline and dashboard work) has durably done — decisions, new and
// answered approvals, gaps — published once, and read by the server-sent
// event stream at GET /v1/events, by the webhooks, and by tests.
//
// The bus keeps the last events in a ring so that a client that reconnects
// with Last-Event-ID misses nothing that is still in it; a subscriber that
// cannot keep up is cut off (and may reconnect and replay) rather than
// slowing the publisher down. Publish never blocks.
//
// # Adding an event type
//
// Add one line to the table in Types (name, who may see it, what it is),
// and publish it with Bus.Publish(name, sessionID, data). data is encoded
// as JSON when a subscriber first reads it; the publisher must not modify
// it afterwards. docs/approvals.md lists the types for users: add it there
// too.
package events

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Audience says who may receive a type of event.
type Audience int

// The audiences.
const (
	// Readers are principals that may read sessions and decisions (user,
	// admin).
	Readers Audience = iota
	// Approvers are readers and approver tokens: the approval queue's
	// events.
	Approvers
)

// Type is one kind of event.
type Type struct {
	Name     string
	Audience Audience
	Doc      string
}

// Types is the table of event types.
func Types() []Type {
	return []Type{
		{"decision", Readers, "a call was decided (any effect); data: decision id, session, tool, kind, effect, rules, reasons, approval id"},
		{"approval", Approvers, "an ask became a pending approval; data: the approval"},
		{"approval.answered", Approvers, "an approval left pending: approved, denied (by a person or the judge), expired or withdrawn; data: the approval"},
		{"drift", Readers, "a new version of an agent behaves unlike the version before it; data: the drift (from, to, divergence, new destinations and transitions, rates, verdict)"},
		{"gap", Readers, "a tool's result arrived for a call that ran without Mandate's allow; data: the observation"},
	}
}

// Event is one published event.
type Event struct {
	// ID orders events within one run of the server: "EPOCH-SEQ".
	ID        string
	Seq       uint64
	Type      string
	SessionID string
	Time      time.Time
	// Remote marks an event another server (a replica on the same shared
	// store) committed and already delivered to its webhooks; it is
	// published here for this server's streams only.
	Remote bool

	data    any
	once    sync.Once
	encoded json.RawMessage
	err     error
}

// Data is the event's data as JSON.
func (e *Event) Data() (json.RawMessage, error) {
	e.once.Do(func() {
		e.encoded, e.err = json.Marshal(e.data)
		e.data = nil
	})
	return e.encoded, e.err
}

// Options size a bus.
type Options struct {
	// Ring is how many recent events are kept for replay (default 4096).
	Ring int
	// Buffer is how many events a subscriber may fall behind before it is
	// cut off (default 1024).
	Buffer int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Bus fans events out to subscribers. It is safe for concurrent use.
type Bus struct {
	opts  Options
	types map[string]Type
	epoch string

	mu   sync.Mutex
	seq  uint64
	ring []*Event // ring[seq % len] holds event seq
	subs map[*Subscription]struct{}
}

// New returns a bus.
func New(opts Options) *Bus {
	if opts.Ring <= 0 {
		opts.Ring = 4096
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 1024
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	b := &Bus{opts: opts, types: map[string]Type{}, ring: make([]*Event, opts.Ring), subs: map[*Subscription]struct{}{}}
	for _, t := range Types() {
		b.types[t.Name] = t
	}
	b.epoch = strconv.FormatInt(opts.Now().UnixNano(), 36)
	return b
}

// Type returns the named event type.
func (b *Bus) Type(name string) (Type, bool) {
	t, ok := b.types[name]
	return t, ok
}

// Publish adds an event. An unknown type is a programming error: it is
// published anyway, as "unknown" would hide it, but only to readers.
func (b *Bus) Publish(typ, sessionID string, data any) { b.publish(typ, sessionID, data, false) }

// PublishRemote adds an event another server committed (Event.Remote):
// subscribers with Filter.LocalOnly (webhooks, which that server delivers)
// do not receive it.
func (b *Bus) PublishRemote(typ, sessionID string, data any) { b.publish(typ, sessionID, data, true) }

func (b *Bus) publish(typ, sessionID string, data any, remote bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	ev := &Event{ID: b.epoch + "-" + strconv.FormatUint(b.seq, 10), Seq: b.seq, Type: typ, SessionID: sessionID, Time: b.opts.Now().UTC(), Remote: remote, data: data}
	b.ring[b.seq%uint64(len(b.ring))] = ev
	for s := range b.subs {
		if !s.wants(ev) {
			continue
		}
		select {
		case s.ch <- ev:
		default:
			// Too slow: cut it off; it may reconnect and replay.
			s.lagged = true
			delete(b.subs, s)
			close(s.ch)
		}
	}
}

// Filter selects the events a subscriber receives.
type Filter struct {
	// Types, if not empty, lists the types wanted.
	Types []string
	// SessionID, if set, keeps only that session's events.
	SessionID string
	// LocalOnly leaves out events other servers committed (Remote).
	LocalOnly bool
	// Audience is the highest audience the subscriber belongs to: an
	// approver token sees only Approvers events.
	Audience Audience
}

// Check reports a type name the bus does not know.
func (b *Bus) Check(f Filter) error {
	for _, t := range f.Types {
		if _, ok := b.types[t]; !ok {
			var names []string
			for _, k := range Types() {
				names = append(names, k.Name)
			}
			return fmt.Errorf("unknown event type %q (known: %s)", t, strings.Join(names, ", "))
		}
	}
	return nil
}

// Subscription receives events until it is closed or cut off.
type Subscription struct {
	b      *Bus
	f      Filter
	types  map[string]bool
	ch     chan *Event
	lagged bool
}

func (s *Subscription) wants(ev *Event) bool {
	if s.f.LocalOnly && ev.Remote {
		return false
	}
	if s.f.SessionID != "" && ev.SessionID != s.f.SessionID {
		return false
	}
	if len(s.types) > 0 && !s.types[ev.Type] {
		return false
	}
	t, ok := s.b.types[ev.Type]
	if !ok {
		return s.f.Audience == Readers
	}
	return s.f.Audience == Readers || t.Audience == Approvers
}

// Events is the subscription's channel. It is closed when the subscription
// is closed or cut off for falling behind (Lagged then reports true).
func (s *Subscription) Events() <-chan *Event { return s.ch }

// Lagged reports whether the bus cut the subscriber off for falling behind.
func (s *Subscription) Lagged() bool {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.lagged
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if _, ok := s.b.subs[s]; ok {
		delete(s.b.subs, s)
		close(s.ch)
	}
}

// Subscribe starts a subscription. With lastID (an Event.ID this bus
// published) the events after it that are still in the ring are delivered
// first; replayed reports whether that was possible (false when lastID is
// from another run of the server or has left the ring).
func (b *Bus) Subscribe(f Filter, lastID string) (s *Subscription, replayed bool) {
	s = &Subscription{b: b, f: f, ch: make(chan *Event, b.opts.Buffer)}
	if len(f.Types) > 0 {
		s.types = map[string]bool{}
		for _, t := range f.Types {
			s.types[t] = true
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	replayed = lastID == ""
	if after, ok := b.parseID(lastID); ok {
		oldest := uint64(1)
		if b.seq > uint64(len(b.ring)) {
			oldest = b.seq - uint64(len(b.ring)) + 1
		}
		if after+1 >= oldest {
			replayed = true
			for seq := after + 1; seq <= b.seq; seq++ {
				ev := b.ring[seq%uint64(len(b.ring))]
				if !s.wants(ev) {
					continue
				}
				select {
				case s.ch <- ev:
				default:
					// More to replay than the buffer holds: the
					// subscriber cannot catch up from here.
					replayed = false
				}
			}
		}
	}
	b.subs[s] = struct{}{}
	return s, replayed
}

func (b *Bus) parseID(id string) (uint64, bool) {
	epoch, seq, ok := strings.Cut(id, "-")
	if !ok || epoch != b.epoch {
		return 0, false
	}
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil || n > b.seq {
		return 0, false
	}
	return n, true
}

// Subscribers counts the current subscriptions (for metrics and tests).
func (b *Bus) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}
