package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/cputime"
)

// BenchmarkClaudeCodeHookHTTP is one PreToolUse event end to end as Claude
// Code's http handler sends it: over loopback TCP to POST
// /v1/hooks/claude-code, decided and committed with fsync (a file-backed
// store, as `mandate serve` runs), answered. Beside the wall-clock p50/p99
// it reports the process's CPU per event (client and server together),
// which a shared machine does not distort.
func BenchmarkClaudeCodeHookHTTP(b *testing.B) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DataDir: filepath.Join(b.TempDir(), "d")})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	tok, rec, _ := auth.Issue("hook", "", "bench", time.Now())
	if err := a.Store.CreateToken(ctx, rec); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(New(Options{Engine: a.Engine}))
	defer srv.Close()
	client := &http.Client{}
	post := func(body string) string {
		req, _ := http.NewRequest("POST", srv.URL+ClaudeCodeHookPath+"?home=/home/dev", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		io.Copy(&buf, resp.Body)
		return buf.String()
	}
	session := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	post(`{"session_id":"` + session + `","cwd":"/home/dev/api","hook_event_name":"UserPromptSubmit","prompt":"Fix the failing test in ./pkg/auth"}`)
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	cpu0 := cputime.Total()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		out := post(fmt.Sprintf(`{"session_id":%q,"cwd":"/home/dev/api","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/home/dev/api/pkg/auth/token.go"},"tool_use_id":"toolu_%d"}`, session, i))
		lat = append(lat, time.Since(t0))
		if !strings.Contains(out, `"permissionDecision":"allow"`) {
			b.Fatalf("answer %s", out)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cputime.Total()-cpu0).Microseconds())/float64(len(lat)), "cpu-µs/op")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
