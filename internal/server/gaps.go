package server

import (
	"fmt"
	"net/http"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/store"
)

// hookRoutes mounts what agent-runtime hooks need beyond evaluate and
// observe: sub-agent sessions, and the gaps — results of calls that ran
// without Mandate's allow — for readers.
func (s *Server) hookRoutes() {
	s.handle("POST /v1/sessions/{id}/subagents", s.startSubagent)
	s.handle("GET /v1/gaps", s.listGaps)
}

// observeCall answers POST /v1/observe without a decision id.
func (s *Server) observeCall(w http.ResponseWriter, r *http.Request, p auth.Principal, req observeRequest) {
	o, err := s.eng.ObserveCall(r.Context(), p, engine.ObserveCallRequest{
		SessionID: req.SessionID, CallID: req.CallID, Tool: req.Tool, Args: req.Args, Output: req.Output, Origin: req.Origin,
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	resp := map[string]any{"observation_id": o.ID, "decision_id": o.DecisionID, "session_id": o.SessionID, "gap": o.Gap}
	if o.Gap {
		resp["gap_reason"] = o.GapReason
	}
	writeJSON(w, http.StatusOK, resp)
}

type subagentRequest struct {
	SessionID        string `json:"session_id"`
	AgentID          string `json:"agent_id"`
	LaunchPrefix     string `json:"launch_prefix"`
	WorkingDirectory string `json:"working_directory"`
}

func (s *Server) startSubagent(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req subagentRequest
	if !s.decode(w, r, &req) {
		return
	}
	info, err := s.eng.StartSubagent(r.Context(), p, engine.SubagentRequest{
		ParentID: r.PathValue("id"), ID: req.SessionID, AgentID: req.AgentID,
		WorkingDir: req.WorkingDirectory, LaunchPrefix: req.LaunchPrefix,
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	resp := struct {
		sessionResponse
		LaunchID string `json:"launch_id,omitempty"`
	}{newSessionResponse(info.SessionInfo), info.LaunchID}
	writeJSON(w, http.StatusCreated, resp)
}

func (s *Server) listGaps(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	lim, err := queryInt(r, "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if lim > 1000 {
		s.fail(w, r, fmt.Errorf("%w: limit %d: at most 1000", engine.ErrInvalid, lim))
		return
	}
	gaps, err := s.eng.Gaps(r.Context(), p, store.GapFilter{SessionID: r.URL.Query().Get("session_id"), Limit: lim})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if gaps == nil {
		gaps = []*store.Observation{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"gaps": gaps})
}
