package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// combiningRules fire on the tool name, so each case picks which fire.
const combiningRules = `
rules:
  - name: a-allow
    when: call.tool.contains("A")
    effect: allow
    reason: allowed by A
  - name: b-ask
    when: call.tool.contains("B")
    effect: ask
    reason: asked by B
  - name: c-deny
    when: call.tool.contains("C")
    effect: deny
    reason: denied by C
  - name: d-ask
    when: call.tool.contains("D")
    effect: ask
    reason: asked by D
  - name: e-allow
    when: call.tool.contains("E")
    effect: allow
defaults:
  read: allow
  send: deny
`

func TestCombining(t *testing.T) {
	p := mustCompile(t, "c.yaml", combiningRules)
	cases := []struct {
		tool    string
		kind    action.Kind
		want    Effect
		rules   []string
		reasons []string
	}{
		{"A", action.Write, Allow, []string{"a-allow"}, []string{"allowed by A"}},
		{"AE", action.Write, Allow, []string{"a-allow", "e-allow"}, []string{"allowed by A", "rule e-allow matched"}},
		{"AB", action.Write, Ask, []string{"a-allow", "b-ask"}, []string{"asked by B"}},
		{"ABD", action.Write, Ask, []string{"a-allow", "b-ask", "d-ask"}, []string{"asked by B", "asked by D"}},
		{"ABC", action.Write, Deny, []string{"a-allow", "b-ask", "c-deny"}, []string{"denied by C"}},
		{"CDE", action.Write, Deny, []string{"c-deny", "d-ask", "e-allow"}, []string{"denied by C"}},
		{"", action.Read, Allow, []string{"default:read"}, []string{"no rule matched; default for read is allow"}},
		{"", action.Send, Deny, []string{"default:send"}, []string{"no rule matched; default for send is deny"}},
		{"", action.Pay, Ask, []string{"default:pay"}, []string{"no rule matched; default for pay is ask"}},
		{"", "", Ask, []string{"default:unknown"}, []string{"no rule matched; default for unknown is ask"}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s-%s", tc.tool, tc.kind), func(t *testing.T) {
			v, err := p.Evaluate(&Input{Call: CallFacts{Tool: tc.tool}, Action: &action.Action{Kind: tc.kind}})
			if err != nil {
				t.Fatal(err)
			}
			if v.Effect != tc.want || !slices.Equal(v.Rules, tc.rules) || !slices.Equal(v.Reasons, tc.reasons) {
				t.Errorf("got %s %q %q, want %s %q %q", v.Effect, v.Rules, v.Reasons, tc.want, tc.rules, tc.reasons)
			}
		})
	}
}

func TestDisableAndOverride(t *testing.T) {
	base := "rules:\n  - name: op.deny-pay\n    when: action.kind == 'pay'\n    effect: deny\n    reason: no paying\n"
	cases := []struct {
		name  string
		extra string
		kind  action.Kind
		want  Effect
		rules []string
	}{
		{"rule active", "", action.Pay, Deny, []string{"op.deny-pay"}},
		{"rule disabled", "disable: [op.deny-pay]\n", action.Pay, Ask, []string{"default:pay"}},
		{"default overridden by a later file", "defaults:\n  pay: allow\n", action.Read, Allow, []string{"default:read"}},
		{"later default wins", "defaults:\n  read: ask\n", action.Read, Ask, []string{"default:read"}},
		{"disabled then defaulted", "disable: [op.deny-pay]\ndefaults:\n  pay: deny\n", action.Pay, Deny, []string{"default:pay"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustCompile(t, "a.yaml", base+"defaults:\n  read: allow\n", "b.yaml", tc.extra)
			v, err := p.Evaluate(&Input{Action: &action.Action{Kind: tc.kind}})
			if err != nil {
				t.Fatal(err)
			}
			if v.Effect != tc.want || !slices.Equal(v.Rules, tc.rules) {
				t.Errorf("got %s %q, want %s %q", v.Effect, v.Rules, tc.want, tc.rules)
			}
		})
	}
}

// TestDisableBuiltin checks that an operator can turn off a built-in rule
// and that the rest of the pack still decides.
func TestDisableBuiltin(t *testing.T) {
	dir := writeDir(t, map[string]string{"ops.yaml": "disable: [builtin.granted, builtin.destructive]\n"})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	granted := in(action.Write, readWrite)
	v, _ := p.Evaluate(granted)
	if v.Effect != Ask || !slices.Equal(v.Rules, []string{"default:write"}) {
		t.Errorf("with builtin.granted disabled: %s %q", v.Effect, v.Rules)
	}
	destroy := in(action.Delete, readWrite, with(func(i *Input) { i.Action.Destructive = true }))
	v, _ = p.Evaluate(destroy)
	if v.Effect != Ask || slices.Contains(v.Rules, "builtin.destructive") {
		t.Errorf("with builtin.destructive disabled: %s %q", v.Effect, v.Rules)
	}
}

func TestReasonInterpolation(t *testing.T) {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	input := &Input{
		Call:    CallFacts{Tool: "send_email", Args: map[string]any{"n": 3.0, "nested": map[string]any{"k": "v"}}},
		Action:  &action.Action{Kind: action.Send, Recipients: []action.Recipient{{Address: "eve@x.example", Field: "bcc"}, {Address: "bob@x.example", Field: "to"}}, Amounts: []action.Amount{{Value: 12.5, Currency: "EUR"}}},
		Mandate: &mandate.Mandate{ExpiresAt: &ts, Limits: mandate.Limits{Counts: map[action.Kind]int{action.Send: 2}}},
		Session: SessionFacts{Counts: map[string]int{"send": 7}, Spend: map[string]float64{"EUR": 1.25}},
		Agent:   AgentFacts{ID: "shopper"},
	}
	long := strings.Repeat("x", 500)
	cases := []struct{ reason, want string }{
		{"plain text", "plain text"},
		{"to ${action.recipients.map(r, r.address)}", "to eve@x.example, bob@x.example"},
		{"tool ${call.tool} by ${agent.id}", "tool send_email by shopper"},
		{"count ${session.counts['send']}", "count 7"},
		{"spent ${session.spend['EUR']} and ${action.amounts[0].value}", "spent 1.25 and 12.5"},
		{"whole ${call.args.n}", "whole 3"},
		{"bool ${action.sensitive}", "bool false"},
		{"map ${mandate.limits.counts}", "map {send: 2}"},
		{"args ${call.args.nested}", "args {k: v}"},
		{"at ${mandate.expires_at}", "at 2026-03-04T05:06:07Z"},
		{"optional ${session.counts[?'pay']}", "optional none"},
		{"optional ${session.counts[?'send']}", "optional 7"},
		{"price $$5 for ${action.kind}", "price $5 for send"},
		{"lone $ sign and ${'}'} brace", "lone $ sign and } brace"},
		{"map literal ${ {'a': 1}['a'] }", "map literal 1"},
		{"join ${['x', 'y'].join('}{')}", "join x}{y"},
		{"empty list [${action.urls}]", "empty list []"},
		{"runtime error ${session.counts['nope']}", "runtime error <error in ${session.counts['nope']}: no such key: nope>"},
		{"long ${'" + long + "'}", "long " + strings.Repeat("x", maxReasonValue) + "…"},
		{"${action.kind}", "send"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			src := fmt.Sprintf("rules:\n  - name: r\n    when: \"true\"\n    effect: ask\n    reason: %q\n", tc.reason)
			p := mustCompile(t, "r.yaml", src)
			v, err := p.Evaluate(input)
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Reasons) != 1 || v.Reasons[0] != tc.want {
				t.Errorf("reason = %q, want %q", v.Reasons, tc.want)
			}
		})
	}
}

func TestSplitTemplate(t *testing.T) {
	cases := []struct {
		in   string
		want []templatePiece
		err  string
	}{
		{"abc", []templatePiece{{text: "abc"}}, ""},
		{"a ${x} b", []templatePiece{{text: "a "}, {text: "x", expr: true, offset: 4}, {text: " b", offset: 6}}, ""},
		{"${x}${y}", []templatePiece{{text: "x", expr: true, offset: 2}, {text: "y", expr: true, offset: 6}}, ""},
		{"$${x}", []templatePiece{{text: "${x}"}}, ""},
		{"${'a\\'}'}", []templatePiece{{text: `'a\'}'`, expr: true, offset: 2}}, ""},
		{`${"""}"""}`, []templatePiece{{text: `"""}"""`, expr: true, offset: 2}}, ""},
		{"${x", nil, "unterminated ${"},
		{"${'x}", nil, "unterminated string"},
		{"${}", nil, "empty"},
	}
	for _, tc := range cases {
		got, err := splitTemplate(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.msg, tc.err) {
				t.Errorf("splitTemplate(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("splitTemplate(%q): %s", tc.in, err.msg)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitTemplate(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestFailClosed checks that rules failing at run time never produce allow:
// deny and ask rules count as fired, allow rules do not.
func TestFailClosed(t *testing.T) {
	const missingKey = `session.counts["never"] > 0`
	const tooCostly = `lists.range(1000).all(i, lists.range(1000).all(j, i + j >= 0))`
	cases := []struct {
		name    string
		rules   string
		kind    action.Kind
		want    Effect
		fired   []string
		reason  string
		errored string
	}{
		{"deny rule error fires", ruleYAML("d", missingKey, "deny"), action.Read, Deny, []string{"d"}, "rule d could not be evaluated (no such key: never); failing closed with deny", "d: no such key: never"},
		{"ask rule error fires", ruleYAML("q", missingKey, "ask"), action.Read, Ask, []string{"q"}, "rule q could not be evaluated", "q: no such key"},
		{"allow rule error does not fire", ruleYAML("a", missingKey, "allow"), action.Send, Ask, []string{"default:send"}, "default for send is ask", "a: no such key"},
		{"allow rule error with a deny rule", ruleYAML("a", missingKey, "allow") + ruleYAML("d", "true", "deny"), action.Send, Deny, []string{"d"}, "rule d matched", "a: no such key"},
		{"cost limit exceeded fails closed", ruleYAML("c", tooCostly, "deny"), action.Read, Deny, []string{"c"}, "could not be evaluated", "c: operation cancelled: actual cost limit exceeded"},
		{"failing let fails its rule closed", "let:\n  broken: " + quote(missingKey) + "\nrules:\n" + ruleYAML("l", "broken", "ask"), action.Read, Ask, []string{"l"}, "let broken", "l: "},
		{"no such overload at run time", ruleYAML("o", `call.args.n > 1`, "deny"), action.Read, Deny, []string{"o"}, "could not be evaluated", "o: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.rules
			if !strings.HasPrefix(src, "let:") {
				src = "rules:\n" + src
			}
			src += "defaults:\n  read: allow\n  send: ask\n"
			p := mustCompile(t, "f.yaml", src)
			// The cost case is bounded by CEL's cost limit, which its error
			// names; no wall-clock assertion (it failed under a loaded CI).
			v, err := p.Evaluate(&Input{Call: CallFacts{Args: map[string]any{"n": "not a number"}}, Action: &action.Action{Kind: tc.kind}})
			if err != nil {
				t.Fatal(err)
			}
			if v.Effect != tc.want || !slices.Equal(v.Rules, tc.fired) {
				t.Errorf("got %s %q, want %s %q (reasons %q)", v.Effect, v.Rules, tc.want, tc.fired, v.Reasons)
			}
			if !slices.ContainsFunc(v.Reasons, func(s string) bool { return strings.Contains(s, tc.reason) }) {
				t.Errorf("no reason contains %q: %q", tc.reason, v.Reasons)
			}
			if !slices.ContainsFunc(v.Errors, func(s string) bool { return strings.Contains(s, tc.errored) }) {
				t.Errorf("no error contains %q: %q", tc.errored, v.Errors)
			}
		})
	}
}

// ruleYAML renders one rule as YAML, for test sources.
func ruleYAML(name, when, effect string) string {
	return fmt.Sprintf("  - name: %s\n    when: %s\n    effect: %s\n", name, quote(when), effect)
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func TestEvaluateNilInput(t *testing.T) {
	p := builtinPolicy(t)
	if _, err := p.Evaluate(nil); err == nil {
		t.Fatal("Evaluate(nil) returned no error")
	}
	// Every field nil or zero is still decided, conservatively.
	v, err := p.Evaluate(&Input{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Effect == Allow {
		t.Errorf("an empty input was allowed: %+v", v)
	}
}

func TestEvaluateDoesNotModifyInput(t *testing.T) {
	p := builtinPolicy(t)
	a := &action.Action{Kind: action.Send, Kinds: []action.Kind{"bogus"}}
	before := *a
	beforeKinds := slices.Clone(a.Kinds)
	if _, err := p.Evaluate(&Input{Action: a}); err != nil {
		t.Fatal(err)
	}
	if a.Kind != before.Kind || !slices.Equal(a.Kinds, beforeKinds) {
		t.Errorf("Evaluate modified the action: %+v", a)
	}
}

func TestNormAction(t *testing.T) {
	cases := []struct {
		in        *action.Action
		kind      action.Kind
		kinds     []action.Kind
		sameValue bool
	}{
		{nil, action.Unknown, []action.Kind{action.Unknown}, false},
		{&action.Action{Kind: action.Send, Kinds: []action.Kind{action.Read, action.Send}}, action.Send, []action.Kind{action.Read, action.Send}, true},
		{&action.Action{Kind: action.Send}, action.Send, []action.Kind{action.Send}, false},
		{&action.Action{Kind: "", Kinds: []action.Kind{action.Read}}, action.Unknown, []action.Kind{action.Read, action.Unknown}, false},
		{&action.Action{Kind: action.Write, Kinds: []action.Kind{"zap", action.Write, "zip"}}, action.Write, []action.Kind{action.Unknown, action.Write}, false},
	}
	for _, tc := range cases {
		got := normAction(tc.in)
		if got.Kind != tc.kind || !slices.Equal(got.Kinds, tc.kinds) || (got == tc.in) != tc.sameValue {
			t.Errorf("normAction(%+v) = %s %q (same %v), want %s %q (same %v)", tc.in, got.Kind, got.Kinds, got == tc.in, tc.kind, tc.kinds, tc.sameValue)
		}
	}
}

func TestEvaluateConcurrent(t *testing.T) {
	p := builtinPolicy(t)
	cases := append(builtinCases(), seedCases()...)
	want := make([]Verdict, len(cases))
	for i, tc := range cases {
		want[i], _ = p.Evaluate(tc.in)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i, tc := range cases {
				v, err := p.Evaluate(tc.in)
				if err != nil || !reflect.DeepEqual(v, want[i]) {
					t.Errorf("%s: concurrent verdict %+v differs from %+v", tc.name, v, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCustomFunctions(t *testing.T) {
	input := &Input{
		Call:   CallFacts{Tool: "Write"},
		Action: &action.Action{Kind: action.Write, Paths: []action.PathRef{{Path: "/home/sam/proj/pkg/a.go", Access: action.Write}}, Hosts: []string{"api.shop-a.example:443"}},
	}
	cases := []struct {
		when string
		want bool
	}{
		{`action.paths.exists(p, glob("/home/*/proj/**", p.path))`, true},
		{`action.paths.exists(p, glob("/home/*/proj/*.go", p.path))`, false},
		{`action.paths.exists(p, glob("**/*.go", p.path))`, true},
		{`action.hosts.exists(h, host_matches("shop-a.example", h))`, true},
		{`action.hosts.exists(h, host_matches("*.shop-a.example", h))`, true},
		{`action.hosts.exists(h, host_matches("shop-b.example", h))`, false},
		{`kind_rank(action.kind) < kind_rank("pay")`, true},
		{`kind_rank("nonsense") > kind_rank("unknown")`, true},
	}
	for _, tc := range cases {
		t.Run(tc.when, func(t *testing.T) {
			p := mustCompile(t, "f.yaml", "rules:\n"+ruleYAML("r", tc.when, "deny"))
			v, err := p.Evaluate(input)
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Errors) > 0 {
				t.Fatalf("errors: %q", v.Errors)
			}
			if got := v.Effect == Deny; got != tc.want {
				t.Errorf("%s = %v, want %v", tc.when, got, tc.want)
			}
		})
	}
	// A bad glob pattern is a runtime error, so a deny rule fails closed.
	p := mustCompile(t, "f.yaml", "rules:\n"+ruleYAML("r", `glob("[", "x")`, "deny"))
	if v, _ := p.Evaluate(input); v.Effect != Deny || len(v.Errors) != 1 {
		t.Errorf("bad glob: %+v", v)
	}
}

// TestTrackedAndFastAgree evaluates every built-in case twice, once with
// the untracked programs the static estimates allow and once with cost
// tracking throughout, and expects the same verdicts. Each case is also
// evaluated with 17 notes on its action: too many for fitNarrow, so the
// rules whose untracked program is estimated for that tier run tracked
// there, and must still agree.
func TestTrackedAndFastAgree(t *testing.T) {
	p := builtinPolicy(t)
	fast, narrow := 0, 0
	for _, r := range p.rules {
		if r.prg.fast != nil {
			fast++
		}
		if r.prg.narrow != nil {
			narrow++
		}
	}
	if fast < len(p.rules)/2 {
		t.Errorf("only %d of %d built-in rules have a statically bounded cost", fast, len(p.rules))
	}
	if narrow == 0 {
		t.Error("no built-in rule has an untracked program for fitNarrow")
	}
	slow := *p
	slow.rules = nil
	for _, r := range p.rules {
		c := *r
		c.prg.fast, c.prg.narrow = nil, nil
		slow.rules = append(slow.rules, &c)
	}
	slow.lets = nil
	for _, l := range p.lets {
		c := *l
		c.prg.fast, c.prg.narrow = nil, nil
		slow.lets = append(slow.lets, &c)
	}
	for _, tc := range append(builtinCases(), seedCases()...) {
		a, _ := p.Evaluate(tc.in)
		b, _ := slow.Evaluate(tc.in)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: fast %+v, tracked %+v", tc.name, a, b)
		}
		if tc.in == nil || tc.in.Action == nil {
			continue
		}
		wide := *tc.in
		act := *tc.in.Action
		for i := range fitNarrow.list + 1 {
			act.Notes = append(slices.Clip(act.Notes), fmt.Sprint("note ", i))
		}
		wide.Action = &act
		if s := fitsSizes(&wide); !s.within(fitWide) || s.within(fitNarrow) {
			t.Fatalf("%s: padded input is not between the tiers: %+v", tc.name, s)
		}
		a, _ = p.Evaluate(&wide)
		b, _ = slow.Evaluate(&wide)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s, padded: fast %+v, tracked %+v", tc.name, a, b)
		}
	}
}

// TestOversizedInputIsTracked checks that an input larger than the static
// estimates assume is still decided, under cost tracking.
func TestOversizedInputIsTracked(t *testing.T) {
	p := builtinPolicy(t)
	in := realisticInput()
	for i := range 5000 {
		in.Scope.RecipientsOutside = append(in.Scope.RecipientsOutside, fmt.Sprintf("r%d@x.example", i))
		in.Action.Recipients = append(in.Action.Recipients, action.Recipient{Address: fmt.Sprintf("r%d@x.example", i), Field: "bcc"})
	}
	if fitsInput(in) {
		t.Fatal("oversized input fits")
	}
	v, err := p.Evaluate(in)
	if err != nil {
		t.Fatal(err)
	}
	if v.Effect != Ask || !slices.Contains(v.Rules, "builtin.recipient-outside") {
		t.Errorf("oversized send: %+v", v)
	}
}
