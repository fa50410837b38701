// Accounting for every word: once a segment is applied, each content word
// was either used by a stage (a verb, a noun, an entity, a negation, a
// condition, a limit, an expiry, a phrase to ignore) or is a function word
// of an active language; every other word is reported, with its clause and
// what the draft did without it, so the user sees what was not read.

package mandate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
)

// maxUnrecognised bounds the phrases a draft lists: an instruction of
// thousands of clauses lists the first ones and says how many were left.
const maxUnrecognised = 200

// Unrecognised is a phrase of the user's words that no stage of the
// compiler used, with the clause it stands in and what the draft did
// without it.
type Unrecognised struct {
	Phrase string `json:"phrase" yaml:"phrase"`
	Clause string `json:"clause" yaml:"clause"`
	// Effect says what the draft did without the phrase: ignored it, or
	// put the clause's kinds to a person.
	Effect string `json:"effect" yaml:"effect"`
}

// fillerRoles are the roles of function words: they carry no grant of
// their own and are accounted for by being known.
var fillerRoles = []role{roleMarker, roleDeterminer, roleCue, roleConj, roleSubordinator, roleTitle,
	roleAs, roleBranchPrep, roleBranch, roleSubjectMark, roleUnneeded, roleQuestion, roleNumber,
	roleCurrency, roleWeb, roleConditional, roleMoneyVerb, roleSay, roleCopula, roleRecipientPrep, rolePerson, rolePurpose}

// account lists the segment's unused content words under not_understood.
// Runs of unused words joined by function words are one phrase.
func (b *build) account(st *segState) {
	toks := st.toks
	unused := make([]bool, len(toks))
	for i := 0; i < len(toks); i++ {
		if st.consumed[i] || toks[i].kind != tokWord {
			continue
		}
		if n := b.fillerAt(st, i); n > 0 {
			i += n - 1
			continue
		}
		unused[i] = true
	}
	for i := 0; i < len(toks); i++ {
		if !unused[i] {
			continue
		}
		from, to := st.clauseOf(i)
		end := i + 1
		for j := end; j < to; j++ {
			if unused[j] {
				end = j + 1
				continue
			}
			if st.consumed[j] || toks[j].kind != tokWord || j-end >= 2 {
				break
			}
		}
		b.unrecognised(st, i, end, from, to)
		i = end - 1
	}
}

// fillerAt returns the length of a function-word phrase of unconsumed
// tokens starting at i, or 0.
func (b *build) fillerAt(st *segState, i int) int {
	best := 0
	for _, r := range fillerRoles {
		if e, n := b.at(st.toks, i, r); e != nil && n > best {
			ok := true
			for k := i; k < i+n; k++ {
				ok = ok && !st.consumed[k]
			}
			if ok {
				best = n
			}
		}
	}
	return best
}

func (b *build) unrecognised(st *segState, i, end, from, to int) {
	if len(b.unknown) >= maxUnrecognised {
		b.unknownMore++
		return
	}
	b.unknown = append(b.unknown, Unrecognised{
		Phrase: b.span(st.toks, i, end),
		Clause: b.span(st.toks, from, to),
		Effect: b.unknownEffect(st, from, to),
	})
}

// unknownEffect says what the draft did with the clause of an unused
// phrase: the grants and denials it made without the phrase.
func (b *build) unknownEffect(st *segState, from, to int) string {
	var grants, denies []string
	for _, a := range st.anchors {
		if a.pos < from || a.pos >= to || a.noGrant || a.self || a.askedAbout {
			continue // "dime cuánto costaría pagar": asked about, no grant
		}
		switch {
		case a.negated:
			denies = append(denies, fmt.Sprintf("%q", a.word))
		case !a.noun && !a.anyKind && len(a.kinds) > 0:
			if asked := b.qualifiedKinds(a); len(asked) > 0 {
				return fmt.Sprintf("ignored; %q qualifies %q, so %s is put to a person call by call", b.qualified[asked[0]].phrase, a.word, kindsString(asked))
			}
			grants = append(grants, fmt.Sprintf("%q (%s)", a.word, kindsString(a.kinds)))
		}
	}
	switch {
	case len(grants) > 0:
		return "ignored; the clause's grant stands without it: " + strings.Join(grants, ", ")
	case len(denies) > 0:
		return "ignored; the clause's prohibition stands without it: " + strings.Join(denies, ", ")
	}
	return "ignored: it grants nothing and rules nothing out"
}

// qualifiedKinds are the kinds of a granting anchor that a condition put
// to a person.
func (b *build) qualifiedKinds(a *anchor) []action.Kind {
	var out []action.Kind
	for _, k := range a.kinds {
		if _, ok := b.qualified[k]; ok && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
