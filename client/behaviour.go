package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/mandate-dev/mandate/api"
)

// Agents lists every agent with a baseline (GET /v1/agents).
func (c *Client) Agents(ctx context.Context) ([]api.AgentBaseline, error) {
	var out api.AgentList
	return out.Agents, c.do(ctx, http.MethodGet, "/v1/agents", nil, &out)
}

// Agent returns one agent's baseline and versions.
func (c *Client) Agent(ctx context.Context, id string) (*api.AgentBaseline, error) {
	return getJSON[api.AgentBaseline](ctx, c, "/v1/agents/"+url.PathEscape(id))
}

// Drift compares each version of an agent with the one before it.
func (c *Client) Drift(ctx context.Context, id string) (*api.DriftReport, error) {
	return getJSON[api.DriftReport](ctx, c, "/v1/agents/"+url.PathEscape(id)+"/drift")
}

// Review returns what an agent's latest sessions show together.
func (c *Client) Review(ctx context.Context, id string) (*api.AgentReview, error) {
	return c.review(ctx, id, "")
}

// ReviewWithNarrative is Review with the judge model's narrative beside
// the facts (?narrative=1): labelled model-written, an evidence record, so
// asking for it is a write. Without a judge configured its Error says so.
func (c *Client) ReviewWithNarrative(ctx context.Context, id string) (*api.AgentReview, error) {
	return c.review(ctx, id, narrativeQuery)
}

// narrativeQuery asks a summary or review route for the narrative.
const narrativeQuery = "?narrative=1"

func (c *Client) review(ctx context.Context, id, query string) (*api.AgentReview, error) {
	return getJSON[api.AgentReview](ctx, c, "/v1/agents/"+url.PathEscape(id)+"/review"+query)
}

// BaselineAction resets, freezes or unfreezes an agent's baseline (admin).
func (c *Client) BaselineAction(ctx context.Context, id string, req api.BaselineRequest) (*api.AgentBaseline, error) {
	var out api.AgentBaseline
	return &out, c.do(ctx, http.MethodPost, "/v1/agents/"+url.PathEscape(id)+"/baseline", req, &out)
}

// Trace returns the chain that led to a decision.
func (c *Client) Trace(ctx context.Context, decisionID string) (*api.Trace, error) {
	return getJSON[api.Trace](ctx, c, "/v1/decisions/"+url.PathEscape(decisionID)+"/trace")
}

// SessionSummary returns a session as facts.
func (c *Client) SessionSummary(ctx context.Context, id string) (*api.SessionSummary, error) {
	return c.sessionSummary(ctx, id, "")
}

// SessionSummaryWithNarrative is SessionSummary with the judge model's
// narrative beside the facts, as ReviewWithNarrative.
func (c *Client) SessionSummaryWithNarrative(ctx context.Context, id string) (*api.SessionSummary, error) {
	return c.sessionSummary(ctx, id, narrativeQuery)
}

func (c *Client) sessionSummary(ctx context.Context, id, query string) (*api.SessionSummary, error) {
	return getJSON[api.SessionSummary](ctx, c, "/v1/sessions/"+url.PathEscape(id)+"/summary"+query)
}
