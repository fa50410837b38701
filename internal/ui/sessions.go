package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

// pageSize is how many calls a session page shows at once.
const pageSize = 100

type sessionNode struct {
	S        *store.Session
	Children []*sessionNode
}

type sessionsData struct {
	Agent, Status string
	Statuses      []string
	Roots         []*sessionNode
	Next          string
}

// sessionsPage lists sessions newest first as a tree: a child listed with
// its parent sits under it; one whose parent is on another page stands at
// the top level.
func (d *Dashboard) sessionsPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	data := sessionsData{Agent: q.Get("agent"), Status: q.Get("status"),
		Statuses: []string{store.StatusActive, store.StatusIdle, store.StatusCompleted, store.StatusSuspended, store.StatusTerminated}}
	if data.Status != "" && !store.ValidStatus(data.Status) {
		d.errorPage(w, r, v, http.StatusBadRequest, "status "+trunc(maxText, strconv.Quote(data.Status))+": want one of active, idle, completed, suspended, terminated")
		return
	}
	list, err := d.eng.ListSessions(r.Context(), v.P, store.SessionFilter{AgentID: data.Agent, Status: data.Status, Before: q.Get("before"), Limit: pageSize})
	if err != nil {
		d.fail(w, r, v, "session list", err)
		return
	}
	nodes := map[string]*sessionNode{}
	for _, s := range list {
		nodes[s.ID] = &sessionNode{S: s}
	}
	for _, s := range list {
		n := nodes[s.ID]
		if p, ok := nodes[s.ParentID]; ok && s.ParentID != "" {
			p.Children = append(p.Children, n)
		} else {
			data.Roots = append(data.Roots, n)
		}
	}
	if len(list) == pageSize {
		nq := url.Values{"before": {list[len(list)-1].ID}}
		if data.Agent != "" {
			nq.Set("agent", data.Agent)
		}
		if data.Status != "" {
			nq.Set("status", data.Status)
		}
		data.Next = "/ui/sessions?" + nq.Encode()
	}
	d.render(w, r, v, http.StatusOK, "sessions", data)
}

type versionView struct {
	V    *store.MandateVersion
	JSON string
	Diff []diffLine
	Last bool
}

type sessionData struct {
	S         *store.Session
	Children  []*store.Session
	Words     []mandate.Instruction
	Versions  []versionView
	Table     decisionTable
	Prev      string
	Next      string
	Gaps      []*store.Observation
	Approvals []*store.Approval
}

// decisionTable is the data of the shared decision table: rows, and for a
// live table the event stream and the row URL the script reads.
type decisionTable struct {
	Decisions []*store.Decision
	Live, Row string
}

// sessionPage shows one session: its facts, its mandate versions with what
// changed between them, its calls a page at a time (?after=SEQ), gaps and
// approvals.
func (d *Dashboard) sessionPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	ctx := r.Context()
	info, err := d.eng.GetSession(ctx, v.P, id)
	if err != nil {
		d.fail(w, r, v, "session "+trunc(80, strconv.Quote(id)), err)
		return
	}
	after := 0
	if a := r.URL.Query().Get("after"); a != "" {
		if after, err = strconv.Atoi(a); err != nil || after < 0 {
			d.errorPage(w, r, v, http.StatusBadRequest, "after "+trunc(80, strconv.Quote(a))+": want a call number (0 or more)")
			return
		}
		if after > info.Session.State.Calls {
			d.notFound(w, r, v, "This session has no calls past number "+strconv.Itoa(info.Session.State.Calls)+".")
			return
		}
	}
	data := sessionData{S: info.Session}
	versions, err := d.eng.Mandates(ctx, v.P, id)
	if err != nil {
		d.fail(w, r, v, "session", err)
		return
	}
	var prev string
	for i, mv := range versions {
		b, _ := json.MarshalIndent(mv.Mandate, "", "  ")
		cur := trunc(maxJSON, string(b))
		vv := versionView{V: mv, JSON: cur, Last: i == len(versions)-1}
		if i > 0 {
			vv.Diff = diffLines(prev, cur)
		}
		prev = cur
		data.Versions = append(data.Versions, vv)
	}
	if len(versions) > 0 && versions[len(versions)-1].Mandate != nil {
		data.Words = versions[len(versions)-1].Mandate.Instructions
	}
	if data.Table.Decisions, err = d.eng.Decisions(ctx, v.P, store.DecisionFilter{SessionID: id, AfterSeq: after, Limit: pageSize}); err != nil {
		d.fail(w, r, v, "session", err)
		return
	}
	base := "/ui/sessions/" + url.PathEscape(id)
	if after > 0 {
		data.Prev = base + "?after=" + strconv.Itoa(max(0, after-pageSize))
	}
	if n := len(data.Table.Decisions); n == pageSize {
		data.Next = base + "?after=" + strconv.Itoa(data.Table.Decisions[n-1].Seq)
	}
	if data.Children, err = d.eng.ListSessions(ctx, v.P, store.SessionFilter{ParentID: id, Limit: pageSize}); err != nil {
		d.fail(w, r, v, "session", err)
		return
	}
	if data.Gaps, err = d.eng.Gaps(ctx, v.P, store.GapFilter{SessionID: id, Limit: pageSize}); err != nil {
		d.fail(w, r, v, "session", err)
		return
	}
	if data.Approvals, err = d.eng.ListApprovals(ctx, v.P, store.ApprovalFilter{SessionID: id, Limit: pageSize}); err != nil {
		d.fail(w, r, v, "session", err)
		return
	}
	d.render(w, r, v, http.StatusOK, "session", data)
}

// sessionSummary is the session's summary (GET /v1/sessions/{id}/summary),
// on a page of its own or — for htmx — as the session page's section: it
// reads every decision of the session, so the session page loads it after
// itself instead of making a long session's page wait for it.
func (d *Dashboard) sessionSummary(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	sum, err := d.eng.SessionSummary(r.Context(), v.P, id)
	if err != nil {
		d.fail(w, r, v, "session "+trunc(80, strconv.Quote(id)), err)
		return
	}
	capFacts(&sum.Destinations)
	capFacts(&sum.Denied)
	capFacts(&sum.Signals)
	if r.Header.Get("HX-Request") == "true" {
		d.fragment(w, r, "summary", "summary", sum)
		return
	}
	d.render(w, r, v, http.StatusOK, "summary", sum)
}

// setStatus suspends or resumes a session from its page.
func (d *Dashboard) setStatus(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	status := r.PostFormValue("status")
	if status != store.StatusSuspended && status != store.StatusActive {
		d.errorPage(w, r, v, http.StatusBadRequest, "status "+trunc(80, strconv.Quote(status))+": the dashboard suspends (suspended) or resumes (active)")
		return
	}
	if _, err := d.eng.SetStatus(r.Context(), v.P, id, status); err != nil {
		d.fail(w, r, v, "session "+trunc(80, strconv.Quote(id)), err)
		return
	}
	http.Redirect(w, r, "/ui/sessions/"+url.PathEscape(id), http.StatusSeeOther)
}

type decisionData struct {
	D            *store.Decision
	ActionJSON   string
	Observations []*store.Observation
	Evidence     *decisionEvidence
}

// maxTraceSteps bounds the trace steps a decision page lists.
const maxTraceSteps = 200

func (d *Dashboard) decisionPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	dec, obs, err := d.eng.GetDecision(r.Context(), v.P, id)
	if err != nil {
		d.fail(w, r, v, "decision "+trunc(80, strconv.Quote(id)), err)
		return
	}
	b, _ := json.MarshalIndent(dec.Action, "", "  ")
	d.render(w, r, v, http.StatusOK, "decision", decisionData{D: dec, ActionJSON: trunc(maxJSON, string(b)), Observations: obs, Evidence: d.decisionEvidenceFor(r.Context(), dec)})
}

type traceData struct {
	ID    string
	Trace *api.Trace
	// Steps are the trace's last steps; Hidden counts the earlier ones
	// not shown.
	Steps  []api.TraceStep
	Hidden int
}

// decisionTrace is a decision's trace (GET /v1/decisions/{id}/trace) with
// its first departure highlighted: on a page of its own or, for htmx, the
// decision page's section, loaded after the page (it reads the session's
// decisions up to this one).
func (d *Dashboard) decisionTrace(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	tr, err := d.eng.Trace(r.Context(), v.P, id)
	if err != nil {
		d.fail(w, r, v, "decision "+trunc(80, strconv.Quote(id)), err)
		return
	}
	data := traceData{ID: id, Trace: tr, Steps: tr.Steps}
	if n := len(data.Steps); n > maxTraceSteps {
		data.Hidden, data.Steps = n-maxTraceSteps, data.Steps[n-maxTraceSteps:]
	}
	if r.Header.Get("HX-Request") == "true" {
		d.fragment(w, r, "trace", "trace", data)
		return
	}
	d.render(w, r, v, http.StatusOK, "trace", data)
}

// maxFacts bounds a summary's list shown on a page.
const maxFacts = 50

func capFacts(l *[]api.Fact) {
	if len(*l) > maxFacts {
		*l = append((*l)[:maxFacts], api.Fact{What: fmt.Sprintf("… and %d more (GET /v1/sessions/{id}/summary has them all)", len(*l)-maxFacts)})
	}
}
