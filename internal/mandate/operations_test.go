package mandate

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

// Rule 14, operations: a "don't" about one operation the table knows
// prohibits that operation on the calls that perform it, in every
// language, and leaves the rest of its kind as the other words make it.
func TestRule14OperationProhibitions(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Fix the failing test in ./pkg/auth. Do not push anything.", lang: "en",
			allow: ks(r, w), paths: []string{"pkg/auth/**"}, prohibit: []string{"send:operation:push"}},
		{text: "Reply to the reviewer but don't push", lang: "en",
			allow: ks(r, s), prohibit: []string{"send:operation:push"}},
		{text: "Behebe den fehlschlagenden Test in ./internal/cart und pushe nichts.", lang: "de",
			allow: ks(r, w), paths: []string{"internal/cart/**"}, prohibit: []string{"send:operation:push"}},
		{text: "Corrige le test, mais ne pousse rien", lang: "fr",
			allow: ks(r, w), prohibit: []string{"send:operation:push"}},
		{text: "Arregla el test, pero no hagas push", lang: "es",
			allow: ks(r, w), prohibit: []string{"send:operation:push"}},
		{text: "Sistema il test, ma non fare push", lang: "it",
			allow: ks(r, w), prohibit: []string{"send:operation:push"}},
		// The words make it general: every send.
		{text: "don't send anything to anyone", lang: "en", allow: ks(r), deny: ks(s)},
	})
}

func TestPerformsOperation(t *testing.T) {
	cmd := func(argv ...string) action.Command { return action.Command{Name: argv[0], Argv: argv} }
	for _, tc := range []struct {
		op   string
		a    action.Action
		want bool
	}{
		{"push", action.Action{Tool: "Bash", Commands: []action.Command{cmd("git", "push", "origin", "HEAD")}}, true},
		{"push", action.Action{Tool: "Bash", Commands: []action.Command{cmd("git", "-C", "repo", "push")}}, true},
		{"push", action.Action{Tool: "Bash", Commands: []action.Command{cmd("git", "status")}}, false},
		{"push", action.Action{Tool: "Bash", Commands: []action.Command{cmd("echo", "push")}}, false},
		{"push", action.Action{Tool: "mcp__github__push_files"}, true},
		{"push", action.Action{Tool: "github.create_or_update_file"}, true},
		{"push", action.Action{Tool: "mcp__github__create_issue"}, false},
		{"merge", action.Action{Tool: "Bash", Commands: []action.Command{cmd("gh", "pr", "merge", "--squash", "12")}}, true},
		{"merge", action.Action{Tool: "Bash", Commands: []action.Command{cmd("gh", "pr", "view", "12")}}, false},
		{"merge", action.Action{Tool: "merge_pull_request"}, true},
		// An operation the table does not hold: the prohibition holds.
		{"teleport", action.Action{Tool: "Read"}, true},
	} {
		if got := performs(&tc.a, tc.op); got != tc.want {
			t.Errorf("performs(%s, %s %v) = %v, want %v", tc.op, tc.a.Tool, tc.a.Commands, got, tc.want)
		}
	}
}

// TestOperationProhibitionChecked: the check reports the prohibition on
// a push and not on another send.
func TestOperationProhibitionChecked(t *testing.T) {
	m := &Mandate{Allow: []action.Kind{action.Read, action.Write},
		Prohibitions: []Prohibition{{Kind: action.Send, Target: OperationTarget + "push", Text: "don't push"}}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	push := &action.Action{Tool: "Bash", Kind: action.Send, Kinds: []action.Kind{action.Send},
		Commands: []action.Command{{Name: "git", Argv: []string{"git", "push"}}}}
	issue := &action.Action{Tool: "create_issue", Kind: action.Send, Kinds: []action.Kind{action.Send}}
	if r := m.CheckIn(push, Env{}, time.Now()); len(r.Prohibited) != 1 {
		t.Errorf("git push: prohibited %v, want the user's words", r.Prohibited)
	}
	if r := m.CheckIn(issue, Env{}, time.Now()); len(r.Prohibited) != 0 {
		t.Errorf("create_issue: prohibited %v, want none", r.Prohibited)
	}
	bad := &Mandate{Allow: []action.Kind{action.Read}, Prohibitions: []Prohibition{{Kind: action.Send, Target: OperationTarget + "teleport", Text: "x"}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "operation") {
		t.Errorf("unknown operation: %v, want an error naming it", err)
	}
}

// TestOperationVerbsValidated: a language naming an operation the table
// lacks, or a word that is not a verb, is refused with its file.
func TestOperationVerbsValidated(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"operation_verbs: {teleport: [send]}\n", `"teleport" is not an operation`},
		{"operation_verbs: {push: [blorp]}\n", `"blorp" is not in verbs`},
	} {
		fsys := fstest.MapFS{"lang/xx.yaml": {Data: []byte("code: xx\nname: X\nverbs: {send: [send]}\n" + tc.yaml)}}
		_, err := loadLexiconFS(fsys)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "xx.yaml") {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
