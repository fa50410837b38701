package action

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/act"
	"github.com/mandate-dev/mandate/internal/shell"
)

// shellWork classifies one Bash command line and returns the action with
// the work the shell analysis spent.
func shellWork(t testing.TB, ctx context.Context, line string) (Action, int) {
	t.Helper()
	k, err := builtinKnowledge()
	if err != nil {
		t.Fatal(err)
	}
	bg := shell.NewBudget(ctx)
	res := k.analyzeShell(bg, line, "/w", "/h", nil)
	b := newBuilder("Bash")
	applyShell(b, res)
	return b.finish(), bg.Spent()
}

func TestShellBounded(t *testing.T) {
	nested := func(n int, open, close string) string {
		return "echo " + strings.Repeat(open, n) + "x" + strings.Repeat(close, n)
	}
	tests := []struct {
		name string
		line string
		want string // part of an unexamined reason; "" for none
	}{
		{"20,000 nested $( )", nested(20000, "$(echo ", ")"), "MaxShellNesting"},
		{"20,000 nested backquote-in-$( )", nested(20000, "$(`", "`)"), "MaxShellNesting"},
		{"20,000 nested subshells", strings.Repeat("(", 20000) + "ls" + strings.Repeat(")", 20000), "MaxShellNesting"},
		{"20,000 nested ${ }", "echo " + strings.Repeat("${a:-", 20000) + "x" + strings.Repeat("}", 20000), "MaxShellNesting"},
		{"nesting at the limit is parsed", nested(act.MaxShellNesting-1, "$(echo ", ")"), ""},
		{"100,000 statements", strings.Repeat(": ;", 100000), "MaxShellTokens"},
		{"100,000 redirections", strings.Repeat(">a ", 100000), "MaxShellTokens"},
		{"500,000 words", "echo " + strings.Repeat("a ", 500000), "MaxShellTokens"},
		{"60,000 variables", "echo " + strings.Repeat("$a ", 60000), "MaxShellTokens"},
		{"30,000 statements, within the tokens but past the work", strings.Repeat("x=1;", 30000), "MaxShellWork"},
		{"a 200 KB here-document is examined", "cat > notes.txt <<'EOF'\n" + strings.Repeat("The quick brown fox, jumps over the lazy dog.\n", 4500) + "EOF\n", ""},
		{"600 commands", strings.Repeat("ls; ", 600), "MaxShellCommands"},
		{"a SQL statement past the word cap in psql -c", `psql -c "WITH a AS (SELECT ` + strings.Repeat("x, ", act.MaxSQLWords) + `y) DELETE FROM users"`, "MaxSQLWords"},
		{"a plain line", "go test ./...", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, work := shellWork(t, context.Background(), tc.line)
			if work > act.MaxShellWork+len(tc.line)/256+1 {
				t.Errorf("work %d over the budget %d", work, act.MaxShellWork)
			}
			wantUnexamined(t, a, tc.want)
			if tc.want != "" && a.Kind.Rank() < Execute.Rank() {
				t.Errorf("kind %s for a line not examined", a.Kind)
			}
		})
	}
}

func TestShellDepthLimit(t *testing.T) {
	line := "ls"
	for range act.MaxShellDepth + 2 {
		line = "sh -c " + shell.Quote(line)
	}
	a, _ := shellWork(t, context.Background(), line)
	if !strings.Contains(strings.Join(a.Unexamined, ";"), "MaxShellDepth") {
		t.Errorf("unexamined %q", a.Unexamined)
	}
	line = "ls"
	for range act.MaxShellDepth {
		line = "sh -c " + shell.Quote(line)
	}
	if a, _ := shellWork(t, context.Background(), line); len(a.Unexamined) != 0 {
		t.Errorf("%d nested sh -c: unexamined %q", act.MaxShellDepth, a.Unexamined)
	}
}

// TestShellStopsWithContext: an ended request stops the analysis, and
// what it did not reach is not examined.
func TestShellStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a, _ := shellWork(t, ctx, strings.Repeat("ls; ", 400))
	if len(a.Commands) > 0 {
		t.Errorf("%d commands analysed after the context ended", len(a.Commands))
	}
	if !strings.Contains(strings.Join(a.Unexamined, ";"), "request ended") {
		t.Errorf("unexamined %q", a.Unexamined)
	}
	c, err := NewClassifier()
	if err != nil {
		t.Fatal(err)
	}
	got := c.ClassifyContext(ctx, Call{Tool: "Bash", Args: map[string]any{"command": strings.Repeat("ls; ", 400)}})
	if len(got.Unexamined) == 0 {
		t.Error("ClassifyContext with an ended context examined everything")
	}
}

func TestArgWalkBounded(t *testing.T) {
	c, err := NewClassifier()
	if err != nil {
		t.Fatal(err)
	}
	many := func(n int, v any) []any {
		xs := make([]any, n)
		for i := range xs {
			xs[i] = v
		}
		return xs
	}
	deep := any("x")
	for range act.MaxArgDepth + 2 {
		deep = map[string]any{"a": deep}
	}
	okDeep := any("x")
	for range act.MaxArgDepth - 2 {
		okDeep = map[string]any{"a": okDeep}
	}
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"recipients past the node limit", "send_email", map[string]any{"to": append(many(act.MaxArgNodes, "alice@x.example"), "eve@evil.example"), "body": "hi"}, "MaxArgNodes"},
		{"arguments past the depth limit", "send_email", map[string]any{"to": "a@x.example", "meta": deep}, "MaxArgDepth"},
		{"addresses past the cap in one string", "send_email", map[string]any{"to": strings.Repeat("alice@x.example, ", act.MaxRecipients) + "eve@evil.example"}, "MaxRecipients"},
		{"links past the cap in one string", "web_fetch", map[string]any{"url": "https://a.example", "x": strings.Repeat("https://a.example/ ", act.MaxURLsPerString) + "https://evil.example/"}, "MaxURLsPerString"},
		{"a SQL statement past the word cap", "query", map[string]any{"sql": "WITH a AS (SELECT " + strings.Repeat("x, ", act.MaxSQLWords) + "y) DELETE FROM users"}, "MaxSQLWords"},
		{"a channel name too long to be one", "send_message", map[string]any{"channel": strings.Repeat("c", 300), "text": "hi"}, "MaxRecipients"},
		{"nesting within the limit", "send_email", map[string]any{"to": "a@x.example", "meta": okDeep}, ""},
		{"a thousand recipients", "send_email", map[string]any{"to": many(1000, "alice@x.example")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := c.Classify(Call{Tool: tc.tool, Args: tc.args})
			wantUnexamined(t, a, tc.want)
		})
	}
}

func BenchmarkPathologicalShell(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		line := "echo " + strings.Repeat("$(echo ", n) + "x" + strings.Repeat(")", n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				shellWork(b, context.Background(), line)
			}
		})
	}
	b.Run("statements-100000", func(b *testing.B) {
		line := strings.Repeat(": ;", 100000)
		for b.Loop() {
			shellWork(b, context.Background(), line)
		}
	})
}

// TestLimitsAreDocumented keeps docs/catalog.md's table of limits in step
// with the constants.
func TestLimitsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/catalog.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]int{
		"MaxShellNesting": act.MaxShellNesting, "MaxShellTokens": act.MaxShellTokens, "MaxShellWork": act.MaxShellWork,
		"MaxShellCommands": act.MaxShellCommands, "MaxShellDepth": act.MaxShellDepth, "MaxArgDepth": act.MaxArgDepth,
		"MaxArgNodes": act.MaxArgNodes, "MaxRecipients": act.MaxRecipients, "MaxURLsPerString": act.MaxURLsPerString,
		"MaxSQLWords": act.MaxSQLWords, "MaxCodeMatches": act.MaxCodeMatches,
	} {
		row := fmt.Sprintf("| `%s` | %s |", name, thousands(v))
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/catalog.md has no row %q", row)
		}
	}
	row := fmt.Sprintf("| `MaxScanPerString` / `MaxScanTotal` | %d MiB / %d MiB |", act.MaxScanPerString>>20, act.MaxScanTotal>>20)
	if !strings.Contains(string(doc), row) {
		t.Errorf("docs/catalog.md has no row %q", row)
	}
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 1000 {
		return s
	}
	return thousands(n/1000) + fmt.Sprintf(",%03d", n%1000)
}

// TestSubstitutionValues: a $(…) value is examined when it is known
// without running anything, passes when it only prints a short value or
// feeds a program that only prints, and is unexamined otherwise.
func TestSubstitutionValues(t *testing.T) {
	tests := []struct {
		line       string
		unexamined bool
		path       string // a path the line must be found to touch
	}{
		{"cat $(echo /etc/shadow)", false, "/etc/shadow"},
		{"cat `echo /etc/shadow`", false, "/etc/shadow"},
		{"rm \"$(cat list)\"", true, ""},
		{"cat $(cat paths.txt)", true, ""},
		{"ls > $(cat out)", true, ""},
		{"$(cat tool) -x", true, ""},
		{"echo \"built at $(date)\"", false, ""},
		{"chown $(id -u) ./logs", false, "/w/logs"},
		{"chown $(id -u $(cat who)) ./logs", true, ""},
		{"git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"", false, ""},
	}
	for _, tc := range tests {
		a, _ := shellWork(t, context.Background(), tc.line)
		if got := len(a.Unexamined) > 0; got != tc.unexamined {
			t.Errorf("%q: unexamined %q, want %v", tc.line, a.Unexamined, tc.unexamined)
		}
		if tc.path != "" && !slicesContainsPath(a.Paths, tc.path) {
			t.Errorf("%q: paths %v, want %s", tc.line, a.Paths, tc.path)
		}
	}
}

func slicesContainsPath(ps []PathRef, p string) bool {
	for _, x := range ps {
		if x.Path == p {
			return true
		}
	}
	return false
}

// wantUnexamined checks that a says it left a part unexamined for a reason
// naming want, or that it left nothing unexamined when want is "".
func wantUnexamined(t *testing.T, a Action, want string) {
	t.Helper()
	got := strings.Join(a.Unexamined, "; ")
	switch {
	case want == "" && got != "":
		t.Errorf("unexamined %q, want none", got)
	case want != "" && !strings.Contains(got, want):
		t.Errorf("unexamined %q, want a reason naming %s", got, want)
	}
}
