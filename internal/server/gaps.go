package server

import (
	"fmt"
	"net/http"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/store"
)

// What agent-runtime hooks need beyond evaluate and observe: results
// observed by call id, sub-agent sessions, and the gaps — results of calls
// that ran without Mandate's allow — for readers.

// observeCall answers POST /v1/observe without a decision id.
func (s *Server) observeCall(w http.ResponseWriter, r *http.Request, p auth.Principal, req api.ObserveRequest) {
	o, err := s.eng.ObserveCall(r.Context(), p, engine.ObserveCallRequest{
		SessionID: req.SessionID, CallID: req.CallID, Tool: req.Tool, Args: req.Args, Output: req.Output, Origin: req.Origin,
	})
	replyAs(s, w, r, http.StatusOK, o, err, observeResponse)
}

func (s *Server) startSubagent(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req api.SubagentRequest
	if !s.decode(w, r, &req) {
		return
	}
	info, err := s.eng.StartSubagent(r.Context(), p, engine.SubagentRequest{
		ParentID: r.PathValue("id"), ID: req.SessionID, AgentID: req.AgentID,
		WorkingDir: req.WorkingDirectory, LaunchPrefix: req.LaunchPrefix,
	})
	replyAs(s, w, r, http.StatusCreated, info, err, subagentResponse)
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
	s.reply(w, r, http.StatusOK, api.GapList{Gaps: orEmpty(gaps)}, err)
}

func subagentResponse(info *engine.SubagentInfo) api.SubagentResponse {
	return api.SubagentResponse{SessionResponse: newSessionResponse(info.SessionInfo), LaunchID: info.LaunchID}
}
