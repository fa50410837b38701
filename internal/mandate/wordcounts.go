// WordCounts: how many of something the user's words say ("buy 2 packs",
// "book one room", "delete the two drafts"), so that a call acting on more
// can be put to a person. The words around a count are data (counts.yaml).

package mandate

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/mandate-dev/mandate/internal/datafile"
	"github.com/mandate-dev/mandate/internal/fold"
)

// WordCount is a count the user's words state: a number (digits or a
// number word) and the words after it, which say what it counts.
type WordCount struct {
	// N is the number ("two" is 2).
	N int `json:"n"`
	// Words are the folded words after the number, up to maxCountWords,
	// within its clause ("packs", "of", "the", "ariel").
	Words []string `json:"words"`
	// Phrase is the count as written ("2 packs of the Ariel").
	Phrase string `json:"phrase"`
}

// maxCountWords bounds the words kept after a count.
const maxCountWords = 4

// maxWordCounts bounds the counts WordCounts returns.
const maxWordCounts = 32

const countsFile = "builtin:counts.yaml"

//go:embed counts.yaml
var countsData []byte

// countWords is counts.yaml, folded.
type countWords struct {
	labels, measures, distributives map[string]bool
}

var loadCountWords = sync.OnceValues(func() (*countWords, error) {
	var f struct {
		LabelNouns    []string `yaml:"label_nouns"`
		Measures      []string `yaml:"measures"`
		Distributives []string `yaml:"distributives"`
	}
	if err := datafile.Load(countsFile, countsData, &f); err != nil {
		return nil, err
	}
	cw := &countWords{labels: map[string]bool{}, measures: map[string]bool{}, distributives: map[string]bool{}}
	for _, w := range f.Distributives {
		cw.distributives[fold.String(w)] = true
	}
	for _, w := range f.LabelNouns {
		cw.labels[fold.String(w)] = true
	}
	for _, w := range f.Measures {
		cw.measures[fold.String(w)] = true
	}
	return cw, nil
})

// WordCounts returns the counts the user's words state, in text order: a
// number that counts the words after it ("buy 2 packs", "Réserve une
// chambre", "Lösch die zwei Entwürfe", "send it to 3 people"). A number
// that names something is not a count: one right after a word written
// with a capital or a digit inside its clause (a model or version:
// "HP DeskJet 2720", "iPhone 15", "Windows 11", "Oral-B Pro 3"), after a
// label noun ("room 204", "order 4411"), after "#", or inside a date, a
// time or a range ("12.03", "19:30", "3-5"); nor is one followed by a
// measure, a unit, an amount or nothing ("3 nights", "12 to 14 December",
// "we are 8"), and a rate is not a total ("one per person"). Nothing here grants or denies: the
// counts are facts for policy (flow.user_counts).
func WordCounts(text string) ([]WordCount, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if len(text) > maxInstructions {
		text = text[:maxInstructions]
	}
	c, err := sharedCompiler()
	if err != nil {
		return nil, fmt.Errorf("mandate: word counts: loading lexicons: %w", err)
	}
	cw, err := loadCountWords()
	if err != nil {
		return nil, fmt.Errorf("mandate: word counts: %w", err)
	}
	b := &build{c: c, text: text}
	b.ents = c.lx.extractEntities(text, c.re)
	toks := c.lx.tokenize(text, b.ents)
	b.langs = c.lx.detect(toks)
	var out []WordCount
	for i := 0; i < len(toks) && len(out) < maxWordCounts; i++ {
		n, width := 0, 1
		switch t := toks[i]; {
		case t.kind == tokNumber:
			n = t.n
		case t.kind == tokWord:
			e, w := b.at(toks, i, roleNumber)
			if e == nil {
				continue
			}
			n, width = e.n, w
		default:
			continue
		}
		if n <= 0 || !b.counts(cw, toks, i, i+width) {
			continue
		}
		wc := WordCount{N: n, Words: []string{}}
		end := i + width
		for j := i + width; j < len(toks) && len(wc.Words) < maxCountWords; j++ {
			if toks[j].kind != tokWord && toks[j].kind != tokNumber {
				break
			}
			if toks[j].kind == tokWord {
				wc.Words = append(wc.Words, toks[j].text)
				end = j + 1
			}
		}
		wc.Phrase = b.span(toks, i, end)
		i = end - 1
		if slices.ContainsFunc(wc.Words, func(w string) bool { return cw.distributives[w] }) {
			continue // "one per person": a rate
		}
		out = append(out, wc)
	}
	return out, nil
}

// counts reports whether the number toks[i:j] counts what follows it.
func (b *build) counts(cw *countWords, toks []token, i, j int) bool {
	start, end := toks[i].start, toks[j-1].end
	// Inside an id, a date, a time or a range: "#4411", "12.03", "19:30".
	if start > 0 && strings.ContainsRune("#:./-", rune(b.text[start-1])) {
		return false
	}
	if end+1 < len(b.text) && strings.ContainsRune(":./-", rune(b.text[end])) && b.text[end+1] >= '0' && b.text[end+1] <= '9' {
		return false
	}
	// What follows must be a word that is not a measure or a unit.
	if j >= len(toks) || toks[j].kind != tokWord {
		return false
	}
	next := toks[j]
	if cw.measures[next.text] || b.is(next, roleUnit) || b.is(next, roleAgeUnit) || b.is(next, roleSizeUnit) || b.is(next, roleCurrency) {
		return false
	}
	// What comes before: nothing, a break, or a word of the sentence.
	if i == 0 || toks[i-1].kind == tokStop || toks[i-1].kind == tokPunct || toks[i-1].kind == tokColon {
		return true
	}
	prev := toks[i-1]
	if prev.kind != tokWord {
		return prev.kind != tokNumber
	}
	if i == 1 || toks[i-2].kind == tokStop || toks[i-2].kind == tokPunct || toks[i-2].kind == tokColon {
		return true // the clause's first word: "Buy 2", "Kauf zwei"
	}
	if cw.labels[prev.text] {
		return false
	}
	if b.is(prev, roleVerb) {
		return true
	}
	for _, r := range b.text[prev.start:prev.end] {
		if unicode.IsUpper(r) || unicode.IsDigit(r) {
			return false // a name's number: "DeskJet 2720", "Windows 11"
		}
	}
	return true
}
