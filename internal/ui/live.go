package ui

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/store"
)

// liveFilter selects the decisions the live page shows.
type liveFilter struct {
	Agent, Session, Effect string
}

func readLiveFilter(q url.Values) (liveFilter, bool) {
	f := liveFilter{Agent: q.Get("agent"), Session: q.Get("session"), Effect: q.Get("effect")}
	switch f.Effect {
	case "", "allow", "deny", "ask":
		return f, true
	}
	return f, false
}

func (f liveFilter) query() string {
	q := url.Values{}
	for k, v := range map[string]string{"agent": f.Agent, "session": f.Session, "effect": f.Effect} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q.Encode()
}

// agentOf caches a session's agent for one request.
type agentOf struct {
	d  *Dashboard
	p  auth.Principal
	by map[string]string
}

func (a *agentOf) get(ctx context.Context, sessionID string) string {
	if id, ok := a.by[sessionID]; ok {
		return id
	}
	id := ""
	if info, err := a.d.eng.GetSession(ctx, a.p, sessionID); err == nil {
		id = info.Session.Agent.ID
	}
	a.by[sessionID] = id
	return id
}

func (f liveFilter) match(ctx context.Context, dec *store.Decision, agents *agentOf) bool {
	return (f.Session == "" || dec.SessionID == f.Session) &&
		(f.Effect == "" || dec.Effect == f.Effect) &&
		(f.Agent == "" || agents.get(ctx, dec.SessionID) == f.Agent)
}

type liveData struct {
	Agent, Session, Effect string
	Effects                []string
	// Stream is set when the page gets new decisions live.
	Stream bool
	Table  decisionTable
}

// liveScan bounds how many recent decisions the live page reads to fill a
// filtered first view.
const liveScan = 1000

// scan is how many decisions fill the first view: a page's worth, unless
// the agent filter (applied here, not by the store) needs more to choose
// from.
func (d *Dashboard) scan(f liveFilter) int {
	if f.Agent != "" {
		return liveScan
	}
	return pageSize
}

// livePage shows the latest decisions, newest first, and — with
// JavaScript — each new one as the event stream announces it.
func (d *Dashboard) livePage(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !v.CanRead() {
		http.Redirect(w, r, "/ui/approvals", http.StatusSeeOther)
		return
	}
	f, ok := readLiveFilter(r.URL.Query())
	if !ok {
		d.errorPage(w, r, v, http.StatusBadRequest, "effect "+trunc(80, strconv.Quote(f.Effect))+": want allow, deny or ask")
		return
	}
	ctx := r.Context()
	var list []*store.Decision
	var err error
	if f.Session != "" {
		// A session's decisions come oldest first: read its last page.
		info, gerr := d.eng.GetSession(ctx, v.P, f.Session)
		if gerr != nil {
			d.fail(w, r, v, "session "+trunc(80, strconv.Quote(f.Session)), gerr)
			return
		}
		list, err = d.eng.Decisions(ctx, v.P, store.DecisionFilter{SessionID: f.Session, Effect: f.Effect, AfterSeq: max(0, info.Session.State.Calls-d.scan(f)), Limit: d.scan(f)})
		for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
			list[i], list[j] = list[j], list[i]
		}
	} else {
		list, err = d.eng.Decisions(ctx, v.P, store.DecisionFilter{Effect: f.Effect, Limit: d.scan(f)})
	}
	if err != nil {
		d.fail(w, r, v, "decision list", err)
		return
	}
	agents := &agentOf{d: d, p: v.P, by: map[string]string{}}
	data := liveData{Agent: f.Agent, Session: f.Session, Effect: f.Effect, Effects: []string{"allow", "deny", "ask"}, Stream: d.events != nil}
	for _, dec := range list {
		if len(data.Table.Decisions) == pageSize {
			break
		}
		if f.match(ctx, dec, agents) {
			data.Table.Decisions = append(data.Table.Decisions, dec)
		}
	}
	if data.Stream {
		ev := url.Values{"types": {"decision"}}
		if f.Session != "" {
			ev.Set("session_id", f.Session)
		}
		data.Table.Live = "/ui/events?" + ev.Encode()
		data.Table.Row = "/ui/live/rows/{id}?" + f.query()
	}
	d.render(w, r, v, http.StatusOK, "live", data)
}

// liveRow renders one decision's row for the live page, or nothing (204)
// when the page's filter leaves it out.
func (d *Dashboard) liveRow(w http.ResponseWriter, r *http.Request, v *viewer) {
	f, ok := readLiveFilter(r.URL.Query())
	if !ok {
		d.errorPage(w, r, v, http.StatusBadRequest, "effect: want allow, deny or ask")
		return
	}
	dec, _, err := d.eng.GetDecision(r.Context(), v.P, r.PathValue("id"))
	if err != nil {
		d.fail(w, r, v, "decision", err)
		return
	}
	if !f.match(r.Context(), dec, &agentOf{d: d, p: v.P, by: map[string]string{}}) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	d.fragment(w, r, "live", "decisionRow", dec)
}

// streamEvents is /v1/events for a signed-in browser: the same stream,
// filters and audiences, authenticated by the sign-in cookie (an
// EventSource cannot send a bearer token).
func (d *Dashboard) streamEvents(w http.ResponseWriter, r *http.Request, v *viewer) {
	if d.events == nil {
		d.errorPage(w, r, v, http.StatusServiceUnavailable, "This server has no event stream.")
		return
	}
	d.events.StreamEvents(w, r, v.P)
}
