package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// FuzzLoadRules feeds arbitrary bytes to the rule loader: it must return a
// policy or an error, never panic, and a policy it returns must evaluate.
func FuzzLoadRules(f *testing.F) {
	seeds := []string{
		"",
		"rules: []\n",
		combiningRules,
		"rules:\n  - name: a\n    when: action.kind == 'pay'\n    effect: deny\n    reason: pay ${action.amounts.map(a, a.value)}\n",
		"let:\n  x: '[1, 2]'\nrules:\n  - name: a\n    when: size(x) > 1\n    effect: ask\n",
		"defaults:\n  pay: deny\ndisable: [a]\nrules:\n  - name: a\n    when: 'true'\n    effect: allow\n",
		"rules:\n  - name: a\n    when: |\n      action.kinds.exists(k,\n        k in mandate.allow)\n    effect: allow\n",
		"rules:\n  - name: a\n    when: >-\n      glob('/a/**', call.tool) || host_matches('*.x', call.tool)\n    effect: ask\n",
		"rules:\n  - name: a\n    when: action.nope\n    effect: deny\n",
		"rules: [\n",
		"rules:\n  - &r {name: a, when: 'true', effect: deny}\n  - *r\n",
		"rules:\n  - name: a\n    when: 'true'\n    effect: deny\n    reason: '${'\n",
		"- - - -\n",
		"rules:\n  - name: a\n    when: \"'\\u00e9' == call.tool\"\n    effect: deny\n    reason: \"é ${call.tool} ü\"\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	env, err := testEnv()
	if err != nil {
		f.Fatal(err)
	}
	input := realisticInput()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := compileWith(env, []source{{name: "fuzz.yaml", data: data}})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		v, err := p.Evaluate(input)
		if err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
		if !v.Effect.Valid() || len(v.Rules) == 0 || len(v.Reasons) == 0 {
			t.Fatalf("incomplete verdict %+v", v)
		}
		if len(p.Hash()) != 64 {
			t.Fatalf("hash %q", p.Hash())
		}
	})
}

// FuzzBuiltinEvaluate feeds arbitrary inputs (as JSON) to the built-in
// pack: every rule must stay total — no run-time error, which would make a
// deny or ask rule fire for the wrong reason — and the verdict complete.
func FuzzBuiltinEvaluate(f *testing.F) {
	for _, in := range []*Input{realisticInput(), fullInput(), {}} {
		data, err := json.Marshal(fuzzInput{in.Call, in.Action, in.Mandate, in.Scope, in.Session, in.Agent})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"action":{"kind":"pay","kinds":["pay"],"amounts":[{"value":1e308,"currency":""}]},"mandate":{"limits":{"spend":{"amount":-1,"currency":"EUR"},"counts":{"pay":-5}}},"session":{"spend":{"EUR":1e308},"denied":99,"recent":[{"tool":"","kind":"pay","effect":"deny"}]}}`))
	f.Add([]byte(`{"action":{"kind":"execute","commands":[{"argv":[],"name":"","kind":"execute","via":["sudo"]}]},"mandate":{"allow":["write"]}}`))
	p, err := builtinOnce()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fi fuzzInput
		if err := json.Unmarshal(data, &fi); err != nil {
			return
		}
		in := &Input{Call: fi.Call, Action: fi.Action, Mandate: fi.Mandate, Scope: fi.Scope, Session: fi.Session, Agent: fi.Agent}
		v, err := p.Evaluate(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Errors) > 0 {
			t.Fatalf("built-in rules failed at run time: %q", v.Errors)
		}
		if !v.Effect.Valid() || len(v.Rules) == 0 || len(v.Reasons) != countEffect(p, v) {
			t.Fatalf("incomplete verdict %+v", v)
		}
	})
}

type fuzzInput struct {
	Call    CallFacts        `json:"call"`
	Action  *action.Action   `json:"action"`
	Mandate *mandate.Mandate `json:"mandate"`
	Scope   mandate.Report   `json:"scope"`
	Session SessionFacts     `json:"session"`
	Agent   AgentFacts       `json:"agent"`
}

// countEffect is how many reasons a verdict should have: one per fired
// rule with the winning effect, or one for a default.
func countEffect(p *Policy, v Verdict) int {
	if strings.HasPrefix(v.Rules[0], "default:") {
		return 1
	}
	n := 0
	for _, name := range v.Rules {
		for _, r := range p.rules {
			if r.name == name && r.effect == v.Effect {
				n++
			}
		}
	}
	return n
}
