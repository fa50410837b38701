package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

func newSessionResponse(info *engine.SessionInfo) api.SessionResponse {
	resp := api.SessionResponse{SessionID: info.Session.ID, Mandate: info.Mandate, Session: info.Session}
	if info.Draft != nil {
		resp.Draft = &api.Draft{Languages: info.Draft.Languages, Recognised: info.Draft.Recognised, NotUnderstood: info.Draft.NotUnderstood}
	}
	return resp
}

// parseMandate decodes an embedded mandate strictly (unknown fields are
// errors), reusing the mandate package's parser so the API and files agree.
func parseMandate(raw json.RawMessage) (*mandate.Mandate, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	m, err := mandate.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: mandate: %v", engine.ErrInvalid, err)
	}
	return m, nil
}

// decodeWithMandate decodes a request into req and parses the mandate it
// carries in raw (a field of req); false means the failure was answered.
func (s *Server) decodeWithMandate(w http.ResponseWriter, r *http.Request, req any, raw *json.RawMessage) (*mandate.Mandate, bool) {
	if !s.decode(w, r, req) {
		return nil, false
	}
	m, err := parseMandate(*raw)
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	return m, true
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req api.CreateSessionRequest
	m, ok := s.decodeWithMandate(w, r, &req, &req.Mandate)
	if !ok {
		return
	}
	sr := engine.SessionRequest{
		ID: req.SessionID, AgentID: req.AgentID, Intent: req.Intent, Mandate: m, Tools: req.Tools,
		WorkingDir: req.WorkingDirectory, HomeDir: req.HomeDirectory, ParentID: req.ParentSessionID, Source: req.Source,
		ApprovalTimeout: req.ApprovalTimeout,
	}
	if req.Agent != nil {
		sr.Agent = *req.Agent
	}
	info, err := s.eng.CreateSession(r.Context(), p, sr)
	replyAs(s, w, r, http.StatusCreated, info, err, newSessionResponse)
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	q := r.URL.Query()
	lim, err := queryInt(r, "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if st := q.Get("status"); st != "" && !store.ValidStatus(st) {
		s.fail(w, r, fmt.Errorf("%w: status %q is not a session status", engine.ErrInvalid, st))
		return
	}
	list, err := s.eng.ListSessions(r.Context(), p, store.SessionFilter{
		AgentID: q.Get("agent_id"), Status: q.Get("status"), ParentID: q.Get("parent_session_id"), Limit: lim, Before: q.Get("before"),
	})
	s.reply(w, r, http.StatusOK, api.SessionList{Sessions: orEmpty(list)}, err)
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	info, err := s.eng.GetSession(r.Context(), p, r.PathValue("id"))
	replyAs(s, w, r, http.StatusOK, info, err, newSessionResponse)
}

func (s *Server) getMandate(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	info, err := s.eng.GetSession(r.Context(), p, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, info.Mandate, nil)
}

func (s *Server) listMandates(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	list, err := s.eng.Mandates(r.Context(), p, r.PathValue("id"))
	s.reply(w, r, http.StatusOK, api.MandateVersionList{Versions: orEmpty(list)}, err)
}

func (s *Server) amendMandate(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req api.AmendMandateRequest
	m, ok := s.decodeWithMandate(w, r, &req, &req.Mandate)
	if !ok {
		return
	}
	info, err := s.eng.AmendMandate(r.Context(), p, r.PathValue("id"), engine.AmendRequest{Intent: req.Intent, Mandate: m, Source: req.Source})
	replyAs(s, w, r, http.StatusOK, info, err, newSessionResponse)
}

func (s *Server) setStatus(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req api.SetStatusRequest
	if !s.decode(w, r, &req) {
		return
	}
	sess, err := s.eng.SetStatus(r.Context(), p, r.PathValue("id"), req.Status)
	s.reply(w, r, http.StatusOK, sess, err)
}

// surface labels a decision with the integration it came through: what the
// caller says, from a fixed set, or its token's role.
func surface(p auth.Principal, requested string) (string, error) {
	switch requested {
	case api.SurfaceAPI, api.SurfaceMCP, api.SurfaceHook, api.SurfaceSDK:
		return requested, nil
	case "":
		if p.Role == auth.RoleHook {
			return api.SurfaceHook, nil
		}
		return api.SurfaceAPI, nil
	}
	return "", fmt.Errorf("%w: surface %q: want api, mcp, hook or sdk", engine.ErrInvalid, requested)
}

func (s *Server) evaluate(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req api.EvaluateRequest
	if !s.decode(w, r, &req) {
		return
	}
	args, raw, err := decodeArgs(req.Args)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	surf, err := surface(p, req.Surface)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	wait, err := parseWait(req.Wait)
	if err != nil {
		s.failEvaluate(w, r, err)
		return
	}
	d, err := s.eng.Evaluate(r.Context(), p, engine.EvaluateRequest{SessionID: req.SessionID, Tool: req.Tool, Args: args, RawArgs: raw, Surface: surf, CallID: req.CallID, Reported: req.Reported, Wait: wait})
	if err != nil {
		s.failEvaluate(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d.Wire())
}

// failEvaluate says, beside the error, that the call is refused: a client
// that reads only the effect still fails closed.
func (s *Server) failEvaluate(w http.ResponseWriter, r *http.Request, err error) {
	status, code := http.StatusInternalServerError, "internal"
	reason := engine.InternalErrorReason
	switch {
	case errors.Is(err, engine.ErrInvalid):
		status, code, reason = http.StatusBadRequest, "invalid_request", err.Error()
	case errors.Is(err, engine.ErrForbidden):
		status, code, reason = http.StatusForbidden, "forbidden", err.Error()
	case errors.Is(err, store.ErrNotFound):
		status, code, reason = http.StatusNotFound, "not_found", err.Error()
	default:
		s.log.Error("evaluate failed; refusing the call", "err", err)
	}
	writeJSON(w, status, api.Error{Error: api.ErrorDetail{Code: code, Message: err.Error()}, Effect: api.Deny, Reasons: []string{reason}})
}

// decodeArgs accepts a JSON object (or null/absent as {}).
func decodeArgs(raw json.RawMessage) (map[string]any, json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw) // not a string: that would copy the arguments
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return map[string]any{}, json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' {
		return nil, nil, fmt.Errorf("%w: args must be a JSON object", engine.ErrInvalid)
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, nil, fmt.Errorf("%w: args: %v", engine.ErrInvalid, err)
	}
	return args, raw, nil
}

func (s *Server) observe(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req api.ObserveRequest
	if !s.decode(w, r, &req) {
		return
	}
	if req.DecisionID == "" && req.SessionID != "" {
		s.observeCall(w, r, p, req)
		return
	}
	if req.SessionID != "" || req.CallID != "" || req.Tool != "" || len(req.Args) > 0 {
		s.fail(w, r, fmt.Errorf("%w: give decision_id, or session_id with call_id, tool and args — not both", engine.ErrInvalid))
		return
	}
	o, err := s.eng.Observe(r.Context(), p, engine.ObserveRequest{DecisionID: req.DecisionID, Output: req.Output, Origin: req.Origin})
	replyAs(s, w, r, http.StatusOK, o, err, observeResponse)
}

func (s *Server) listDecisions(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	q := r.URL.Query()
	lim, err := queryInt(r, "limit")
	if err == nil {
		var after int
		after, err = queryInt(r, "after_seq")
		if err == nil {
			if e := q.Get("effect"); e != "" && e != "allow" && e != "deny" && e != "ask" {
				err = fmt.Errorf("%w: effect %q: want allow, deny or ask", engine.ErrInvalid, e)
			} else {
				var list []*store.Decision
				list, err = s.eng.Decisions(r.Context(), p, store.DecisionFilter{SessionID: q.Get("session_id"), Effect: q.Get("effect"), Limit: lim, AfterSeq: after})
				if err == nil {
					writeJSON(w, http.StatusOK, api.DecisionList{Decisions: orEmpty(list)})
					return
				}
			}
		}
	}
	s.fail(w, r, err)
}

func (s *Server) getDecision(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	d, obs, err := s.eng.GetDecision(r.Context(), p, r.PathValue("id"))
	var prov []api.Provenance
	if d != nil {
		prov = d.Provenance
	}
	s.reply(w, r, http.StatusOK, api.DecisionDetail{Decision: d, Observations: orEmpty(obs), Provenance: orEmpty(prov)}, err)
}

func (s *Server) compileIntent(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if !s.may(w, r, p, auth.CreateSession, "compile intents") {
		return
	}
	var req api.CompileRequest
	if !s.decode(w, r, &req) {
		return
	}
	d, err := mandate.Compile(req.Intent)
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: intent: %v", engine.ErrInvalid, err))
		return
	}
	writeJSON(w, http.StatusOK, api.CompileResponse{Mandate: d.Mandate, Languages: d.Languages, Recognised: d.Recognised, NotUnderstood: d.NotUnderstood})
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if !s.may(w, r, p, auth.ManageTokens, "manage tokens") {
		return
	}
	var req api.CreateTokenRequest
	if !s.decode(w, r, &req) {
		return
	}
	tok, rec, err := auth.Issue(req.Role, req.AgentID, req.Name, time.Now())
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: %v", engine.ErrInvalid, err))
		return
	}
	if err := s.st.CreateToken(r.Context(), rec); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, api.TokenCreated{Token: tok, ID: rec.ID, Role: rec.Role, AgentID: rec.AgentID, Name: rec.Name})
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if !s.may(w, r, p, auth.ManageTokens, "manage tokens") {
		return
	}
	list, err := s.st.ListTokens(r.Context())
	s.reply(w, r, http.StatusOK, api.TokenList{Tokens: orEmpty(list)}, err)
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if !s.may(w, r, p, auth.ManageTokens, "manage tokens") {
		return
	}
	if err := s.st.RevokeToken(r.Context(), r.PathValue("id"), time.Now()); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// may says whether p holds perm, answering 403 when it does not; what
// names the act in the error ("manage tokens").
func (s *Server) may(w http.ResponseWriter, r *http.Request, p auth.Principal, perm auth.Permission, what string) bool {
	if p.Can(perm) {
		return true
	}
	s.fail(w, r, fmt.Errorf("%w: role %s may not %s", engine.ErrForbidden, p.Role, what))
	return false
}

// observeResponse is what a recorded result looks like on the wire.
func observeResponse(o *store.Observation) api.ObserveResponse {
	return api.ObserveResponse{ID: o.ID, DecisionID: o.DecisionID, SessionID: o.SessionID, Gap: o.Gap, GapReason: o.GapReason}
}

func (s *Server) whoami(w http.ResponseWriter, _ *http.Request, p auth.Principal) {
	writeJSON(w, http.StatusOK, api.Whoami{TokenID: p.TokenID, Role: string(p.Role), AgentID: p.AgentID, Name: p.Name})
}
