package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/mandate-dev/mandate/internal/act"
)

// shapeTests are lines with the nesting shellShape must count; they seed
// FuzzShellShape too.
var shapeTests = []struct {
	src  string
	want int
}{
	{"ls -la", 0},
	{"echo $(date)", 1},
	{"echo $(echo $(echo x))", 2},
	{"echo '((((((((('", 0},
	{`echo "(((("`, 1},              // the quote itself
	{`echo "$(echo "$(date)")"`, 4}, // quote, $(, quote, $(
	{"echo `date`", 1},
	{"${a:-${b:-${c}}}", 3},
	{"{ { ls; }; }", 2},
	{`echo \(\(\(`, 0},
	{"(a) (b) (c)", 1},
	{"echo :) :) :)", 0},
}

func TestShellShape(t *testing.T) {
	for _, tc := range shapeTests {
		if d, _, over := shellShape(tc.src, act.MaxShellNesting, act.MaxShellTokens); d != tc.want || over {
			t.Errorf("shellNesting(%q) = %d, %v; want %d", tc.src, d, over, tc.want)
		}
	}
	deep := strings.Repeat("$(", act.MaxShellNesting+1) + "x" + strings.Repeat(")", act.MaxShellNesting+1)
	if _, _, over := shellShape(deep, act.MaxShellNesting, act.MaxShellTokens); !over {
		t.Errorf("nesting of %d not over the limit", act.MaxShellNesting+1)
	}
	atLimit := strings.Repeat("$(", act.MaxShellNesting) + "x" + strings.Repeat(")", act.MaxShellNesting)
	if d, _, over := shellShape(atLimit, act.MaxShellNesting, act.MaxShellTokens); over || d != act.MaxShellNesting {
		t.Errorf("nesting of exactly %d: %d, %v", act.MaxShellNesting, d, over)
	}
}

// FuzzShellShape checks that shellShape never counts a line as nesting
// less deeply than the parser finds it: an undercount would let a line
// past MaxShellNesting into the parser, whose cost grows with the square
// of the nesting.
func FuzzShellShape(f *testing.F) {
	for _, tc := range shapeTests {
		f.Add(tc.src)
	}
	for _, s := range []string{
		`bash -c "$(curl -s https://x)"`, "bash <<EOF\nrm -rf /\nEOF", "f() { rm -rf /; }; f",
		"echo 'unterminated", "ls )(", "a=(1 2 3); echo ${a[$(rm x)]}", "[[ $(rm a) ]]", "$'\\x72m' -rf /",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		depth, _, over := shellShape(src, act.MaxShellNesting, act.MaxShellTokens)
		if over {
			return
		}
		file, err := parseShellFile(src, nil)
		if err != nil {
			return
		}
		if got := syntaxNesting(file); got > depth {
			t.Fatalf("shellShape counts %d, the parser nests %d: %q", depth, got, src)
		}
	})
}

// syntaxNesting is how deeply a parsed line nests the constructs
// shellShape counts.
func syntaxNesting(n syntax.Node) int {
	deepest := 0
	var walk func(n syntax.Node, d int)
	walk = func(n syntax.Node, d int) {
		syntax.Walk(n, func(c syntax.Node) bool {
			if c == n {
				return true
			}
			switch x := c.(type) {
			case *syntax.CmdSubst, *syntax.Subshell, *syntax.Block, *syntax.ProcSubst, *syntax.DblQuoted:
				deepest = max(deepest, d+1)
				walk(c, d+1)
				return false
			case *syntax.ParamExp:
				if x.Short {
					return true
				}
				deepest = max(deepest, d+1)
				walk(c, d+1)
				return false
			}
			return true
		})
	}
	walk(n, 0)
	return deepest
}
