package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/openapi"
	"github.com/mandate-dev/mandate/internal/store"
)

// MaxWait bounds how long one request may wait for an approval (POST
// /v1/evaluate "wait", GET /v1/approvals/{id}?wait=): a client that wants
// longer asks again.
const MaxWait = 15 * time.Minute

// Webhooks is the notifier, as the server reports on it.
type Webhooks interface {
	Status() []api.WebhookStatus
}

// approvers may read and answer approvals.
var approvers = []string{"user", "approver", "admin"}

var approvalStates = []string{api.ApprovalPending, api.ApprovalApproved, api.ApprovalDenied, api.ApprovalExpired, api.ApprovalWithdrawn}

// approvalRoutes mounts the approval queue — list, get (long-polling with
// ?wait=), answer — the event stream, and the webhooks' delivery status.
func (s *Server) approvalRoutes() {
	s.handle(withRoles(readList("/v1/approvals", "List approvals, newest first", api.ApprovalList{},
		openapi.Param{Name: "session_id", Description: "only this session's approvals"},
		openapi.Param{Name: "state", Description: "only approvals in this state", Enum: approvalStates},
		openapi.Param{Name: "before", Description: "cursor: approvals created before this approval id"},
		limitParam), approvers), s.listApprovals)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/approvals/{id}", Roles: approvers, Summary: "One approval; with ?wait= it long-polls until the approval leaves pending or the wait ends",
		Params:    []openapi.Param{{Name: "wait", Description: `e.g. "30s", at most 15m`}},
		Responses: []openapi.Response{{Status: 200, Body: api.Approval{}}},
		Errors:    with(commonErrors, 400, 404),
	}, s.getApproval)
	answered := send("POST", "/v1/approvals/{id}", approvers, "Answer a pending approval: approve or deny, once or for the session",
		api.AnswerRequest{}, 200, api.Approval{}, 404, 409)
	answered.Responses[0].Description = "The approval as answered"
	s.handle(described(answered, "Only user, approver and admin tokens may answer; an agent's or hook's never can, not even in its own session. The first answer wins: a later one — or one for an approval that expired or was withdrawn — is 409 naming what happened. scope session (approve) amends the session's mandate: a new version whose source is the approver, with the note verbatim."), s.answerApproval)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/events", Roles: approvers,
		Summary: "Server-sent events: decision, approval, approval.answered, gap",
		Description: "text/event-stream of id/event/data blocks; the data is JSON: a DecisionEvent, an Approval or an Observation. " +
			"Filter with ?types=a,b and ?session_id=. Reconnect with Last-Event-ID (or ?last_event_id=) to get what was missed while it is still kept; " +
			"an event named reset says it was not, so re-read what you show. User and admin tokens see every event, an approver token only approval and approval.answered.",
		Params: []openapi.Param{
			{Name: "types", Description: "comma-separated event types"},
			{Name: "session_id", Description: "only this session's events"},
			{Name: "last_event_id", Description: "as the Last-Event-ID header"},
		},
		Responses: []openapi.Response{{Status: 200, ContentType: "text/event-stream", Description: "An event stream"}},
		Errors:    with(commonErrors, 400),
	}, s.streamEvents)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/webhooks", Roles: admins, Summary: "The webhooks configured under notify: and their recent deliveries",
		Responses: []openapi.Response{{Status: 200, Body: api.WebhookList{}}},
		Errors:    commonErrors,
	}, s.listWebhooks)
}

// parseWait reads a wait duration ("30s"); empty is 0.
func parseWait(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > MaxWait {
		return 0, fmt.Errorf("%w: wait %q: want a duration from 0 to %s, e.g. \"30s\"", engine.ErrInvalid, v, MaxWait)
	}
	return d, nil
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	q := r.URL.Query()
	lim, err := queryInt(r, "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := s.eng.ListApprovals(r.Context(), p, store.ApprovalFilter{SessionID: q.Get("session_id"), State: q.Get("state"), Limit: lim, Before: q.Get("before")})
	s.reply(w, r, http.StatusOK, api.ApprovalList{Approvals: orEmpty(list)}, err)
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	wait, err := parseWait(r.URL.Query().Get("wait"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.eng.GetApproval(r.Context(), p, r.PathValue("id"), wait)
	if err != nil {
		s.failApproval(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req api.AnswerRequest
	if !s.decode(w, r, &req) {
		return
	}
	switch req.Via {
	case "", approval.ViaAPI, approval.ViaCLI, "dashboard":
	default:
		s.fail(w, r, fmt.Errorf("%w: via %q: want api, cli or dashboard", engine.ErrInvalid, req.Via))
		return
	}
	a, err := s.eng.Answer(r.Context(), p, r.PathValue("id"), engine.AnswerRequest{
		Answer: approval.Answer{Decision: req.Decision, Note: req.Note, Scope: req.Scope}, Via: req.Via,
	})
	if err != nil {
		s.failApproval(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if !p.Can(auth.ManageTokens) {
		s.fail(w, r, fmt.Errorf("%w: only an admin may see the webhooks' configuration and deliveries", engine.ErrForbidden))
		return
	}
	list := []api.WebhookStatus{}
	if s.webhooks != nil {
		list = s.webhooks.Status()
	}
	writeJSON(w, http.StatusOK, api.WebhookList{Webhooks: list})
}

// failApproval names an unknown approval plainly (404); one that can no
// longer be answered is a conflict (409) saying why.
func (s *Server) failApproval(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no approval %q: %v", r.PathValue("id"), err))
		return
	}
	s.fail(w, r, err)
}
