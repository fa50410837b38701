// Reflexive and passive forms: "los borradores se borran", "i file
// temporanei si cancellano", "die Datei wird nach ~/archiv verschoben". The
// words ask for the act as surely as the imperative does, in a form the
// verb lists of lang/*.yaml do not hold; a reflexive or passive form of a
// verb maps to that verb's kinds (and so to its negation: "no se borra
// nada" rules deleting out). Which forms count is data (`passive` in each
// lang/*.yaml); this file is the mechanism.

package mandate

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// passiveTable is a language's `passive` section.
type passiveTable struct {
	// Markers are the words that make a form reflexive or passive: the
	// reflexive pronoun ("se", "si") or the passive's auxiliary ("wird",
	// "werden", "vengono"). Only present and modal ones: a past ("wurde
	// gelöscht") tells what happened, it asks for nothing.
	Markers []string `yaml:"markers"`
	// Within is how many tokens apart, in the same clause, the marker and
	// the form may be (either side: "werden gelöscht", "gelöscht werden").
	Within int `yaml:"within"`
	// Prefixes and Endings are cut from a form to find the verb form
	// the lexicon lists: "borran" less "n" is "borra", "gelöscht" less
	// "ge" and "t" is "lösch".
	Prefixes []string `yaml:"prefixes"`
	Endings  []string `yaml:"endings"`
	// Forms are irregular ones, each to a listed verb form
	// ("verschoben": "verschieben").
	Forms map[string]string `yaml:"forms"`
}

// passiveForms is a passiveTable folded for matching.
type passiveForms struct {
	markers           map[string]bool
	within            int
	prefixes, endings []string
	forms             map[string]string
}

func (lx *lexicon) passiveOf(t passiveTable) (passiveForms, error) {
	one := func(field, p string) (string, error) {
		w := lx.phraseWords(p)
		if len(w) != 1 {
			return "", fmt.Errorf("passive.%s: %q is not one word", field, p)
		}
		return w[0], nil
	}
	pf := passiveForms{markers: map[string]bool{}, forms: map[string]string{}, within: t.Within}
	if len(t.Markers) > 0 && (t.Within < 1 || t.Within > 8) {
		return pf, fmt.Errorf("passive.within: %d is not between 1 and 8", t.Within)
	}
	for _, m := range t.Markers {
		w, err := one("markers", m)
		if err != nil {
			return pf, err
		}
		pf.markers[w] = true
	}
	for _, list := range []struct {
		name string
		in   []string
		out  *[]string
	}{{"prefixes", t.Prefixes, &pf.prefixes}, {"endings", t.Endings, &pf.endings}} {
		for _, a := range list.in {
			w, err := one(list.name, a)
			if err != nil {
				return pf, err
			}
			*list.out = append(*list.out, w)
		}
	}
	for form, verb := range t.Forms {
		f, err := one("forms", form)
		if err != nil {
			return pf, err
		}
		v, err := one("forms", verb)
		if err != nil {
			return pf, err
		}
		pf.forms[f] = v
	}
	return pf, nil
}

// candidates returns the listed verb forms a word may be the reflexive or
// passive form of: an irregular form's verb, or the word less a prefix
// and an ending, at least three letters left.
func (pf passiveForms) candidates(w string) []string {
	var out []string
	if v, ok := pf.forms[w]; ok {
		out = append(out, v)
	}
	for _, p := range append([]string{""}, pf.prefixes...) {
		rest, ok := strings.CutPrefix(w, p)
		if !ok {
			continue
		}
		for _, e := range pf.endings {
			if stem, ok := strings.CutSuffix(rest, e); ok && utf8.RuneCountInString(stem) >= 3 {
				out = append(out, stem)
			}
		}
	}
	return out
}

// passive returns the verb a word is the reflexive or passive form of —
// a marker of the same language within reach in its clause — and the
// marker's index; nil when it is none.
func (b *build) passive(st *segState, i int) (*entry, int) {
	w := st.toks[i].text
	from, to := st.clauseOf(i)
	for _, l := range b.langs {
		pf := l.passive
		if len(pf.markers) == 0 || pf.markers[w] {
			continue
		}
		marker := -1
		for j := max(from, i-pf.within); j < min(to, i+pf.within+1); j++ {
			if j != i && st.toks[j].kind == tokWord && pf.markers[st.toks[j].text] {
				marker = j
				break
			}
		}
		if marker < 0 {
			continue
		}
		for _, form := range pf.candidates(w) {
			for _, e := range l.index[form] {
				if e.role == roleVerb && len(e.words) == 1 && e.tail == nil {
					return e, marker
				}
			}
		}
	}
	return nil, -1
}
