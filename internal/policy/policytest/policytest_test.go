package policytest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/policy"
)

const goodFile = `
cases:
  - name: purchase when comparing is denied
    intent: "Compare prices of the Dell U2723QE on two shops. Do not buy."
    working_directory: /home/dev/shop
    home_directory: /home/dev
    session: {counts: {send: 2}, spend: {EUR: 40}, denied: 1, recent: [{tool: checkout, kind: pay, effect: deny}]}
    agent: {id: shopper, model: m-1}
    tools:
      - name: checkout
        description: Buy the items in the cart.
        inputSchema: {type: object, properties: {item: {type: string}}}
        annotations: {destructiveHint: true}
    call: {tool: checkout, args: {item: u2723qe, price: "579 USD", qty: 2, nested: {list: [1, "two"]}}}
    expect: deny
    expect_rules: [builtin.prohibited]
  - name: structured mandate
    mandate:
      allow: [read, send]
      scope: {recipients: [alice@example.com]}
      limits: {spend: {amount: 50, currency: EUR}, counts: {send: 3}}
      expires_at: 2030-01-01T00:00:00Z
    call: {tool: send_email, args: {to: alice@example.com}}
    expect: block
`

func TestParseCases(t *testing.T) {
	cases, err := ParseCases("f_test.yaml", []byte(goodFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 {
		t.Fatalf("%d cases", len(cases))
	}
	c := cases[0]
	if c.Name != "purchase when comparing is denied" || c.File != "f_test.yaml" || c.Line != 3 {
		t.Errorf("identity: %q %s:%d", c.Name, c.File, c.Line)
	}
	if c.Intent == "" || c.WorkingDirectory != "/home/dev/shop" || c.HomeDirectory != "/home/dev" || c.Mandate != nil {
		t.Errorf("context: %+v", c)
	}
	if c.Session.Counts["send"] != 2 || c.Session.Spend["EUR"] != 40 || c.Session.Denied != 1 || len(c.Session.Recent) != 1 || c.Session.Recent[0].Effect != "deny" {
		t.Errorf("session: %+v", c.Session)
	}
	if c.Agent.ID != "shopper" || c.Agent.Model != "m-1" {
		t.Errorf("agent: %+v", c.Agent)
	}
	if len(c.Tools) != 1 || c.Tools[0].Name != "checkout" || c.Tools[0].Annotations == nil || c.Tools[0].Annotations.DestructiveHint == nil || !*c.Tools[0].Annotations.DestructiveHint {
		t.Errorf("tools: %+v", c.Tools)
	}
	if c.Call.Tool != "checkout" || c.Call.Args["price"] != "579 USD" {
		t.Errorf("call: %+v", c.Call)
	}
	// Numbers arrive as JSON numbers do over HTTP.
	if q, ok := c.Call.Args["qty"].(float64); !ok || q != 2 {
		t.Errorf("qty = %#v, want float64 2", c.Call.Args["qty"])
	}
	if c.Expect != ExpectDeny || len(c.ExpectRules) != 1 || c.ExpectRules[0] != "builtin.prohibited" {
		t.Errorf("expect: %q %q", c.Expect, c.ExpectRules)
	}
	m := cases[1].Mandate
	if m == nil || len(m.Allow) != 2 || m.Limits.Spend == nil || m.Limits.Spend.Currency != "EUR" || m.Limits.Counts[action.Send] != 3 || m.ExpiresAt == nil || m.ExpiresAt.Year() != 2030 {
		t.Errorf("mandate: %+v", m)
	}
	if cases[1].Expect != ExpectBlock {
		t.Errorf("expect %q", cases[1].Expect)
	}
}

func TestParseCasesErrors(t *testing.T) {
	const head = "cases:\n  - name: c\n    intent: x\n    call: {tool: t}\n"
	cases := []struct {
		name, src, want string
	}{
		{"empty", "", "f_test.yaml: empty file"},
		{"yaml error", "cases: [\n", "f_test.yaml:1: YAML: did not find expected node content"},
		{"not a mapping", "- a\n", "f_test.yaml:1:1: a fixture file is a mapping"},
		{"unknown top key", "tests: []\n", `f_test.yaml:1:1: unknown key "tests"`},
		{"cases not a list", "cases: {}\n", "f_test.yaml:1:1: `cases:` must be a list"},
		{"case not a mapping", "cases:\n  - x\n", "f_test.yaml:2:5: a case must be a mapping"},
		{"no name", "cases:\n  - intent: x\n    call: {tool: t}\n    expect: allow\n", "f_test.yaml:2:5: case has no name"},
		{"unknown case key", head + "    expect: allow\n    expected: deny\n", `f_test.yaml:6:5: case "c": unknown key "expected"`},
		{"bad expect", head + "    expect: maybe\n", `f_test.yaml:5:13: case "c": expect: "maybe" is not allow, deny, ask or block`},
		{"no expect", head, `f_test.yaml:2:5: case "c": case has no expect`},
		{"no call", "cases:\n  - name: c\n    intent: x\n    expect: allow\n", `case "c": case has no call`},
		{"call without tool", "cases:\n  - name: c\n    intent: x\n    call: {args: {}}\n    expect: allow\n", `f_test.yaml:4:11: case "c": call: call has no tool`},
		{"unknown call field", "cases:\n  - name: c\n    intent: x\n    call: {tool: t, arguments: {}}\n    expect: allow\n", `case "c": call: unknown field "arguments"`},
		{"unknown session field", head + "    expect: allow\n    session: {cuonts: {send: 1}}\n", `f_test.yaml:6:14: case "c": session: unknown field "cuonts"`},
		{"session type mismatch", head + "    expect: allow\n    session: {denied: lots}\n", `case "c": session: cannot unmarshal string`},
		{"unknown mandate field", "cases:\n  - name: c\n    mandate: {allowed: [read]}\n    call: {tool: t}\n    expect: allow\n", `case "c": mandate: unknown field "allowed"`},
		{"invalid mandate", "cases:\n  - name: c\n    mandate: {allow: [purchase]}\n    call: {tool: t}\n    expect: allow\n", `case "c": mandate: `},
		{"neither intent nor mandate", "cases:\n  - name: c\n    call: {tool: t}\n    expect: allow\n", `case "c": case has neither intent nor mandate`},
		{"non-string map keys in args", "cases:\n  - name: c\n    intent: x\n    call: {tool: t, args: {1: a}}\n    expect: allow\n", `case "c": call: cannot be represented as JSON`},
		{"duplicate case name", head + "    expect: allow\n" + strings.Replace(head, "cases:\n", "", 1) + "    expect: deny\n", `case "c": case name already used at line 2`},
		{"key twice", head + "    expect: allow\n    expect: deny\n", `case "c": key "expect" appears twice`},
		{"intent not a string", "cases:\n  - name: c\n    intent: [x]\n    call: {tool: t}\n    expect: allow\n", `case "c": intent: want a string`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCases("f_test.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadCases(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("b_test.yaml", "cases:\n  - name: b1\n    intent: x\n    call: {tool: t}\n    expect: allow\n")
	write("a_test.yml", "cases:\n  - name: a1\n    intent: x\n    call: {tool: t}\n    expect: ask\n  - name: a2\n    intent: x\n    call: {tool: t}\n    expect: deny\n")
	write("rules.yaml", "rules: []\n") // a rule file, not fixtures
	write("notes_test.txt", "not yaml")
	cases, err := LoadCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cases {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "a1,a2,b1" {
		t.Errorf("cases %q, want a1,a2,b1 in file order", names)
	}

	write("c_test.yaml", "cases:\n  - name: a1\n    intent: x\n    call: {tool: t}\n    expect: ask\n")
	if _, err := LoadCases(dir); err == nil || !strings.Contains(err.Error(), `case "a1" is already defined at `+filepath.Join(dir, "a_test.yml")+":2") {
		t.Errorf("duplicate across files: %v", err)
	}
	if _, err := LoadCases(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no cases") {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := LoadCases(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("missing dir loaded")
	}
}

// fakeDecide decides by the tool name, so the runner can be tested without
// the engine: "allow_x" allows, "deny_x" denies, anything else asks;
// "boom" fails.
func fakeDecide(_ context.Context, c *Case) (policy.Verdict, *action.Action, error) {
	a := &action.Action{Tool: c.Call.Tool, Kind: action.Send, Kinds: []action.Kind{action.Send}}
	switch {
	case c.Call.Tool == "boom":
		return policy.Verdict{}, nil, errors.New("engine exploded")
	case strings.HasPrefix(c.Call.Tool, "allow"):
		return policy.Verdict{Effect: policy.Allow, Rules: []string{"r.allow"}, Reasons: []string{"fine"}}, a, nil
	case strings.HasPrefix(c.Call.Tool, "deny"):
		return policy.Verdict{Effect: policy.Deny, Rules: []string{"r.deny", "r.ask"}, Reasons: []string{"no"}}, a, nil
	}
	return policy.Verdict{Effect: policy.Ask, Rules: []string{"r.ask"}, Reasons: []string{"maybe"}}, a, nil
}

func TestRun(t *testing.T) {
	mk := func(name, tool string, expect Expectation, rules ...string) *Case {
		return &Case{Name: name, File: "f_test.yaml", Line: 1, Intent: "x", Call: policy.CallFacts{Tool: tool}, Expect: expect, ExpectRules: rules}
	}
	cases := []struct {
		c    *Case
		pass bool
		why  string
	}{
		{mk("allow ok", "allow_a", ExpectAllow), true, ""},
		{mk("deny ok", "deny_a", ExpectDeny, "r.deny", "r.ask"), true, ""},
		{mk("ask ok", "ask_a", ExpectAsk), true, ""},
		{mk("block by deny", "deny_a", ExpectBlock), true, ""},
		{mk("block by ask", "ask_a", ExpectBlock), true, ""},
		{mk("block but allowed", "allow_a", ExpectBlock), false, "want block (deny or ask), got allow"},
		{mk("deny but asked", "ask_a", ExpectDeny), false, "want deny, got ask"},
		{mk("allow but denied", "deny_a", ExpectAllow), false, "want allow, got deny"},
		{mk("missing rule", "deny_a", ExpectDeny, "r.other"), false, "rule r.other did not fire"},
		{mk("engine error", "boom", ExpectDeny), false, "engine exploded"},
	}
	var all []*Case
	for _, tc := range cases {
		all = append(all, tc.c)
	}
	rep := Run(context.Background(), all, fakeDecide)
	if len(rep.Results) != len(cases) {
		t.Fatalf("%d results", len(rep.Results))
	}
	wantFailed := 0
	for i, tc := range cases {
		res := rep.Results[i]
		if res.Passed() != tc.pass {
			t.Errorf("%s: passed = %v, want %v (%q, %v)", tc.c.Name, res.Passed(), tc.pass, res.Failures, res.Err)
		}
		if !tc.pass {
			wantFailed++
			got := strings.Join(res.Failures, "; ")
			if res.Err != nil {
				got += res.Err.Error()
			}
			if !strings.Contains(got, tc.why) {
				t.Errorf("%s: failure %q, want %q", tc.c.Name, got, tc.why)
			}
		}
	}
	if rep.Failed() != wantFailed || rep.Passed() != len(cases)-wantFailed {
		t.Errorf("Failed() = %d, Passed() = %d", rep.Failed(), rep.Passed())
	}

	var quiet, verbose bytes.Buffer
	rep.Write(&quiet, false)
	rep.Write(&verbose, true)
	q := quiet.String()
	for _, want := range []string{
		"f_test.yaml:\n",
		"  PASS  allow ok (",
		"  FAIL  block but allowed (",
		"        want block (deny or ask), got allow\n",
		"        rules: r.allow\n",
		"        reason: fine\n",
		"        error: engine exploded\n",
		"        at f_test.yaml:1\n",
		"5/10 passed, 5 failed\n",
	} {
		if !strings.Contains(q, want) {
			t.Errorf("report lacks %q:\n%s", want, q)
		}
	}
	// Details are shown for the 4 failures with a verdict; verbose adds
	// the 5 passing cases.
	if n := strings.Count(q, "verdict: "); n != 4 {
		t.Errorf("quiet report shows %d verdicts, want 4:\n%s", n, q)
	}
	if n := strings.Count(verbose.String(), "verdict: "); n != 9 {
		t.Errorf("verbose report shows %d verdicts, want 9:\n%s", n, verbose.String())
	}
}

func TestRunAllPassSummary(t *testing.T) {
	c := &Case{Name: "a", File: "f", Intent: "x", Call: policy.CallFacts{Tool: "allow_x"}, Expect: ExpectAllow}
	var b bytes.Buffer
	Run(context.Background(), []*Case{c}, fakeDecide).Write(&b, false)
	if !strings.HasSuffix(b.String(), "\n1/1 passed\n") {
		t.Errorf("summary:\n%s", b.String())
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	decide := func(ctx context.Context, c *Case) (policy.Verdict, *action.Action, error) {
		calls++
		cancel()
		return fakeDecide(ctx, c)
	}
	cs := []*Case{
		{Name: "first", Call: policy.CallFacts{Tool: "allow_x"}, Expect: ExpectAllow},
		{Name: "second", Call: policy.CallFacts{Tool: "allow_x"}, Expect: ExpectAllow},
	}
	rep := Run(ctx, cs, decide)
	if calls != 1 || !rep.Results[0].Passed() || rep.Results[1].Passed() || !errors.Is(rep.Results[1].Err, context.Canceled) {
		t.Errorf("calls %d, results %+v", calls, rep.Results)
	}
}

func TestExpectation(t *testing.T) {
	for _, tc := range []struct {
		e    Expectation
		eff  policy.Effect
		want bool
	}{
		{ExpectAllow, policy.Allow, true}, {ExpectAllow, policy.Ask, false},
		{ExpectDeny, policy.Deny, true}, {ExpectDeny, policy.Ask, false},
		{ExpectAsk, policy.Ask, true}, {ExpectAsk, policy.Deny, false},
		{ExpectBlock, policy.Deny, true}, {ExpectBlock, policy.Ask, true}, {ExpectBlock, policy.Allow, false},
		{ExpectBlock, "", false}, {ExpectAllow, "", false},
	} {
		if got := tc.e.Matches(tc.eff); got != tc.want {
			t.Errorf("%s.Matches(%q) = %v", tc.e, tc.eff, got)
		}
	}
	if Expectation("maybe").Valid() || !ExpectBlock.Valid() {
		t.Errorf("Valid")
	}
}

// FuzzParseCases: arbitrary bytes never panic the fixture parser, and what
// it accepts is complete.
func FuzzParseCases(f *testing.F) {
	f.Add([]byte(goodFile))
	f.Add([]byte("cases: []\n"))
	f.Add([]byte("cases:\n  - name: c\n    intent: x\n    call: {tool: t, args: {a: [1, {b: c}]}}\n    expect: block\n"))
	f.Add([]byte("cases:\n  - &a {name: c, intent: x, call: {tool: t}, expect: ask}\n  - *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := ParseCases("f_test.yaml", data)
		if err != nil {
			return
		}
		for _, c := range cases {
			if c.Name == "" || c.Call.Tool == "" || !c.Expect.Valid() || (c.Intent == "" && c.Mandate == nil) {
				t.Fatalf("incomplete case accepted: %+v", c)
			}
		}
	})
}
