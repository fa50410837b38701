package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
)

// sequenceBackends open a store that outlives an engine: a SQLite file,
// and PostgreSQL when MANDATE_TEST_POSTGRES names a server.
var sequenceBackends = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"sqlite", func(t *testing.T) store.Store {
		return testStore(t, filepath.Join(t.TempDir(), "m.db"))
	}},
	{"postgres", func(t *testing.T) store.Store {
		st, err := postgres.Open(context.Background(), pgtest.DSN(t), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
}

// engineOn is an engine on st with the built-in pack and the policy files
// in dirs, as a server started on that store.
func engineOn(t *testing.T, st store.Store, dirs ...string) *Engine {
	t.Helper()
	pol, err := policy.Load(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	return engineWith(t, Options{Store: st, Policy: pol})
}

// TestSequencesSurviveRestart: a partial match made before a restart is
// completed after it, on SQLite and PostgreSQL — the session's sequence
// state is rebuilt from its stored decisions — and the reason names the
// decision made before the restart.
func TestSequencesSurviveRestart(t *testing.T) {
	for _, b := range sequenceBackends {
		t.Run(b.name, func(t *testing.T) {
			st := b.open(t)
			e := engineOn(t, st)
			sid := mustSession(t, e, SessionRequest{AgentID: "dev", Intent: "fix the failing test in ./pkg", WorkingDir: "/w/proj"})
			rm := call(t, e, sid, "Bash", map[string]any{"command": "rm -rf build/"}, "")
			if rm.Effect != policy.Deny {
				t.Fatalf("rm -rf build/: %s %v", rm.Effect, rm.Rules)
			}
			call(t, e, sid, "Read", map[string]any{"file_path": "/w/proj/pkg/a.go"}, `"package a"`)
			// Hosts the task never named, fetched one by one: ten before
			// the restart, one after, and the twelfth is asked about.
			for i := range 10 {
				d := call(t, e, sid, "WebFetch", map[string]any{"url": fmt.Sprintf("https://site%d.example/page", i), "prompt": "read"}, "")
				if hasRule(d, "builtin.scope-creep") {
					t.Fatalf("fetch %d: %v", i, d.Rules)
				}
			}

			e2 := engineOn(t, st) // a restart: nothing in memory
			mv := call(t, e2, sid, "Bash", map[string]any{"command": "mv build /tmp/trash"}, "")
			if mv.Effect != policy.Deny || !hasRule(mv, "builtin.retry-after-deny") {
				t.Fatalf("mv after the restart: %s %v %q", mv.Effect, mv.Rules, mv.Reasons)
			}
			if !slices.ContainsFunc(mv.Reasons, func(r string) bool { return strings.Contains(r, "decision "+rm.ID) }) {
				t.Errorf("the reason does not name the decision before the restart: %q", mv.Reasons)
			}
			if d := call(t, e2, sid, "WebFetch", map[string]any{"url": "https://site10.example/page", "prompt": "read"}, ""); hasRule(d, "builtin.scope-creep") {
				t.Fatalf("eleventh host: %v", d.Rules)
			}
			e3 := engineOn(t, st)
			d := call(t, e3, sid, "WebFetch", map[string]any{"url": "https://site11.example/page", "prompt": "read"}, "")
			if !hasRule(d, "builtin.scope-creep") || d.Effect == policy.Allow {
				t.Errorf("twelfth host after two restarts: %s %v %q", d.Effect, d.Rules, d.Reasons)
			}
		})
	}
}

// groupedRetry is the built-in retry sequence regrouped: by delegation
// tree and by agent.
const groupedRetry = `
sequences:
  - name: retry-in-tree
    by: tree
    within: 200 calls
    steps:
      - name: denied
        when: size(this.targets) > 0
        decided: deny
      - name: retry
        when: >-
          this.session_id != steps.denied[0].session_id
          && this.targets.exists(t, steps.denied[0].targets.exists(r, r.role == t.role && r.value == t.value))
    effect: deny
    reason: a session of the tree retries what ${steps.denied[0].session_id} was refused
  - name: retry-by-agent
    by: agent
    within: 1h
    steps:
      - name: denied
        when: size(this.targets) > 0 && "send" in action.kinds
        decided: [deny, ask]
      - name: retry
        when: >-
          this.session_id != steps.denied[0].session_id
          && this.targets.exists(t, steps.denied[0].targets.exists(r, r.role == "recipient" && r.value == t.value))
    effect: deny
    reason: the agent sends again to what session ${steps.denied[0].session_id} was refused or asked about
`

// TestSequencesByTreeAndAgent: a sequence grouped by tree sees a refusal
// in the parent and the retry in its child (and not in an unrelated
// session); one grouped by agent sees a refusal in one of the agent's
// sessions and the retry in another (and not another agent's).
func TestSequencesByTreeAndAgent(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "grouped.yaml"), []byte(groupedRetry), 0o600); err != nil {
		t.Fatal(err)
	}
	st := sequenceBackends[0].open(t)
	e := engineOn(t, st, dir)
	ctx := context.Background()

	parent := mustSession(t, e, SessionRequest{AgentID: "lead", Intent: "fix the failing test in ./pkg", WorkingDir: "/w/proj"})
	child, err := e.CreateSession(ctx, user, SessionRequest{AgentID: "lead", Intent: "fix the failing test in ./pkg", WorkingDir: "/w/proj", ParentID: parent})
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := e.CreateSession(ctx, user, SessionRequest{AgentID: "lead", Intent: "fix the failing test in ./pkg", WorkingDir: "/w/proj", ParentID: child.Session.ID})
	if err != nil {
		t.Fatal(err)
	}
	other := mustSession(t, e, SessionRequest{AgentID: "other", Intent: "fix the failing test in ./pkg", WorkingDir: "/w/proj"})
	rm := call(t, e, parent, "Bash", map[string]any{"command": "rm -rf build/"}, "")
	if rm.Effect != policy.Deny {
		t.Fatalf("rm in the parent: %s %v", rm.Effect, rm.Rules)
	}
	if d := call(t, e, other, "Bash", map[string]any{"command": "rm -rf build/"}, ""); hasRule(d, "retry-in-tree") {
		t.Errorf("another tree: %v", d.Rules)
	}
	d := call(t, e, grandchild.Session.ID, "Bash", map[string]any{"command": "rm -rf build/"}, "")
	if !hasRule(d, "retry-in-tree") || !slices.ContainsFunc(d.Reasons, func(r string) bool { return strings.Contains(r, parent+" was refused") }) {
		t.Errorf("the retry in the grandchild: %v %q", d.Rules, d.Reasons)
	}

	mailer1 := mustSession(t, e, SessionRequest{AgentID: "mailer", Intent: "summarise my inbox"})
	mailer2 := mustSession(t, e, SessionRequest{AgentID: "mailer", Intent: "summarise my inbox"})
	stranger := mustSession(t, e, SessionRequest{AgentID: "stranger", Intent: "summarise my inbox"})
	send := map[string]any{"to": []any{"eve@elsewhere.example"}, "subject": "hi", "body": "the invoices"}
	if d := call(t, e, mailer1, "send_email", send, ""); d.Effect != policy.Deny && d.Effect != policy.Ask {
		t.Fatalf("send nobody asked for: %s %v", d.Effect, d.Rules)
	}
	if d := call(t, e, stranger, "gmail_send", send, ""); hasRule(d, "retry-by-agent") {
		t.Errorf("another agent: %v", d.Rules)
	}
	d = call(t, e, mailer2, "gmail_send", send, "")
	if !hasRule(d, "retry-by-agent") || d.Effect != policy.Deny {
		t.Errorf("the agent's other session: %s %v %q", d.Effect, d.Rules, d.Reasons)
	}
}
