package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mandate-dev/mandate/api"
)

// PinTools registers a tools/list result with a session before the agent
// is shown it: tools listed for the first time are pinned, and a tool whose
// description or schema differs from its pin is recorded as changed and
// refused from then on. tools is anything that encodes as a JSON array of
// MCP tool definitions (a []Tool, the SDK's []*mcp.Tool, raw JSON). Needs a
// user, hook or admin token.
func (c *Client) PinTools(ctx context.Context, sessionID string, tools any) (*PinReport, error) {
	req := api.PinToolsRequest{Tools: []json.RawMessage{}}
	if tools != nil {
		b, err := json.Marshal(tools)
		if err != nil {
			return nil, fmt.Errorf("mandate: encode tools: %w", err)
		}
		if err := json.Unmarshal(b, &req.Tools); err != nil {
			return nil, fmt.Errorf("mandate: tools must encode as a JSON array: %w", err)
		}
		if req.Tools == nil {
			req.Tools = []json.RawMessage{}
		}
	}
	var r PinReport
	if err := c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/tools", req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
