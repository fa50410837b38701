package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Event is one server-sent event from GET /v1/events.
type Event struct {
	// ID is what to reconnect with (EventsRequest.LastEventID).
	ID string
	// Type is decision, approval, approval.answered, gap — or reset, sent
	// when events were missed and what is shown should be read again.
	Type string
	Data json.RawMessage
}

// EventsRequest selects events.
type EventsRequest struct {
	// Types, if set, lists the event types wanted.
	Types []string
	// SessionID, if set, keeps one session's events.
	SessionID string
	// LastEventID replays what came after that event, while the server
	// still has it.
	LastEventID string
}

// EventStream reads an open event stream.
type EventStream struct {
	body io.ReadCloser
	sc   *bufio.Scanner
	// LastID is the id of the last event read.
	LastID string
}

// maxEventLine bounds one line of the stream (an event's data).
const maxEventLine = 4 << 20

// Events opens the server-sent event stream (a user or admin token sees
// every event, an approver token the approval events). The stream has no
// timeout of its own: it ends with ctx, or when the server closes it —
// reconnect with LastID then.
func (c *Client) Events(ctx context.Context, r EventsRequest) (*EventStream, error) {
	q := url.Values{}
	if len(r.Types) > 0 {
		q.Set("types", strings.Join(r.Types, ","))
	}
	if r.SessionID != "" {
		q.Set("session_id", r.SessionID)
	}
	u := c.base + "/v1/events"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("mandate: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "text/event-stream")
	if r.LastEventID != "" {
		req.Header.Set("Last-Event-ID", r.LastEventID)
	}
	hc := *c.http
	hc.Timeout = 0 // a stream lasts as long as ctx
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mandate: GET /v1/events: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, apiError(resp.StatusCode, data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	return &EventStream{body: resp.Body, sc: sc, LastID: r.LastEventID}, nil
}

// Next returns the next event; io.EOF when the server ended the stream.
func (s *EventStream) Next() (*Event, error) {
	var ev Event
	var data strings.Builder
	for s.sc.Scan() {
		line := s.sc.Text()
		if line == "" {
			if ev.Type == "" {
				continue // a comment block or a retry line
			}
			ev.Data = json.RawMessage(data.String())
			if ev.ID != "" {
				s.LastID = ev.ID
			}
			return &ev, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Type = value
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		}
	}
	if err := s.sc.Err(); err != nil {
		return nil, fmt.Errorf("mandate: event stream: %w", err)
	}
	return nil, io.EOF
}

// Close ends the stream.
func (s *EventStream) Close() error { return s.body.Close() }
