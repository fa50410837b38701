package policytest

import (
	"os"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/policy"
)

// builtinDir is the built-in pack, relative to this package.
const builtinDir = "../../../policies/builtin"

// TestBuiltinFixturesLoad checks that the built-in pack's fixture files
// parse, are numerous enough to mean something, mix expectations, and only
// expect rules that exist.
func TestBuiltinFixturesLoad(t *testing.T) {
	cases, err := LoadCases(builtinDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Errorf("%d built-in fixture cases, want at least 40", len(cases))
	}
	p, err := policy.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	for _, r := range p.Rules() {
		rules[r.Name] = true
	}
	count := map[Expectation]int{}
	for _, c := range cases {
		count[c.Expect]++
		for _, r := range c.ExpectRules {
			if !rules[r] {
				t.Errorf("%s:%d: case %q expects rule %s, which the built-in pack does not have", c.File, c.Line, c.Name, r)
			}
		}
	}
	if count[ExpectAllow] < 15 || count[ExpectDeny]+count[ExpectAsk]+count[ExpectBlock] < 15 {
		t.Errorf("expectations are lopsided: %v", count)
	}
}

// TestDocsFixtureExample parses the fixture examples in docs/policy.md.
func TestDocsFixtureExample(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range strings.Split(string(doc), "```yaml\n")[1:] {
		src, _, _ := strings.Cut(b, "```")
		if !strings.Contains(src, "cases:") {
			continue
		}
		n++
		if _, err := ParseCases("docs/policy.md", []byte(src)); err != nil {
			t.Errorf("fixture example does not parse: %v", err)
		}
	}
	if n == 0 {
		t.Error("no fixture example in docs/policy.md")
	}
}
