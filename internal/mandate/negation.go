// Negation: which verbs and nouns a negation reaches, and what a negated
// one denies.

package mandate

import (
	"fmt"
	"slices"

	"github.com/mandate-dev/mandate/internal/action"
)

// negate decides which anchors are negated and which nouns are negated
// ("no purchases"), which then become anchors too.
func (b *build) negate(st *segState) {
	for _, a := range st.anchors {
		from, to := st.clauseOf(a.pos)
		for _, n := range st.negBef {
			if n[0] >= from && n[1] <= a.pos && a.pos-n[1] <= 8 {
				a.negated, a.negStart, a.negEnd = true, n[0], n[1]
			}
		}
		if !a.negated {
			// "delete no files", "borra ningún archivo": a negative
			// determiner before items of any sort, as the verb's whole
			// object, negates the verb as "delete nothing" does.
			for _, n := range st.negBef {
				k := b.noItems(st, n)
				if k == 0 {
					k = b.noItemsCond(st, n, a)
				}
				if k > 0 && n[0] >= a.end && n[0]-a.end <= 1 && !b.anchorBetween(st, a.end, n[0]) {
					a.negated, a.negStart, a.negEnd, a.negAfter = true, n[0], n[0]+k, true
					break
				}
			}
		}
		if !a.negated {
			for _, n := range st.negAft {
				if n[1] <= to && n[0] >= a.end && n[0]-a.end <= 3 && !b.anchorBetween(st, a.end, n[0]) && !b.negatesForward(st, n) {
					a.negated, a.negStart, a.negEnd, a.negAfter = true, n[0], n[1], true
					e, _ := b.at(st.toks, n[0], roleNegAfter)
					a.negNobody = e != nil && e.general
					break
				}
			}
		}
		if a.negated {
			a.neg = b.span(st.toks, a.negStart, a.negEnd)
			// "ne supprime aucun fichier": the items no one may touch are
			// read, as "rien" is.
			for _, n := range append(slices.Clone(st.negBef), st.negAft...) {
				k := b.noItems(st, n)
				if k == 0 {
					k = b.noItemsCond(st, n, a)
				}
				if k > 0 && n[0] >= from && n[0] < to {
					for j := n[0]; j < n[0]+k; j++ {
						st.consumed[j] = true
					}
				}
			}
		}
		if a.negated && b.unneeded(st, a) {
			// "no message needed": no need for it, which rules nothing out
			// and asks for nothing.
			a.negated, a.noGrant, a.needless = false, true, true
			a.noGrantW = fmt.Sprintf("%q + %q says it is not needed, which neither asks for it nor forbids it", a.neg, a.word)
		}
	}
	for _, nn := range st.nouns {
		for _, n := range st.negBef {
			if n[1] <= nn.pos && nn.pos-n[1] <= 3 && !b.anchorBetween(st, n[1], nn.pos) {
				nn.negated, nn.negStart, nn.negEnd = true, n[0], n[1]
				nn.neg = b.span(st.toks, n[0], n[1])
			}
		}
		if !nn.negated && !slices.ContainsFunc(st.anchors, func(a *anchor) bool { return !a.noun }) {
			// "niemand bekommt eine Erstattung", "nobody gets a refund":
			// "nobody" as the subject of a clause with no verb the lexicon
			// knows rules out the thing it names.
			for _, n := range st.negAft {
				if e, _ := b.at(st.toks, n[0], roleNegAfter); e != nil && e.general && n[1] <= nn.pos && nn.pos-n[1] <= 4 {
					nn.negated, nn.negStart, nn.negEnd = true, n[0], n[1]
					nn.neg = b.span(st.toks, n[0], n[1])
				}
			}
		}
		if nn.negated && b.unneeded(st, nn) {
			// "no message needed": no need for it, which rules nothing out.
			b.recognise(b.span(st.toks, nn.negStart, nn.end+1), "nothing ruled out", fmt.Sprintf("noun %q is not needed, which does not forbid it", nn.word))
			nn.negated = false
		}
		if nn.negated && !slices.ContainsFunc(nn.kinds, func(k action.Kind) bool { return k != action.Read }) {
			nn.negated = false // "no summary": a missing report forbids no reading
		}
		if nn.negated {
			st.anchors = append(st.anchors, nn)
		}
	}
	slices.SortFunc(st.anchors, func(x, y *anchor) int { return x.pos - y.pos })
	// A typo that is not negated grants nothing.
	st.anchors = slices.DeleteFunc(st.anchors, func(a *anchor) bool { return a.typoOf != "" && !a.negated })
}

// unneeded reports whether a "not needed" word follows a noun: "no
// message needed", "keine Nachricht nötig".
func (b *build) unneeded(st *segState, nn *anchor) bool {
	for j := nn.end; j < len(st.toks) && j <= nn.end+1; j++ {
		if e, _ := b.at(st.toks, j, roleUnneeded); e != nil {
			return true
		}
	}
	return false
}

// negatesForward reports whether a marker that can negate either way
// ("nicht") has a verb right after it, which it then negates instead.
func (b *build) negatesForward(st *segState, n [2]int) bool {
	if !slices.Contains(st.negBef, n) {
		return false
	}
	_, to := st.clauseOf(n[0])
	for _, a := range st.anchors {
		if a.pos >= n[1] && a.pos <= n[1]+2 && a.pos < to {
			return true
		}
	}
	// "…e niente pagamenti": a noun right after it, which it negates.
	for _, nn := range st.nouns {
		if nn.pos == n[1] {
			return true
		}
	}
	return false
}

func (b *build) anchorBetween(st *segState, from, to int) bool {
	for _, a := range st.anchors {
		if a.pos >= from && a.pos < to {
			return true
		}
	}
	return false
}

// branchAfter finds a branch a verb is aimed at: "push to main", "force
// push main", "merge into master" — a branch word right after the verb or
// after a preposition ("to", "origin"), within a few words of it. It
// returns the token index and the branch name, or "".
func (b *build) branchAfter(st *segState, a *anchor) (int, string) {
	_, to := st.clauseOf(a.pos)
	for j := a.end; j < to && j <= a.end+3; j++ {
		if st.toks[j].kind != tokWord {
			return 0, ""
		}
		e, _ := b.at(st.toks, j, roleBranch)
		if e == nil {
			continue
		}
		if j == a.end || b.is(st.toks[j-1], roleBranchPrep) {
			return j, st.toks[j].text
		}
	}
	return 0, ""
}

// hasObject reports whether an anchor's clause holds words beyond the verb,
// its negation and function words: "without touching the logic" has one,
// "don't touch anything" has none.
func (b *build) hasObject(st *segState, a *anchor) bool {
	_, to := st.clauseOf(a.pos)
	// The object follows the verb ("don't modify the schema"), or, where
	// a language puts it first, stands between the negation and the verb
	// ("keine neuen Pakete installieren"); what precedes the negation is
	// another part of the clause.
	from := a.end
	if a.negStart < a.pos && !a.noun {
		from = a.negEnd
	}
	for j := from; j < to; j++ {
		if k := b.noItemsAt(st, j); k > 0 {
			j += k - 1 // "ne supprime aucun fichier": no items, the whole kind
			continue
		}
		t := st.toks[j]
		if (j >= a.pos && j < a.end) || (j >= a.negStart && j < a.negEnd) || st.consumed[j] {
			continue
		}
		// Entities are not counted: a negated verb with one is a targeted
		// prohibition, and one after an exception ("anyone outside
		// orbit-saas.com") is what stays allowed.
		if t.kind == tokWord && !b.is(t, roleMarker) && !b.is(t, roleDeterminer) && !b.is(t, roleCue) {
			return true
		}
	}
	return false
}

// noItems is the length of the words a negation n and items of any sort
// right after it make ("no files", "keine Dateien", "aucun fichier",
// "ningún archivo", "nessun file") when they are the rest of the clause:
// no items at all, a quantifier like "nothing", not a description of some
// items ("no files older than a year" says more). It is 0 otherwise.
func (b *build) noItems(st *segState, n [2]int) int {
	e, k := b.at(st.toks, n[1], roleAnyItems)
	if e == nil {
		return 0
	}
	_, to := st.clauseOf(n[0])
	for j := n[1] + k; j < to; j++ {
		if t := st.toks[j]; t.kind == tokWord && !b.is(t, roleMarker) && !b.is(t, roleDeterminer) && !b.is(t, roleCue) {
			return 0
		}
	}
	return n[1] + k - n[0]
}

// noItemsCond is noItems for items an item condition follows ("delete
// no files older than a year", "keine Dateien, die älter als ein Jahr
// sind"): in a sentence that asks for nothing else, the words ask for no
// item at all — the condition narrows what is ruled out, not what is
// asked — so the verb is negated as a whole. Where another verb of the
// sentence may act on the other items ("tidy the repo but delete no
// files older than a year"), the condition stands and the kind is asked.
func (b *build) noItemsCond(st *segState, n [2]int, a *anchor) int {
	e, k := b.at(st.toks, n[1], roleAnyItems)
	if e == nil || b.sentenceVerbs || slices.ContainsFunc(st.anchors, func(o *anchor) bool { return o != a && !o.noun && o.pos < a.pos }) {
		return 0
	}
	_, to := st.clauseOf(n[0])
	if c, _ := b.at(st.toks, n[1]+k, roleItemCondition); c == nil || n[1]+k >= to || c.cond == condAct {
		return 0
	}
	return n[1] + k - n[0]
}

// noItemsAt is noItems for a negation that starts at token j, 0 where none
// does.
func (b *build) noItemsAt(st *segState, j int) int {
	for _, n := range append(slices.Clone(st.negBef), st.negAft...) {
		if n[0] == j {
			if k := b.noItems(st, n); k > 0 {
				return k
			}
		}
	}
	return 0
}

// negKinds is what a negated anchor denies: a negated web verb ("don't
// browse") denies fetch, not all reading.
func (b *build) negKinds(a *anchor) []action.Kind {
	if a.web {
		return []action.Kind{action.Fetch}
	}
	return a.kinds
}

func (b *build) negWhy(a *anchor) string {
	what := "verb"
	if a.noun {
		what = "noun"
	}
	kinds := kindsString(b.negKinds(a))
	if a.anyKind {
		kinds = "any kind"
		if a.sparesRead {
			kinds = "any kind but reading"
		}
	}
	if a.typoOf != "" {
		kinds = fmt.Sprintf("%s; a likely typo of %q", kinds, a.typoOf)
	}
	if a.negAfter {
		return fmt.Sprintf("%s %q + negation %q (%s)", what, a.word, a.neg, kinds)
	}
	return fmt.Sprintf("negation %q + %s %q (%s)", a.neg, what, a.word, kinds)
}
