// Conditions on a verb: a question, an embedded question, the user's own
// plan, "no need to", "ask me before", money moved — and conditions on
// time: the grant's expiry.

package mandate

import (
	"fmt"

	"github.com/mandate-dev/mandate/internal/action"
	"slices"
	"time"
)

// qualify marks verbs that ask for nothing (after an embedded-question
// marker in their clause, or with the user as their subject) and verbs
// that move money.
func (b *build) qualify(st *segState) {
	b.indirectQuestions(st)
	b.askAfter(st)
	for _, a := range st.anchors {
		from, _ := st.clauseOf(a.pos)
		for _, e := range st.embedded {
			if e >= from && e < a.pos && !a.noGrant {
				a.noGrant, a.noGrantW = true, fmt.Sprintf("an embedded question (%q) asks for nothing", b.span(st.toks, e, e+1))
			}
		}
		for _, sp := range st.self {
			// Before the verb, or right after it ("Das mache ich selbst") —
			// unless it is an article there ("fai girare i test").
			after := sp[0] >= a.end && sp[0]-a.end <= 0 && !b.is(st.toks[sp[0]], roleDeterminer)
			// Before it, the words between are function words or none:
			// "Devo uscire: cancella i file" asks for the deleting.
			before := sp[1] <= a.pos && a.pos-sp[1] <= 2 && !slices.ContainsFunc(st.toks[sp[1]:a.pos], func(t token) bool { return t.kind == tokWord && b.unknownWord(st, slices.Index(st.toks, t)) })
			if before || after {
				if !a.noGrant || !a.self {
					a.noGrant, a.self, a.noGrantW = true, true, fmt.Sprintf("the user speaks of their own action (%q)", b.span(st.toks, sp[0], sp[1]))
				}
			}
		}
		// "I want to look before buying": a verb after "before" has the
		// subject of the verb it follows.
		if !a.self && a.pos > 0 {
			if b.subordinatorBefore(st, a.pos) {
				for _, o := range st.anchors {
					if o.pos < a.pos && o.pos >= from && o.self {
						a.noGrant, a.self, a.noGrantW = true, true, fmt.Sprintf("its subject is the user's, as for %q (%s)", o.word, o.noGrantW)
					}
				}
			}
		}
		for _, nd := range st.needless {
			if nd[1] <= a.pos && a.pos-nd[1] <= 1 {
				a.noGrant, a.needless, a.noGrantW = true, true, fmt.Sprintf("%q asks for nothing", b.span(st.toks, nd[0], nd[1]))
			}
		}
		for _, af := range st.askFirst {
			if af[1] <= a.pos && a.pos-af[1] <= 2 && !a.noun {
				a.askFirst, a.negated, a.negStart, a.negEnd = true, true, af[0], af[1]
				a.neg = b.span(st.toks, af[0], af[1])
			}
		}
		if a.noun || a.anyKind || a.typoOf != "" {
			continue
		}
		// "send Lukas 23.50 EUR", "move 500 euros": a money verb whose
		// object is an amount pays.
		if e, n := b.at(st.toks, a.pos, roleMoneyVerb); e == nil || n != a.end-a.pos {
			continue
		}
		for j := a.end; j < len(st.toks) && j <= a.end+2; j++ {
			t := st.toks[j]
			if t.kind == tokEntity && b.ents[t.ent].kind == entAmount {
				a.money = true
				break
			}
			if t.kind != tokWord || b.is(t, roleDeterminer) {
				break
			}
		}
	}
}

// indirectQuestions marks the verbs of an indirect question: a question
// word right after a verb that only reads ("dimmi cosa cambia", "find
// out how much it would cost to upgrade", "dime cuánto costaría pagar")
// opens it, and the verbs after it in the clause are what the user asks
// about, not what they ask for. One word may stand between ("tell me
// why"). As the words might still mean the act, their kinds are put to a
// person, never granted (settleAskedAbout).
func (b *build) indirectQuestions(st *segState) {
	for _, r := range st.anchors {
		if !granting(r) || !readsOnly(r.kinds) {
			continue
		}
		for j := r.end; j <= r.end+1 && j < len(st.toks); j++ {
			if e, _ := b.at(st.toks, j, roleQuestion); e == nil {
				continue
			}
			askAfterQuestion(st, j)
			break
		}
	}
}

// askAfterQuestion marks the granting verbs that do more than read in
// the clause of the question word at j, after it, as asked about.
func askAfterQuestion(st *segState, j int) {
	_, to := st.clauseOf(j)
	for _, a := range st.anchors {
		if a.pos > j && a.pos < to && granting(a) && !readsOnly(a.kinds) {
			a.askedAbout = true
		}
	}
}

// readsInto reports whether the segment's last verb only reads and
// nothing but its particle follows it ("Schau nach", "find out"), so
// that a next segment opening with a question word (", welche Rechnungen
// … bezahlt werden müssen") is an indirect question.
func (b *build) readsInto(st *segState) bool {
	if len(st.anchors) == 0 {
		return false
	}
	a := st.anchors[len(st.anchors)-1]
	return granting(a) && readsOnly(a.kinds) && len(st.toks)-a.end <= 1
}

// indirectAfter marks the verbs of a segment that opens with a question
// word, after a segment ending with a reading verb (readsInto): "Schau
// nach, welche Rechnungen noch bezahlt werden müssen" asks about paying.
// A preposition may stand first ("sag mir, auf welche Mails …").
func (b *build) indirectAfter(st *segState) {
	for j := 0; j <= 1 && j < len(st.toks); j++ {
		if e, _ := b.at(st.toks, j, roleQuestion); e == nil {
			continue
		}
		askAfterQuestion(st, j)
		return
	}
}

// readsOnly reports whether kinds grant nothing consequential.
func readsOnly(kinds []action.Kind) bool {
	for _, k := range kinds {
		if k != action.Read && k != action.Fetch {
			return false
		}
	}
	return len(kinds) > 0
}

// subordinatorBefore reports whether a subordinator of several words
// ("avant de", "antes de") ends right before token i.
func (b *build) subordinatorBefore(st *segState, i int) bool {
	for j := max(0, i-3); j < i; j++ {
		if e, n := b.at(st.toks, j, roleSubordinator); e != nil && j+n == i {
			return true
		}
	}
	return false
}

// expiry finds durations ("for the next 2 hours", "für die nächste
// Stunde") and "today" phrases.
func (b *build) expiry(st *segState, mark func(i, n int)) {
	toks := st.toks
	for i := 0; i < len(toks); i++ {
		if st.consumed[i] {
			continue
		}
		if e, n := b.at(toks, i, roleToday); e != nil {
			st.today = append(st.today, [2]int{i, i + n})
			mark(i, n)
			i += n - 1
			continue
		}
		u, n := b.at(toks, i, roleUnit)
		if u == nil {
			continue
		}
		// markerEnding finds an expiry marker ending right at token end.
		markerEnding := func(end int) (int, bool) {
			for j := max(0, end-4); j < end; j++ {
				if st.consumed[j] {
					continue
				}
				if e, n := b.at(toks, j, roleExpiry); e != nil && j+n == end {
					return j, true
				}
			}
			return 0, false
		}
		number := func(j int) (int, bool) {
			if j < 0 || st.consumed[j] {
				return 0, false
			}
			if toks[j].kind == tokNumber {
				return toks[j].n, true
			}
			if e, n := b.at(toks, j, roleNumber); e != nil && n == 1 {
				return e.n, true
			}
			return 0, false
		}
		from, count := -1, 0
		if c, ok := number(i - 1); ok {
			// "for 2 hours", "in den nächsten 2 Stunden"
			if ms, ok := markerEnding(i - 1); ok {
				from, count = ms, c
			}
		} else if ms, ok := markerEnding(i); ok {
			if c, ok := number(ms - 1); ok {
				// "les 2 prochaines heures"
				from, count = ms-1, c
				if ms2, ok := markerEnding(ms - 1); ok {
					from = ms2
				}
			} else if u.singular && u.dur < 24*time.Hour {
				// "for the next hour"; "next week" is a date, not a span.
				from, count = ms, 1
			}
		}
		if from < 0 || count <= 0 || count > 100_000 {
			continue
		}
		d := time.Duration(count) * u.dur
		b.setExpiry(b.now.Add(d), b.span(toks, from, i+n), "duration "+d.String()+" from now")
		mark(from, i+n-from)
		i += n - 1
	}
}

// today settles "today" phrases: a phrase of several words ("for today",
// "bis heute abend") always sets the expiry; a lone "today" only at the end
// of its clause, in a clause with a verb that asks for something or
// forbids it ("pay the bill today"), not in "the invites I got today and
// …" or "he started today".
func (b *build) today(st *segState) {
	for _, sp := range st.today {
		single := sp[1]-sp[0] == 1
		if single {
			_, to := st.clauseOf(sp[0])
			if sp[1] != to {
				continue
			}
			from, _ := st.clauseOf(sp[0])
			if !slices.ContainsFunc(st.anchors, func(a *anchor) bool {
				return a.pos >= from && a.pos < to && (!a.noGrant || a.negated) && !a.noun
			}) {
				continue
			}
		}
		y, mo, d := b.now.Date()
		end := time.Date(y, mo, d+1, 0, 0, 0, 0, b.now.Location())
		b.setExpiry(end, b.span(st.toks, sp[0], sp[1]), "\"today\": until the end of the day")
	}
}

func (b *build) setExpiry(t time.Time, phrase, why string) {
	if b.m.ExpiresAt != nil && !t.Before(*b.m.ExpiresAt) {
		b.recognise(phrase, "expires "+t.Format(time.RFC3339)+" (not applied: an earlier expiry was stated)", why)
		return
	}
	b.m.ExpiresAt = &t
	b.recognise(phrase, "expires "+t.Format(time.RFC3339), why)
}

// unknownWord reports whether token i is a word no lexicon knows.
func (b *build) unknownWord(st *segState, i int) bool {
	t := st.toks[i]
	if t.kind != tokWord || st.consumed[i] {
		return false
	}
	for _, l := range b.langs {
		if len(l.index[t.text]) > 0 {
			return false
		}
	}
	return true
}

// askAfter marks the verb each "ask after" phrase qualifies: the last one
// before it in its sentence, so that a clause holding no verb of its own
// ("…, aber nicht ohne mich zu fragen") qualifies the one before. As with
// "ask me before", the verb is asked, whether a negation stands before it
// or not: "don't send it without asking me first" asks each send.
func (b *build) askAfter(st *segState) {
	phrases := slices.Clone(st.askAfter)
	for _, af := range st.askFirst {
		// "delete the logs, but ask me first", "frag mich vorher" at the
		// end: an "ask me before" with no verb after it asks about the
		// verb before it, as "without asking me" does.
		if !slices.ContainsFunc(st.anchors, func(a *anchor) bool { return !a.noun && a.pos >= af[1] && a.pos-af[1] <= 2 }) {
			phrases = append(phrases, af)
		}
	}
	if len(phrases) == 0 {
		return
	}
	stop := make([]int, len(st.toks)+1) // stop[i]: 1 + the last sentence end before i
	for i, t := range st.toks {
		stop[i+1] = stop[i]
		if t.kind == tokStop {
			stop[i+1] = i + 1
		}
	}
	for _, af := range phrases {
		var best *anchor
		for _, a := range st.anchors {
			if a.noun || a.end > af[0] || a.pos < stop[af[0]] {
				continue
			}
			if best == nil || a.end > best.end {
				best = a
			}
		}
		if best != nil {
			best.askFirst, best.negated, best.negStart, best.negEnd = true, true, af[0], af[1]
			best.neg = b.span(st.toks, af[0], af[1])
		} else if stop[af[0]] == 0 {
			// "…, but ask me first": a clause of its own, for the verb of
			// the clause before (askPrevious).
			st.askPrev = b.span(st.toks, af[0], af[1])
		}
	}
}

// askPrevious puts to a person the consequential kinds of the verb before
// a clause that only says to ask first ("Lösche die Logs, aber frag mich
// vorher", "publie l'annonce, mais demande-moi d'abord").
func (b *build) askPrevious(st *segState, inherited *anchor) {
	if st.askPrev == "" || !granting(inherited) {
		return
	}
	for _, k := range inherited.kinds {
		if k == action.Read || k == action.Fetch {
			continue
		}
		if _, ok := b.qualified[k]; !ok {
			b.qualified[k] = qualification{phrase: st.askPrev, verb: inherited.word, askFirst: true}
		}
		b.recognise(st.askPrev, "ask "+string(k), fmt.Sprintf("%q asks first about %q: each %s call is put to you", st.askPrev, inherited.word, k))
	}
}
