package server

import (
	"net/http"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/openapi"
)

// behaviourRoutes registers the behaviour layer's routes: agents and their
// baselines, drift, review, a decision's trace and a session's summary
// (docs/behaviour.md).
func (s *Server) behaviourRoutes() {
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/agents", Roles: readers, Summary: "Every agent with a baseline: state, counts, versions",
		Responses: []openapi.Response{{Status: 200, Body: api.AgentList{}}},
		Errors:    commonErrors,
	}, s.listAgents)
	s.handle(readOne("/v1/agents/{id}", "One agent's baseline and its versions (learning | monitoring | frozen)", api.AgentBaseline{}), byID(s, s.eng.Agent))
	s.handle(readOne("/v1/agents/{id}/drift", "Each version of the agent compared with the one before it: drift, stable or insufficient", api.DriftReport{}), byID(s, s.eng.Drift))
	s.handle(withNarrative(readOne("/v1/agents/{id}/review", "What the agent's latest sessions show together: repeated asks, denies and shortcuts, growing scope", api.AgentReview{})), s.agentReview)
	s.handle(send("POST", "/v1/agents/{id}/baseline", admins, "Reset, freeze or unfreeze the agent's baseline (an evidence record)",
		api.BaselineRequest{}, 200, api.AgentBaseline{}, 404), s.baselineAction)
	s.handle(readOne("/v1/decisions/{id}/trace", "The chain that led to a decision and its first departure", api.Trace{}), byID(s, s.eng.Trace))
	s.handle(withNarrative(readOne("/v1/sessions/{id}/summary", "A session as facts: kinds, destinations, asks and answers, denies, gaps, signals, first departure", api.SessionSummary{})), s.sessionSummary)
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	agents, err := s.eng.Agents(r.Context(), p)
	s.reply(w, r, http.StatusOK, api.AgentList{Agents: orEmpty(agents)}, err)
}

func (s *Server) agentReview(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	rev, err := s.eng.AgentReview(r.Context(), p, r.PathValue("id"))
	if err == nil && wantNarrative(r) {
		rev.Narrative = s.eng.Narrative(r.Context(), p, "agent", rev.Agent, "", rev)
	}
	s.reply(w, r, http.StatusOK, rev, err)
}

func (s *Server) baselineAction(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req api.BaselineRequest
	if !s.decode(w, r, &req) {
		return
	}
	a, err := s.eng.BaselineAction(r.Context(), p, r.PathValue("id"), req)
	s.reply(w, r, http.StatusOK, a, err)
}

func (s *Server) sessionSummary(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	sum, err := s.eng.SessionSummary(r.Context(), p, r.PathValue("id"))
	if err == nil && wantNarrative(r) {
		sum.Narrative = s.eng.Narrative(r.Context(), p, "session", sum.AgentID, sum.SessionID, sum)
	}
	s.reply(w, r, http.StatusOK, sum, err)
}

// withNarrative is op taking ?narrative=, which wantNarrative reads.
func withNarrative(op openapi.Operation) openapi.Operation {
	op.Params = append(op.Params, openapi.Param{Name: "narrative", Description: `"1": add the judge model's narrative beside the facts, labelled model-written (an evidence record)`, Enum: []string{"1", "true", "yes"}})
	return op
}

// wantNarrative: the request asks for the judge model's narrative beside
// the facts (?narrative=1).
func wantNarrative(r *http.Request) bool {
	switch r.URL.Query().Get("narrative") {
	case "1", "true", "yes":
		return true
	}
	return false
}
