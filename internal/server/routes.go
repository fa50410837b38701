package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/openapi"
)

// Roles, as the document lists them per route.
var (
	readers      = []string{"user", "admin"}
	writers      = []string{"user", "hook", "admin"}
	callers      = []string{"agent", "hook", "user", "admin"}
	admins       = []string{"admin"}
	noToken      []string
	commonErrors = []int{http.StatusUnauthorized, http.StatusForbidden}
	bodyErrors   = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestEntityTooLarge}
)

func with(base []int, more ...int) []int { return append(append([]int(nil), base...), more...) }

// routes registers every route with its operation: what it takes and
// answers is what the OpenAPI document says (see package api for how to add
// one).
func (s *Server) routes(gatherer prometheus.Gatherer, lg *evidence.Log) {
	s.public(openapi.Operation{
		Method: "GET", Path: "/healthz", Summary: "Health: the store answers", Roles: noToken,
		Responses: []openapi.Response{{Status: 200, Body: api.Health{}}, {Status: 503, Body: api.Health{}, Description: "The store does not answer"}},
	}, http.HandlerFunc(s.health))
	s.public(openapi.Operation{
		Method: "GET", Path: "/metrics", Summary: "Prometheus metrics", Roles: noToken,
		Responses: []openapi.Response{{Status: 200, ContentType: "text/plain", Description: "Prometheus text format"}},
	}, promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	s.public(openapi.Operation{
		Method: "GET", Path: "/v1/openapi.json", Summary: "This document", Roles: noToken,
		Responses: []openapi.Response{{Status: 200, ContentType: "application/json", Description: "OpenAPI 3.1"}},
	}, http.HandlerFunc(s.openAPI))

	s.handle(openapi.Operation{
		Method: "POST", Path: "/v1/sessions", Roles: writers,
		Summary:   "Create a session with the user's words (intent) and/or a structured mandate",
		Request:   api.CreateSessionRequest{},
		Responses: []openapi.Response{{Status: 201, Body: api.SessionResponse{}}},
		Errors:    with(bodyErrors, 404, 409),
	}, s.createSession)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/sessions", Roles: readers, Summary: "List sessions, newest first",
		Params: []openapi.Param{
			{Name: "agent_id", Description: "only this agent's sessions"},
			{Name: "status", Description: "only sessions in this status", Enum: []string{api.StatusActive, api.StatusIdle, api.StatusCompleted, api.StatusSuspended, api.StatusTerminated}},
			{Name: "parent_session_id", Description: "only children of this session"},
			{Name: "before", Description: "cursor: sessions created before this session id"},
			{Name: "limit", Type: "integer", Description: "at most this many (default 100, at most 1000)"},
		},
		Responses: []openapi.Response{{Status: 200, Body: api.SessionList{}}},
		Errors:    with(commonErrors, 400),
	}, s.listSessions)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/sessions/{id}", Roles: readers, Summary: "Get a session and its effective mandate",
		Responses: []openapi.Response{{Status: 200, Body: api.SessionResponse{}}},
		Errors:    with(commonErrors, 404),
	}, s.getSession)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/sessions/{id}/mandate", Roles: readers, Summary: "The session's effective mandate (narrowed by its parents)",
		Responses: []openapi.Response{{Status: 200, Body: api.Mandate{}}},
		Errors:    with(commonErrors, 404),
	}, s.getMandate)
	s.handle(openapi.Operation{
		Method: "POST", Path: "/v1/sessions/{id}/mandate", Roles: writers,
		Summary:   "Amend the mandate: the user's further words (merged) or a whole mandate (replacing). Agents cannot.",
		Request:   api.AmendMandateRequest{},
		Responses: []openapi.Response{{Status: 200, Body: api.SessionResponse{}}},
		Errors:    with(bodyErrors, 404, 409),
	}, s.amendMandate)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/sessions/{id}/mandates", Roles: readers, Summary: "Every mandate version, oldest first",
		Responses: []openapi.Response{{Status: 200, Body: api.MandateVersionList{}}},
		Errors:    with(commonErrors, 404),
	}, s.listMandates)
	s.handle(openapi.Operation{
		Method: "POST", Path: "/v1/sessions/{id}/status", Roles: writers,
		Summary:   "Change the lifecycle status. Terminated is final; a hook can stop a session, never lift a suspension.",
		Request:   api.SetStatusRequest{},
		Responses: []openapi.Response{{Status: 200, Body: api.Session{}}},
		Errors:    with(bodyErrors, 404, 409),
	}, s.setStatus)
	s.handle(openapi.Operation{
		Method: "POST", Path: "/v1/evaluate", Roles: callers,
		Summary:     "Decide one tool call. Returns after the decision is durable.",
		Description: "Any error means the call must not run; error bodies also say effect deny. An agent token may evaluate only in its own agent's sessions.",
		Request:     api.EvaluateRequest{},
		Responses:   []openapi.Response{{Status: 200, Body: api.Decision{}}},
		Errors:      with(bodyErrors, 404, 409),
	}, s.evaluate)
	s.handle(openapi.Operation{
		Method: "POST", Path: "/v1/observe", Roles: callers,
		Summary:   "Record a tool's result: for a decision (decision_id), or by the call id it was evaluated with (session_id, call_id, tool and args). A result that matches no allow is recorded as a gap.",
		Request:   api.ObserveRequest{},
		Responses: []openapi.Response{{Status: 200, Body: api.ObserveResponse{}}},
		Errors:    with(bodyErrors, 404, 409),
	}, s.observe)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/decisions", Roles: readers, Summary: "List decisions: a session's in order, else newest first",
		Params: []openapi.Param{
			{Name: "session_id", Description: "only this session's decisions, in order"},
			{Name: "effect", Enum: []string{"allow", "deny", "ask"}},
			{Name: "after_seq", Type: "integer", Description: "with session_id: decisions after this sequence number"},
			{Name: "limit", Type: "integer", Description: "at most this many (default 100, at most 1000)"},
		},
		Responses: []openapi.Response{{Status: 200, Body: api.DecisionList{}}},
		Errors:    with(commonErrors, 400),
	}, s.listDecisions)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/decisions/{id}", Roles: readers, Summary: "One decision with its observations",
		Responses: []openapi.Response{{Status: 200, Body: api.DecisionDetail{}}},
		Errors:    with(commonErrors, 404),
	}, s.getDecision)
	s.handle(openapi.Operation{
		Method: "POST", Path: "/v1/intent/compile", Roles: writers, Summary: "Draft a mandate from plain words (nothing is stored)",
		Request:   api.CompileRequest{},
		Responses: []openapi.Response{{Status: 200, Body: api.CompileResponse{}}},
		Errors:    bodyErrors,
	}, s.compileIntent)
	s.handle(openapi.Operation{
		Method: "POST", Path: "/v1/tokens", Roles: admins, Summary: "Create a token; its secret is shown only in this answer",
		Request:   api.CreateTokenRequest{},
		Responses: []openapi.Response{{Status: 201, Body: api.TokenCreated{}}},
		Errors:    bodyErrors,
	}, s.createToken)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/tokens", Roles: admins, Summary: "List tokens (hashes are never shown)",
		Responses: []openapi.Response{{Status: 200, Body: api.TokenList{}}},
		Errors:    commonErrors,
	}, s.listTokens)
	s.handle(openapi.Operation{
		Method: "DELETE", Path: "/v1/tokens/{id}", Roles: admins, Summary: "Revoke a token; it stops working within the token cache's lifetime (5 s)",
		Responses: []openapi.Response{{Status: 204}},
		Errors:    with(commonErrors, 404),
	}, s.revokeToken)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/whoami", Roles: []string{"agent", "hook", "user", "admin"},
		Summary:   "The token this request carries: its id, role and agent",
		Responses: []openapi.Response{{Status: 200, Body: api.Whoami{}}},
	}, s.whoami)
	s.handle(openapi.Operation{
		Method: "POST", Path: "/v1/sessions/{id}/subagents", Roles: writers,
		Summary:     "Start a sub-agent's session under the session that launched it",
		Description: "It claims the oldest active launch session of this session with the same agent_id whose id starts with launch_prefix and that has no child yet, and starts under it — so its mandate is this session's narrowed by the launch's words; with none to claim it starts under this session.",
		Request:     api.SubagentRequest{},
		Responses:   []openapi.Response{{Status: 201, Body: api.SubagentResponse{}}},
		Errors:      with(bodyErrors, 404, 409),
	}, s.startSubagent)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/gaps", Roles: readers, Summary: "List gaps — results of calls that ran without Mandate's allow — newest first",
		Params: []openapi.Param{
			{Name: "session_id", Description: "only this session's gaps"},
			{Name: "limit", Type: "integer", Description: "at most this many (default 100, at most 1000)"},
		},
		Responses: []openapi.Response{{Status: 200, Body: api.GapList{}}},
		Errors:    with(commonErrors, 400),
	}, s.listGaps)
	s.handle(openapi.Operation{
		Method: "POST", Path: "/v1/sessions/{id}/tools", Roles: writers,
		Summary:   "Pin a tools/list result for the session: new tools are pinned, changed definitions recorded (calls to them are then denied)",
		Request:   api.PinToolsRequest{},
		Responses: []openapi.Response{{Status: 200, Body: api.PinReport{}}},
		Errors:    with(bodyErrors, 404),
	}, s.pinTools)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/sessions/{id}/tools", Roles: readers, Summary: "The session's pinned tools and recorded changes",
		Responses: []openapi.Response{{Status: 200, Body: api.SessionTools{}}},
		Errors:    with(commonErrors, 404),
	}, s.sessionTools)
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/sessions/{id}/flow", Roles: readers,
		Summary:   "The values the session has seen, each with its first source (user's words, mandate, a call, an output and its trust), its injected spans and sensitive reads",
		Responses: []openapi.Response{{Status: 200, Body: api.SessionFlow{}}},
		Errors:    with(commonErrors, 404),
	}, s.sessionFlow)
	s.evidenceRoutes(lg)
	s.approvalRoutes()
	s.behaviourRoutes()
	s.claudeCodeRoute()
}
