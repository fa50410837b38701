package flow

import (
	"fmt"
	"strings"

	"github.com/mandate-dev/mandate/internal/fold"
)

// What the user ruled out. "Archive all the newsletters except the ones
// from my bank", "refund 30 €, not the 45 they asked for", "reply to
// everyone but Bob": the words after an exclusion cue, to the end of their
// clause, name what the task must not reach. They are not words the user
// asked for — a sender, an item name or an amount that the user's words
// have only there is not one the user pointed to, and a call that reaches
// it is flagged (ValueFacts.Excluded, ItemFacts.Excluded). The cues are
// data (values.yaml: exclusion_cues, exclusion_caps, exclusion_void).

// maxExclusionWords bounds the words one exclusion reaches: past them the
// clause is no longer what the cue ruled out.
const maxExclusionWords = 10

// exclusionVocab is the compiled exclusion_* lists of values.yaml.
type exclusionVocab struct {
	// cues are phrases (folded words) after which the clause names what
	// is ruled out; caps the phrases that, right after a cue, make it a
	// limit ("not more than 50 €": 50 is the cap, not ruled out); void
	// the words that, right after a cue, undo it ("don't forget to cc
	// Anna" asks for Anna).
	cues [][]string
	caps [][]string
	void map[string]bool
	// ends are words that start a clause of their own ("but", "sondern").
	ends map[string]bool
}

// exclusionSpec is the part of values.yaml this file reads.
type exclusionSpec struct {
	Cues []string `yaml:"exclusion_cues"`
	Caps []string `yaml:"exclusion_caps"`
	Void []string `yaml:"exclusion_void"`
	Ends []string `yaml:"exclusion_ends"`
}

func compileExclusions(s exclusionSpec) (exclusionVocab, error) {
	ev := exclusionVocab{void: map[string]bool{}, ends: map[string]bool{}}
	phrases := func(list []string, name string) ([][]string, error) {
		var out [][]string
		for _, p := range list {
			var ws []string
			for _, tk := range tokenize(p, 0, len(p), nil) {
				ws = append(ws, tk.text)
			}
			if len(ws) == 0 {
				return nil, fmt.Errorf("flow/values.yaml: %s: %q has no words", name, p)
			}
			out = append(out, ws)
		}
		return out, nil
	}
	var err error
	if ev.cues, err = phrases(s.Cues, "exclusion_cues"); err != nil {
		return ev, err
	}
	if ev.caps, err = phrases(s.Caps, "exclusion_caps"); err != nil {
		return ev, err
	}
	for _, w := range s.Void {
		ev.void[fold.String(strings.TrimSpace(w))] = true
	}
	for _, w := range s.Ends {
		ev.ends[fold.String(strings.TrimSpace(w))] = true
	}
	return ev, nil
}

// phraseAt: the words of p are toks[i:], in order; it returns how many
// tokens they take (0: no match).
func phraseAt(toks []tok, i int, p []string) int {
	if i+len(p) > len(toks) {
		return 0
	}
	for j, w := range p {
		if toks[i+j].text != w {
			return 0
		}
	}
	return len(p)
}

// clauseBreak: the text between two tokens ends a clause (a sentence mark,
// a bracket, a line break, or the token itself is a comma or colon).
func clauseBreak(s string, prevEnd int, t tok) bool {
	if t.text == "," || t.text == ":" {
		return true
	}
	if prevEnd < 0 || prevEnd > t.start {
		return false
	}
	return strings.ContainsAny(s[prevEnd:t.start], ".;!?()[]\n")
}

// exclusions returns the byte spans of s that an exclusion cue rules out:
// from the end of the cue to the end of its clause, at most
// maxExclusionWords words.
func (ev *exclusionVocab) exclusions(s string, toks []tok) []Span {
	var out []Span
	for i := 0; i < len(toks); i++ {
		n := 0
		for _, c := range ev.cues {
			if m := phraseAt(toks, i, c); m > n {
				n = m
			}
		}
		if n == 0 {
			continue
		}
		j := i + n
		if j >= len(toks) || ev.void[toks[j].text] || clauseBreak(s, toks[j-1].end, toks[j]) {
			i = j - 1
			continue
		}
		// A limit may follow the verb the cue negates ("don't pay more
		// than 50 €"): the cue's next three words are looked at.
		capped := false
		for k := j; k < j+3 && k < len(toks) && !capped; k++ {
			for _, c := range ev.caps {
				if phraseAt(toks, k, c) > 0 {
					capped = true
					break
				}
			}
		}
		if capped {
			i = j - 1
			continue
		}
		end, words := j, 0
		for end < len(toks) && words < maxExclusionWords {
			if end > j && (clauseBreak(s, toks[end-1].end, toks[end]) || ev.ends[toks[end].text]) {
				break
			}
			if toks[end].text != "," && toks[end].text != ":" {
				words++
			}
			end++
		}
		if end > j {
			out = append(out, Span{Start: toks[j].start, End: toks[end-1].end, Tail: toks[end-1].end})
		}
		i = end - 1
	}
	return out
}

// inSpans: offset at lies in one of spans.
func inSpans(at int, spans []Span) bool {
	for _, sp := range spans {
		if at >= sp.Start && at < sp.End {
			return true
		}
	}
	return false
}

// userExclusions marks, in the user's words s, the values and words that
// lie in a clause an exclusion cue rules out. A value or word the words
// also have outside such a clause is not ruled out ("pay Anna, not Bob,
// and send Bob the receipt").
func (st *scanState) userExclusions(s string) {
	toks := tokenize(s, 0, len(s), nil)
	spans := st.s.voc.excl.exclusions(s, toks)
	for _, t := range toks {
		if t.text == "," || t.text == ":" {
			continue
		}
		if inSpans(t.start, spans) {
			if st.exWords == nil {
				st.exWords = map[string]bool{}
			}
			if len(st.exWords) < 1024 {
				st.exWords[t.text] = true
			}
			continue
		}
		if len(st.words) < 4096 {
			st.words[t.text] = true
		}
	}
	for _, h := range st.hits {
		if len(h.keys) == 0 {
			continue
		}
		i, ok := st.seen[h.keys[0]]
		if !ok {
			continue
		}
		v := &st.out.Values[i]
		if inSpans(h.start, spans) {
			v.excluded = true
		} else {
			v.affirmed = true
		}
	}
}

// finishExclusions keeps the words the user's words have only where they
// rule something out.
func (st *scanState) finishExclusions() {
	for w := range st.exWords {
		// Short and stop words ("the ones from my bank") name nothing.
		if !st.words[w] && len(w) >= 4 && !st.s.det.lx.stop[w] && !isNumber(w) {
			st.out.excludedWords = append(st.out.excludedWords, w)
		}
	}
	for i := range st.out.Values {
		v := &st.out.Values[i]
		v.Excluded = v.excluded && !v.affirmed
	}
}

// excludedWord: w (folded) is a word the user's words have only where
// they rule something out — by stem for words of five letters or more.
func (t *Table) excludedWord(w string) bool {
	if len(t.userExcl) == 0 || len(w) < 3 || genericWord[w] || isNumber(w) {
		return false
	}
	if t.userWords[w] {
		return false
	}
	if t.userExcl[w] {
		return true
	}
	if len(w) < 5 {
		return false
	}
	for u := range t.userExcl {
		if sameStem(u, w) {
			return true
		}
	}
	return false
}

// itemExcluded: a word of the listed item's name, or of its sender,
// author or biller (an address by its local part and domain name), is one
// the user's words rule out: "except the ones from my bank" and a mail
// from "ING Bank <news@ing.example>".
func (t *Table) itemExcluded(li *listedItem) bool {
	if len(t.userExcl) == 0 {
		return false
	}
	texts := append([]string{li.words}, li.senders...)
	for _, s := range texts {
		for _, tk := range tokenize(s, 0, len(s), nil) {
			if t.userWords[tk.text] {
				// A word the user also asked for names what the task
				// is about, not only what it leaves out.
				continue
			}
			if t.excludedWord(tk.text) {
				return true
			}
		}
	}
	return false
}
