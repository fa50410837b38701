package security

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/act"
)

// Every parser is bounded (issue 10.2): a pathological input — nested
// $( ) twenty thousand deep, a hundred thousand statements, arguments
// nested past any sane depth — is decided, ask or deny with the reason,
// well under a second, through the real HTTP server; the limits are
// action's documented constants (docs/catalog.md, "Limits").

// devIntent grants write (and so the project's build and test commands).
const devIntent = "Fix the failing test in ./pkg/auth and run the tests"

// devSession is a coding session in /home/dev/api.
func devSession(t *testing.T, in *instance) string {
	t.Helper()
	return in.sessionAs("user", map[string]any{"agent_id": "claude-code", "intent": devIntent,
		"working_directory": "/home/dev/api", "home_directory": "/home/dev"})
}

// devBash evaluates command as a Bash call in a new devSession: the call
// must be answered, with effect want. It returns the answer.
func devBash(t *testing.T, in *instance, command, want string) reply {
	t.Helper()
	r := in.evaluate("user", devSession(t, in), "Bash", map[string]any{"command": command})
	if r.code != 200 {
		t.Fatalf("evaluate: %d %s", r.code, truncate(string(r.raw)))
	}
	if eff := r.str("effect"); eff != want {
		t.Errorf("%s (%v), want %s", eff, r.body["reasons"], want)
	}
	return r
}

// decidedWithinOrdinary is the bound on one pathological decision, in
// ordinary decisions (a Bash `go test ./...` in a new session, through the
// same server, timed beside it). The issue asks for well under a second on
// the project's 2-core machine, where an ordinary decision takes about a
// millisecond: a bound in ordinary decisions says the same on a quiet
// machine and still holds the algorithm on a busy one, where both are
// slower alike. A parser that walked 20,000 levels or 100,000 statements in
// full, let alone twice, is far past it.
const decidedWithinOrdinary = 1000

// ordinary is the reference call's arguments.
var ordinary = map[string]any{"command": "go test ./..."}

func nest(n int, open, inner, close string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

func TestBoundedParsers(t *testing.T) {
	in := start(t, "")
	if _, eff := in.decide("user", devSession(t, in), "Bash", map[string]any{"command": "go test ./..."}); eff != "allow" {
		t.Fatalf("setup: go test is %s, want allow", eff)
	}
	deepJSON := any("x")
	for range 200 {
		deepJSON = map[string]any{"a": deepJSON}
	}
	wide := make([]any, act.MaxArgNodes+10)
	for i := range wide {
		wide[i] = "./pkg/auth/token_test.go"
	}
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string // in the reason
	}{
		{"20,000 nested $( )", "Bash", map[string]any{"command": "go test " + nest(20000, "$(echo ", "./...", ")")}, "MaxShellNesting"},
		{"20,000 nested backquotes in $( )", "Bash", map[string]any{"command": "go test " + nest(20000, "$(`", "x", "`)")}, "MaxShellNesting"},
		{"20,000 nested subshells", "Bash", map[string]any{"command": nest(20000, "(", "go test ./...", ")")}, "MaxShellNesting"},
		{"20,000 nested groups", "Bash", map[string]any{"command": nest(20000, "{ ", "go test ./...;", " }")}, "MaxShellNesting"},
		{"20,000 nested ${ } defaults", "Bash", map[string]any{"command": "go test " + nest(20000, "${a:-", "./...", "}")}, "MaxShellNesting"},
		{"20,000 nested process substitutions", "Bash", map[string]any{"command": "cat " + nest(20000, "<(cat ", "x", ")")}, "MaxShellNesting"},
		{"20,000 nested quotes and substitutions", "Bash", map[string]any{"command": "go test " + nest(10000, `"$(echo `, "x", `)"`)}, "MaxShellNesting"},
		{"nesting just past the limit", "Bash", map[string]any{"command": "go test " + nest(act.MaxShellNesting+1, "$(echo ", "./...", ")")}, "MaxShellNesting"},
		{"100,000 statements", "Bash", map[string]any{"command": strings.Repeat(": ;", 100000) + "go test ./..."}, "MaxShellTokens"},
		{"100,000 redirections", "Bash", map[string]any{"command": "go test ./... " + strings.Repeat(">x ", 100000)}, "MaxShellTokens"},
		{"300,000 words", "Bash", map[string]any{"command": "go test " + strings.Repeat("a ", 300000)}, "MaxShellTokens"},
		{"an arithmetic chain of 100,000 terms", "Bash", map[string]any{"command": "echo $((" + strings.Repeat("1+", 100000) + "1))"}, "MaxShellTokens"},
		{"a test expression of 50,000 terms", "Bash", map[string]any{"command": "[[ " + strings.Repeat("a && ", 50000) + "b ]] && go test ./..."}, "MaxShellTokens"},
		{"30,000 assignments: parsed, then past the work budget", "Bash", map[string]any{"command": strings.Repeat("x=1;", 30000) + "go test ./..."}, "MaxShellWork"},
		{"600 commands: past the command limit", "Bash", map[string]any{"command": strings.Repeat("go vet ./...; ", 600)}, "MaxShellCommands"},
		{"sh -c nested past the interpreter limit", "Bash", map[string]any{"command": nestedShC(act.MaxShellDepth + 2)}, "MaxShellDepth"},
		{"a deep interpreter nest inside a substitution", "Bash", map[string]any{"command": "go test $(" + nestedShC(act.MaxShellDepth+2) + ")"}, "MaxShellDepth"},
		{"arguments nested 200 deep", "Edit", map[string]any{"file_path": "/home/dev/api/pkg/auth/token.go", "old_string": "a", "new_string": "b", "meta": deepJSON}, "MaxArgDepth"},
		{"arguments with more values than are walked", "Edit", map[string]any{"file_path": "/home/dev/api/pkg/auth/token.go", "old_string": "a", "new_string": "b", "also": wide}, "MaxArgNodes"},
		{"a SQL statement longer than is read", "query", map[string]any{"sql": "WITH a AS (SELECT " + strings.Repeat("x, ", act.MaxSQLWords) + "y) DELETE FROM users"}, "MaxSQLWords"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r reply
			took, ref := time.Duration(1<<63-1), time.Duration(1<<63-1)
			// The fastest of three runs counts, each beside a reference
			// run of an ordinary call, so that load weighs on both alike.
			// Each in a session of its own, so that no refusal before it
			// plays a part.
			for range 3 {
				sid, rsid := devSession(t, in), devSession(t, in)
				start := time.Now()
				in.evaluate("user", rsid, "Bash", ordinary)
				ref = min(ref, time.Since(start))
				start = time.Now()
				r = in.evaluate("user", sid, tc.tool, tc.args)
				took = min(took, time.Since(start))
			}
			if r.code != 200 {
				t.Fatalf("evaluate: %d %s", r.code, truncate(string(r.raw)))
			}
			eff := r.str("effect")
			if eff == "allow" {
				t.Fatalf("allowed: %s", truncate(string(r.raw)))
			}
			// The action says what was not examined; an ask says so in
			// its reasons (a deny may come first from another rule:
			// the self-protection rules fail closed on a huge line).
			act, _ := r.body["action"].(map[string]any)
			if un := fmt.Sprint(act["unexamined"]); !strings.Contains(un, tc.want) {
				t.Errorf("%s with unexamined %s; want a reason naming %s", eff, truncate(un), tc.want)
			}
			if reasons := fmt.Sprint(r.body["reasons"]); eff == "ask" && !strings.Contains(reasons, tc.want) {
				t.Errorf("ask with reasons %s; want one naming %s", truncate(reasons), tc.want)
			}
			// The race detector's slowdown (3.6 s for the nesting case under
			// load, 0.06 s without) says nothing about the bound; .ci/run
			// checks it in a run of its own without the detector.
			t.Logf("decided in %v, %.0f ordinary decisions (%v)", took, float64(took)/float64(ref), ref)
			if over := took > ref*decidedWithinOrdinary; over && !raceDetector {
				t.Errorf("decided in %v, %.0f times an ordinary decision (%v): over %d", took, float64(took)/float64(ref), ref, decidedWithinOrdinary)
			} else if over {
				t.Logf("over %d ordinary decisions under the race detector (checked without it)", decidedWithinOrdinary)
			}
		})
	}
	// A session goes on deciding normally after one.
	sid := devSession(t, in)
	in.evaluate("user", sid, "Bash", map[string]any{"command": "go test " + nest(20000, "$(echo ", "./...", ")")})
	if _, eff := in.decide("user", sid, "Bash", map[string]any{"command": "go test ./pkg/auth/"}); eff != "allow" {
		t.Errorf("after a pathological call go test is %s", eff)
	}
}

// TestBoundedWithinLimits: lines at the edge of every limit are examined
// in full and decided on what they do.
func TestBoundedWithinLimits(t *testing.T) {
	in := start(t, "")
	tests := []struct {
		name    string
		command string
		want    string
	}{
		{"nesting at the limit", nest(act.MaxShellNesting, "(", "go test ./...", ")"), "allow"},
		{"sh -c at the interpreter limit", nestedShC(act.MaxShellDepth), "allow"},
		{"500 commands", strings.Repeat("go vet ./...; ", 500), "allow"},
		{"a 20 KB here-document", "cat > /home/dev/api/notes.txt <<'EOF'\n" + strings.Repeat("The quick brown fox, jumps over the lazy dog.\n", 450) + "EOF\n", "allow"},
		{"rm -rf / after 500 harmless commands", strings.Repeat("go vet ./...; ", 500) + "rm -rf /", "deny"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			devBash(t, in, tc.command, tc.want)
		})
	}
}

// nestedShC is `go test ./...` inside n nested interpreters: each eval
// parses the rest of the line again (sh -c quoting would grow the line
// fourfold a level).
func nestedShC(n int) string {
	return strings.Repeat("eval ", n) + "go test ./..."
}

func truncate(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}
