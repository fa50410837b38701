package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

type createSessionRequest struct {
	SessionID        string           `json:"session_id"`
	AgentID          string           `json:"agent_id"`
	Agent            *store.Agent     `json:"agent"`
	Intent           string           `json:"intent"`
	Mandate          json.RawMessage  `json:"mandate"`
	Tools            []action.ToolDef `json:"tools"`
	WorkingDirectory string           `json:"working_directory"`
	HomeDirectory    string           `json:"home_directory"`
	ParentSessionID  string           `json:"parent_session_id"`
	Source           string           `json:"source"`
}

type sessionResponse struct {
	SessionID string           `json:"session_id"`
	Mandate   *mandate.Mandate `json:"mandate"`
	Session   *store.Session   `json:"session"`
	Draft     *draftResponse   `json:"draft,omitempty"`
}

type draftResponse struct {
	Languages  []string              `json:"languages"`
	Recognised []mandate.Recognition `json:"recognised"`
}

func newSessionResponse(info *engine.SessionInfo) sessionResponse {
	resp := sessionResponse{SessionID: info.Session.ID, Mandate: info.Mandate, Session: info.Session}
	if info.Draft != nil {
		resp.Draft = &draftResponse{Languages: info.Draft.Languages, Recognised: info.Draft.Recognised}
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

func (s *Server) createSession(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req createSessionRequest
	if !s.decode(w, r, &req) {
		return
	}
	m, err := parseMandate(req.Mandate)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sr := engine.SessionRequest{
		ID: req.SessionID, AgentID: req.AgentID, Intent: req.Intent, Mandate: m, Tools: req.Tools,
		WorkingDir: req.WorkingDirectory, HomeDir: req.HomeDirectory, ParentID: req.ParentSessionID, Source: req.Source,
	}
	if req.Agent != nil {
		sr.Agent = *req.Agent
	}
	info, err := s.eng.CreateSession(r.Context(), p, sr)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, newSessionResponse(info))
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
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if list == nil {
		list = []*store.Session{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": list})
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	info, err := s.eng.GetSession(r.Context(), p, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newSessionResponse(info))
}

func (s *Server) getMandate(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	info, err := s.eng.GetSession(r.Context(), p, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, info.Mandate)
}

func (s *Server) listMandates(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	list, err := s.eng.Mandates(r.Context(), p, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": list})
}

type amendRequest struct {
	Intent  string          `json:"intent"`
	Mandate json.RawMessage `json:"mandate"`
	Source  string          `json:"source"`
}

func (s *Server) amendMandate(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req amendRequest
	if !s.decode(w, r, &req) {
		return
	}
	m, err := parseMandate(req.Mandate)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	info, err := s.eng.AmendMandate(r.Context(), p, r.PathValue("id"), engine.AmendRequest{Intent: req.Intent, Mandate: m, Source: req.Source})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newSessionResponse(info))
}

func (s *Server) setStatus(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req struct {
		Status string `json:"status"`
	}
	if !s.decode(w, r, &req) {
		return
	}
	sess, err := s.eng.SetStatus(r.Context(), p, r.PathValue("id"), req.Status)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sess)
}

type evaluateRequest struct {
	SessionID string          `json:"session_id"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	// CallID is the harness's id for the call; the result can then be
	// observed by it.
	CallID string `json:"call_id"`
	// Reported is the agent's own account of the call (e.g. its stated
	// reasoning), kept as reported evidence; it does not affect the
	// decision.
	Reported json.RawMessage `json:"reported"`
	// Surface names the integration the call came through; it labels the
	// record and does not affect the decision.
	Surface string `json:"surface"`
}

// surface names where a call came from by who relays it: a hook token is
// an agent runtime's hook, anything else the plain API.
// surface labels a decision with the integration it came through: what the
// caller says, from a fixed set, or its token's role.
func surface(p auth.Principal, requested string) (string, error) {
	switch requested {
	case "api", "mcp", "hook", "sdk":
		return requested, nil
	case "":
		if p.Role == auth.RoleHook {
			return "hook", nil
		}
		return "api", nil
	}
	return "", fmt.Errorf("%w: surface %q: want api, mcp, hook or sdk", engine.ErrInvalid, requested)
}

func (s *Server) evaluate(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req evaluateRequest
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
	d, err := s.eng.Evaluate(r.Context(), p, engine.EvaluateRequest{SessionID: req.SessionID, Tool: req.Tool, Args: args, RawArgs: raw, Surface: surf, CallID: req.CallID, Reported: req.Reported})
	if err != nil {
		s.failEvaluate(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
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
	var b errorBody
	b.Error.Code, b.Error.Message = code, err.Error()
	b.Effect, b.Reasons = "deny", []string{reason}
	writeJSON(w, status, b)
}

// decodeArgs accepts a JSON object (or null/absent as {}).
func decodeArgs(raw json.RawMessage) (map[string]any, json.RawMessage, error) {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return map[string]any{}, json.RawMessage("{}"), nil
	}
	if !strings.HasPrefix(trimmed, "{") {
		return nil, nil, fmt.Errorf("%w: args must be a JSON object", engine.ErrInvalid)
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, nil, fmt.Errorf("%w: args: %v", engine.ErrInvalid, err)
	}
	return args, raw, nil
}

type observeRequest struct {
	DecisionID string          `json:"decision_id"`
	Output     json.RawMessage `json:"output"`
	Origin     string          `json:"origin"`
	// Without a decision id, the result is matched by the call id it was
	// evaluated with, in the session; tool and args describe the call in
	// case it turns out to be a gap.
	SessionID string          `json:"session_id"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
}

func (s *Server) observe(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req observeRequest
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
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"observation_id": o.ID, "decision_id": o.DecisionID, "session_id": o.SessionID})
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
					if list == nil {
						list = []*store.Decision{}
					}
					writeJSON(w, http.StatusOK, map[string]any{"decisions": list})
					return
				}
			}
		}
	}
	s.fail(w, r, err)
}

func (s *Server) getDecision(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	d, obs, err := s.eng.GetDecision(r.Context(), p, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if obs == nil {
		obs = []*store.Observation{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"decision": d, "observations": obs})
}

func (s *Server) compileIntent(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if !p.Can(auth.CreateSession) {
		s.fail(w, r, fmt.Errorf("%w: role %s may not compile intents", engine.ErrForbidden, p.Role))
		return
	}
	var req struct {
		Intent string `json:"intent"`
	}
	if !s.decode(w, r, &req) {
		return
	}
	d, err := mandate.Compile(req.Intent)
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: intent: %v", engine.ErrInvalid, err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"mandate": d.Mandate, "languages": d.Languages, "recognised": d.Recognised})
}

type createTokenRequest struct {
	Role    string `json:"role"`
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if !p.Can(auth.ManageTokens) {
		s.fail(w, r, fmt.Errorf("%w: role %s may not manage tokens", engine.ErrForbidden, p.Role))
		return
	}
	var req createTokenRequest
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
	writeJSON(w, http.StatusCreated, map[string]any{"token": tok, "id": rec.ID, "role": rec.Role, "agent_id": rec.AgentID, "name": rec.Name})
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if !p.Can(auth.ManageTokens) {
		s.fail(w, r, fmt.Errorf("%w: role %s may not manage tokens", engine.ErrForbidden, p.Role))
		return
	}
	list, err := s.st.ListTokens(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if list == nil {
		list = []*store.Token{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": list})
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if !p.Can(auth.ManageTokens) {
		s.fail(w, r, fmt.Errorf("%w: role %s may not manage tokens", engine.ErrForbidden, p.Role))
		return
	}
	if err := s.st.RevokeToken(r.Context(), r.PathValue("id"), time.Now()); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
