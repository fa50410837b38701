// Item conditions: "only delete files older than a year", "unsubscribe me
// from the newsletters, but keep everything from my bank", "clean up
// everything except the generated files". The words restrict a verb to
// some of the items it acts on, in a way no scope entry holds; granting
// the verb's kind would be wider than the words, denying it narrower. The
// kinds it qualifies are put to a person, call by call, and the draft says
// so.

package mandate

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/fold"
)

// qualifier is one item condition in a segment.
type qualifier struct {
	from, to int // the phrase's tokens
	// cond holds the attributes a condition states that a call can be
	// shown to meet ("older than a year": older_than_days 365; "but keep
	// everything from my bank": not_from); none when the words state
	// none Mandate can read.
	cond     ItemCondition
	keep     bool // a keep verb: only deleting and changing are qualified
	only     bool // also a restrictor ("only"): with nothing but names after it, the scope holds it
	except   bool // an exception with no entity after it
	relative bool // a relative clause on the items ("the files that …")
	// negation is a negation that reaches no verb, noun or entity, after
	// a verb in its clause: "delete the files not in git".
	negation bool
	// act is a condition on the act, not the items ("if the tests pass").
	act bool
}

// findItemConditions records item conditions and keep verbs on free
// tokens. A longer verb or noun at the same place wins ("keep an eye on").
func (b *build) findItemConditions(st *segState, free func(i, n int) bool, mark func(i, n int)) {
	toks := st.toks
	for i := 0; i < len(toks); i++ {
		if st.consumed[i] {
			continue
		}
		for _, r := range []role{roleItemCondition, roleKeep, roleRelative} {
			e, n := b.at(toks, i, r)
			if e == nil || !free(i, n) {
				continue
			}
			if _, vn := b.at(toks, i, roleVerb); vn > n {
				continue
			}
			if _, nn := b.at(toks, i, roleNoun); nn > n {
				continue
			}
			if r == roleRelative && !b.relativeHere(st, i) {
				continue
			}
			if b.inNegation(toks, i) {
				continue // "ne supprime quoi que ce soit": the negation's "que", not a relative clause
			}
			if e.cond == condAct && b.inEmbedded(toks, i) {
				continue // "tell me if there's an invoice": a question, not a condition
			}
			q := qualifier{from: i, to: i + n, keep: r == roleKeep, relative: r == roleRelative}
			switch e.cond {
			case condOlder:
				q.cond.OlderThanDays = b.age(st, i+n)
			case condOlderByAge:
				// "de más de un año": an age condition only when an age
				// follows; age consumes nothing when it reads none. On
				// messages ("les mails de promo de plus d'un mois") it
				// is not read yet: a message's age is no attribute a call
				// shows, so the kind would be asked, and the scenario
				// gate has no room for that ask (docs/mandate.md).
				if b.messagesBefore(st, i) {
					continue
				}
				if q.cond.OlderThanDays = b.age(st, i+n); q.cond.OlderThanDays == 0 {
					continue
				}
			case condNewer:
				q.cond.NewerThanDays = b.age(st, i+n)
			case condLarger:
				q.cond.LargerThanBytes = b.size(st, i+n)
			case condSmaller:
				q.cond.SmallerThanBytes = b.size(st, i+n)
			}
			q.act = e.cond == condAct
			if re, rn := b.at(toks, i, roleRestrictor); re != nil && rn == n {
				// "only" also makes a verb after it a verb ("only delete")
				// and a read verb read-only ("only read").
				q.only = true
				st.restrict = append(st.restrict, i)
			}
			st.qualifiers = append(st.qualifiers, q)
			mark(i, n)
			i += n - 1
			break
		}
	}
}

// itemConditions puts to a person the kinds of the verbs that the
// segment's item conditions qualify: the verb right after the condition
// ("only delete …"), else the last one before it in its clause, else the
// first one after it, else — in a clause without a verb ("…, but keep
// everything from my bank") — the sentence's last verb.
func (b *build) itemConditions(st *segState, inherited *anchor) {
	for _, a := range st.anchors {
		_, to := st.clauseOf(a.pos)
		a.anyObject = b.anyItemsBetween(st, a.end, to)
		a.anyMessages = b.anyMessagesBetween(st, a.end, to)
	}
	qs := slices.Clone(st.qualifiers)
	for _, x := range st.exceptions {
		// "except the generated files": an exception with no entity after
		// it names something the scope cannot hold.
		named := false
		for j := x[1]; j < len(st.toks) && j <= x[1]+3; j++ {
			named = named || st.toks[j].kind == tokEntity
		}
		if !named {
			qs = append(qs, qualifier{from: x[0], to: x[1], except: true})
		}
	}
	qs = append(qs, b.danglingNegations(st)...)
	if len(st.negBef)+len(st.negAft) > 0 && !slices.ContainsFunc(st.toks, func(t token) bool { return t.kind == tokEntity }) {
		// "…, but not the videos", "nothing from 2024": a negation that
		// names no resource may spare items in words no condition
		// holds, so no condition says all the words do.
		b.spared = true
	}
	b.labelledDeletes(st)
	b.limitedDeletes(st)
	b.channelDeletes(st)
	b.pendingCondition(st)
	b.pendingPassive(st)
	for _, q := range qs {
		if st.inReported(q.from) {
			continue // "tell her that I only need the summary": what is said
		}
		from, to := st.clauseOf(q.from)
		if q.act && !st.last && b.opensClause(st, q, from) && !slices.ContainsFunc(st.anchors, func(a *anchor) bool { return !a.noun && a.pos > q.from }) {
			// "if the tests pass, push to main", "run the tests and if
			// they pass, push": a conditional clause with no verb after
			// it in its segment qualifies the segment after it.
			b.pendingAct = append(b.pendingAct, b.span(st.toks, q.from, to))
			continue
		}
		if q.only || q.except {
			// "räum den Posteingang auf: alles außer den Mails von der
			// Bank löschen": an exception narrows like "only" — the
			// excepting verb is what the sentence asks of an umbrella
			// verb before it.
			if a := b.qualifiedAnchor(st, q, from, to, inherited); a != nil {
				st.onlyVerbs = append(st.onlyVerbs, a)
			}
		}
		if q.only && b.onlyNames(st, q.to, to) {
			continue // "reply only to dana@x.com": the scope holds what was named
		}
		if e, _ := b.at(st.toks, q.to, roleAs); q.only && e != nil {
			continue // "but only as a PR": how the work is delivered, see deliveredAs
		}
		if (q.relative || q.negation) && !b.unreadBetween(st, q.to, to) {
			continue // "the files that are in ~/tmp": the scope holds what it says
		}
		a := b.qualifiedAnchor(st, q, from, to, inherited)
		if (q.relative || q.negation) && a != nil && (slices.Contains(a.kinds, action.Send) || b.addresseeOf(st, a) != "") {
			continue // "write in #standup that the build is green": what is said
		}
		if q.negation && (a == nil || a.pos > q.from) {
			continue
		}
		phrase := b.span(st.toks, q.from, to)
		if a == nil && !st.last && !q.only && !slices.ContainsFunc(st.anchors, func(a *anchor) bool { return !a.noun }) {
			// A condition in a segment of its own, before any verb: a
			// passive verb after it may be the one it restricts.
			b.pendingItems = append(b.pendingItems, phrase)
			continue
		}
		if a == nil {
			b.recognise(phrase, "nothing qualified", "an item condition with no verb it restricts: it grants nothing")
			continue
		}
		var kinds []action.Kind
		for _, k := range a.kinds {
			switch {
			case k == action.Read || k == action.Fetch:
				// Reading some items only: reading is not consequential.
			case q.keep && k != action.Delete && k != action.Write:
			default:
				kinds = append(kinds, k)
			}
		}
		if len(kinds) == 0 {
			b.recognise(phrase, "nothing qualified", fmt.Sprintf("an item condition on %q (%s), which needs no person's say-so", a.word, kindsString(a.kinds)))
			continue
		}
		// "only delete files older than a year": the "only" says no more
		// than the age after it in its clause. The age is all the words
		// say of the items only when the verb's object names items of any
		// sort: "delete the logs older than 30 days" says more.
		held := b.namedItems(st, &q, a, to)
		checkable := q.cond.attributes() > 0
		senders := len(q.cond.From)+len(q.cond.NotFrom) > 0
		if checkable && !held {
			anyItems := b.anyItemsBetween
			if senders {
				anyItems = b.anyMessagesBetween
			}
			if slices.Contains(st.anchors, a) && a.passive && a.pos > q.from {
				// "everything older than 30 days can be deleted": the
				// passive's subject, before the condition, is its items.
				checkable = anyItems(st, 0, q.from)
			} else if slices.Contains(st.anchors, a) {
				checkable = a.pos < q.from && anyItems(st, a.end, q.from)
			} else {
				checkable = (a.anyObject || senders && a.anyMessages) && anyItems(st, 0, q.from)
			}
			if !checkable && !senders && b.messagesAged(st, &q, a) {
				checkable = true // "delete the emails older than 30 days": their listed dates
			}
		}
		if q.only && slices.ContainsFunc(qs, func(o qualifier) bool {
			return o.cond.attributes() > 0 && o.from > q.from && o.from < to && b.anyItemsBetween(st, q.to, o.from)
		}) {
			continue
		}
		for _, k := range kinds {
			ql, ok := b.qualified[k]
			switch {
			case !ok:
				ql = qualification{phrase: phrase, verb: a.word, checkable: checkable, cond: q.cond}
			case !checkable || !ql.checkable:
				ql.checkable = false // another condition Mandate cannot check: always asked
			default:
				ql.cond = mergeConditions(ql.cond, q.cond)
			}
			b.qualified[k] = ql
		}
	}
}

// mergeConditions is a condition that holds where both hold: the older
// age, the newer bound, the larger lower and the smaller upper size, and
// the lists together.
func mergeConditions(a, c ItemCondition) ItemCondition {
	a.OlderThanDays = max(a.OlderThanDays, c.OlderThanDays)
	if c.NewerThanDays > 0 && (a.NewerThanDays == 0 || c.NewerThanDays < a.NewerThanDays) {
		a.NewerThanDays = c.NewerThanDays
	}
	a.LargerThanBytes = max(a.LargerThanBytes, c.LargerThanBytes)
	if c.SmallerThanBytes > 0 && (a.SmallerThanBytes == 0 || c.SmallerThanBytes < a.SmallerThanBytes) {
		a.SmallerThanBytes = c.SmallerThanBytes
	}
	a.Names = bothHold(a.Names, c.Names)
	a.NotNames = append(a.NotNames, c.NotNames...)
	a.NotFrom = append(a.NotFrom, c.NotFrom...)
	a.NotLabels = append(a.NotLabels, c.NotLabels...)
	a.Labels = bothHold(a.Labels, c.Labels)
	a.From = bothHold(a.From, c.From)
	a.Channels, a.NotChannels = bothHold(a.Channels, c.Channels), append(a.NotChannels, c.NotChannels...)
	a.Messages = a.Messages || c.Messages
	return a
}

// bothHold is a list condition that holds where lists a and c both do:
// when both list something, only what each lists is known to hold, and
// "\x00" (which nothing is) stands for none; else the one that lists.
func bothHold(a, c []string) []string {
	if len(a) == 0 || len(c) == 0 {
		return append(a, c...)
	}
	a = slices.DeleteFunc(slices.Clone(a), func(n string) bool { return !slices.Contains(c, n) })
	if len(a) == 0 {
		return []string{"\x00"}
	}
	return a
}

// pendingPassive applies the sentence's pending item conditions to the
// first verb of this segment when it is passive: its items are the subject
// the conditions were said of. Any other verb leaves them unapplied.
func (b *build) pendingPassive(st *segState) {
	if len(b.pendingItems) == 0 {
		return
	}
	for _, a := range st.anchors {
		if a.noun {
			continue
		}
		if !a.passive || !granting(a) {
			return
		}
		for _, phrase := range b.pendingItems {
			for _, k := range a.kinds {
				if k != action.Read && k != action.Fetch {
					b.qualify1(k, phrase, a.word)
				}
			}
			b.recognise(phrase, "condition on "+a.word, fmt.Sprintf("the subject of the passive %q is what it acts on: each call of %s is put to you", a.word, kindsString(a.kinds)))
		}
		b.pendingItems = nil
		return
	}
}

// passiveAfter returns the passive verb a condition with no verb in its
// clause restricts: a passive's items are its subject, said before it
// ("alles in /var/log/myapp, was älter als 30 Tage ist, kann gelöscht
// werden"), so the first verb after the condition in its segment, when it
// is passive, is the one whose items it narrows.
func (b *build) passiveAfter(st *segState, q qualifier) *anchor {
	for _, a := range st.anchors {
		if a.noun || a.pos < q.to {
			continue
		}
		if a.passive && !a.negated && !a.noGrant && !a.anyKind && len(a.kinds) > 0 {
			return a
		}
		return nil // another verb first: the condition is not the passive's
	}
	return nil
}

// inEmbedded reports whether token i ends an embedded question ("tell me
// if", "dis-moi s'").
func (b *build) inEmbedded(toks []token, i int) bool {
	for j := max(0, i-4); j < i; j++ {
		if e, n := b.at(toks, j, roleEmbedded); e != nil && j+n > i {
			return true
		}
	}
	return false
}

// opensClause reports whether a condition opens its clause: first in it,
// or after a conjunction ("… and if they pass, push"). Such a condition
// qualifies what follows it; one after its verb ("push if they pass")
// qualifies that verb.
func (b *build) opensClause(st *segState, q qualifier, from int) bool {
	return q.from == from || b.is(st.toks[q.from-1], roleConj)
}

// pendingCondition puts to a person the kinds of the first granting verb
// of the segment after a conditional clause of its own ("if the tests
// pass, push to main"; "et, s'ils passent, pousse sur main").
func (b *build) pendingCondition(st *segState) {
	if len(b.pendingAct) == 0 {
		return
	}
	for _, a := range st.anchors {
		if a.noun || !granting(a) {
			continue
		}
		for _, phrase := range b.pendingAct {
			for _, k := range a.kinds {
				if k != action.Read && k != action.Fetch {
					b.qualify1(k, phrase, a.word)
				}
			}
		}
		b.pendingAct = nil
		return
	}
}

// limitedDeletes reads a delete whose items are restricted by a preposition
// and words the draft cannot read: "delete the emails from LinkedIn",
// "lösche die Mails von der Bank", "supprime les mails de LinkedIn". A
// delete granted as a whole would remove the other items too, and cannot
// be undone: deleting is put to a person, call by call. Named resources
// ("the files in ~/tmp") are held by the scope, and words of any sort
// ("everything in …") restrict nothing.
func (b *build) limitedDeletes(st *segState) {
	for a, to := range grantedDeletes(st) {
		for j := a.end; j < to; j++ {
			e, n := b.at(st.toks, j, roleLimiting)
			if e == nil || st.consumed[j] || !b.nounBefore(st, j, a) {
				continue
			}
			if !b.unreadBetween(st, j+n, to) && b.addressOnly(st, j+n, to) && b.anyMessagesBetween(st, a.end, j) {
				// "delete all emails from news@shop.example": no scope
				// entry holds a sender, and the delete granted as a
				// whole would remove everyone else's mail too.
				b.deleteFrom(st, a, j, n, to, true)
				break
			}
			if !b.unreadBetween(st, j+n, to) || b.placeOnly(st, j+n, to) {
				continue
			}
			// "delete all emails from LinkedIn": the sender is all the
			// words say of the messages, and an earlier output of the
			// session can show it.
			b.deleteFrom(st, a, j, n, to, b.anyMessagesBetween(st, a.end, j))
			break
		}
	}
}

// deleteFrom reads the limited delete a over st.toks[j:to], whose
// preposition of n tokens stands at j. Where bySender holds and no
// qualification of the delete stands yet, the words after the preposition
// that name a sender make it a checkable condition on the messages' sender;
// otherwise the delete is put to a person.
func (b *build) deleteFrom(st *segState, a *anchor, j, n, to int, bySender bool) {
	phrase := b.span(st.toks, j, to)
	if _, ok := b.qualified[action.Delete]; !ok && bySender {
		if words, ok := b.sender(st, j+n, to, true); ok {
			b.qualified[action.Delete] = qualification{phrase: phrase, verb: a.word, checkable: true,
				cond: ItemCondition{From: words}}
			return
		}
	}
	b.qualifyLimited(action.Delete, phrase, a.word)
}

// channelDeletes reads a delete of messages in a chat channel the words
// name ("delete my messages in #random", "lösche nur die Nachrichten in
// #test"): the channel is a scope entry for sending, but it does not bound
// a delete — a delete granted as a whole would remove the messages of
// every other channel, and files too. The call to delete a message does
// not carry its channel where the draft can check it, so deleting is put
// to a person, call by call.
func (b *build) channelDeletes(st *segState) {
	for a, to := range grantedDeletes(st) {
		if !b.messagesBetween(st, a.end, to) {
			continue
		}
		for j := a.end; j < to; j++ {
			if t := st.toks[j]; t.kind == tokEntity && b.ents[t.ent].kind == entChannel {
				phrase := b.span(st.toks, j, j+1)
				b.qualifyLimited(action.Delete, phrase, a.word)
				b.recognise(phrase, "ask delete", fmt.Sprintf("the messages %q deletes are those in the channel %s, which a delete call does not show: each delete call is put to you", a.word, phrase))
				break
			}
		}
	}
}

// placeOnly reports whether tokens i to j name only where items are kept
// ("dalla posta", "from my inbox"): function words and item_places.
func (b *build) placeOnly(st *segState, i, j int) bool {
	place := false
	for k := i; k < j; k++ {
		if e, n := b.at(st.toks, k, roleItemPlace); e != nil {
			place = true
			k += n - 1
			continue
		}
		if st.toks[k].kind != tokWord || b.fillerAt(st, k) == 0 {
			return false
		}
	}
	return place
}

// nounBefore reports whether the word before token j is a noun of the
// verb's object: "the emails from LinkedIn" restricts the emails, but in
// "delete it from my calendar" or "remove the folder 'Drafts' from my
// Drive" the preposition names where the items are, not which.
func (b *build) nounBefore(st *segState, j int, a *anchor) bool {
	if j == 0 || j-1 < a.end {
		return false
	}
	t := st.toks[j-1]
	return t.kind == tokWord && b.fillerAt(st, j-1) == 0 && !b.is(t, roleMarker) && !b.anchorBetween(st, j-1, j) || slices.ContainsFunc(st.nouns, func(nn *anchor) bool { return nn.end == j })
}

func (b *build) qualifyLimited(k action.Kind, phrase, verb string) {
	if _, ok := b.qualified[k]; ok {
		b.qualify1(k, b.qualified[k].phrase, b.qualified[k].verb)
		return
	}
	b.qualify1(k, phrase, verb)
}

// butExcept reads a clause after "but" with no verb, negation or named
// resource of its own as an exception to the sentence's last verb:
// "delete everything in ~/tmp but the config files", "reply to everyone
// but the recruiters". The items it spares are words no scope entry
// holds: the verb's consequential kinds are put to a person.
func (b *build) butExcept(st *segState, inherited *anchor) {
	if !granting(inherited) || len(st.nouns) > 0 ||
		len(st.qualifiers) > 0 || len(st.limits) > 0 || len(st.self) > 0 || st.nothing != "" || st.readOnly != "" {
		return
	}
	people := false // "but the recruiters": people the scope cannot name
	for j := range st.toks {
		e, _ := b.at(st.toks, j, rolePerson)
		people = people || e != nil
	}
	if slices.ContainsFunc(st.toks, func(t token) bool { return t.kind == tokEntity }) || (!people && !b.unreadBetween(st, 0, len(st.toks))) {
		return
	}
	if e, _ := b.at(st.toks, 0, roleAs); e != nil {
		return // "but as a PR": how the work is delivered
	}
	phrase := b.span(st.toks, 0, len(st.toks))
	for _, k := range inherited.kinds {
		if k != action.Read && k != action.Fetch {
			b.qualify1(k, "but "+phrase, inherited.word)
		}
	}
}

// danglingNegations are the segment's negation markers that negated no
// verb, noun or entity but follow a granting verb in their clause: "delete
// the files not in git", "archive the threads with no reply". They
// restrict the items the verb acts on in words the draft cannot hold,
// which itemConditions weighs like a relative clause: when the words after
// the marker are not all read, the verb's kinds are put to a person.
func (b *build) danglingNegations(st *segState) []qualifier {
	var out []qualifier
	for _, n := range append(slices.Clone(st.negBef), st.negAft...) {
		used := slices.ContainsFunc(st.anchors, func(a *anchor) bool { return a.negated && a.negStart == n[0] })
		_, to := st.clauseOf(n[0])
		for j := n[1]; !used && j < to; j++ {
			used = st.toks[j].kind == tokEntity // "…, and not alice@y.com": a targeted prohibition
		}
		before := slices.ContainsFunc(st.anchors, func(a *anchor) bool { return granting(a) && a.end <= n[0] && a.pos >= b.clauseStart(st, n[0]) })
		if used || !before || slices.ContainsFunc(out, func(q qualifier) bool { return q.from == n[0] }) {
			continue
		}
		out = append(out, qualifier{from: n[0], to: n[1], negation: true})
	}
	return out
}

// inNegation reports whether token i lies inside a negation phrase that
// begins before it ("quoi que ce soit", "à qui que ce soit"): the longer
// phrase decides, as everywhere in the scan.
func (b *build) inNegation(toks []token, i int) bool {
	for j := max(i-4, 0); j < i; j++ {
		for _, r := range []role{roleNegBefore, roleNegAfter} {
			if e, n := b.at(toks, j, r); e != nil && j+n > i {
				return true
			}
		}
	}
	return false
}

func (b *build) clauseStart(st *segState, i int) int {
	from, _ := st.clauseOf(i)
	return from
}

// relativeHere reports whether a relative word at i opens a clause on the
// items: it follows a noun or a name ("the branches that …", "la facture
// que …"), not a verb ("note who …", "applying that patch"), a function
// word ("so that", "everyone who") or a comma (", that was a mistake").
func (b *build) relativeHere(st *segState, i int) bool {
	if i == 0 {
		return false
	}
	prev := st.toks[i-1]
	switch prev.kind {
	case tokEntity:
		return true
	case tokWord:
	default:
		return false
	}
	if e, _ := b.at(st.toks, i-1, roleVerb); e != nil {
		return false
	}
	for _, r := range fillerRoles {
		if e, _ := b.at(st.toks, i-1, r); e != nil {
			return false
		}
	}
	return true
}

// unreadBetween reports whether tokens i to j hold a word no stage used
// and no function word accounts for: what the words say there was not
// read.
func (b *build) unreadBetween(st *segState, i, j int) bool {
	for k := i; k < j; k++ {
		if st.toks[k].kind == tokWord && !st.consumed[k] && b.fillerAt(st, k) == 0 {
			return true
		}
	}
	return false
}

// qualification is why a kind is put to a person: the condition's words
// and the verb they restrict, and the age in days when that is all they
// say (a call can be shown to meet it).
type qualification struct {
	phrase, verb string
	// checkable: cond is all the words say of the items, and a call can
	// be shown to meet it.
	checkable bool
	cond      ItemCondition
	askFirst  bool // the words say to ask first, not which items (askPrevious)
}

// anyItemsBetween reports whether the words from i to j name items of any
// sort: verbs, function words and words like "files" or "alles" only —
// not "logs" or "the invoices", which restrict the items further.
func (b *build) anyItemsBetween(st *segState, i, j int) bool {
	for k := i; k < j; k++ {
		t := st.toks[k]
		if (st.consumed[k] && b.anchorBetween(st, k, k+1)) || t.kind == tokEntity {
			continue // a verb, a named path or folder
		}
		if t.kind != tokWord || st.consumed[k] {
			return false
		}
		if b.fillerAt(st, k) == 0 && !b.is(t, roleAnyItems) {
			return false
		}
	}
	return true
}

// condOlder marks an item condition on the items' age.
const condOlder = "older"

// condOlderByAge marks a phrase that is an age condition only when an age
// follows it (older_than_with_age).
const condOlderByAge = "older-by-age"

// condAct marks a condition on the act itself ("if the tests pass").
const condAct = "act"

// Item conditions on the items' newest age and size.
const (
	condNewer   = "newer"
	condLarger  = "larger"
	condSmaller = "smaller"
)

// age reads an age right after an "older than" phrase: an optional number
// (a digit, a number word, or an article for one) and an age unit, within
// three words; it returns the days and marks the words used, or 0.
func (b *build) age(st *segState, i int) int {
	n := 1
	for j := i; j < len(st.toks) && j <= i+3; j++ {
		t := st.toks[j]
		if st.consumed[j] {
			return 0
		}
		if t.kind == tokNumber {
			n = t.n
			continue
		}
		if e, _ := b.at(st.toks, j, roleNumber); e != nil {
			n = e.n
			continue
		}
		if e, _ := b.at(st.toks, j, roleAgeUnit); e != nil {
			// The age in days must be one a mandate can hold
			// (parse.go: 1 to 100000): "older than 999 years" is
			// not an age Mandate checks, so the kind it qualifies
			// is asked, as for any condition it cannot read.
			if n <= 0 || n > 100_000 || n*e.n > 100_000 {
				return 0
			}
			for k := i; k <= j; k++ {
				st.consumed[k] = true
			}
			return n * e.n
		}
		if t.kind != tokWord || !(b.is(t, roleDeterminer) || b.is(t, roleMarker)) {
			return 0
		}
	}
	return 0
}

// messagesBefore reports whether a word for messages stands in i's
// clause before i.
func (b *build) messagesBefore(st *segState, i int) bool {
	from, _ := st.clauseOf(i)
	for k := from; k < i; k++ {
		if e, _ := b.at(st.toks, k, roleAnyMessages); e != nil && st.toks[k].kind == tokWord {
			return true
		}
	}
	return false
}

// onlyNames reports whether the tokens from i to the clause's end hold
// entities and function words only.
func (b *build) onlyNames(st *segState, i, to int) bool {
	named := false
	for j := i; j < to; j++ {
		t := st.toks[j]
		switch {
		case t.kind == tokEntity:
			named = true
		case t.kind == tokWord && b.fillerAt(st, j) > 0:
		default:
			return false
		}
	}
	return named
}

func (b *build) qualifiedAnchor(st *segState, q qualifier, from, to int, inherited *anchor) *anchor {
	granting := func(a *anchor) bool {
		return a != nil && !a.negated && !a.noGrant && !a.noun && !a.anyKind && len(a.kinds) > 0
	}
	var before, after *anchor
	verbs := 0
	for _, a := range st.anchors {
		if a.noun || a.handsOff {
			continue
		}
		verbs++
		if a.pos < from || a.pos >= to || !granting(a) {
			continue
		}
		if a.pos >= q.to && a.pos-q.to <= 1 {
			return a // "only delete …"
		}
		if a.pos < q.from {
			before = a
		} else if after == nil {
			after = a
		}
	}
	if q.act && (after == nil || !b.opensClause(st, q, from)) {
		if before != nil {
			if e, n := b.at(st.toks, before.pos, roleWhether); e != nil && n == before.end-before.pos {
				return nil // "ask Diego if the numbers are final": whether, not a condition
			}
		}
		for j := from; j < q.from; j++ {
			if e, _ := b.at(st.toks, j, roleCopula); e != nil {
				return nil // "any brand is fine if something's out": the condition is the state's
			}
		}
	}
	if before == nil && after == nil && !q.act {
		if a := b.passiveAfter(st, q); a != nil {
			return a
		}
	}
	switch {
	case q.act && after != nil && b.opensClause(st, q, from):
		return after // "… and if they pass, push to main": the clause it opens
	case before != nil:
		return before
	case after != nil:
		return after
	case verbs == 0 && granting(inherited):
		return inherited
	}
	return nil
}

// size reads a size right after a "larger than" phrase: a number and a
// size unit ("100 MB", "2 Go"); it returns the bytes and marks the words
// used, or 0.
func (b *build) size(st *segState, i int) int64 {
	if i+1 >= len(st.toks) || st.consumed[i] || st.consumed[i+1] || st.toks[i].kind != tokNumber {
		return 0
	}
	e, n := b.at(st.toks, i+1, roleSizeUnit)
	if e == nil || n != 1 {
		return 0
	}
	v := int64(st.toks[i].n) * int64(e.n)
	if st.toks[i].n <= 0 || v <= 0 || v > maxConditionBytes {
		return 0 // not a size a mandate holds: the kind stays asked
	}
	st.consumed[i], st.consumed[i+1] = true, true
	return v
}

// anyMessagesBetween is anyItemsBetween that also takes words for
// messages of any sort ("emails", "Mails", "courriels").
func (b *build) anyMessagesBetween(st *segState, i, j int) bool {
	for k := i; k < j; k++ {
		t := st.toks[k]
		if (st.consumed[k] && b.anchorBetween(st, k, k+1)) || t.kind == tokEntity {
			continue
		}
		if e, n := b.at(st.toks, k, roleAnyMessages); e != nil && t.kind == tokWord {
			k += n - 1 // a word for messages, read as a noun or not
			continue
		}
		if t.kind != tokWord || st.consumed[k] {
			return false
		}
		if e, n := b.at(st.toks, k, roleAnyItems); e != nil {
			k += n - 1 // "tout ce qui vient", "tutto quello"
			continue
		}
		if b.fillerAt(st, k) == 0 {
			return false
		}
	}
	return true
}

// namedItems reads what a condition names of the items beyond a
// comparison: a file-name pattern the "only" verb's items are named by
// ("only delete files named *.tmp": names), one a keep verb spares ("but
// keep the *.pdf files": not_names), and a sender a keep verb spares
// ("but keep everything from my bank": not_from). It reports whether
// that is all the words say of the verb's items (then the condition is
// checkable without more).
func (b *build) namedItems(st *segState, q *qualifier, a *anchor, to int) bool {
	if a == nil || q.cond.attributes() > 0 {
		return false
	}
	switch {
	case q.keep:
		from := q.to
		if names, ok := b.labelled(st, from, to); ok {
			// "but keep everything in the Work folder"
			q.cond.NotLabels = names
			return b.objectOfAnyMessages(st, a, q)
		}
		if g, ok := b.bareGlob(st, from, to); ok {
			q.cond.NotNames = []string{g}
			return b.objectOfAnyItems(st, a, q)
		}
		for j := from; j < to; j++ {
			e, n := b.at(st.toks, j, roleLimiting)
			if e == nil {
				continue
			}
			if !b.anyMessagesBetween(st, from, j) {
				return false
			}
			words, ok := b.sender(st, j+n, to, false)
			if !ok {
				return false
			}
			q.cond.NotFrom = words
			return b.objectOfAnyMessages(st, a, q)
		}
	case q.only && slices.Contains(st.anchors, a):
		// "only delete files named *.tmp", "lösche nur Dateien namens
		// *.bak": the pattern after the verb and the "only".
		if chs, ok := b.onlyChannels(st, *q, a, to); ok {
			q.cond.Channels = chs // "only post in #general"
			return true
		}
		if g, ok := b.bareGlob(st, max(a.end, q.to), to); ok {
			q.cond.Names = []string{g}
			return true
		}
	}
	return false
}

// objectOfAnyItems reports whether the verb a keep verb spares items of
// acts on items of any sort: "delete everything in ~/tmp, but keep …".
func (b *build) objectOfAnyItems(st *segState, a *anchor, q *qualifier) bool {
	if slices.Contains(st.anchors, a) {
		return a.pos < q.from && b.anyItemsBetween(st, a.end, q.from)
	}
	return a.anyObject && b.anyItemsBetween(st, 0, q.from)
}

// objectOfAnyMessages is objectOfAnyItems for messages ("delete my
// emails, but keep everything from my bank").
func (b *build) objectOfAnyMessages(st *segState, a *anchor, q *qualifier) bool {
	if slices.Contains(st.anchors, a) {
		return a.pos < q.from && b.anyMessagesBetween(st, a.end, q.from)
	}
	return (a.anyObject || a.anyMessages) && b.anyMessagesBetween(st, 0, q.from)
}

// bareGlob finds, in tokens i to j, one path entity that is a file-name
// pattern with no folder ("*.tmp", "report-*.csv") among function words,
// words for items of any sort and name markers only; it returns the
// pattern.
func (b *build) bareGlob(st *segState, i, j int) (string, bool) {
	glob := ""
	for k := i; k < j; k++ {
		t := st.toks[k]
		if t.kind == tokEntity {
			e := b.ents[t.ent]
			g, ok := strings.CutPrefix(e.value, "**/")
			if e.kind != entPath || !ok || glob != "" || !strings.ContainsAny(g, "*?") || strings.Contains(g, "/") {
				return "", false
			}
			glob = g
			continue
		}
		if t.kind != tokWord {
			return "", false
		}
		if e, n := b.at(st.toks, k, roleNameMarker); e != nil {
			k += n - 1
			continue
		}
		if b.fillerAt(st, k) == 0 && !b.is(t, roleAnyItems) && !(st.consumed[k] && b.anchorBetween(st, k, k+1)) {
			return "", false
		}
	}
	return glob, glob != ""
}

// sender reads the sender named in tokens i to j ("my bank", "LinkedIn",
// "news@shop.example", "der Sparkasse"): function words, and words that
// name a role of senders.yaml, an address or domain, or a capitalised
// word no lexicon knows. It returns the words a condition holds (for a
// role, its from or not_from words), and marks them used.
func (b *build) sender(st *segState, i, j int, from bool) ([]string, bool) {
	var words []string
	var used []int
	for k := i; k < j; k++ {
		t := st.toks[k]
		switch {
		case t.kind == tokEntity && (b.ents[t.ent].kind == entEmail || b.ents[t.ent].kind == entDomain):
			words = append(words, strings.TrimPrefix(strings.TrimPrefix(b.ents[t.ent].value, "*@"), "@"))
		case t.kind != tokWord:
			return nil, false
		case senderRole(t.text) != nil:
			r := senderRole(t.text)
			if from {
				words = append(words, r.From...)
			} else {
				words = append(words, r.NotFrom...)
			}
			used = append(used, k)
		case b.fillerAt(st, k) > 0 && !st.consumed[k]:
		case b.unknownWord(st, k) && unicode.IsUpper([]rune(b.text[t.start:t.end])[0]):
			words = append(words, t.text)
			used = append(used, k)
		default:
			return nil, false
		}
	}
	if len(words) == 0 || len(used) > 4 {
		return nil, false
	}
	for _, k := range used {
		st.consumed[k] = true
	}
	return slices.Compact(words), true
}

// describe says in words what a call must show of every item for the
// condition to hold.
func (c ItemCondition) describe() string {
	var parts []string
	if c.OlderThanDays > 0 {
		parts = append(parts, fmt.Sprintf("older than %d days", c.OlderThanDays))
	}
	if c.NewerThanDays > 0 {
		parts = append(parts, fmt.Sprintf("newer than %d days", c.NewerThanDays))
	}
	if c.LargerThanBytes > 0 {
		parts = append(parts, fmt.Sprintf("larger than %d bytes", c.LargerThanBytes))
	}
	if c.SmallerThanBytes > 0 {
		parts = append(parts, fmt.Sprintf("smaller than %d bytes", c.SmallerThanBytes))
	}
	if len(c.Names) > 0 {
		parts = append(parts, "named "+strings.Join(c.Names, " or "))
	}
	if len(c.NotNames) > 0 {
		parts = append(parts, "not named "+strings.Join(c.NotNames, " or "))
	}
	if len(c.From) > 0 {
		parts = append(parts, "from a sender with "+strings.Join(c.From, " or "))
	}
	if len(c.Labels) > 0 {
		parts = append(parts, "filed, as an earlier output listed it, under a label with "+strings.Join(c.Labels, " or "))
	}
	if len(c.NotLabels) > 0 {
		parts = append(parts, "filed, as an earlier output listed it, under no label with "+strings.Join(c.NotLabels, " or "))
	}
	if len(c.NotFrom) > 0 {
		parts = append(parts, fmt.Sprintf("from a sender an earlier output listed, with none of %d words (%s)", len(c.NotFrom), strings.Join(c.NotFrom[:min(3, len(c.NotFrom))], ", ")))
	}
	return strings.Join(append(parts, c.describeMore()...), ", ")
}

// addressOnly reports whether tokens i to j are function words and at
// least one e-mail address or domain: a sender named by its address.
func (b *build) addressOnly(st *segState, i, j int) bool {
	named := false
	for k := i; k < j; k++ {
		t := st.toks[k]
		switch {
		case t.kind == tokEntity && (b.ents[t.ent].kind == entEmail || b.ents[t.ent].kind == entDomain):
			named = true
		case t.kind == tokWord && b.fillerAt(st, k) > 0:
		default:
			return false
		}
	}
	return named
}

// grantedDeletes yields each verb that grants delete with where its
// object ends: at the end of its clause, or at the next verb there.
func grantedDeletes(st *segState) iter.Seq2[*anchor, int] {
	return func(yield func(*anchor, int) bool) {
		for _, a := range st.anchors {
			if !granting(a) || !slices.Contains(a.kinds, action.Delete) {
				continue
			}
			_, to := st.clauseOf(a.pos)
			for _, o := range st.anchors {
				if o.pos > a.pos && o.pos < to && !o.noun {
					to = o.pos
				}
			}
			if !yield(a, to) {
				return
			}
		}
	}
}

// labelledDeletes reads a delete of messages filed under a label the
// words name ("delete the emails in the Promotions folder", "lösche die
// Mails im Ordner Werbung"): granted as a whole, the delete would remove
// every other folder's mail too. The label is all the words say of the
// messages, and an earlier output of the session can show it, so the
// delete is asked under a labels condition.
func (b *build) labelledDeletes(st *segState) {
	if _, ok := b.qualified[action.Delete]; ok {
		return
	}
	for a, to := range grantedDeletes(st) {
		for j := a.end; j < to; j++ {
			if !b.anyMessagesBetween(st, a.end, j) {
				break
			}
			if !b.messagesBetween(st, a.end, j) {
				continue // "supprime le dossier 'Brouillons'": the folder itself is the object
			}
			names, ok := b.labelled(st, j, to)
			if !ok {
				continue
			}
			b.qualified[action.Delete] = qualification{phrase: b.span(st.toks, j, to), verb: a.word, checkable: true,
				cond: ItemCondition{Labels: names}}
			b.recognise(b.span(st.toks, j, to), "label "+strings.Join(names, " "), "a label or folder the messages are filed under")
			return
		}
	}
}

// labelled reads tokens i to j as a label the words name: function
// words, one label word, and one to three capitalised words no lexicon
// knows (or a quoted name) beside it — "in the Promotions folder", "im
// Ordner Werbung", "dans le dossier « Factures »". It returns the label's
// folded words, joined as one, and marks them used.
func (b *build) labelled(st *segState, i, j int) ([]string, bool) {
	var name []string
	var used []int
	word := false
	for k := i; k < j; k++ {
		t := st.toks[k]
		switch {
		case t.kind == tokEntity && b.ents[t.ent].kind == entQuote:
			name = append(name, fold.String(b.ents[t.ent].value))
		case t.kind != tokWord:
			return nil, false
		case b.is(t, roleLabelWord) && !word:
			word = true
			used = append(used, k)
		case b.unknownWord(st, k) && unicode.IsUpper([]rune(b.text[t.start:t.end])[0]):
			name = append(name, t.text)
			used = append(used, k)
		case b.fillerAt(st, k) > 0 && !st.consumed[k]:
		default:
			return nil, false
		}
	}
	if !word || len(name) == 0 || len(name) > 3 {
		return nil, false
	}
	for _, k := range used {
		st.consumed[k] = true
	}
	return []string{strings.Join(name, " ")}, true
}

// messagesBetween reports whether tokens i to j hold a word for messages
// ("emails", "Mails"): the object is messages, not the folder they are in.
func (b *build) messagesBetween(st *segState, i, j int) bool {
	for k := i; k < j; k++ {
		if e, _ := b.at(st.toks, k, roleAnyMessages); e != nil && st.toks[k].kind == tokWord {
			return true
		}
	}
	return false
}

// bareGlobs are the file-name patterns the words name with no folder
// ("*.iso", "report-*.csv"), less those in except.
func (b *build) bareGlobs(except []string) []string {
	var out []string
	for _, e := range b.ents {
		g, ok := strings.CutPrefix(e.value, "**/")
		if e.kind != entPath || !ok || !strings.ContainsAny(g, "*?") || strings.Contains(g, "/") {
			continue
		}
		if !slices.Contains(except, g) && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// sparesBySender reports whether the object of a hands-off phrase,
// tokens i to j, names items by a limiting preposition ("anything from
// @mybank.com", "tout ce qui vient de ma banque") and no path: items
// spared by an attribute, not a resource the scope holds.
func (b *build) sparesBySender(st *segState, i, j int) bool {
	limited := false
	for k := i; k < j && k < len(st.toks); k++ {
		t := st.toks[k]
		if t.kind == tokEntity && b.ents[t.ent].kind == entPath {
			return false
		}
		limited = limited || b.is(t, roleLimiting)
	}
	return limited
}
