// Segmenting: which languages the text is in, and where its sentences,
// segments and clauses begin and end. A negation never reaches past the
// end of its clause.

package mandate

import (
	"fmt"
	"slices"
)

type segment struct {
	toks []token
	// butExcept marks a segment after a break that can mean "except"
	// ("delete everything in ~/tmp but the config files").
	butExcept bool
}

// sentence is a run of segments up to a stop; question is set when it ends
// with "?".
type sentence struct {
	segs     []segment
	question bool
}

// detect scores each language by the words its lexicon knows; a word
// several languages know counts for each in part. Languages with at least
// one word of their own, scoring at least one word and a third of the
// best, are returned, best first; failing that, those tied for best.
func (lx *lexicon) detect(toks []token) []*language {
	scores := make([]float64, len(lx.langs))
	unique := make([]int, len(lx.langs))
	for _, t := range toks {
		if t.kind != tokWord {
			continue
		}
		n, last := 0, 0
		for i, l := range lx.langs {
			if l.vocab[t.text] {
				n++
				last = i
			}
		}
		if n == 0 {
			continue
		}
		if n == 1 {
			unique[last]++
		}
		for i, l := range lx.langs {
			if l.vocab[t.text] {
				scores[i] += 1 / float64(n)
			}
		}
	}
	best := slices.Max(append([]float64{0}, scores...))
	var out []*language
	for i, l := range lx.langs {
		if unique[i] > 0 && scores[i] >= 1 && scores[i] >= best/3 {
			out = append(out, l)
		}
	}
	if len(out) == 0 && best >= 1 {
		// Only words several languages share ("fix … in"): take every
		// language that scores best rather than none.
		for i, l := range lx.langs {
			if scores[i] == best {
				out = append(out, l)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *language) int {
		sa, sb := scores[slices.Index(lx.langs, a)], scores[slices.Index(lx.langs, b)]
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	return out
}

// at returns the longest phrase of role r starting at toks[i] in any active
// language, and its length in tokens.
func (b *build) at(toks []token, i int, r role) (*entry, int) {
	if i >= len(toks) || (toks[i].kind != tokWord && toks[i].kind != tokNumber) {
		return nil, 0
	}
	var best *entry
	for _, l := range b.langs {
		for _, e := range l.index[toks[i].text] {
			if e.role != r || e.tail != nil || (best != nil && len(e.words) <= len(best.words)) {
				continue
			}
			if wordsAt(toks, i, e.words) {
				best = e
				break
			}
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, len(best.words)
}

func wordsAt(toks []token, i int, words []string) bool {
	if i+len(words) > len(toks) {
		return false
	}
	for k, w := range words {
		t := toks[i+k]
		if (t.kind != tokWord && t.kind != tokNumber) || t.text != w {
			return false
		}
	}
	return true
}

func (b *build) is(t token, r role) bool {
	e, n := b.at([]token{t}, 0, r)
	return e != nil && n == 1
}

// sentences splits tokens into sentences and those into segments: commas
// and clause breaks ("but", "aber", "mais", "pero") end a segment, stops
// and line breaks a sentence. Break words are dropped.
func (b *build) sentences(toks []token) []sentence {
	var out []sentence
	var sent []segment
	var cur []token
	question, butExcept := false, false
	flushSeg := func() {
		if len(cur) > 0 {
			sent = append(sent, segment{toks: cur, butExcept: butExcept})
			cur = nil
		}
		butExcept = false
	}
	flushSent := func() {
		flushSeg()
		if len(sent) > 0 {
			out = append(out, sentence{segs: sent, question: question})
			sent = nil
		}
		question = false
	}
	for i := 0; i < len(toks); i++ {
		switch t := toks[i]; t.kind {
		case tokStop:
			question = t.text == "?"
			flushSent()
		case tokPunct:
			if n := b.nameInBrackets(toks, i); n > 0 {
				// "(notifications@github.com)", "(Substack)": a name in
				// brackets is part of its clause, so what follows it
				// ("… que sean de antes de octubre") still restricts the
				// clause's verb instead of standing alone.
				cur = append(cur, toks[i+1:i+n-1]...)
				i += n - 1
				continue
			}
			flushSeg()
		default:
			if e, n := b.at(toks, i, roleBreak); e != nil {
				flushSeg()
				x, xn := b.at(toks, i, roleExceptBreak)
				butExcept = x != nil && xn == n
				i += n - 1
				continue
			}
			cur = append(cur, t)
		}
	}
	flushSent()
	return out
}

// maxBracketName bounds the tokens a bracketed name may hold.
const maxBracketName = 5

// nameInBrackets returns the length in tokens of a bracket pair at toks[i]
// that holds only a name: entities, or words that are no verb, negation,
// break or condition; 0 otherwise.
func (b *build) nameInBrackets(toks []token, i int) int {
	closing := map[string]string{"(": ")", "[": "]"}[toks[i].text]
	if closing == "" {
		return 0
	}
	for j := i + 1; j < len(toks) && j <= i+1+maxBracketName; j++ {
		t := toks[j]
		switch {
		case t.kind == tokPunct && t.text == closing:
			if j == i+1 {
				return 0
			}
			return j - i + 1
		case t.kind == tokEntity:
		case t.kind == tokWord || t.kind == tokNumber:
			for _, r := range []role{roleVerb, roleLight, roleNegBefore, roleNegAfter, roleBreak, roleItemCondition, roleKeep, roleRelative, roleLimit, roleException, roleConditional} {
				if e, _ := b.at(toks, j, r); e != nil {
					return 0
				}
			}
		default:
			return 0
		}
	}
	return 0
}

func (b *build) span(toks []token, from, to int) string {
	if from >= to || from < 0 || to > len(toks) {
		return ""
	}
	return b.text[toks[from].start:toks[to-1].end]
}

// clauseOf returns the token range of the clause within the segment that
// holds token i.
func (st *segState) clauseOf(i int) (from, to int) {
	from, to = 0, len(st.toks)
	for _, c := range st.cuts {
		if c <= i {
			from = c + 1
		} else {
			to = c
			break
		}
	}
	return from, to
}

func (b *build) sentence(sent sentence) {
	segs := sent.segs
	webCue := b.webCue(segs)
	question := ""
	if first := segs[0].toks; sent.question {
		if e, n := b.at(first, 0, roleQuestion); e != nil {
			question = b.span(first, 0, n)
		}
	}
	b.conditional = false
	if e, _ := b.at(segs[0].toks, 0, roleConditional); e != nil {
		b.conditional = true
	}
	var inherited *anchor
	var anchors, only []*anchor
	before := slices.Clone(b.m.Allow)
	b.pendingAct, b.pendingItems = nil, nil
	b.sentenceVerbs = false
	var reportsInto *anchor // a send verb and its addressee ending the segment before
	readsInto := false      // a reading verb ending the segment before ("Schau nach, …")
	fronted := false
	for si, seg := range segs {
		st := b.analyse(seg.toks, si == len(segs)-1)
		st.fronted = fronted
		b.reportedAfter(st, reportsInto)
		reportsInto = b.reportsInto(st)
		if readsInto {
			b.indirectAfter(st)
		}
		readsInto = b.readsInto(st)
		// "…, but only in ./docs": "but only" restricts, it spares nothing.
		onlyHere := slices.ContainsFunc(st.qualifiers, func(q qualifier) bool { return q.only })
		st.butExcept = seg.butExcept && len(st.anchors) == 0 && len(st.negBef)+len(st.negAft) == 0 && !onlyHere
		if question != "" {
			for _, a := range st.anchors {
				if !a.noGrant {
					a.noGrant, a.noGrantW = true, fmt.Sprintf("a question (%q … ?) asks for nothing", question)
				}
			}
		}
		b.today(st)
		b.apply(st, webCue, inherited)
		b.itemConditions(st, inherited)
		b.askPrevious(st, inherited)
		if st.butExcept {
			b.butExcept(st, inherited)
		}
		b.account(st)
		fronted = len(st.anchors) == 0 && (fronted || slices.ContainsFunc(st.toks, func(t token) bool { return t.kind == tokEntity && b.ents[t.ent].held() }))
		for _, a := range st.anchors {
			inherited = a
			b.sentenceVerbs = b.sentenceVerbs || !a.noun
		}
		anchors = append(anchors, st.anchors...)
		only = append(only, st.onlyVerbs...)
		only = append(only, st.nothingVerbs...)
		if st.nothing != "" && !st.nothingPlaces && len(anchors) == 0 && b.prev.last != nil {
			// "Räum ~/tmp auf, lösch die .log-Dateien. Ansonsten wird
			// nichts angefasst.": a sentence of its own restricts the last
			// verb of the sentence before it.
			b.narrowByOnly(b.prev.anchors, []*anchor{b.prev.last}, b.prev.before)
		}
	}
	if len(only) > 0 {
		// "Clean up the repo. Actually, only remove the files in
		// ./build.": an "only" sentence spells out an umbrella verb of the
		// sentence before it, as it does in its own sentence.
		var umbrellas []*anchor
		for _, a := range b.prev.anchors {
			if a.umbrella && granting(a) {
				umbrellas = append(umbrellas, a)
			}
		}
		if len(umbrellas) > 0 {
			b.narrowByOnly(append(umbrellas, anchors...), only, b.prev.before)
		}
	}
	b.prev.anchors, b.prev.before, b.prev.last = anchors, before, nil
	for _, a := range anchors {
		if granting(a) {
			b.prev.last = a
		}
	}
	for _, phrase := range b.pendingItems {
		b.recognise(phrase, "nothing qualified", "an item condition with no verb it restricts: it grants nothing")
	}
	b.pendingItems = nil
	b.narrowByOnly(anchors, only, before)
}

// webCue returns the word or entity that makes the sentence about the web
// ("prices", "online", a URL), or "".
func (b *build) webCue(segs []segment) string {
	for _, seg := range segs {
		for i, t := range seg.toks {
			if t.kind == tokEntity {
				if k := b.ents[t.ent].kind; k == entURL || k == entDomain {
					return b.ents[t.ent].raw
				}
				continue
			}
			// "acme/web" names a repository, not the web.
			if e, n := b.at(seg.toks, i, roleWeb); e != nil && !t.inName {
				return b.span(seg.toks, i, i+n)
			}
		}
	}
	return ""
}

// findCuts marks colons, and conjunctions that join two verb phrases
// where the first already has an object: "don't touch prod/ and fix
// src/foo.go" is two clauses, "don't buy or sell" is one.
func (b *build) findCuts(st *segState) {
	for j := range st.toks {
		if st.toks[j].kind == tokColon {
			st.cuts = append(st.cuts, j)
			continue
		}
		if st.consumed[j] {
			continue
		}
		if e, n := b.at(st.toks, j, roleConj); e == nil || n != 1 {
			continue
		}
		before, after := false, false
		for _, a := range st.anchors {
			if a.end < j {
				before = true
			}
			if a.pos > j && a.pos <= j+2 {
				after = true
			}
		}
		if before && after {
			st.cuts = append(st.cuts, j)
		}
	}
}
