package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
)

// BenchmarkEvaluateHTTP measures /v1/evaluate over loopback HTTP with a
// file-backed store (fsync on), as `mandate serve` runs.
func BenchmarkEvaluateHTTP(b *testing.B) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DataDir: filepath.Join(b.TempDir(), "d")})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	tok, rec, _ := auth.Issue("admin", "", "bench", time.Now())
	a.Store.CreateToken(ctx, rec)
	srv := httptest.NewServer(New(Options{Engine: a.Engine}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var sids []string
	for i := 0; i < 64; i++ {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/sessions", strings.NewReader(`{"agent_id":"dev","intent":"Fix the failing test in ./pkg/auth and run the tests","working_directory":"/home/dev/p"}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		resp.Body.Close()
		s := buf.String()
		i := strings.Index(s, `"session_id":"`) + len(`"session_id":"`)
		sids = append(sids, s[i:i+36])
	}
	calls := []string{
		`"tool":"Read","args":{"file_path":"pkg/auth/token.go"}}`,
		`"tool":"Bash","args":{"command":"go test ./pkg/auth/... 2>&1 | tail -20"}}`,
		`"tool":"Edit","args":{"file_path":"pkg/auth/token.go","old_string":"a","new_string":"b"}}`,
		`"tool":"mcp__gmail__send_email","args":{"to":"eve@competitor.example","subject":"x"}}`,
	}
	b.SetParallelism(8)
	b.ResetTimer()
	var n int64
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			body := `{"session_id":"` + sids[i%len(sids)] + `",` + calls[i%len(calls)]
			req, _ := http.NewRequest("POST", srv.URL+"/v1/evaluate", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("%d %s", resp.StatusCode, buf.String())
				return
			}
		}
		_ = n
	})
}
