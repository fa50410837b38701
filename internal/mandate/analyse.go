// Analysing a segment: which phrases play which role, and which words are
// verbs (anchors) and nouns, with light verbs given their object's kind.

package mandate

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/action"
)

// anchor is a verb, or a negated noun ("no purchases"), that entities in
// its clause attach to.
type anchor struct {
	pos, end int // token indices in the segment
	kinds    []action.Kind
	anyKind  bool
	// sparesRead marks an "any" verb that leaves reading alone ("don't
	// touch X" rules out changing X, not looking at it).
	sparesRead bool
	web        bool
	noun       bool
	negated    bool
	// negStart and negEnd are the negation marker's token span.
	negStart, negEnd int
	negAfter         bool // the marker follows the word ("lösch nichts")
	negNobody        bool // the marker is "no one", "niemandem": every recipient
	umbrella         bool // an umbrella verb ("tidy up"), see narrowByOnly
	passive          bool // a reflexive or passive form ("se borran"), see passive.go
	// anyObject: the rest of the verb's clause names items of any sort
	// ("delete everything in ~/tmp"), set by itemConditions.
	anyObject bool
	// anyMessages: it names messages of any sort ("my emails"), which a
	// sender condition may restrict on its own.
	anyMessages bool
	word, neg   string // the words as written, for explanations
	typoOf      string // the lexicon form, when matched as a likely typo
	// noGrant marks a verb that asks for nothing: in a question ("how
	// much did I spend?"), an embedded question ("tell me if there is an
	// invoice to pay") or the user's own plan ("I'll send it myself").
	// Negated, it still denies.
	noGrant  bool
	noGrantW string // why
	// money is set for a verb that moves an amount ("send Lukas 50 €").
	money bool
	// self marks a verb whose subject is the user ("I never read them",
	// "I'll send it myself"): it neither grants nor, negated, forbids.
	self bool
	// light marks a verb that takes its kind from its object ("open a
	// PR", "do the shopping"); object is that object as written.
	light  bool
	object string
	// narrow marks a noun, or a light verb's object, that names one thing
	// a kind acts on ("no PR", "don't give him access"), not the act.
	narrow bool
	// needless marks "no need to reply": nothing asked, nothing ruled out.
	needless bool
	// askFirst marks a verb the user wants to be asked about first ("ask
	// me before deleting anything"): treated as ruled out for something
	// the draft cannot name, so a person decides those calls.
	askFirst bool
	// askedAbout marks a verb inside an indirect question ("tell me
	// what would change"), see indirectQuestions.
	askedAbout bool
	// held marks a granting verb whose object is named resources only,
	// which the scope holds (objectHeld).
	held bool
	// objectless marks a granting verb with no word after it in its
	// segment ("schließe oder bearbeite | aber keine Issues").
	objectless bool
	// handsOff marks "leave … alone": a prohibition without a negation
	// word, which no item condition takes for the verb it qualifies.
	handsOff bool
}

// segState is what one segment's analysis found.
type segState struct {
	toks []token
	last bool // the sentence's last segment
	// fronted: a segment before this one in its sentence, with no verb
	// since the last verb, names a resource the scope holds ("In ~/tmp,
	// delete …"): the place the next verb acts in.
	fronted    bool
	consumed   []bool
	negBef     [][2]int // negation markers before what they negate
	negAft     [][2]int // after
	restrict   []int
	limits     [][3]int // start, end, 1 if a negated limit ("more than")
	anchors    []*anchor
	nouns      []*anchor // every noun, negated or not, for counts
	readOnly   string    // the phrase that made the segment read-only
	roWhy      string
	roPos      int    // where that phrase is
	nothing    string // a "nothing else" phrase
	nothingPos int    // where it is; -1 when there is none
	// nothingPlaces: the phrase is about places and people ("nowhere
	// else"), which named recipients and paths hold.
	nothingPlaces bool
	// nothingVerbs are the granting verbs a "nothing else" about things
	// restricts: like an "only" verb, each is all the sentence asks of a
	// broader verb before it (narrowByOnly).
	nothingVerbs []*anchor
	embedded     []int    // embedded-question markers ("whether", "ob")
	self         [][2]int // the user speaking of themself ("I'll", "ich")
	needless     [][2]int // "no need to", "pas besoin de"
	askFirst     [][2]int // "ask me before", "frag mich, bevor"
	askPrev      string   // "…, but ask me first": the clause before is asked (askPrevious)
	askAfter     [][2]int // "without asking me first", "ohne mich zu fragen"
	exceptions   [][2]int // "outside", "except", "außer"
	today        [][2]int // "today" phrases, settled once anchors are known
	// qualifiers are item conditions ("only", "older than", "except" with
	// no entity after it) and keep verbs ("but keep …"), see itemcond.go.
	qualifiers []qualifier
	// onlyVerbs are the verbs an "only" qualifies ("only delete …").
	onlyVerbs []*anchor
	// cuts are conjunctions that start a new clause within the segment
	// ("don't touch prod/ and fix src/foo.go"): a negation does not reach
	// past them.
	cuts []int
	// butExcept marks a clause after "but" with no verb or negation of
	// its own: an exception to the sentence's last verb ("… but the
	// config files", "… but ~/tmp/keep").
	butExcept bool
	// reported are the spans of reported speech ("tell him that …"):
	// the message's text, see reported.go.
	reported [][2]int
}

func (b *build) analyse(toks []token, last bool) *segState {
	st := &segState{toks: toks, consumed: make([]bool, len(toks)), nothingPos: -1, last: last}
	mark := func(i, n int) {
		for k := i; k < i+n && k < len(toks); k++ {
			st.consumed[k] = true
		}
	}
	free := func(i, n int) bool {
		for k := i; k < i+n; k++ {
			if k >= len(toks) || st.consumed[k] {
				return false
			}
		}
		return true
	}
	// scan finds every phrase of role r on unconsumed tokens, left to right.
	scan := func(r role, fn func(e *entry, i, n int)) {
		for i := 0; i < len(toks); i++ {
			if st.consumed[i] {
				continue
			}
			if e, n := b.at(toks, i, r); e != nil && free(i, n) {
				mark(i, n)
				fn(e, i, n)
				i += n - 1
			}
		}
	}
	scan(roleAskFirst, func(_ *entry, i, n int) { st.askFirst = append(st.askFirst, [2]int{i, i + n}) })
	scan(roleAskAfter, func(_ *entry, i, n int) { st.askAfter = append(st.askAfter, [2]int{i, i + n}) })
	scan(roleIgnore, func(*entry, int, int) {})
	scan(roleNeedless, func(_ *entry, i, n int) { st.needless = append(st.needless, [2]int{i, i + n}) })
	// The longer phrase decides: "no toques nada más" and "ne touche à rien
	// d'autre" are "nothing else", not the read-only "no toques nada" and
	// "ne touche à rien" they begin with.
	for i := range toks {
		if e, n := b.at(toks, i, roleNothingElse); e != nil {
			if ro, m := b.at(toks, i, roleReadOnly); ro != nil && m < n {
				mark(i, n)
				st.nothing, st.nothingPos, st.nothingPlaces = b.span(toks, i, i+n), i, e.cond == condElsewhere
			}
		}
	}
	scan(roleReadOnly, func(_ *entry, i, n int) {
		if st.readOnly == "" {
			st.readOnly, st.roWhy, st.roPos = b.span(toks, i, i+n), roPhrase, i
		}
	})
	scan(roleNothingElse, func(e *entry, i, n int) {
		if c, m := b.at(toks, max(i-1, 0), roleConditional); i > 0 && c != nil && m == 1 {
			// "tell me if anything else breaks": what is reported on,
			// not a restriction of what is asked.
			for k := i; k < i+n; k++ {
				st.consumed[k] = false
			}
			return
		}
		st.nothing, st.nothingPos, st.nothingPlaces = b.span(toks, i, i+n), i, e.cond == condElsewhere
	})
	b.findItemConditions(st, free, mark)
	scan(roleEmbedded, func(_ *entry, i, _ int) { st.embedded = append(st.embedded, i) })
	scan(roleLimit, func(_ *entry, i, n int) { st.limits = append(st.limits, [3]int{i, i + n, 0}) })
	scan(roleNegLimit, func(_ *entry, i, n int) { st.limits = append(st.limits, [3]int{i, i + n, 1}) })
	scan(roleException, func(_ *entry, i, n int) { st.exceptions = append(st.exceptions, [2]int{i, i + n}) })
	b.expiry(st, mark)
	for i := 0; i < len(toks); i++ {
		if st.consumed[i] {
			continue
		}
		eb, nb := b.at(toks, i, roleNegBefore)
		ea, na := b.at(toks, i, roleNegAfter)
		if eb == nil && ea == nil {
			continue
		}
		n := max(nb, na)
		if !free(i, n) {
			continue
		}
		// The longer phrase decides: "no one" negates the verb before it,
		// not the words after its "no".
		if eb != nil && nb >= na {
			st.negBef = append(st.negBef, [2]int{i, i + nb})
		}
		if ea != nil && na >= nb {
			st.negAft = append(st.negAft, [2]int{i, i + na})
		}
		mark(i, n)
		i += n - 1
	}
	b.onlyPairs(st, mark)
	scan(roleRestrictor, func(_ *entry, i, _ int) { st.restrict = append(st.restrict, i) })
	scan(roleSelf, func(_ *entry, i, n int) {
		if b.primaryDeterminer(toks, i) {
			return // Italian "I file …": the article, not English "I"
		}
		st.self = append(st.self, [2]int{i, i + n})
	})
	b.findAnchors(st, free, mark)
	b.resolveLight(st)
	b.writtenToPerson(st)
	b.freeBookings(st)
	b.findCuts(st)
	b.negate(st)
	b.qualify(st)
	b.reportedIn(st)
	return st
}

func (b *build) findAnchors(st *segState, free func(i, n int) bool, mark func(i, n int)) {
	toks := st.toks
	for i := 0; i < len(toks); i++ {
		if st.consumed[i] || toks[i].kind != tokWord {
			continue
		}
		if e, n := b.at(toks, i, roleVerb); e != nil && n > 1 && free(i, n) && b.verbHere(st, i, e) && !b.longerNoun(toks, i, n) {
			// A verb of several words wins over one with a gap or a
			// particle: "let me know" is not "let … know".
			mark(i, n)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + n, kinds: e.kinds, anyKind: e.anyKind, sparesRead: e.sparesRead, web: e.web, narrow: !e.general, umbrella: e.umbrella, word: b.span(toks, i, i+n)})
			i += n - 1
			continue
		}
		if e, n, j, m := b.gapAt(st, i); e != nil && free(i, n) && free(j, m) && b.verbHere(st, i, e) {
			// "let #general know": the verb's object stands inside it.
			mark(i, n)
			mark(j, m)
			a := &anchor{pos: i, end: i + n, kinds: e.kinds, web: e.web, narrow: !e.general, umbrella: e.umbrella,
				word: b.span(toks, i, i+n) + " … " + b.span(toks, j, j+m)}
			if e.role == roleHandsOff {
				// "leave the open ones alone": "don't touch" without a
				// negation word. Its object stands inside it.
				a.anyKind, a.negated, a.negStart, a.negEnd, a.neg = true, true, i, i+n, a.word
				a.handsOff = true
				if b.sparesBySender(st, i+n, j) {
					// "delete the promos, but leave anything from
					// @mybank.com alone": items spared by who sent them,
					// which a prohibition on the sender as a recipient
					// does not hold. It qualifies like "but keep …".
					st.qualifiers = append(st.qualifiers, qualifier{from: i, to: j + m, keep: true})
				}
			}
			st.anchors = append(st.anchors, a)
			i += n - 1
			continue
		}
		if e, j := b.separableAt(st, i); e != nil && free(i, 1) && free(j, 1) && b.verbHere(st, i, e) {
			// "Lade Paula zum Fest ein": the verb's particle closes its
			// clause.
			mark(i, 1)
			mark(j, 1)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + 1, kinds: e.kinds, anyKind: e.anyKind, sparesRead: e.sparesRead, web: e.web, narrow: !e.general, umbrella: e.umbrella,
				word: b.span(toks, i, i+1) + " … " + b.span(toks, j, j+1)})
			continue
		}
		if e, n := b.atFree(toks, i, roleVerb, free); e != nil && b.verbHere(st, i, e) && !b.longerNoun(toks, i, n) && !b.longerLight(toks, i, n) {
			mark(i, n)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + n, kinds: e.kinds, anyKind: e.anyKind, sparesRead: e.sparesRead, web: e.web, narrow: !e.general, umbrella: e.umbrella, word: b.span(toks, i, i+n)})
			i += n - 1
			continue
		}
		if e, n := b.at(toks, i, roleLight); e != nil && free(i, n) && b.verbHere(st, i, e) {
			mark(i, n)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + n, kinds: e.kinds, light: true, word: b.span(toks, i, i+n)})
			i += n - 1
			continue
		}
		if e, n := b.at(toks, i, roleNoun); e != nil && free(i, n) {
			mark(i, n)
			st.nouns = append(st.nouns, &anchor{pos: i, end: i + n, kinds: e.kinds, noun: true, narrow: e.narrow, word: b.span(toks, i, i+n)})
			i += n - 1
			continue
		}
		if e, m := b.passive(st, i); e != nil && free(i, 1) && b.verbHere(st, i, e) {
			// "se borran", "wird verschoben": the verb in a reflexive or
			// passive form, its marker part of it.
			mark(i, 1)
			if free(m, 1) {
				mark(m, 1)
			}
			word := b.span(toks, min(i, m), max(i, m)+1)
			if i-m > 1 || m-i > 1 {
				word = b.span(toks, min(i, m), min(i, m)+1) + " … " + b.span(toks, max(i, m), max(i, m)+1)
			}
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + 1, kinds: e.kinds, anyKind: e.anyKind, sparesRead: e.sparesRead, web: e.web, narrow: !e.general, passive: true, word: word})
			continue
		}
		if e := b.enclitic(toks[i].text); e != nil && b.verbHere(st, i, e) {
			// "guárdala", "envíaselo": a verb form with its pronoun attached.
			mark(i, 1)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + 1, kinds: e.kinds, anyKind: e.anyKind, sparesRead: e.sparesRead, web: e.web, narrow: e.role == roleVerb && !e.general, light: e.role == roleLight, word: b.span(toks, i, i+1)})
			continue
		}
		if e := b.typo(toks[i].text); e != nil && b.verbHere(st, i, e) {
			mark(i, 1)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + 1, kinds: e.kinds, anyKind: e.anyKind, sparesRead: e.sparesRead, web: e.web, narrow: !e.general, umbrella: e.umbrella, word: b.span(toks, i, i+1), typoOf: e.words[0]})
		}
	}
}

// gapAt finds a verb written with a gap ("let … know", "gib … Bescheid")
// whose head starts at token i and whose tail follows within four words.
// It returns the entry, the head's length, and the tail's index and length.
func (b *build) gapAt(st *segState, i int) (*entry, int, int, int) {
	toks := st.toks
	if toks[i].kind != tokWord {
		return nil, 0, 0, 0
	}
	for _, l := range b.langs {
		for _, e := range l.index[toks[i].text] {
			if e.tail == nil || (e.role != roleVerb && e.role != roleHandsOff) || !wordsAt(toks, i, e.words) {
				continue
			}
			n := len(e.words)
			for j := i + n + 1; j < len(toks) && j <= i+n+4; j++ {
				if wordsAt(toks, j, e.tail) {
					return e, n, j, len(e.tail)
				}
			}
		}
	}
	return nil, 0, 0, 0
}

// separableReach is how many words after its stem a separable particle
// is looked for.
const separableReach = 16

// separableAt finds a verb of two words whose second is a separable
// particle left at the end of the clause ("lade … ein", "teile … auf"),
// the stem at token i. It returns the entry and the particle's index.
// The particle must end the segment or stand before a conjunction or a
// clause break, as German puts it.
func (b *build) separableAt(st *segState, i int) (*entry, int) {
	toks := st.toks
	if toks[i].kind != tokWord {
		return nil, 0
	}
	for _, l := range b.langs {
		if len(l.separable) == 0 {
			continue
		}
		for _, e := range l.index[toks[i].text] {
			if e.role != roleVerb || len(e.words) != 2 || !l.separable[e.words[1]] {
				continue
			}
			// A clause rarely runs past a dozen words; looking no further
			// keeps a long run of stems from costing quadratic time.
			for j := i + 2; j < len(toks) && j <= i+separableReach; j++ {
				if toks[j].kind != tokWord || toks[j].text != e.words[1] {
					continue
				}
				last := j+1 == len(toks)
				if !last {
					c, _ := b.at(toks, j+1, roleConj)
					cue, _ := b.at(toks, j+1, roleCue)
					last = c != nil || cue != nil
				}
				if last {
					return e, j
				}
			}
		}
	}
	return nil, 0
}

// enclitic returns the verb (or light verb) a word is with a pronoun
// attached, in a language whose table lists such endings: "guárdala" is
// "guarda" + "la". The stem must be a one-word verb form of that language.
func (b *build) enclitic(w string) *entry {
	for _, l := range b.langs {
		if l.vocab[w] {
			continue // a word of its own ("informe", "vela")
		}
		for _, suf := range l.enclitics {
			stem, ok := strings.CutSuffix(w, suf)
			if !ok || utf8.RuneCountInString(stem) < 2 {
				continue
			}
			for f := -1; f < len(l.encliticFill); f++ {
				form := stem
				if f >= 0 {
					form += l.encliticFill[f]
				}
				for _, e := range l.index[form] {
					if (e.role == roleVerb || e.role == roleLight) && len(e.words) == 1 && e.tail == nil {
						return e
					}
				}
			}
		}
	}
	return nil
}

// resolveLight gives each light verb the kind of its object: the first
// noun of a kind within a few words ("open a small PR", "make a
// payment"), else the first verb form used as a noun ("do the rename",
// "fais un rollback"), else the verb's own default ("make a chart" is
// write), if it has one.
func (b *build) resolveLight(st *segState) {
	for _, a := range st.anchors {
		if !a.light {
			continue
		}
		end := min(len(st.toks), a.end+6)
		for _, o := range st.anchors {
			if o.pos >= a.end && o.pos < end {
				end = o.pos
			}
		}
		// With no kind of its own, the verb needs its object introduced
		// ("open a PR", "give him access"): "open issues" is a state.
		first := a.end
		if a.kinds == nil {
			if a.end >= end || !b.introduces(st.toks[a.end]) {
				continue
			}
			first++
		}
		var kinds []action.Kind
		for k, nn := range st.nouns {
			if nn.pos < first || nn.pos >= end {
				continue
			}
			// In a compound the last noun is the head: "edit access".
			for k+1 < len(st.nouns) && st.nouns[k+1].pos == nn.end && nn.end < end {
				k++
				nn = st.nouns[k]
			}
			if !b.headNoun(st, nn) {
				continue // "a ✅ on every deploy request": the head is "request"
			}
			kinds, a.object, a.narrow = nn.kinds, nn.word, nn.narrow
			break
		}
		// Only a verb that has no kind of its own takes one from a verb
		// form: "do the rename", but not "put a ✅ on every deploy request".
		for j := first; kinds == nil && a.kinds == nil && j < end; j++ {
			if e, n := b.at(st.toks, j, roleVerb); e != nil && !e.anyKind {
				kinds, a.object, a.narrow = e.kinds, b.span(st.toks, j, j+n), !e.general
			}
		}
		if kinds != nil {
			a.kinds = kinds
		}
	}
}

// bookingReach is how many words after a verb of booking its object is
// looked for ("book a table for four", "reserviere einen Tisch").
const bookingReach = 4

// freeBookings makes a verb of booking whose object is booked without
// paying ("book a table", "reserviere einen Tisch", "réserve une table",
// "reserva una mesa", "prenota un tavolo") a write, not a payment: the
// words name an entry in someone's book, not money moved. Booking a
// flight or a hotel stays pay.
func (b *build) freeBookings(st *segState) {
	for _, a := range st.anchors {
		if a.noun || !slices.Contains(a.kinds, action.Pay) {
			continue
		}
		if e, n := b.at(st.toks, a.pos, roleBookingVerb); e == nil || n != a.end-a.pos {
			continue
		}
		for j := a.end; j < len(st.toks) && j <= a.end+bookingReach; j++ {
			if b.anchorBetween(st, j, j+1) {
				break
			}
			if e, n := b.at(st.toks, j, roleFreeBooking); e != nil && !st.consumed[j] {
				a.kinds = []action.Kind{action.Write}
				for k := j; k < j+n; k++ {
					st.consumed[k] = true // what is booked, used
				}
				break
			}
		}
	}
}

// atFree is at for the longest phrase whose tokens are all free: in "n'écris
// à personne" the verb "écris à" loses its "à" to "à personne", and the
// verb is "écris".
func (b *build) atFree(toks []token, i int, r role, free func(i, n int) bool) (*entry, int) {
	e, n := b.at(toks, i, r)
	if e == nil || free(i, n) {
		return e, n
	}
	var best *entry
	for _, l := range b.langs {
		for _, c := range l.index[toks[i].text] {
			if c.role != r || c.tail != nil || len(c.words) >= n || (best != nil && len(c.words) <= len(best.words)) {
				continue
			}
			if wordsAt(toks, i, c.words) && free(i, len(c.words)) {
				best = c
			}
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, len(best.words)
}

// writtenToPerson makes a verb of writing aimed at a person a send, not a
// change to a file: "écris à personne", "schreib niemandem", "non scrivere
// a nessuno", "escribe a Juan", "write to the team". The person is a
// "nobody" pronoun, a word for people (persons), or a name after a
// recipient preposition; "write the summary to notes/summary.md" is
// aimed at a file and stays a write.
func (b *build) writtenToPerson(st *segState) {
	for _, a := range st.anchors {
		if a.noun || a.light || a.anyKind {
			continue
		}
		if e, n := b.at(st.toks, a.pos, roleSay); e == nil || n != a.end-a.pos {
			continue
		}
		if from, to, ok := b.personAt(st, a.end); ok {
			a.kinds = []action.Kind{action.Send}
			for k := from; k < to; k++ {
				st.consumed[k] = true // the person written to, used
			}
		}
	}
}

// personAt reports whether the words at token j name a person written
// to: a "nobody" pronoun ("à personne", "niemandem"), or an optional
// recipient preposition and determiner before a word for people or a
// name ("to the team", "a Marco").
func (b *build) personAt(st *segState, j int) (from, to int, ok bool) {
	toks := st.toks
	if e, _ := b.at(toks, j, roleNegAfter); e != nil && e.general {
		return j, j, true
	}
	prep := false
	if _, n := b.at(toks, j, roleRecipientPrep); n > 0 {
		j, prep = j+n, true
	}
	if e, _ := b.at(toks, j, roleNegAfter); e != nil && e.general {
		return j, j, true // "to no one" written apart
	}
	if j < len(toks) && toks[j].kind == tokWord && b.is(toks[j], roleDeterminer) {
		j++
	}
	if e, n := b.at(toks, j, rolePerson); e != nil {
		return j, j + n, true
	}
	if j >= len(toks) || toks[j].kind != tokWord {
		return 0, 0, false
	}
	if !prep && !b.nameThenMessage(st, j) {
		return 0, 0, false
	}
	// A name: capitalised, not all capitals ("README", "S3" name files
	// and places), and no word of an active lexicon.
	raw := b.text[toks[j].start:toks[j].end]
	r, size := utf8.DecodeRuneInString(raw)
	if !unicode.IsUpper(r) || !strings.ContainsFunc(raw[size:], unicode.IsLower) {
		return 0, 0, false
	}
	for _, l := range b.langs {
		if l.vocab[toks[j].text] {
			return 0, 0, false
		}
	}
	return j, j + 1, true
}

// longerNoun reports whether a noun phrase longer than n words starts at
// token i: "read access" is a noun, not the verb "read".
func (b *build) longerNoun(toks []token, i, n int) bool {
	_, nn := b.at(toks, i, roleNoun)
	return nn > n
}

// longerLight reports whether a light verb longer than n words starts at
// token i: "set up a call" takes its object's kind, it is not "set".
func (b *build) longerLight(toks []token, i, n int) bool {
	_, ln := b.at(toks, i, roleLight)
	return ln > n
}

// headNoun reports whether a noun heads its phrase rather than modifying
// the word after it: it ends the segment or is followed by a function
// word, a verb, an entity, a number or punctuation — not by a plain word
// ("deploy request", "build job").
func (b *build) headNoun(st *segState, nn *anchor) bool {
	if nn.end >= len(st.toks) {
		return true
	}
	t := st.toks[nn.end]
	if t.kind != tokWord {
		return true
	}
	if e, _ := b.at(st.toks, nn.end, roleVerb); e != nil {
		return true
	}
	return b.is(t, roleMarker) || b.is(t, roleDeterminer) || b.is(t, roleCue) || b.is(t, roleConj)
}

// introduces reports whether a word can introduce a light verb's object:
// a determiner, a pronoun or other function word, or a number ("open a
// PR", "give him access", "do 3 transfers").
func (b *build) introduces(t token) bool {
	return t.kind == tokNumber || (t.kind == tokWord && (b.is(t, roleDeterminer) || b.is(t, roleMarker) || b.is(t, roleCue)))
}

// verbHere reports whether a verb form at i is used as a verb: not right
// after a determiner ("the order"), and, for forms that are also common
// nouns, only where a verb can stand (start of a clause, after "to",
// "please", a negation, a restrictor…).
func (b *build) verbHere(st *segState, i int, e *entry) bool {
	if e.ambiguous {
		// "checkout is erroring", "deploy job fails": a form followed by
		// its predicate, at most one word apart, is the subject, a noun.
		for j := i + len(e.words); j < len(st.toks) && j <= i+len(e.words)+1; j++ {
			if m, _ := b.at(st.toks, j, roleSubjectMark); m != nil {
				return false
			}
			if st.toks[j].kind != tokWord || b.is(st.toks[j], roleDeterminer) || b.is(st.toks[j], roleMarker) {
				break
			}
		}
	}
	if i == 0 {
		return true
	}
	if b.copulaBefore(st, i) {
		return false // "que le build est réparé": a state, not a request
	}
	prev := st.toks[i-1]
	if prev.kind == tokWord && b.is(prev, roleDeterminer) && !b.pronounAfterNegation(st, i-1) {
		return false
	}
	if !e.ambiguous {
		return true
	}
	if prev.kind != tokWord {
		return false
	}
	for _, n := range st.negBef {
		if n[1] <= i && i-n[1] <= 1 {
			return true // "never push", "never force push"
		}
	}
	return slices.Contains(st.restrict, i-1) || b.is(prev, roleCue)
}

// copulaBefore reports whether a copula ("est", "is", "a été") ends right
// before token i.
func (b *build) copulaBefore(st *segState, i int) bool {
	for j := max(0, i-3); j < i; j++ {
		if e, n := b.at(st.toks, j, roleCopula); e != nil && j+n == i {
			return true
		}
	}
	return false
}

// typo returns the verb a word most likely misspells: one edit (or one
// swap of neighbours) away from a verb form of five letters or more, with
// the same first letter, and not itself a word any active lexicon knows
// or a real word of an active language (lang/CODE.words).
// Typos only ever count when negated: a misspelt "delte" in "don't delte"
// is denied, but a misspelt verb never grants anything.
func (b *build) typo(w string) *entry {
	if utf8.RuneCountInString(w) < 5 {
		return nil
	}
	for _, l := range b.langs {
		if l.vocab[w] || l.words[w] {
			return nil // a word of its own: "logic" is no misspelt "login"
		}
	}
	for _, e := range b.c.lx.verbForms {
		f := e.words[0]
		if len(f) < 5 || f[0] != w[0] || !slices.ContainsFunc(b.langs, func(l *language) bool { return l.code == e.lang }) {
			continue
		}
		if editDistance1(w, f) {
			return e
		}
	}
	return nil
}

// editDistance1 reports whether a and b differ by exactly one insertion,
// deletion, substitution or swap of adjacent letters.
func editDistance1(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) < len(rb) {
		ra, rb = rb, ra
	}
	switch len(ra) - len(rb) {
	case 0:
		var diff []int
		for i := range ra {
			if ra[i] != rb[i] {
				diff = append(diff, i)
				if len(diff) > 2 {
					return false
				}
			}
		}
		switch len(diff) {
		case 1:
			return true
		case 2:
			i, j := diff[0], diff[1]
			return j == i+1 && ra[i] == rb[j] && ra[j] == rb[i]
		}
		return false
	case 1:
		for i := range rb {
			if ra[i] != rb[i] {
				return string(ra[i+1:]) == string(rb[i:])
			}
		}
		return true
	}
	return false
}

// pronounAfterNegation reports whether the determiner-like word at j
// follows a negation right before it: "ne l'envoie pas", "no lo envíes",
// "non la mandare" — an object pronoun, and the word after it a verb.
func (b *build) pronounAfterNegation(st *segState, j int) bool {
	for _, n := range st.negBef {
		if n[1] == j {
			return true
		}
	}
	return false
}

// onlyPairReach is how many words after a "ne" its "que" is looked for.
const onlyPairReach = 4

// onlyPairs turns a negation word that means "only" with a word after the
// verb ("ne supprime que les fichiers…") into an item condition: the
// negation is taken back and the tail is a restrictor qualifying the verb.
// A real negation word in between ("ne supprime pas que…") keeps it a
// negation.
func (b *build) onlyPairs(st *segState, mark func(i, n int)) {
	toks := st.toks
	for k := 0; k < len(st.negBef); k++ {
		n := st.negBef[k]
		es := b.onlyPairsAt(toks, n[0])
		if len(es) == 0 {
			continue
		}
		for j := n[1] + 1; j < len(toks) && j <= n[1]+onlyPairReach; j++ {
			if slices.ContainsFunc(st.negAft, func(x [2]int) bool { return x[0] > n[0] && x[0] <= j }) {
				break
			}
			// Each of the word's tails is tried: "ne … que", "ne … qu'".
			// "qu'à": the elided tail is one token with its apostrophe.
			i := slices.IndexFunc(es, func(e *entry) bool {
				elided := len(e.tail) == 1 && toks[j].kind == tokWord && strings.TrimSuffix(toks[j].text, "'") == strings.TrimSuffix(e.tail[0], "'")
				return elided || wordsAt(toks, j, e.tail)
			})
			// A "que" read as a relative is the pair's tail: "ne supprime
			// que les fichiers…" says "only".
			rel := slices.IndexFunc(st.qualifiers, func(q qualifier) bool { return q.relative && q.from == j })
			if i < 0 || (st.consumed[j] && rel < 0) {
				continue
			}
			if rel >= 0 {
				st.qualifiers = slices.Delete(st.qualifiers, rel, rel+1)
			}
			e := es[i]
			st.negBef = slices.Delete(st.negBef, k, k+1)
			st.negAft = slices.DeleteFunc(st.negAft, func(x [2]int) bool { return x == n })
			k--
			mark(j, len(e.tail))
			st.qualifiers = append(st.qualifiers, qualifier{from: j, to: j + len(e.tail), only: true})
			break
		}
	}
}

// onlyPairsAt returns every "only" pair whose negation word stands at i.
func (b *build) onlyPairsAt(toks []token, i int) []*entry {
	var out []*entry
	for _, l := range b.langs {
		for _, e := range l.index[toks[i].text] {
			if e.role == roleOnlyPair && wordsAt(toks, i, e.words) {
				out = append(out, e)
			}
		}
	}
	return out
}

// primaryDeterminer reports whether token i is a determiner, and not a
// subject, in the most likely language of the words, while another
// language reads it as the user speaking of themselves: "I file" in
// Italian words is "the files", whatever English makes of "I".
func (b *build) primaryDeterminer(toks []token, i int) bool {
	if len(b.langs) < 2 || i >= len(toks) {
		return false
	}
	var det, self bool
	for _, e := range b.langs[0].index[toks[i].text] {
		if len(e.words) == 1 && e.tail == nil {
			det = det || e.role == roleDeterminer
			self = self || e.role == roleSelf
		}
	}
	return det && !self
}
