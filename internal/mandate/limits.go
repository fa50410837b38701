// Limits: spend caps and count caps stated in a segment.

package mandate

import (
	"fmt"
	"slices"

	"github.com/mandate-dev/mandate/internal/action"
)

// limits reads spend caps and counts in a segment and returns the kinds a
// limit covers there.
func (b *build) limits(st *segState, inherited *anchor) map[action.Kind]bool {
	toks := st.toks
	covered := map[action.Kind]bool{}
	used := map[int]bool{}
	negated := len(st.negBef) > 0
	for _, l := range st.limits {
		if l[2] == 1 && !negated {
			continue // "more than 3" only limits after a negation
		}
		phrase := b.span(toks, l[0], l[1])
		// "10 messages au maximum", "3 files max": a limit phrase that
		// ends its clause reads the count before it.
		from, stop := l[1], min(len(toks), l[1]+5)
		span := func(j int) string { return b.span(toks, l[0], j+1) }
		if _, to := st.clauseOf(l[0]); l[1] == to || (l[1] < len(toks) && toks[l[1]].kind != tokWord && toks[l[1]].kind != tokNumber && toks[l[1]].kind != tokEntity) {
			if j := b.countBefore(st, l[0]); j >= 0 {
				from, stop = j, j+1
				span = func(j int) string { return b.span(toks, j, l[1]) }
			}
		}
		for j := from; j < stop; j++ {
			t := toks[j]
			if t.kind == tokEntity && b.ents[t.ent].kind == entAmount {
				e := b.ents[t.ent]
				b.spend = append(b.spend, spendCandidate{money: e.money, phrase: span(j), why: fmt.Sprintf("limit phrase %q + amount", phrase)})
				covered[action.Pay] = true
				used[j] = true
				break
			}
			n, isNum := 0, false
			if t.kind == tokNumber {
				n, isNum = t.n, true
			} else if e, _ := b.at(toks, j, roleNumber); e != nil {
				n, isNum = e.n, true
			}
			if !isNum {
				continue
			}
			var kinds []action.Kind
			var what string
			var a *anchor // the verb the limit is about
			for _, x := range st.anchors {
				if x.pos < min(l[0], j) && !x.noun {
					a = x
				}
			}
			if a == nil {
				a = inherited
			}
			for _, nn := range st.nouns {
				if nn.pos > j && nn.pos <= j+2 {
					kinds, what = nn.kinds, fmt.Sprintf("noun %q", b.span(toks, nn.pos, nn.end))
					if vk := b.actedOn(a, kinds); vk != nil {
						// "archive the old newsletters, at most 10 messages":
						// the messages are what archiving acts on.
						what = fmt.Sprintf("noun %q, the items verb %q acts on (%s)", b.span(toks, nn.pos, nn.end), a.word, kindsString(vk))
						kinds = vk
					}
					break
				}
			}
			if kinds == nil {
				if a != nil && !a.anyKind {
					for _, k := range a.kinds {
						if k != action.Read && k != action.Fetch {
							kinds = append(kinds, k)
						}
					}
					what = fmt.Sprintf("verb's kind (%s)", kindsString(kinds))
				}
			}
			for _, k := range kinds {
				b.count(k, n, span(j), fmt.Sprintf("limit phrase %q + number %d + %s", phrase, n, what))
				covered[k] = true
			}
			break
		}
	}
	// Amounts in a pay clause are the cap: "pay 84.20 EUR to …".
	for i, t := range toks {
		if t.kind != tokEntity || b.ents[t.ent].kind != entAmount || used[i] {
			continue
		}
		a := nearestAnchor(st.anchors, i)
		if a == nil {
			a = inherited
			// "…, tip 3 €": in a clause of its own, an amount after a
			// noun prices that thing, not the whole payment.
			if i > 0 && toks[i-1].kind == tokWord && !b.is(toks[i-1], roleMarker) && !b.is(toks[i-1], roleDeterminer) && !b.is(toks[i-1], roleCue) {
				continue
			}
		}
		if a != nil && !a.negated && !a.noun && !a.noGrant && (a.money || slices.Contains(a.kinds, action.Pay)) {
			e := b.ents[t.ent]
			b.payAmts = append(b.payAmts, spendCandidate{money: e.money, phrase: e.raw, why: "amount in a pay clause: the amount named is the cap"})
		}
	}
	return covered
}

// countBefore returns the index of the number or amount a postfix limit
// phrase at i caps: right before it ("50 € maximum") or before the one
// noun it counts ("10 messages au maximum"); -1 when there is none.
func (b *build) countBefore(st *segState, i int) int {
	num := func(j int) bool {
		if j < 0 {
			return false
		}
		t := st.toks[j]
		if t.kind == tokNumber || (t.kind == tokEntity && b.ents[t.ent].kind == entAmount) {
			return true
		}
		e, _ := b.at(st.toks, j, roleNumber)
		return e != nil
	}
	if num(i - 1) {
		return i - 1
	}
	for _, nn := range st.nouns {
		if nn.end == i && num(nn.pos-1) {
			return nn.pos - 1
		}
	}
	return -1
}

// actedOn returns the verb's consequential kinds when a counted noun names
// the items the verb acts on rather than an act of its own: the verb asks
// for something and shares no kind with the noun ("archive …, at most 10
// messages" caps archiving, not sending). Otherwise nil: the noun's kind
// holds ("send at most 3 emails").
func (b *build) actedOn(a *anchor, nounKinds []action.Kind) []action.Kind {
	if a == nil || a.anyKind || a.negated || a.noGrant || a.noun {
		return nil
	}
	var vk []action.Kind
	for _, k := range a.kinds {
		if slices.Contains(nounKinds, k) {
			return nil
		}
		if k != action.Read && k != action.Fetch {
			vk = append(vk, k)
		}
	}
	return vk
}

func (b *build) count(k action.Kind, n int, phrase, why string) {
	if b.m.Limits.Counts == nil {
		b.m.Limits.Counts = map[action.Kind]int{}
	}
	if old, ok := b.m.Limits.Counts[k]; !ok || n < old {
		b.m.Limits.Counts[k] = n
	}
	b.recognise(phrase, fmt.Sprintf("limit %s count %d", k, n), why)
}
