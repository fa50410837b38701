package policy

import (
	"strings"
	"testing"
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
