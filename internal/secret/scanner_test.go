package secret

import (
	"strings"
	"testing"
)

func TestBuiltin(t *testing.T) {
	s := Builtin()
	if len(s.detectors) < 20 || len(s.stems) == 0 {
		t.Fatalf("built-in scanner has %d detectors, stems %v", len(s.detectors), s.stems)
	}
	// Every sensitive word is covered by a stem, or the assignment
	// detector would never look at it.
	for _, w := range append(append([]string{}, s.keys.words...), "db_"+"pincode", "x_api_key") {
		if !s.mayBeSensitiveKey(w) {
			t.Errorf("no stem covers %q (stems %v)", w, s.stems)
		}
	}
}

func TestWith(t *testing.T) {
	tok := "mct_" + strings.Repeat("Ab3Z", 8)
	const file = `
detectors:
  - type: mycorp_token
    anchors: [mct_]
    pattern: 'mct_[A-Za-z0-9]{32}\b'
keys:
  words: [mycorpsig]
  placeholders: [not-a-real-one]
`
	s, err := Load("ops.yaml", []byte(file), Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if ms := s.Find("deploy with " + tok + " now"); len(ms) != 1 || ms[0].Type != "mycorp_token" {
		t.Errorf("Find = %+v", ms)
	}
	if len(Find("deploy with "+tok)) != 0 {
		t.Error("the built-in scanner changed")
	}
	if !s.SensitiveKey("X-MyCorp-Sig") || SensitiveKey("X-MyCorp-Sig") {
		t.Error("key words not added to the new scanner only")
	}
	if ms := s.Find("MYCORPSIG=abcdef123456"); len(ms) != 1 || ms[0].Type != "secret_assignment" {
		t.Errorf("assignment under an added key word: %+v", ms)
	}
	if !s.IsPlaceholder("not-a-real-one") {
		t.Error("placeholder not added")
	}
	// Built-in detectors still work in the extended scanner.
	if ms := s.Find("AKIA" + "IOSFODNN7EXAMPLE"); len(ms) != 1 {
		t.Errorf("built-in detector lost: %+v", ms)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"bad type", "detectors:\n  - {type: My-Token, anchors: [x], pattern: x}\n", `f.yaml:2: detector type "My-Token"`},
		{"no anchors", "detectors:\n  - {type: t, pattern: x}\n", "f.yaml:2: detector t: anchors are missing"},
		{"bad pattern", "detectors:\n  - {type: t, anchors: [x], pattern: 'x('}\n", "f.yaml:2: detector t: pattern: error parsing regexp"},
		{"group too big", "detectors:\n  - {type: t, anchors: [x], pattern: 'x(a)', group: 2}\n", "group 2, but the pattern has 1"},
		{"unknown check", "detectors:\n  - {type: t, anchors: [x], pattern: x, valid: maybe}\n", `unknown check "maybe" (want one of not_placeholder, openai_key)`},
		{"unknown field", "detectors:\n  - type: t\n    anchor: [x]\n", `f.yaml:3: unknown key "anchor"`},
		{"fold upper", "detectors:\n  - {type: t, anchors: [X], pattern: x, fold: true}\n", "fold anchors are written in lower case"},
		{"unknown matcher", "detectors:\n  - {type: t, anchors: [x], pattern: 'x(a)(b)', group: 2, matcher: regex}\n", `unknown matcher "regex"`},
		{"unknown key list", "keys:\n  wordz: [x]\n", `f.yaml:2: unknown key "wordz"`},
	} {
		if _, err := Load("f.yaml", []byte(c.data), Builtin()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}
