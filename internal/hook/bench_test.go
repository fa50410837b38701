package hook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mandate-dev/mandate/internal/hook"
	"slices"
	"testing"
	"time"
)

// BenchmarkAnswerPreToolUse is the hook's work for one tool call once its
// process runs: parse the event, ask the server over HTTP (which decides
// and commits the decision) and build the answer. The server runs in this
// process with an in-memory store.
func BenchmarkAnswerPreToolUse(b *testing.B) {
	h, _ := inProcess(b)
	ctx := context.Background()
	session := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	prompt, _ := json.Marshal(map[string]any{"session_id": session, "cwd": "/home/dev/api", "hook_event_name": hook.EventUserPromptSubmit,
		"prompt": "Fix the failing test in ./pkg/auth"})
	ev, err := hook.ParseEvent(prompt)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := h.Answer(ctx, ev); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		raw := fmt.Appendf(nil, `{"session_id":%q,"cwd":"/home/dev/api","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/home/dev/api/pkg/auth/token.go"},"tool_use_id":"toolu_%d"}`, session, i)
		ev, err := hook.ParseEvent(raw)
		if err != nil {
			b.Fatal(err)
		}
		out, err := h.Answer(ctx, ev)
		if err != nil || out.HookSpecificOutput.PermissionDecision != "allow" {
			b.Fatalf("%+v %v", out, err)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
