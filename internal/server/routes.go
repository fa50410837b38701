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

// limitParam is the page size every list takes.
var limitParam = openapi.Param{Name: "limit", Type: "integer", Description: "at most this many (default 100, at most 1000)"}

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

	s.handle(send("POST", "/v1/sessions", writers,
		"Create a session with the user's words (intent) and/or a structured mandate",
		api.CreateSessionRequest{}, 201, api.SessionResponse{}, 404, 409), s.createSession)
	s.handle(readList("/v1/sessions", "List sessions, newest first", api.SessionList{},
		openapi.Param{Name: "agent_id", Description: "only this agent's sessions"},
		openapi.Param{Name: "status", Description: "only sessions in this status", Enum: []string{api.StatusActive, api.StatusIdle, api.StatusCompleted, api.StatusSuspended, api.StatusTerminated}},
		openapi.Param{Name: "parent_session_id", Description: "only children of this session"},
		openapi.Param{Name: "before", Description: "cursor: sessions created before this session id"},
		limitParam), s.listSessions)
	s.handle(readOne("/v1/sessions/{id}", "Get a session and its effective mandate", api.SessionResponse{}), s.getSession)
	s.handle(readOne("/v1/sessions/{id}/mandate", "The session's effective mandate (narrowed by its parents)", api.Mandate{}), s.getMandate)
	s.handle(send("POST", "/v1/sessions/{id}/mandate", writers,
		"Amend the mandate: the user's further words (merged) or a whole mandate (replacing). Agents cannot.",
		api.AmendMandateRequest{}, 200, api.SessionResponse{}, 404, 409), s.amendMandate)
	s.handle(readOne("/v1/sessions/{id}/mandates", "Every mandate version, oldest first", api.MandateVersionList{}), s.listMandates)
	s.handle(send("POST", "/v1/sessions/{id}/status", writers,
		"Change the lifecycle status. Terminated is final; a hook can stop a session, never lift a suspension.",
		api.SetStatusRequest{}, 200, api.Session{}, 404, 409), s.setStatus)
	s.handle(described(send("POST", "/v1/evaluate", callers,
		"Decide one tool call. Returns after the decision is durable.",
		api.EvaluateRequest{}, 200, api.Decision{}, 404, 409),
		"Any error means the call must not run; error bodies also say effect deny. An agent token may evaluate only in its own agent's sessions."), s.evaluate)
	s.handle(send("POST", "/v1/observe", callers,
		"Record a tool's result: for a decision (decision_id), or by the call id it was evaluated with (session_id, call_id, tool and args). A result that matches no allow is recorded as a gap.",
		api.ObserveRequest{}, 200, api.ObserveResponse{}, 404, 409), s.observe)
	s.handle(readList("/v1/decisions", "List decisions: a session's in order, else newest first", api.DecisionList{},
		openapi.Param{Name: "session_id", Description: "only this session's decisions, in order"},
		openapi.Param{Name: "effect", Enum: []string{"allow", "deny", "ask"}},
		openapi.Param{Name: "after_seq", Type: "integer", Description: "with session_id: decisions after this sequence number"},
		limitParam), s.listDecisions)
	s.handle(readOne("/v1/decisions/{id}", "One decision with its observations", api.DecisionDetail{}), s.getDecision)
	s.handle(send("POST", "/v1/intent/compile", writers, "Draft a mandate from plain words (nothing is stored)",
		api.CompileRequest{}, 200, api.CompileResponse{}), s.compileIntent)
	s.handle(send("POST", "/v1/tokens", admins, "Create a token; its secret is shown only in this answer",
		api.CreateTokenRequest{}, 201, api.TokenCreated{}), s.createToken)
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
	s.handle(described(send("POST", "/v1/sessions/{id}/subagents", writers,
		"Start a sub-agent's session under the session that launched it",
		api.SubagentRequest{}, 201, api.SubagentResponse{}, 404, 409),
		"It claims the oldest active launch session of this session with the same agent_id whose id starts with launch_prefix and that has no child yet, and starts under it — so its mandate is this session's narrowed by the launch's words; with none to claim it starts under this session."), s.startSubagent)
	s.handle(readList("/v1/gaps", "List gaps — results of calls that ran without Mandate's allow — newest first", api.GapList{},
		openapi.Param{Name: "session_id", Description: "only this session's gaps"},
		limitParam), s.listGaps)
	s.handle(send("POST", "/v1/sessions/{id}/tools", writers,
		"Pin a tools/list result for the session: new tools are pinned, changed definitions recorded (calls to them are then denied)",
		api.PinToolsRequest{}, 200, api.PinReport{}, 404), s.pinTools)
	s.handle(readOne("/v1/sessions/{id}/tools", "The session's pinned tools and recorded changes", api.SessionTools{}), byID(s, s.eng.Tools))
	s.handle(readOne("/v1/sessions/{id}/flow",
		"The values the session has seen, each with its first source (user's words, mandate, a call, an output and its trust), its injected spans and sensitive reads",
		api.SessionFlow{}), byID(s, s.eng.SessionFlow))
	s.evidenceRoutes(lg)
	s.approvalRoutes()
	s.behaviourRoutes()
	s.claudeCodeRoute()
}

// Most routes are one of three shapes; these build their operations.

// readOne is a reader's GET of one thing named by its path: 200 with body,
// 404 when there is no such thing.
func readOne(path, summary string, body any) openapi.Operation {
	return openapi.Operation{
		Method: "GET", Path: path, Roles: readers, Summary: summary,
		Responses: []openapi.Response{{Status: 200, Body: body}},
		Errors:    with(commonErrors, 404),
	}
}

// readList is a reader's GET of a list filtered by query parameters: 200
// with body, 400 when a parameter is malformed.
func readList(path, summary string, body any, params ...openapi.Param) openapi.Operation {
	return openapi.Operation{
		Method: "GET", Path: path, Roles: readers, Summary: summary, Params: params,
		Responses: []openapi.Response{{Status: 200, Body: body}},
		Errors:    with(commonErrors, 400),
	}
}

// send is a request with a JSON body (req) answered with status and resp;
// it may also answer the body errors and the statuses in errs.
func send(method, path string, roles []string, summary string, req any, status int, resp any, errs ...int) openapi.Operation {
	return openapi.Operation{
		Method: method, Path: path, Roles: roles, Summary: summary,
		Request:   req,
		Responses: []openapi.Response{{Status: status, Body: resp}},
		Errors:    with(bodyErrors, errs...),
	}
}

// described is op with a description beside its summary.
func described(op openapi.Operation, description string) openapi.Operation {
	op.Description = description
	return op
}

// withRoles is op callable by roles instead.
func withRoles(op openapi.Operation, roles []string) openapi.Operation {
	op.Roles = roles
	return op
}
