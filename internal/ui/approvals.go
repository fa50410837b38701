package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/store"
)

// ViaDashboard is how the approval records say an answer came.
const ViaDashboard = "dashboard"

// recentCalls is how many of the agent's latest calls an approval shows.
const recentCalls = 10

// approvalView is one approval card: the approval, and for a viewer who
// may read sessions the decision that asked and the agent's recent calls.
type approvalView struct {
	A        *store.Approval
	V        *viewer
	Decision *store.Decision
	Recent   []*store.Decision
	Open     bool
	Error    string
}

type approvalsData struct {
	Pending  []approvalView
	Answered []approvalView
	Stream   string
}

// answeredShown is how many answered approvals the queue page lists.
const answeredShown = 20

// approvalsPage is the queue: pending approvals oldest deadline first, then
// the latest answered ones. ?part=queue renders the queue alone (the
// script refreshes it when the event stream says it changed).
func (d *Dashboard) approvalsPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	pending, err := d.eng.ListApprovals(ctx, v.P, store.ApprovalFilter{State: store.ApprovalPending, Limit: 200})
	if err != nil {
		d.fail(w, r, v, "approval list", err)
		return
	}
	recent, err := d.eng.ListApprovals(ctx, v.P, store.ApprovalFilter{Limit: 200})
	if err != nil {
		d.fail(w, r, v, "approval list", err)
		return
	}
	var data approvalsData
	for i := len(pending) - 1; i >= 0; i-- { // oldest first: the next to expire on top
		data.Pending = append(data.Pending, d.approvalView(r, v, pending[i]))
	}
	for _, a := range recent {
		if a.Final() && len(data.Answered) < answeredShown {
			data.Answered = append(data.Answered, approvalView{A: a, V: v})
		}
	}
	if d.events != nil {
		data.Stream = "/ui/events?" + url.Values{"types": {engineEvents}}.Encode()
	}
	if r.URL.Query().Get("part") == "queue" {
		d.fragment(w, r, "approvals", "queue", pageData{V: v, Data: data})
		return
	}
	d.render(w, r, v, http.StatusOK, "approvals", data)
}

// engineEvents are the event types the approvals page follows.
const engineEvents = engine.EventApproval + "," + engine.EventApprovalAnswered

// approvalView fills a card: the asking decision and the agent's recent
// calls, when the viewer may read them (an approver token sees the
// approval alone).
func (d *Dashboard) approvalView(r *http.Request, v *viewer, a *store.Approval) approvalView {
	av := approvalView{A: a, V: v}
	if !v.CanRead() {
		return av
	}
	ctx := r.Context()
	if dec, _, err := d.eng.GetDecision(ctx, v.P, a.DecisionID); err == nil {
		av.Decision = dec
		from := max(0, dec.Seq-recentCalls-1)
		if list, err := d.eng.Decisions(ctx, v.P, store.DecisionFilter{SessionID: a.SessionID, AfterSeq: from, Limit: recentCalls}); err == nil {
			for _, x := range list {
				if x.Seq < dec.Seq {
					av.Recent = append(av.Recent, x)
				}
			}
		}
	}
	return av
}

// approvalPage is one approval, answerable when pending: the page an
// approval's notification links to.
func (d *Dashboard) approvalPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	a, err := d.eng.GetApproval(r.Context(), v.P, id, 0)
	if err != nil {
		d.fail(w, r, v, "approval "+trunc(80, strconv.Quote(id)), err)
		return
	}
	av := d.approvalView(r, v, a)
	av.Open = true
	d.render(w, r, v, http.StatusOK, "approval", av)
}

// answer approves or denies from the page, through the engine's own
// checks: only a person's role may answer, the first answer wins. The
// buttons: approve (this call, once), approve-session (calls like it for
// the rest of the session, which amends the mandate), deny.
func (d *Dashboard) answer(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	ans := approval.Answer{Note: r.PostFormValue("note")}
	switch r.PostFormValue("answer") {
	case "approve":
		ans.Decision, ans.Scope = approval.Approve, store.ScopeOnce
	case "approve-session":
		ans.Decision, ans.Scope = approval.Approve, store.ScopeSession
	case "deny":
		ans.Decision, ans.Scope = approval.Deny, store.ScopeOnce
	default:
		d.errorPage(w, r, v, http.StatusBadRequest, "answer "+trunc(80, strconv.Quote(r.PostFormValue("answer")))+": want approve, approve-session or deny")
		return
	}
	if len(ans.Note) > 2000 {
		d.errorPage(w, r, v, http.StatusBadRequest, "The note is over 2,000 bytes.")
		return
	}
	a, err := d.eng.Answer(r.Context(), v.P, id, engine.AnswerRequest{Answer: ans, Via: ViaDashboard})
	htmx := r.Header.Get("HX-Request") == "true"
	if err != nil {
		if htmx && errors.Is(err, store.ErrConflict) {
			// Someone answered first (or it expired): show the card as it
			// now is, saying so.
			if cur, gerr := d.eng.GetApproval(r.Context(), v.P, id, 0); gerr == nil {
				av := d.approvalView(r, v, cur)
				av.Error = err.Error()
				d.fragment(w, r, "approvals", "approvalCard", av)
				return
			}
		}
		d.fail(w, r, v, "approval "+trunc(80, strconv.Quote(id)), err)
		return
	}
	if htmx {
		d.fragment(w, r, "approvals", "approvalCard", d.approvalView(r, v, a))
		return
	}
	http.Redirect(w, r, "/ui/approvals/"+url.PathEscape(id), http.StatusSeeOther)
}
