package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// TestExtendLet checks `extend:`: a later file adds items to a list let an
// earlier file defines, and the rules of the earlier file see them; a bad
// extension is a load error at its own position.
func TestExtendLet(t *testing.T) {
	base := "let:\n  deny_tools: '[\"rm\"]'\nrules:\n" + ruleYAML("no-tools", "call.tool in deny_tools", "deny")
	ops := "extend:\n  deny_tools: '[\"shred\", \"wipefs\"]'\n"
	p := mustCompile(t, "a.yaml", base, "b.yaml", ops)
	for tool, want := range map[string]Effect{"rm": Deny, "shred": Deny, "wipefs": Deny, "ls": Ask} {
		v, err := p.Evaluate(&Input{Call: CallFacts{Tool: tool}, Action: &action.Action{Kind: action.Read}})
		if err != nil {
			t.Fatal(err)
		}
		if v.Effect != want {
			t.Errorf("%s: %s %q, want %s", tool, v.Effect, v.Rules, want)
		}
	}
	// Without the extension, the list alone (no defaults: a read is
	// asked about).
	p = mustCompile(t, "a.yaml", base)
	if v, _ := p.Evaluate(&Input{Call: CallFacts{Tool: "shred"}, Action: &action.Action{Kind: action.Read}}); v.Effect == Deny {
		t.Errorf("shred without extend: %s", v.Effect)
	}

	bad := []struct{ name, ops, want string }{
		{"no such let", "extend:\n  nope: '[\"x\"]'\n", `b.yaml:2:3: extend: no let named "nope" is defined`},
		{"wrong item type", "extend:\n  deny_tools: '[1, 2]'\n", `b.yaml:2:15: extend deny_tools: adds list(int) to a let of type list(string)`},
		{"not a list let", "extend:\n  one: '[\"x\"]'\n", `b.yaml:2:3: extend one: the let is string, not a list`},
		{"CEL error", "extend:\n  deny_tools: '[\"x\",'\n", `b.yaml:2:`},
		{"not an expression", "extend:\n  deny_tools: [a, b]\n", `extend: deny_tools must be a CEL list`},
	}
	for _, c := range bad {
		_, err := compileFiles(t, "a.yaml", strings.Replace(base, "let:\n", "let:\n  one: '\"rm\"'\n", 1), "b.yaml", c.ops)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// TestExtendBuiltinHazardWords adds a skip marker to the built-in pack's
// check_off_markers from an operator file, without copying the list.
func TestExtendBuiltinHazardWords(t *testing.T) {
	dir := writeDir(t, map[string]string{"ops.yaml": "extend:\n  check_off_markers: '[\"@flaky_skip\"]'\n"})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	i := p.letIndex["check_off_markers"]
	if e := p.lets[i].expr; !strings.Contains(e, `"@flaky_skip"`) || !strings.Contains(e, `"@pytest.mark.skip"`) {
		t.Errorf("check_off_markers = %s", e)
	}
	if !slices.ContainsFunc(p.lets, func(l *let) bool { return l.name == "check_off_words" }) {
		t.Error("the other lets are gone")
	}
}
