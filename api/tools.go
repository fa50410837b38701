package api

import "encoding/json"

// PinToolsRequest is POST /v1/sessions/{id}/tools: a tools/list result, held
// against the session's pins before the agent is shown it.
type PinToolsRequest struct {
	// Tools are tool definitions as MCP tools/list returns them, read
	// leniently: fields Mandate does not pin (_meta, icons, …) are ignored,
	// so a gateway can pass a listing through as it came.
	Tools []json.RawMessage `json:"tools" openapi:"ToolDef"`
}

// PinReport says what one tool listing did to a session's pins.
type PinReport struct {
	SessionID string `json:"session_id"`
	// Pinned names the tools seen for the first time, now pinned.
	Pinned []string `json:"pinned"`
	// Unchanged counts tools that matched their pins.
	Unchanged int `json:"unchanged"`
	// Changed are the listed tools that calls are refused for: their
	// definition differs from the pin now, or did earlier in the session.
	Changed []ToolChangeInfo `json:"changed"`
}

// ToolChangeInfo is one listed tool whose definition broke its pin.
type ToolChangeInfo struct {
	Tool       string `json:"tool"`
	PinnedHash string `json:"pinned_hash"`
	// Hash is the hash of the definition in this listing.
	Hash string `json:"hash"`
	// Pinned is the definition as first listed in the session.
	Pinned ToolDef `json:"pinned"`
	// Recorded is true when this listing recorded a new change (a
	// definition not seen before for this tool).
	Recorded bool `json:"recorded"`
	// Reason is what a refused call to the tool says.
	Reason string `json:"reason"`
}

// SessionTools is GET /v1/sessions/{id}/tools: a session's pins and the
// recorded changes that broke them.
type SessionTools struct {
	Pins    []*ToolPin    `json:"pins"`
	Changes []*ToolChange `json:"changes"`
}
