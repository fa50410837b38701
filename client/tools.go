package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// PinReport says what a tools listing did to a session's pins.
type PinReport struct {
	SessionID string `json:"session_id"`
	// Pinned names the tools seen for the first time, now pinned.
	Pinned []string `json:"pinned"`
	// Unchanged counts tools that matched their pins.
	Unchanged int `json:"unchanged"`
	// Changed are listed tools whose definition broke its pin; Mandate
	// refuses calls to them for the rest of the session.
	Changed []ToolChange `json:"changed"`
}

// ToolChange is a listed tool whose definition differs from its pin.
type ToolChange struct {
	Tool       string `json:"tool"`
	PinnedHash string `json:"pinned_hash"`
	Hash       string `json:"hash"`
	// Pinned is the definition as first listed in the session.
	Pinned json.RawMessage `json:"pinned"`
	// Recorded is true when this listing recorded the change.
	Recorded bool   `json:"recorded"`
	Reason   string `json:"reason"`
}

// PinTools registers a tools/list result with a session before the agent
// is shown it: tools listed for the first time are pinned, and a tool whose
// description or schema differs from its pin is recorded as changed and
// refused from then on. tools is anything that encodes as a JSON array of
// MCP tool definitions (a []Tool, the SDK's []*mcp.Tool, raw JSON). Needs a
// user, hook or admin token.
func (c *Client) PinTools(ctx context.Context, sessionID string, tools any) (*PinReport, error) {
	if tools == nil {
		tools = []Tool{}
	}
	var r PinReport
	if err := c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/tools", map[string]any{"tools": tools}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
