package engine

import (
	"context"
	"log/slog"

	"github.com/mandate-dev/mandate/internal/policy"
)

// logDecision writes one line per durable decision: at debug level for an
// allow, at info for a deny or an ask, so an operator at the default level
// sees every refusal and every question put to a person, and at debug sees
// everything. The level is checked first: a decision the logger would drop
// costs nothing.
func (e *Engine) logDecision(ctx context.Context, d *Decision, req *EvaluateRequest) {
	level := slog.LevelDebug
	if d.Effect != policy.Allow {
		level = slog.LevelInfo
	}
	if !e.log.Enabled(ctx, level) {
		return
	}
	kind := ""
	if d.Action != nil {
		kind = string(d.Action.Kind)
	}
	e.log.LogAttrs(ctx, level, "decision",
		slog.String("effect", string(d.Effect)),
		slog.String("tool", req.Tool),
		slog.String("kind", kind),
		slog.String("session", d.SessionID),
		slog.String("decision", d.ID),
		slog.Int("seq", d.Seq),
		slog.String("surface", req.Surface),
		slog.Any("rules", d.Rules),
		slog.Any("reasons", d.Reasons),
		slog.Int64("latency_us", d.LatencyMicros),
	)
}
