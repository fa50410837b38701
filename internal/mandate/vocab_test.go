package mandate

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/vocab"
)

// TestLexiconAgreesWithVocabulary holds the English lexicon to the shared
// verb vocabulary (internal/vocab): a one-word verb or noun both know must
// name the same kinds in both, so that "cancel" in the user's words grants
// exactly what a cancel_… tool is classified as. "any" verbs name no kind
// of their own and are not compared.
func TestLexiconAgreesWithVocabulary(t *testing.T) {
	data, err := os.ReadFile("lang/en.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var en struct {
		Verbs map[string][]string `yaml:"verbs"`
		Nouns map[string][]string `yaml:"nouns"`
	}
	if err := yaml.Unmarshal(data, &en); err != nil {
		t.Fatal(err)
	}
	v, err := vocab.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	compare := func(what string, lex map[string][]string, tables ...vocab.Table) {
		words := map[string][]string{}
		for kind, phrases := range lex {
			if kind == "any" || kind == "touch" {
				continue
			}
			for _, p := range phrases {
				if !strings.Contains(p, " ") && !slices.Contains(words[p], kind) {
					words[p] = append(words[p], kind)
				}
			}
		}
		agreed := 0
		for w, kinds := range words {
			for _, tb := range tables {
				want, ok := tb[w]
				if !ok {
					continue
				}
				got := slices.Clone(kinds)
				slices.Sort(got)
				want = slices.Clone(want)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s %q: lang/en.yaml says %v, internal/vocab/verbs.yaml says %v", what, w, got, want)
				} else {
					agreed++
				}
			}
		}
		if agreed == 0 {
			t.Errorf("%s: no word in common: the comparison tests nothing", what)
		}
	}
	compare("verb", en.Verbs, v.Verbs(), v.LeadVerbs())
	compare("noun", en.Nouns, v.Nouns())
}
