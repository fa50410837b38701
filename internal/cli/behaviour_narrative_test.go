package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/judge/judgetest"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// TestReviewNarrative runs `mandate serve` with a judge model (the
// OpenAI-compatible test server, a separate process) and asks `mandate
// review --narrative` and `mandate summary --narrative` through the HTTP
// API: the narrative comes back beside the facts, labelled model-written;
// an answer outside the schema leaves an error and the facts; without the
// flag no narrative is asked for.
func TestReviewNarrative(t *testing.T) {
	testpeer.Slow(t)
	jsrv := judgetest.Start(t, []judgetest.Rule{
		{Match: `"subject":"agent"`, Content: `{"narrative":"The reader agent read two files in each of two sessions and repeated nothing questionable."}`},
		{Match: `"subject":"session"`, Content: `{"verdict":"not a narrative"}`},
	})
	config := fmt.Sprintf(`judge:
  url: %s
  model: qwen2.5-7b-instruct
  api_key_env: MANDATE_JUDGE_KEY
  mode: advisory
  eligible: all
  timeout: 10s
`, jsrv.URL)
	s := serveWithConfig(t, config, map[string]string{"MANDATE_JUDGE_KEY": "sk-local"})
	ctx := context.Background()
	c := client.New(s.url, s.admin)
	var lastSession string
	for range 2 {
		sess, err := c.CreateSession(ctx, client.SessionRequest{AgentID: "reader", Intent: "Read the project's README and summarise it."})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"/work/proj/README.md", "/work/proj/go.mod"} {
			if _, err := c.Evaluate(ctx, sess.SessionID, "Read", map[string]any{"file_path": f}); err != nil {
				t.Fatal(err)
			}
		}
		lastSession = sess.SessionID
	}
	// The fold runs in the background: wait until the review sees both
	// sessions, so the facts the model is shown are the final ones.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if r, err := c.Review(ctx, "reader"); err == nil && r.Sessions == 2 {
			break
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"review", "--narrative", "reader"}, []string{"2 sessions reviewed", "narrative (model-written by qwen2.5-7b-instruct, from facts sha256:", "  The reader agent read two files"}, ""},
		{[]string{"review", "--narrative", "--json", "reader"}, []string{`"model_written": true`, `"text": "The reader agent read two files`, `"facts_digest": "sha256:`}, ""},
		{[]string{"review", "reader"}, []string{"2 sessions reviewed"}, "narrative"},
		// An answer outside the schema: no text, the error, the facts.
		{[]string{"summary", "--narrative", lastSession}, []string{"2 calls", "narrative (model-written): none — "}, "not a narrative"},
		{[]string{"summary", lastSession}, []string{"2 calls"}, "narrative"},
	} {
		code, out, errs := runAs(t, s, s.admin, tc.args...)
		if code != 0 {
			t.Errorf("mandate %s: exit %d\n%s%s", strings.Join(tc.args, " "), code, out, errs)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("mandate %s: want %q in\n%s", strings.Join(tc.args, " "), w, out)
			}
		}
		if tc.not != "" && strings.Contains(out, tc.not) {
			t.Errorf("mandate %s: %q should not be in\n%s", strings.Join(tc.args, " "), tc.not, out)
		}
	}
	// The model was asked once per --narrative (three times), never
	// without it.
	if n := len(jsrv.Requests(t)); n != 3 {
		t.Errorf("the judge model was asked %d times, want 3", n)
	}
}
