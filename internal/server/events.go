package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/events"
)

// heartbeat is how often an idle event stream sends a comment, so proxies
// and clients can tell a quiet stream from a dead one.
const heartbeat = 15 * time.Second

// streamEvents serves text/event-stream: one "event: TYPE", "id: ID",
// "data: JSON" block per event, filtered by ?types=a,b and ?session_id=.
// A client that reconnects with Last-Event-ID (header, or ?last_event_id=)
// gets the events it missed while they are still kept; when they are not,
// the stream starts with an event "reset" so it knows to re-read what it
// shows. A reader token sees every event, an approver token only the
// approval queue's.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	bus := s.bus
	if bus == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "this server has no event stream")
		return
	}
	var f events.Filter
	switch {
	case p.Can(auth.Read):
		f.Audience = events.Readers
	case p.Can(auth.ReadApprovals):
		f.Audience = events.Approvers
	default:
		s.fail(w, r, fmt.Errorf("%w: role %s may not read events", engine.ErrForbidden, p.Role))
		return
	}
	q := r.URL.Query()
	if t := q.Get("types"); t != "" {
		for _, name := range strings.Split(t, ",") {
			if name = strings.TrimSpace(name); name != "" {
				f.Types = append(f.Types, name)
			}
		}
	}
	if err := bus.Check(f); err != nil {
		s.fail(w, r, fmt.Errorf("%w: types: %v", engine.ErrInvalid, err))
		return
	}
	for _, name := range f.Types {
		if t, _ := bus.Type(name); f.Audience == events.Approvers && t.Audience != events.Approvers {
			s.fail(w, r, fmt.Errorf("%w: an approver token sees only the approval events, not %q", engine.ErrForbidden, name))
			return
		}
	}
	f.SessionID = q.Get("session_id")
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = q.Get("last_event_id")
	}
	sub, replayed := bus.Subscribe(f, last)
	defer sub.Close()

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	fmt.Fprint(bw, "retry: 3000\n: mandate event stream\n\n")
	if !replayed {
		writeReset(bw, fmt.Sprintf("the events after %s are no longer kept (or come from an earlier run of the server): re-read what you show", last))
	}
	if bw.Flush() != nil || rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			fmt.Fprint(bw, ": ping\n\n")
		case ev, ok := <-sub.Events():
			if !ok {
				if sub.Lagged() {
					writeReset(bw, "this client fell too far behind and was cut off: reconnect with Last-Event-ID")
					bw.Flush()
					rc.Flush()
				}
				return
			}
			data, err := ev.Data()
			if err != nil {
				s.log.Error("encoding an event failed", "type", ev.Type, "id", ev.ID, "err", err)
				continue
			}
			fmt.Fprintf(bw, "id: %s\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, data)
			// Send what is queued together, then flush.
			for len(sub.Events()) > 0 && bw.Buffered() < 32<<10 {
				ev, ok = <-sub.Events()
				if !ok {
					break
				}
				if data, err := ev.Data(); err == nil {
					fmt.Fprintf(bw, "id: %s\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, data)
				}
			}
		}
		if bw.Flush() != nil || rc.Flush() != nil {
			return
		}
	}
}

// StreamEvents serves the event stream to a principal the caller
// authenticated itself: the dashboard's /ui/events, signed in by cookie.
// The same audiences and filters apply as on /v1/events.
func (s *Server) StreamEvents(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	s.streamEvents(w, r, p)
}

func writeReset(bw *bufio.Writer, reason string) {
	b, _ := json.Marshal(map[string]string{"reason": reason})
	fmt.Fprintf(bw, "event: reset\ndata: %s\n\n", b)
}
