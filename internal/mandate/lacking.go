// Items that lack something: "archive the threads with no reply",
// "Mails ohne Antwort", "les fils sans réponse", "los hilos sin
// respuesta", "le conversazioni senza risposta", "delete the drafts with
// no subject". A negation joined to the verb's object by "with" (or a
// "without" word before a noun) describes the items the verb acts on; it
// does not rule out replying. The draft cannot check it on every call, so
// the verb's kinds are put to a person (asked), never granted as a whole,
// and the negated word is not a prohibition.

package mandate

import (
	"fmt"

	"github.com/mandate-dev/mandate/internal/action"
)

// itemsLacking reads each such negation in the segment: it qualifies the
// last granting verb before it in its clause, and returns the negated
// anchors it explains, which deny nothing.
func (b *build) itemsLacking(st *segState) map[*anchor]bool {
	toks := st.toks
	out := map[*anchor]bool{}
	for _, n := range st.negBef {
		m := n[0]
		withNo := m > 0 && b.is(toks[m-1], roleLimiting) && !b.is(toks[m], roleLimiting)
		without := b.is(toks[m], roleLimiting)
		obj := m - 1
		if withNo {
			obj = m - 2
		}
		if (!withNo && !without) || obj < 0 || toks[obj].kind != tokWord ||
			b.is(toks[obj], roleDeterminer) || b.anchorBetween(st, obj, obj+1) || st.consumed[obj] && b.anchorAt(st, obj) {
			continue
		}
		from, _ := st.clauseOf(m)
		var verb *anchor
		for _, a := range st.anchors {
			if a.pos >= from && a.end <= obj && granting(a) {
				verb = a
			}
		}
		if verb == nil {
			continue
		}
		// The negated word: a noun after "without" ("ohne Antwort"), any
		// word after "with no" ("with no reply"); a verb after "without"
		// ("without deleting anything") is a prohibition, left as it is.
		var neg *anchor
		for _, a := range st.anchors {
			if a.negated && a.negStart == n[0] && (withNo || a.noun) {
				neg = a
			}
		}
		if without && neg == nil && b.negatesVerb(st, n) {
			continue
		}
		if neg != nil {
			out[neg] = true
		}
		phrase := b.span(toks, obj, n[1]+1)
		if neg != nil {
			phrase = b.span(toks, obj, max(neg.end, n[1]))
		}
		for _, k := range verb.kinds {
			if k == action.Read || k == action.Fetch {
				continue
			}
			b.qualify1(k, phrase, verb.word)
		}
		b.recognise(phrase, "nothing ruled out",
			fmt.Sprintf("%q describes the items %q acts on (a condition), not a prohibition", b.span(toks, m, n[1]), verb.word))
	}
	return out
}

// anchorAt reports whether an anchor starts at token i.
func (b *build) anchorAt(st *segState, i int) bool {
	for _, a := range st.anchors {
		if a.pos == i {
			return true
		}
	}
	return false
}

// negatesVerb reports whether the negation marker n reaches a verb (not a
// noun): "without deleting anything".
func (b *build) negatesVerb(st *segState, n [2]int) bool {
	for _, a := range st.anchors {
		if a.negated && a.negStart == n[0] && !a.noun {
			return true
		}
	}
	return false
}
