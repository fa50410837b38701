package mcpgw

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/app"
)

// BenchmarkToolCall measures one allowed tools/call straight to an
// in-process upstream and through the gateway to the same upstream (the
// difference is what Mandate adds: classify, decide, a durable decision, the
// forward, a durable observation). Transports are in-memory, so the numbers
// are the gateway's own work, not a pipe's. It reports p50 and p99 per call.
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	args := map[string]any{"name": "Ada"}
	run := func(b *testing.B, cs *mcp.ClientSession) {
		durations := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for b.Loop() {
			start := time.Now()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: args})
			durations = append(durations, time.Since(start))
			if err != nil || res.IsError {
				b.Fatalf("call: %v %v", err, res)
			}
		}
		b.StopTimer()
		slices.Sort(durations)
		b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
	}

	b.Run("direct", func(b *testing.B) {
		s, _ := newPeer()
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st, nil); err != nil {
			b.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		run(b, cs)
	})

	gateway := func(b *testing.B, cfg app.Config) {
		be, sid := benchSession(ctx, b, cfg)
		up, _ := inMemory("peer")
		g, err := New(ctx, Options{Upstreams: []Upstream{up}, Backend: be, Sessions: StaticSession(sid)})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		ct, st := mcp.NewInMemoryTransports()
		go g.Run(ctx, st)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		run(b, cs)
	}
	// What the gateway asks of Mandate per call, without MCP: decide and
	// record the result (store without fsync).
	b.Run("mandate-only", func(b *testing.B) {
		be, sid := benchSession(ctx, b, app.Config{Synchronous: "OFF"})
		if _, err := be.PinTools(ctx, sid, []action.ToolDef{{Name: "greet", Description: greetDescription, InputSchema: map[string]any{"type": "object"},
			Annotations: &action.Annotations{ReadOnlyHint: boolPtr(true)}}}); err != nil {
			b.Fatal(err)
		}
		args := json.RawMessage(`{"name":"Ada"}`)
		out := json.RawMessage(`{"content":[{"type":"text","text":"Hello, Ada!"}]}`)
		durations := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			v, err := be.Evaluate(ctx, sid, "greet", args)
			if err != nil || v.Effect != "allow" {
				b.Fatalf("evaluate: %+v %v", v, err)
			}
			if err := be.Observe(ctx, v.ID, out); err != nil {
				b.Fatal(err)
			}
			durations = append(durations, time.Since(start))
		}
		slices.Sort(durations)
		b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
	})
	// The store without fsync: the gateway's and the engine's CPU cost.
	b.Run("gateway", func(b *testing.B) { gateway(b, app.Config{Synchronous: "OFF"}) })
	// The default: the decision and the observation each fsynced before
	// the call goes on.
	b.Run("gateway-durable", func(b *testing.B) {
		gateway(b, app.Config{DataDir: filepath.Join(b.TempDir(), "data")})
	})
}

// benchSession opens an instance on cfg, closed when b ends, and a session
// in it for the benchmark's calls.
func benchSession(ctx context.Context, b *testing.B, cfg app.Config) (*EngineBackend, string) {
	b.Helper()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	be := &EngineBackend{Engine: a.Engine, Default: gatewayAdmin, Source: "user"}
	sid, err := be.EnsureSession(ctx, SessionSpec{AgentID: "bench", Intent: "Greet Ada."})
	if err != nil {
		b.Fatal(err)
	}
	return be, sid
}
