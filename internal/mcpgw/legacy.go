//lint:file-ignore SA1019 the gateway passes logging and sampling through for the clients and servers that still use them during their deprecation window

package mcpgw

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Features deprecated as of protocol 2026-07-28 (SEP-2577) that a
// transparent stdio gateway still forwards: server log messages (and the
// client's log level), and sampling requests.

func (g *Gateway) legacyCaps(up, caps *mcp.ServerCapabilities) {
	if up.Logging != nil && g.opts.ForwardClientFeatures {
		caps.Logging = &mcp.LoggingCapabilities{}
	}
}

func (g *Gateway) passLogLevel(ctx context.Context, req mcp.Request) {
	if !g.opts.ForwardClientFeatures {
		return
	}
	p, ok := req.GetParams().(*mcp.SetLoggingLevelParams)
	if !ok {
		return
	}
	for _, u := range g.ups {
		if u.caps().Logging == nil {
			continue
		}
		cs, err := u.session(ctx)
		if err != nil {
			continue
		}
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: p.Level}); err != nil {
			g.log.Debug("passing the log level upstream failed", "upstream", u.cfg.Name, "err", err)
		}
	}
}

func (u *upstream) legacyClientOptions(opts *mcp.ClientOptions) {
	g := u.g
	opts.LoggingMessageHandler = u.onLog
	if g.opts.ForwardClientFeatures {
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			ss, err := g.downstream()
			if err != nil {
				return nil, err
			}
			return ss.CreateMessage(ctx, req.Params)
		}
	}
}

func (u *upstream) onLog(ctx context.Context, req *mcp.LoggingMessageRequest) {
	g := u.g
	if !g.opts.ForwardClientFeatures || !g.ready.Load() {
		g.log.Debug("upstream log", "upstream", u.cfg.Name, "level", req.Params.Level, "data", req.Params.Data)
		return
	}
	for ss := range g.server.Sessions() {
		if err := ss.Log(ctx, req.Params); err != nil {
			g.log.Debug("forwarding a log message failed", "err", err)
		}
	}
}
