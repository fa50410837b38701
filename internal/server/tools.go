package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
)

// Tool pinning: a gateway that shows an agent a tools/list result posts it
// here first (POST), and anyone who reads may see a session's pins and the
// changes that broke them (GET).

func (s *Server) pinTools(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var req api.PinToolsRequest
	if !s.decode(w, r, &req) {
		return
	}
	if req.Tools == nil {
		s.fail(w, r, fmt.Errorf("%w: tools is required: the tools/list result's tools array", engine.ErrInvalid))
		return
	}
	defs := make([]action.ToolDef, len(req.Tools))
	for i, raw := range req.Tools {
		if err := json.Unmarshal(raw, &defs[i]); err != nil {
			s.fail(w, r, fmt.Errorf("%w: tools[%d]: %v", engine.ErrInvalid, i, err))
			return
		}
	}
	rep, err := s.eng.PinTools(r.Context(), p, r.PathValue("id"), defs)
	s.reply(w, r, http.StatusOK, rep, err)
}
