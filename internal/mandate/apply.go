// Applying a segment: its entities into scope or targeted prohibitions,
// its verbs into grants, its negations into denials.

package mandate

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/action"
)

func (b *build) apply(st *segState, webCue string, inherited *anchor) {
	toks := st.toks

	// Restrictor + read verb: "only read", "just look", "nur lesen".
	for _, a := range st.anchors {
		if !a.negated && !a.noGrant && slices.Contains(a.kinds, action.Read) && slices.Contains(st.restrict, a.pos-1) && st.readOnly == "" {
			st.readOnly, st.roPos = b.span(toks, a.pos-1, a.end), a.pos-1
			st.roWhy = fmt.Sprintf("restrictor %q + verb %q", b.span(toks, a.pos-1, a.pos), b.span(toks, a.pos, a.end))
		}
	}

	// Limits first: a negated verb inside a limit ("don't spend more than
	// 50 EUR") states the cap, not a prohibition.
	limited := b.limits(st, inherited)

	// Which anchor each entity belongs to, and whether it is negated.
	type use struct {
		ent     *entity
		tok     int // its token index
		a       *anchor
		negated bool
		negFrom int    // token where the negated phrase starts
		why     string // why it is negated
		// exception explains an entity kept in scope by an exception.
		exception string
	}
	var uses []use
	// excepted are negated verbs an exception leaves open for what it
	// names: "don't email anyone outside orbit-saas.com" rules out every
	// recipient but those, which the scope then holds.
	excepted := map[*anchor]bool{}
	segNegated := len(st.negBef)+len(st.negAft) > 0
	for i, t := range toks {
		if t.kind != tokEntity {
			continue
		}
		e := &b.ents[t.ent]
		if e.kind == entAmount || (e.kind == entQuote && b.notAName(toks, i)) {
			continue
		}
		u := use{ent: e, tok: i, a: nearestAnchor(st.anchors, i), negFrom: i}
		switch {
		case u.a != nil:
			if u.a.negated {
				u.negated, u.negFrom, u.why = true, min(u.a.pos, u.a.negStart), b.negWhy(u.a)
			}
			// "email bob@x.com and not alice@y.com": a negation between
			// the verb and the entity negates the entity only.
			for _, n := range st.negBef {
				if u.a.pos < n[0] && n[1] <= i {
					u.negated, u.negFrom = true, n[0]
					u.why = fmt.Sprintf("negation %q before the target, verb %q (%s)", b.span(toks, n[0], n[1]), u.a.word, kindsString(b.negKinds(u.a)))
				}
			}
		case segNegated:
			// "…, nicht an max@example.com": the clause continues the
			// sentence's last verb, negated.
			u.a, u.negated, u.negFrom = inherited, true, 0
			u.why = "negation in a clause without a verb"
			if inherited != nil {
				u.why = fmt.Sprintf("negation in a clause continuing verb %q (%s)", inherited.word, kindsString(b.negKinds(inherited)))
			}
		case st.butExcept && granting(inherited):
			// "delete everything in ~/tmp but ~/tmp/keep": what "but"
			// spares is kept out of the verb's reach.
			u.a, u.negated, u.negFrom = inherited, true, 0
			u.why = fmt.Sprintf("exception \"but\" to verb %q (%s)", inherited.word, kindsString(b.negKinds(inherited)))
		default:
			u.a = inherited
			if inherited != nil && inherited.negated && !inherited.self {
				// "Don't email alice@x.com, bob@y.com": the clause
				// continues a negated verb.
				u.negated, u.negFrom = true, 0
				u.why = fmt.Sprintf("a clause continuing negated verb %q (%s)", inherited.word, kindsString(b.negKinds(inherited)))
			}
		}
		// "don't email anyone outside orbit-saas.com": the entity after
		// an exception is what stays allowed; "delete everything except
		// invoices/": what is spared.
		// An inherited verb stands in an earlier clause: "archive the old
		// channels, except #general" spares #general.
		local := u.a != nil && slices.Contains(st.anchors, u.a)
		for _, x := range st.exceptions {
			if x[1] <= i && i-x[1] <= 3 && (u.a == nil || !local || u.a.pos < x[0] || u.a.pos > i) {
				ex := b.span(toks, x[0], x[1])
				if u.negated {
					u.negated = false
					u.exception = fmt.Sprintf("exception %q in a negated clause: the one allowed", ex)
					if toks[i].kind == tokEntity && b.ents[toks[i].ent].kind == entPath && b.nothingElse == "" {
						// "keine Dateien außerhalb von ./src ändern": nothing
						// but the path named, as "nothing else" says.
						b.nothingElse = b.span(toks, x[0], i+1)
					}
					if u.a != nil && u.a.negated {
						excepted[u.a] = true
					}
				} else if u.a != nil {
					u.negated, u.negFrom = true, x[0]
					u.why = fmt.Sprintf("exception %q to verb %q (%s)", ex, u.a.word, kindsString(b.negKinds(u.a)))
				}
				break
			}
		}
		uses = append(uses, u)
	}

	withEntities := map[*anchor]bool{}
	for _, u := range uses {
		if !u.negated {
			if u.exception != "" {
				u.ent.why += "; " + u.exception
			}
			b.scopeEntity(u.ent, u.a)
			b.notePathObject(st, u.tok, u.ent, u.a)
			// Buying on a named shop means reaching it. An entity spared
			// by an exception ("non scrivere a nessuno fuori da x.example")
			// is what the prohibition leaves open, not a place asked for.
			if k := u.ent.kind; (k == entURL || k == entDomain) && u.exception == "" && u.a != nil && !u.a.noun && !u.a.anyKind && !u.a.noGrant &&
				!slices.Contains(u.a.kinds, action.Read) && !slices.Contains(u.a.kinds, action.Send) {
				b.allow(action.Fetch, u.ent.raw, fmt.Sprintf("host named for verb %q: reaching it is a fetch", u.a.word))
			}
			continue
		}
		if u.a != nil {
			withEntities[u.a] = true
		}
		from, to := st.clauseOf(u.tok)
		b.prohibitTarget(u.ent, u.a, b.span(toks, max(u.negFrom, from), u.tok+1), b.span(toks, from, to), u.why)
	}

	// "don't push to main": a negated send verb aimed at a branch
	// prohibits pushing that branch, not every send.
	for _, a := range st.anchors {
		if !a.negated || a.noun || a.self || withEntities[a] || !slices.Contains(a.kinds, action.Send) {
			continue
		}
		if j, name := b.branchAfter(st, a); name != "" {
			from, to := st.clauseOf(a.pos)
			target := BranchTarget + name
			p := Prohibition{Kind: action.Send, Target: target, Text: b.span(toks, from, to)}
			if !slices.Contains(b.m.Prohibitions, p) {
				b.m.Prohibitions = append(b.m.Prohibitions, p)
			}
			b.recognise(b.span(toks, min(a.pos, a.negStart), j+1), "prohibit send on "+target,
				fmt.Sprintf("%s; target branch %q: pushing it is ruled out, other pushes are not", b.negWhy(a), name))
			withEntities[a] = true
		}
	}

	b.negatedRest(st, inherited, len(uses) > 0)
	lacking := b.itemsLacking(st)

	// Negated verbs and nouns without entities deny their kinds.
	for _, a := range st.anchors {
		if !a.negated || withEntities[a] || lacking[a] {
			continue
		}
		phrase := b.span(toks, min(a.pos, a.negStart), max(a.end, a.negEnd))
		why := b.negWhy(a)
		if a.self {
			// "I never read them": the user tells of their own habit.
			b.recognise(phrase, "nothing ruled out", fmt.Sprintf("%s, but %s", why, a.noGrantW))
			continue
		}
		if a.anyKind {
			// "don't touch anything" is read-only. "Without touching the
			// logic" names something no scope entry can hold: changing it
			// is ruled out, which leaves writing to a person wherever it
			// is also asked for. (Deleting is an act users name; a delete
			// left undecided would be refused outright as destructive.)
			if !b.hasObject(st, a) {
				if st.readOnly == "" {
					st.readOnly, st.roWhy, st.roPos = phrase, why+": touch nothing", a.pos
				}
				continue
			}
			from, to := st.clauseOf(a.pos)
			b.denyNarrow(action.Write, phrase, b.span(toks, from, to), why+": changing that one thing", narrowObject)
			// "…, but leave the ISOs alone": some items are spared in
			// words no condition holds, so no condition says enough.
			b.spared = true
			continue
		}
		from, to := st.clauseOf(a.pos)
		narrow := ""
		switch {
		case a.askFirst:
			narrow = narrowAsk // "ask me before deleting anything big"
			why = fmt.Sprintf("%q: the user wants to be asked before %q (%s)", a.neg, a.word, kindsString(a.kinds))
		case excepted[a]:
			// "don't email anyone outside orbit-saas.com": every
			// recipient but the ones named is ruled out, and the scope
			// holds those.
			narrow = narrowExcept
			why += "; the exception names what stays open, which the scope holds"
		case st.nothingPos > a.pos && st.nothingPos < to:
			narrow = narrowElsewhere // "don't post it anywhere else"
		case a.negNobody:
			// "tell nobody about the offer": no recipient at all, whatever
			// the message is about.
		case b.hasObject(st, a) || (a.narrow && (a.noun || a.light)):
			narrow = narrowObject // "don't modify the staging database", "no PR"
		case a.narrow:
			narrow = narrowOperation // "no apply", "don't push"
			if op := b.operationOf(st, a); op != "" && !a.askFirst {
				// "don't push": a prohibition on pushing, which the check
				// recognises on the call; other sends stay as the rest of
				// the words make them.
				b.prohibitOperation(a, op, phrase, b.span(toks, from, to), why)
				continue
			}
		}
		for _, k := range b.negKinds(a) {
			if limited[k] {
				continue
			}
			b.denyNarrow(k, phrase, b.span(toks, from, to), why, narrow)
		}
		b.denyObjectNouns(st, a, phrase, b.span(toks, from, to), limited)
	}

	if st.readOnly != "" && b.accessLevel(st, inherited) {
		// "share the sheet with marco@x.it, read only": the access the
		// share grants, not a limit on the task.
		b.recognise(st.readOnly, "nothing ruled out", st.roWhy+" describing the access a share grants, not the task")
		st.readOnly = ""
	}
	if st.readOnly != "" {
		b.allow(action.Read, st.readOnly, st.roWhy)
		if webCue != "" {
			b.allow(action.Fetch, st.readOnly, fmt.Sprintf("%s; web-ish: %q", st.roWhy, webCue))
		}
		from, to := st.clauseOf(st.roPos)
		// Against a kind a verb asks for outright ("run the tests, just
		// tell me what fails") the phrase may limit only what else
		// happens: settleConflict leaves such calls to a person instead
		// of refusing the act the user asked for.
		narrow := narrowReadOnly
		if b.conditional {
			narrow = narrowCondition
		}
		for _, k := range []action.Kind{action.Write, action.Delete, action.Send, action.Pay, action.Execute} {
			b.denyNarrow(k, st.readOnly, b.span(toks, from, to), st.roWhy+": read only", narrow)
		}
	}

	for _, a := range st.anchors {
		if a.negated || a.noun || a.anyKind {
			continue
		}
		phrase := a.word // "let … know" as written
		if a.noGrant {
			b.recognise(phrase, "nothing granted", fmt.Sprintf("verb %q (%s), but %s", phrase, kindsString(a.kinds), a.noGrantW))
			continue
		}
		if a.askedAbout {
			for _, k := range a.kinds {
				if k != action.Read && k != action.Fetch {
					if _, ok := b.askedAbout[k]; !ok {
						b.askedAbout[k] = phrase
					}
				}
			}
			b.recognise(phrase, "nothing granted", fmt.Sprintf("verb %q (%s) stands in an indirect question: asked about, not asked for", phrase, kindsString(a.kinds)))
			continue
		}
		why := fmt.Sprintf("verb %q", phrase)
		if a.light && a.object != "" {
			why = fmt.Sprintf("verb %q with object %q", phrase, a.object)
		}
		// "Write in #general that …", "Schreib in #marketing, dass …":
		// writing to an address or a channel is sending there; the words
		// ask for no file to be written.
		to, at := b.addressee(st, a)
		for _, k := range a.kinds {
			if to != "" && k == action.Write && b.onlyFillers(st, a.end, at) {
				b.recognise(phrase, "nothing granted: write", fmt.Sprintf("%s is addressed to %s: what is written is sent, no file is written", why, to))
				continue
			}
			b.allow(k, phrase, fmt.Sprintf("%s (%s)", why, k))
		}
		if a.money {
			b.allow(action.Pay, phrase, fmt.Sprintf("%s with an amount as its object: moving money is pay", why))
		}
		if a.money || slices.Contains(a.kinds, action.Pay) {
			// The words name paying, not the cart, form or quote it is
			// prepared in: settlePreparation asks write under the
			// condition that the call prepares the payment.
			if b.payPhrase == "" {
				b.payPhrase = phrase
			}
		}
		if !a.web && webCue != "" && slices.Contains(a.kinds, action.Read) {
			b.allow(action.Fetch, phrase, fmt.Sprintf("%s (read); web-ish: %q", why, webCue))
		}
		if to != "" {
			b.allow(action.Send, phrase, fmt.Sprintf("%s with %s as its addressee: writing to someone is sending", why, to))
		}
	}
	b.addressees(st)
	b.deliveredAs(st, inherited)
	for _, a := range st.anchors {
		if granting(a) {
			a.held = b.objectHeld(st, a)
			a.objectless = !slices.ContainsFunc(st.toks[a.end:], func(t token) bool { return t.kind == tokWord || t.kind == tokEntity })
		}
	}
	if st.nothing != "" {
		b.nothingElse = st.nothing
		b.recognise(st.nothing, "nothing beyond what was named", "restrictor: the scope holds only the resources named")
		b.nothingElseQualifies(st, inherited)
	}
}

// granting reports whether an anchor is a verb that grants its kinds.
func granting(a *anchor) bool {
	return a != nil && !a.negated && !a.noGrant && !a.noun && !a.anyKind && !a.self && len(a.kinds) > 0
}

// condElsewhere marks a "nothing else" about places and people.
const condElsewhere = "elsewhere"

// objectHeld reports whether a granting verb's object, up to the end of
// its clause, the next verb or a "nothing else", names a resource the
// scope holds ("update README.md", "email bob@example.com", "delete the
// temporary files in /tmp/cache/"): then "nothing else" is what the scope
// already says. "Delete the branch feature/old in acme/web" names none.
func (b *build) objectHeld(st *segState, a *anchor) bool {
	_, to := st.clauseOf(a.pos)
	if st.nothingPos > a.pos && st.nothingPos < to {
		to = st.nothingPos
	}
	for j := a.end; j < to; j++ {
		if b.anchorBetween(st, j, j+1) {
			break // the next verb's object is its own
		}
		if t := st.toks[j]; t.kind == tokEntity {
			if b.ents[t.ent].held() {
				return true
			}
		}
	}
	return b.frontedHeld(st, a)
}

// frontedHeld reports whether a resource the scope holds is named before
// the verb, with no verb between them: in its own clause ("In ~/tmp
// cancella i file …") or in clauses of the segment before it that have no
// verb ("In ~/tmp, delete the files …", "Dans ~/tmp, supprime …"). A
// place put first is where the verb acts, as one after it is; a clause
// with a verb of its own ("Email bob@x.com, delete …") names that verb's
// object, not this one's. A segment of its own before the verb's counts
// too (st.fronted: the comma after "In ~/tmp" ends a segment).
func (b *build) frontedHeld(st *segState, a *anchor) bool {
	from, _ := st.clauseOf(a.pos)
	for j := a.pos - 1; j >= 0; j-- {
		if b.anchorBetween(st, j, j+1) {
			return false
		}
		if j < from {
			if from, _ = st.clauseOf(j); b.anchorBetween(st, from, j+1) {
				return false
			}
		}
		if t := st.toks[j]; t.kind == tokEntity && b.ents[t.ent].held() {
			return true
		}
	}
	return st.fronted
}

// nothingElseQualifies reads a "nothing else" that restricts a verb to
// items no scope entry holds ("delete the branch feature/old in acme/web,
// nothing else": a branch is not a scope entry). Granting the verb's kind
// would allow the "else" the user ruled out, denying it would forbid what
// they asked for: its kinds are put to a person, call by call. A verb whose
// object is named resources only is held by the scope already.
func (b *build) nothingElseQualifies(st *segState, inherited *anchor) {
	from, _ := st.clauseOf(st.nothingPos)
	var verbs []*anchor
	for _, a := range st.anchors {
		if a.pos >= from && a.pos < st.nothingPos && granting(a) {
			verbs = append(verbs, a)
		}
	}
	if len(verbs) == 0 && !slices.ContainsFunc(st.anchors, func(a *anchor) bool { return !a.noun }) && granting(inherited) {
		verbs = append(verbs, inherited)
	}
	if len(verbs) == 0 && !st.nothingPlaces {
		// "Delete the branch feature/old, and don't delete anything else":
		// the "else" of a negated verb is beyond what the same verb's
		// grant named, earlier in the words.
		verbs = b.grantsBeforeNegated(st, from, inherited)
	}
	if !st.nothingPlaces {
		st.nothingVerbs = verbs
	}
	sc := b.m.Scope
	if st.nothingPlaces && len(sc.Paths)+len(sc.Recipients)+len(sc.Hosts)+len(sc.Accounts) > 0 {
		return // "…, and no one else": the recipients and paths named hold it
	}
	for _, a := range verbs {
		if a.held {
			continue
		}
		for _, k := range a.kinds {
			if k == action.Read || k == action.Fetch {
				continue // reading other things is not consequential
			}
			b.qualify1(k, st.nothing, a.word)
		}
	}
}

// grantsBeforeNegated returns the granting verbs, in the segment or the
// one inherited, that share a kind with a negated verb in the clause from
// which a "nothing else" ends.
func (b *build) grantsBeforeNegated(st *segState, from int, inherited *anchor) []*anchor {
	var out []*anchor
	for _, n := range st.anchors {
		if !n.negated || n.noun || n.pos < from || n.pos >= st.nothingPos {
			continue
		}
		for _, a := range append(slices.Clone(st.anchors), inherited) {
			if a == nil || a == n || (a != inherited && a.pos >= n.pos) || !granting(a) || slices.Contains(out, a) ||
				!slices.ContainsFunc(a.kinds, func(k action.Kind) bool { return slices.Contains(n.kinds, k) }) {
				continue
			}
			if a.held || a != inherited && b.resourceBetween(st, a.end, n.pos) || b.scopeHoldsKinds(n.kinds) {
				continue // "pay … to DE44…, don't transfer anything else": the scope holds it
			}
			out = append(out, a)
		}
	}
	return out
}

// scopeHoldsKinds reports whether the scope names, for every consequential
// kind of a negated verb, the resources of that kind (accounts for pay,
// recipients for send, paths for write and delete): then the "else" beyond
// them is what the scope already leaves out.
func (b *build) scopeHoldsKinds(kinds []action.Kind) bool {
	sc := b.m.Scope
	held := false
	for _, k := range kinds {
		switch k {
		case action.Read, action.Fetch:
		case action.Pay:
			held = len(sc.Accounts) > 0
		case action.Send:
			held = len(sc.Recipients) > 0
		case action.Write, action.Delete:
			held = len(sc.Paths) > 0
		default:
			return false
		}
		if !held {
			return false
		}
	}
	return held
}

// resourceBetween reports whether tokens [i, j) name a resource a scope
// entry holds (not an amount or a quoted title).
func (b *build) resourceBetween(st *segState, i, j int) bool {
	for k := i; k < j && k < len(st.toks); k++ {
		if t := st.toks[k]; t.kind == tokEntity {
			if b.ents[t.ent].held() {
				return true
			}
		}
	}
	return false
}

// qualify1 records that kind k, asked for by verb, is restricted by a
// phrase the draft cannot check on every call: settleQualified puts it to
// a person.
func (b *build) qualify1(k action.Kind, phrase, verb string) {
	q, ok := b.qualified[k]
	if !ok {
		q = qualification{phrase: phrase, verb: verb}
	}
	q.checkable = false // a condition Mandate cannot check: always asked
	b.qualified[k] = q
}

// addressee returns the recipient (an address or a channel) that a verb
// of writing is addressed to in its clause — "Schreib in #marketing, …",
// "write to ops@example.com" — or "". Drafting verbs are not in that
// list: a draft to someone is not sent.
func (b *build) addressee(st *segState, a *anchor) (string, int) {
	if e, n := b.at(st.toks, a.pos, roleSay); e == nil || n != a.end-a.pos {
		return "", -1
	}
	from, to := st.clauseOf(a.pos)
	for j := max(from, a.end); j < to; j++ {
		if t := st.toks[j]; t.kind == tokEntity {
			if e := b.ents[t.ent]; e.kind == entEmail || e.kind == entChannel {
				return e.raw, j
			}
		}
	}
	return "", -1
}

// onlyFillers reports whether the tokens from i to j are all function
// words: "write in #general" writes nothing but what is sent there, "add
// Sam to #release-crew" changes who is in it.
func (b *build) onlyFillers(st *segState, i, j int) bool {
	for k := i; k < j; {
		n := b.fillerAt(st, k)
		if n == 0 {
			return false
		}
		k += n
	}
	return true
}

// deliveredAs reads "as a PR", "als PR", "comme commentaire": the work
// asked for in the clause (or the sentence's last verb, for a clause
// without one) is to be handed over as that thing, which asks for the
// thing's kind too ("fix the workflow, but as a PR": send).
func (b *build) deliveredAs(st *segState, inherited *anchor) {
	if len(st.negBef)+len(st.negAft) > 0 {
		return
	}
	for i := range st.toks {
		e, n := b.at(st.toks, i, roleAs)
		if e == nil || (n == 1 && st.consumed[i]) {
			// "como máximo 10 mensajes": a limit, not "as"; a phrase of
			// several words ("sous forme de") is "as" wherever it stands.
			continue
		}
		var verb *anchor
		for _, a := range st.anchors {
			if a.pos < i && !a.noun {
				verb = a
			}
		}
		if verb == nil && len(st.anchors) == 0 {
			verb = inherited
		}
		if verb == nil || verb.negated || verb.noGrant || verb.noun {
			continue
		}
		for _, nn := range st.nouns {
			if nn.pos < i+n || nn.pos > i+n+2 {
				continue
			}
			phrase := b.span(st.toks, i, nn.end)
			for _, k := range nn.kinds {
				if k != action.Read {
					b.allow(k, phrase, fmt.Sprintf("the work asked for by %q is to be delivered as %q (%s)", verb.word, nn.word, k))
				}
			}
			break
		}
	}
}

// accessLevel reports whether the segment's read-only phrase describes
// the access a send grants ("share it with marco@x.it in read-only",
// "comparte la carpeta … en solo lectura") rather than the task: the
// phrase follows a granting send verb in its clause.
func (b *build) accessLevel(st *segState, inherited *anchor) bool {
	if st.roWhy != roPhrase {
		return false
	}
	grantsSend := func(a *anchor) bool {
		return a != nil && !a.negated && !a.noGrant && !a.noun && slices.Contains(a.kinds, action.Send)
	}
	if len(st.anchors) == 0 {
		// "Teile den Ordner mit jan@x.de, nur lesen": a clause without a
		// verb continues the sentence's last one.
		return grantsSend(inherited)
	}
	from, _ := st.clauseOf(st.roPos)
	for _, a := range st.anchors {
		if a.pos >= from && a.pos < st.roPos && grantsSend(a) {
			return true
		}
	}
	return false
}

// notAName reports whether a quote at toks[i] is a text rather than a
// name: after a title marker ("subject", "Betreff") or before one ("the
// 'dupes' folder"), or a message after a colon.
func (b *build) notAName(toks []token, i int) bool {
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		if e, _ := b.at(toks, j, roleTitle); e != nil {
			return true
		}
	}
	if e, _ := b.at(toks, i+1, roleTitle); e != nil {
		return true
	}
	return i > 0 && toks[i-1].kind == tokColon
}

// nearestAnchor is the anchor an entity at token i belongs to: the last
// one before it, else the first after it.
func nearestAnchor(anchors []*anchor, i int) *anchor {
	var a *anchor
	for _, x := range anchors {
		if x.pos < i {
			a = x
		}
	}
	if a == nil {
		for _, x := range anchors {
			if x.pos > i {
				return x
			}
		}
	}
	return a
}

func (b *build) allow(k action.Kind, phrase, why string) {
	b.grant(k, phrase, why)
}

func (b *build) grant(k action.Kind, phrase, why string) {
	if !slices.Contains(b.m.Allow, k) {
		b.m.Allow = append(b.m.Allow, k)
		b.allowBy[k] = phrase
	}
	b.recognise(phrase, "allow "+string(k), why)
}

// denyNarrow denies k and records how narrow the denial was, for finish
// to weigh against grants of the same kind.
func (b *build) denyNarrow(k action.Kind, phrase, clause, why, narrow string) {
	if narrow == "" && b.conditional {
		narrow = narrowCondition
	}
	b.denials = append(b.denials, denial{kind: k, clause: clause, phrase: phrase, narrow: narrow})
	if !slices.Contains(b.m.Deny, k) {
		b.m.Deny = append(b.m.Deny, k)
		b.denyBy[k] = phrase
	}
	p := Prohibition{Kind: k, Text: clause}
	if !slices.Contains(b.m.Prohibitions, p) {
		b.m.Prohibitions = append(b.m.Prohibitions, p)
	}
	b.recognise(phrase, "deny "+string(k), why)
}

// operationOf is the operation a verb names ("push"), or "".
func (b *build) operationOf(st *segState, a *anchor) string {
	if a.noun || a.light || a.typoOf != "" {
		return ""
	}
	if e, n := b.at(st.toks, a.pos, roleVerb); e != nil && n == a.end-a.pos {
		return e.op
	}
	return ""
}

// prohibitOperation records "don't push": a prohibition of the verb's
// kinds on that operation only.
func (b *build) prohibitOperation(a *anchor, op, phrase, clause, why string) {
	target := OperationTarget + op
	for _, k := range b.negKinds(a) {
		p := Prohibition{Kind: k, Target: target, Text: clause}
		if !slices.Contains(b.m.Prohibitions, p) {
			b.m.Prohibitions = append(b.m.Prohibitions, p)
		}
		b.recognise(phrase, fmt.Sprintf("prohibit %s on %s", k, target),
			fmt.Sprintf("%s; %q names one operation of %s: it is ruled out, other %s calls are not", why, a.word, k, k))
	}
}

// prohibitTarget records "don't email bob@x.com": a prohibition of the
// anchor's kinds on that resource only; the resource stays out of scope.
func (b *build) prohibitTarget(e *entity, a *anchor, phrase, clause, why string) {
	kinds := []action.Kind{""}
	desc := "any action"
	switch {
	case a != nil && a.anyKind && a.sparesRead:
		// "don't touch the volumes": changing them in any way is ruled
		// out, looking at them is not.
		kinds = changingKinds()
		desc = "any change"
	case a != nil && !a.anyKind:
		kinds = b.negKinds(a)
		desc = kindsString(kinds)
	}
	target := e.value
	if e.kind == entDomain && slices.Contains(kinds, action.Send) {
		target = "*@" + target // "don't email anyone at evil.example"
	}
	for _, k := range kinds {
		p := Prohibition{Kind: k, Target: target, Text: clause}
		if !slices.Contains(b.m.Prohibitions, p) {
			b.m.Prohibitions = append(b.m.Prohibitions, p)
		}
	}
	if phrase == "" {
		phrase = e.raw
	}
	b.recognise(phrase, fmt.Sprintf("prohibit %s on %s", desc, target), fmt.Sprintf("%s; target %s (%s), kept out of scope", why, e.raw, e.why))
}

// changingKinds is every kind but reading (read, fetch): what "don't touch"
// rules out on its object.
func changingKinds() []action.Kind {
	return slices.DeleteFunc(slices.Clone(action.AllKinds()), func(k action.Kind) bool { return k == action.Read || k == action.Fetch })
}

// scopeEntity puts a named resource into scope. A quoted name goes to
// accounts in a pay clause, recipients in a send clause, names otherwise.
func (b *build) scopeEntity(e *entity, a *anchor) {
	s := &b.m.Scope
	add := func(list *[]string, dim string) {
		if !slices.Contains(*list, e.value) {
			*list = append(*list, e.value)
		}
		b.recognise(e.raw, "scope "+dim+" "+e.value, e.why)
	}
	switch e.kind {
	case entEmail, entChannel:
		add(&s.Recipients, "recipient")
	case entDomain:
		if a != nil && !a.noun && slices.Contains(a.kinds, action.Send) {
			// "email everyone at orbit-saas.com"
			e.value, e.why = "*@"+e.value, e.why+" in a send clause: everyone at it"
			add(&s.Recipients, "recipient")
			return
		}
		add(&s.Hosts, "host")
	case entURL:
		add(&s.Hosts, "host")
	case entIBAN:
		add(&s.Accounts, "account")
	case entObject:
		// No scope dimension holds a bucket or a repository URL: the
		// object is what the verb acts on, and the verb's grant (or the
		// condition that qualifies it) decides.
		b.recognise(e.raw, "object "+e.value, e.why+": what the verb acts on, not a scope entry")
	case entPath:
		add(&s.Paths, "path")
	case entQuote:
		switch {
		case a != nil && slices.Contains(a.kinds, action.Pay):
			e.why = "quoted name in a pay clause: the payee"
			add(&s.Accounts, "account")
		case a != nil && slices.Contains(a.kinds, action.Send):
			e.why = "quoted name in a send clause: a recipient"
			add(&s.Recipients, "recipient")
		case nameLike(e.value):
			e.why = "quoted name, neither payee nor recipient stated"
			add(&s.Names, "name")
		}
	}
}

// held reports whether the entity becomes a scope entry that holds what
// a verb acts on: an amount, a quoted title and an object URL do not.
func (e *entity) held() bool {
	return e.kind != entAmount && e.kind != entQuote && e.kind != entObject
}

// nameLike reports whether a quoted text reads like the name of a person
// or organisation ("Stadtwerke München", "Comunidad de Propietarios"),
// not an error message or a title: a few words, each capitalised or a
// short connector.
func nameLike(s string) bool {
	words := strings.Fields(s)
	if len(words) == 0 || len(words) > 6 {
		return false
	}
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) && !unicode.IsDigit(r) && (utf8.RuneCountInString(w) > 3 || !unicode.IsLower(r)) {
			return false
		}
	}
	r, _ := utf8.DecodeRuneInString(words[0])
	return unicode.IsUpper(r)
}

// negatedRest reads a negation in a clause with no verb, noun or entity of
// its own ("ändere die Notizen aber nicht", "fix the tests but not the
// logic"): it rules out the sentence's last verb for what the clause
// names, one thing the draft cannot name. Ignoring it would grant what
// the user excluded; the verb's consequential kinds are denied narrowly,
// which settles them to a person where they are also asked for.
func (b *build) negatedRest(st *segState, inherited *anchor, entities bool) {
	if len(st.negBef)+len(st.negAft) == 0 || entities || len(st.limits) > 0 || !granting(inherited) ||
		len(st.self) > 0 || len(st.needless) > 0 {
		// "…, je n'en ai plus besoin": the user speaking of themself.
		return
	}
	for _, a := range st.anchors {
		if !a.noun || !inherited.objectless {
			// A verb of its own; or a negated noun after a verb that has
			// its object ("fix the bug, but no PR"): the noun's own
			// prohibition. After a verb that ends its clause
			// ("bearbeite aber keine Issues") the noun is its object.
			return
		}
	}
	n := st.negBef
	if len(n) == 0 {
		n = st.negAft
	}
	phrase := b.span(st.toks, 0, len(st.toks))
	why := fmt.Sprintf("negation %q in a clause without a verb, continuing verb %q: one thing it acts on is ruled out", b.span(st.toks, n[0][0], n[0][1]), inherited.word)
	for _, k := range b.negKinds(inherited) {
		if k == action.Read || k == action.Fetch {
			continue // reading some things only is not consequential
		}
		b.denyNarrow(k, phrase, phrase, why, narrowObject)
	}
}

// denyObjectNouns binds a prohibition to the kind its object is about:
// "don't edit any existing issues" rules out changing issues, which are
// sent, not written (an issue's update is a send); "don't delete the
// comments" likewise. The object nouns (object_nouns: one thing a kind
// acts on) of a negated verb, in its clause and before the next verb,
// deny their kinds too, narrowly: one thing the draft cannot name.
func (b *build) denyObjectNouns(st *segState, a *anchor, phrase, clause string, limited map[action.Kind]bool) {
	if a.noun || a.anyKind || a.self {
		return
	}
	_, to := st.clauseOf(a.pos)
	for _, nn := range st.nouns {
		if nn.pos < a.end || nn.pos >= to || !nn.narrow || b.anchorBetween(st, a.end, nn.pos) {
			continue
		}
		for _, k := range nn.kinds {
			if k == action.Read || limited[k] || slices.Contains(b.negKinds(a), k) {
				continue
			}
			b.denyNarrow(k, phrase+" … "+nn.word, clause,
				fmt.Sprintf("%s, its object %q (%s): changing that one thing is ruled out", b.negWhy(a), nn.word, k), narrowObject)
		}
	}
}

// addresseeOf is the recipient a verb of writing is addressed to, or "".
func (b *build) addresseeOf(st *segState, a *anchor) string {
	to, _ := b.addressee(st, a)
	return to
}
