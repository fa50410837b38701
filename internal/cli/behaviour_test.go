package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/client"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

func TestBehaviourCommands(t *testing.T) {
	testpeer.Slow(t)
	s := serveWithConfig(t, "", nil)
	ctx := context.Background()
	c := client.New(s.url, s.admin)
	var lastDecision, lastSession string
	for range 2 {
		sess, err := c.CreateSession(ctx, client.SessionRequest{AgentID: "reader", Intent: "Read the project's README and summarise it."})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"/work/proj/README.md", "/work/proj/go.mod"} {
			d, err := c.Evaluate(ctx, sess.SessionID, "Read", map[string]any{"file_path": f})
			if err != nil {
				t.Fatal(err)
			}
			lastDecision, lastSession = d.ID, sess.SessionID
		}
	}
	// The fold runs in the background: wait until the agent shows.
	var out string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		_, out, _ = runAs(t, s, s.admin, "agents")
		if strings.Contains(out, "reader") && strings.Contains(out, "learning") && strings.Contains(out, " 4 ") {
			break
		}
	}
	if !strings.Contains(out, "reader") {
		t.Fatalf("mandate agents:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agents", "reader"}, "agent reader: learning, 2 sessions"},
		{[]string{"agents", "--json"}, `"agents": [`},
		{[]string{"drift", "reader"}, "one version: nothing to compare"},
		{[]string{"drift", "--json", "reader"}, `"pairs": []`},
		{[]string{"trace", lastDecision}, "no departure"},
		{[]string{"trace", "--json", lastDecision}, `"first_departure": null`},
		{[]string{"summary", lastSession}, "2 calls"},
		{[]string{"review", "reader"}, "2 sessions reviewed"},
		{[]string{"baseline", "freeze", "reader"}, "agent reader: frozen"},
	} {
		code, out, errs := runAs(t, s, s.admin, tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("mandate %s: exit %d, want %q in\n%s%s", strings.Join(tc.args, " "), code, tc.want, out, errs)
		}
	}
	if code, _, errs := runAs(t, s, s.admin, "drift", "nobody"); code == 0 || !strings.Contains(errs, "not found") {
		t.Errorf("drift of an unknown agent: exit %d, %s", code, errs)
	}
}
