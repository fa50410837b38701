package vocab

import (
	"slices"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/datafile"
)

func TestBuiltin(t *testing.T) {
	v, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		word  string
		kinds []string
	}{
		{"send", []string{"send"}},
		{"cancel", []string{"delete"}},
		{"deploy", []string{"write", "execute"}},
		{"upload", []string{"write", "send"}},
		{"get", []string{"read"}},
		{"nonsense", nil},
	} {
		if got := v.Verb(c.word); !slices.Equal(got, c.kinds) {
			t.Errorf("Verb(%q) = %v, want %v", c.word, got, c.kinds)
		}
	}
	if got := v.Lead("email"); !slices.Equal(got, []string{"send"}) {
		t.Errorf("Lead(email) = %v", got)
	}
	if got := v.Noun("payment"); !slices.Equal(got, []string{"pay"}) {
		t.Errorf("Noun(payment) = %v", got)
	}
	// A lead verb is a noun elsewhere: it must not also be a verb.
	for w := range v.LeadVerbs() {
		if v.Verb(w) != nil {
			t.Errorf("%q is both a verb and a lead verb", w)
		}
	}
}

func TestWith(t *testing.T) {
	v, _ := Builtin()
	w := v.With(Tables{Verbs: Table{"yeet": {"delete"}, "get": {"fetch"}}})
	if !slices.Equal(w.Verb("yeet"), []string{"delete"}) || !slices.Equal(w.Verb("get"), []string{"fetch"}) {
		t.Errorf("With did not add or replace: %v %v", w.Verb("yeet"), w.Verb("get"))
	}
	if v.Verb("yeet") != nil || !slices.Equal(v.Verb("get"), []string{"read"}) {
		t.Error("With changed the original")
	}
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"unknown kind", "verbs:\n  reed: [get]\n", `f.yaml:2: unknown kind "reed"`},
		{"duplicate", "verbs:\n  read:\n    - get\n    - get\n", `f.yaml:4: "get" is listed twice under read`},
		{"not a word", "verbs:\n  read: [Get It]\n", `f.yaml:2: "Get It" is not a word`},
		{"unknown section", "verbz: {}\n", `f.yaml:1: unknown key "verbz"`},
		{"not a list", "nouns:\n  pay: payment\n", `f.yaml:2: pay: want a list`},
		{"empty", "", "f.yaml: empty file"},
		{"syntax", "verbs: [\n", "f.yaml:1: did not find expected node content"},
	} {
		var tb Tables
		err := datafile.Load("f.yaml", []byte(c.data), &tb)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}
