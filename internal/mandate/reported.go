// Reported speech: "tell him that I'll delete the branch", "sag Jonas,
// dass ich das Release verschieben muss", "dile que voy a pagar". After a
// verb of sending and its addressee, a complementiser (complementizers in
// addressees.yaml) opens the message's text: the verbs in it are what the
// message says, not what the user asks of the agent, so they neither
// grant nor, negated, forbid. A purpose clause ("pour que", "para que",
// "so that") is not reported speech: its word before the complementiser
// is no addressee, so the verb's object stops the reading.

package mandate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
)

// maxAddressee bounds the words between a send verb and the
// complementiser that opens its message ("tell the whole team that").
const maxAddressee = 5

// reportedIn marks the reported speech a send verb of the segment opens
// in the same segment ("tell him that …", "dile que …").
func (b *build) reportedIn(st *segState) {
	for _, a := range st.anchors {
		if !b.reportingVerb(a) {
			continue
		}
		if j, ok := b.addresseeUntil(st.toks, a.end, len(st.toks)); ok {
			// "ne réponds qu'à Marie": the tail of an "only" pair, not
			// what is said.
			onlyTail := slices.ContainsFunc(st.qualifiers, func(q qualifier) bool { return q.only && q.from == j })
			if (b.complementizer(st.toks, j) || b.telling(st, a) && b.commandWord(st.toks, j)) && j+1 < len(st.toks) && !onlyTail {
				b.markReported(st, j, a)
			}
		}
	}
}

// reportsInto reports whether a segment ends with a send verb and its
// addressee only ("Sag bitte Jonas"), so that a next segment opening
// with a complementiser (", dass …") is the message.
func (b *build) reportsInto(st *segState) *anchor {
	for i := len(st.anchors) - 1; i >= 0; i-- {
		a := st.anchors[i]
		if a.noun {
			continue
		}
		if !b.reportingVerb(a) {
			return nil
		}
		if j, _ := b.addresseeUntil(st.toks, a.end, len(st.toks)); j == len(st.toks) {
			return a
		}
		return nil
	}
	return nil
}

// reportedAfter marks the segment as reported speech when it opens with a
// complementiser and the segment before it ended with a send verb and its
// addressee (by).
func (b *build) reportedAfter(st *segState, by *anchor) {
	if by == nil {
		return
	}
	if b.complementizer(st.toks, 0) && len(st.toks) > 1 {
		b.markReported(st, 0, by)
	}
}

func (b *build) reportingVerb(a *anchor) bool {
	return granting(a) && slices.Contains(a.kinds, action.Send)
}

// addresseeUntil skips the words after a send verb that name whom it is
// sent to: names, pronouns and person words, addresses, function words.
// It returns where they end, and whether that is within maxAddressee.
func (b *build) addresseeUntil(toks []token, from, to int) (int, bool) {
	j := from
	for ; j < to && j-from <= maxAddressee; j++ {
		t := toks[j]
		if t.kind == tokEntity {
			if k := b.ents[t.ent].kind; k == entEmail || k == entChannel || k == entQuote {
				continue
			}
			return j, true
		}
		if t.kind != tokWord {
			return j, true
		}
		if b.complementizer(toks, j) || b.commandWord(toks, j) {
			return j, true
		}
		known := false
		for _, r := range []role{roleMarker, roleDeterminer, rolePerson, roleRecipientPrep, roleCue} {
			if e, _ := b.at(toks, j, r); e != nil {
				known = true
				break
			}
		}
		if !known && !b.nameWord(t) {
			return j, true
		}
	}
	return j, j-from <= maxAddressee
}

// complementizer reports whether token j is a word that opens what is
// said ("that", "dass", "que", "qu'", "che").
func (b *build) complementizer(toks []token, j int) bool {
	words, err := loadAddressees()
	if err != nil || j >= len(toks) || toks[j].kind != tokWord {
		return false
	}
	w := strings.TrimRightFunc(toks[j].text, isApostrophe)
	return words.complementizers[w]
}

// commandWord reports whether token j opens a reported request ("to",
// "de", "di"): commands in addressees.yaml.
func (b *build) commandWord(toks []token, j int) bool {
	words, err := loadAddressees()
	if err != nil || j >= len(toks) || toks[j].kind != tokWord {
		return false
	}
	return words.commands[toks[j].text]
}

// telling reports whether a verb is one a command word may follow
// (telling_verbs in addressees.yaml).
func (b *build) telling(st *segState, a *anchor) bool {
	words, err := loadAddressees()
	if err != nil {
		return false
	}
	var ws []string
	for k := a.pos; k < a.end; k++ {
		ws = append(ws, st.toks[k].text)
	}
	return words.telling[strings.Join(ws, " ")]
}

// nameWord reports whether a word is written as a name: capitalised, with
// lower-case letters after, and no word of the active lexicons.
func (b *build) nameWord(t token) bool {
	return b.capitalised(t, &addresseeSets{})
}

// markReported makes the verbs and nouns of the clause from token j on
// the message's text.
func (b *build) markReported(st *segState, j int, by *anchor) {
	_, to := st.clauseOf(j)
	if b.commandWord(st.toks, j) {
		// "ask Bob to review and merge the PR": the request reported runs
		// to the segment's end (a verb after "and" is still Bob's);
		// read the other way it would grant the merge.
		to = len(st.toks)
	}
	st.reported = append(st.reported, [2]int{j, to})
	why := fmt.Sprintf("reported speech after %q (%q): the words are the message's text, not a request", by.word, b.span(st.toks, j, j+1))
	for _, a := range st.anchors {
		if a.pos > j && a.pos < to {
			a.noGrant, a.self, a.noGrantW = true, true, why
		}
	}
}

// inReported reports whether token i lies in the segment's reported
// speech.
func (st *segState) inReported(i int) bool {
	return slices.ContainsFunc(st.reported, func(r [2]int) bool { return i >= r[0] && i < r[1] })
}
