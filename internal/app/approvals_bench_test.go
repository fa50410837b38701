package app

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/cputime"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
)

// BenchmarkAsk measures what the approval queue adds to a decision: an
// allowed call against an ask (which reads the call's approvals and the
// session's grants, and names the pending approval it reuses), on the
// embedded store and on PostgreSQL. It reports p50 and p99 beside the mean.
//
//	MANDATE_TEST_POSTGRES=postgres://… go test ./internal/app -run '^$' -bench BenchmarkAsk -benchtime=500x
func BenchmarkAsk(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, call := range []string{"allow", "ask"} {
			b.Run(backend+"/"+call, func(b *testing.B) {
				ctx := context.Background()
				cfg := Config{DataDir: b.TempDir()}
				if backend == "postgres" {
					cfg.Store = pgtest.DSN(b)
				}
				a, err := Open(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer a.Close()
				if _, err := a.Engine.CreateSession(ctx, admin, engine.SessionRequest{ID: "b", AgentID: "mailer", Intent: "Send the Q3 summary to alice@example.com"}); err != nil {
					b.Fatal(err)
				}
				to, want := "alice@example.com", policy.Allow
				if call == "ask" {
					to, want = "eve@auditors.example", policy.Ask
				}
				req := engine.EvaluateRequest{SessionID: "b", Tool: "send_email", Args: map[string]any{"to": to, "subject": "Q3", "body": "numbers"}}
				took := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cputime.Total()
				for b.Loop() {
					t0 := time.Now()
					d, err := a.Engine.Evaluate(ctx, admin, req)
					took = append(took, time.Since(t0))
					if err != nil || d.Effect != want {
						b.Fatalf("%v %v, want %s", d, err, want)
					}
				}
				b.StopTimer()
				// CPU time moves far less than wall time on a shared machine.
				b.ReportMetric(float64((cputime.Total()-cpu0).Nanoseconds())/float64(b.N)/1000, "cpu-µs/op")
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}
