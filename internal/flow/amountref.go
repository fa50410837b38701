package flow

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
)

// Amounts the user names by what they are. "Pay the minimum on the visa"
// names no number, so no spend cap is compiled from it, yet it says which
// amount: the one the card's statement gives as its minimum payment. When
// the user's words name such an amount (values.yaml amount_refs: cues) and
// an output of the session gave it in a field that says what it is
// (minimum_due), a payment of another amount is not what the user asked
// for. It is put to a person (flow.amount_differs), never allowed: the
// words did not grant it, and the engine cannot tell a typo from a
// payment the user would refuse.

// maxRefAmounts bounds the amounts kept per named kind of amount (a
// listing of many cards gives one minimum each).
const maxRefAmounts = 32

// refAmount is an amount an output gave in a field naming what it is.
type refAmount struct {
	ref   int // index into vocabulary.refs
	value float64
	field string
	// Filled when the output is recorded.
	tool, decisionID string
}

// refAmount keeps n when field's own name (its last JSON path segment)
// is one of amount_refs' fields.
func (st *scanState) refAmount(n float64, field string) {
	if st.mode != modeOutput || len(st.out.refAmounts) >= maxRefAmounts*4 {
		return
	}
	last := field
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		last = field[i+1:]
	}
	if i, ok := st.s.voc.refField[normKey(last)]; ok {
		st.out.refAmounts = append(st.out.refAmounts, refAmount{ref: i, value: n, field: last})
	}
}

// namedRefs notes which named amounts the user's words name: every word
// of one of a ref's cues is among them.
func (st *scanState) namedRefs() {
	if st.mode != modeUser || len(st.words) == 0 {
		return
	}
	for i, r := range st.s.voc.refs {
		for _, cue := range r.cues {
			if !slices.ContainsFunc(cue, func(w string) bool { return !st.words[w] }) {
				st.out.namedRefs = append(st.out.namedRefs, i)
				st.out.refNames = append(st.out.refNames, r.name)
				break
			}
		}
	}
}

// userRefs records the named amounts of the user's words (Scan.namedRefs)
// by name.
func (t *Table) userRefs(sc *Scan) {
	for n, i := range sc.namedRefs {
		if t.namedRefs == nil {
			t.namedRefs = map[int]string{}
		}
		t.namedRefs[i] = sc.refNames[n]
	}
}

// observedRefs keeps an output's named amounts. An open output with an
// injected span contributes none: a planted "minimum_due" must not make
// the amount it names the one the user asked for.
func (t *Table) observedRefs(sc *Scan, info DecisionInfo) {
	if len(sc.refAmounts) == 0 || (info.Trust == TrustOpen && len(sc.Injections) > 0) {
		return
	}
	if t.refAmounts == nil {
		t.refAmounts = map[int][]refAmount{}
	}
	for _, ra := range sc.refAmounts {
		if len(t.refAmounts[ra.ref]) >= maxRefAmounts {
			continue
		}
		ra.tool, ra.decisionID = info.Tool, info.ID
		t.refAmounts[ra.ref] = append(t.refAmounts[ra.ref], ra)
	}
}

// amountDiffers is why a payment's amount is not the one the user named,
// or "" when it is, when the call is no payment or carries no amount, or
// when the user named none or no output gave it. The call may pay any of
// the amounts of any kind the user named ("the minimum, not the full
// balance" names two: the minimum passes, and so would the balance — the
// words are read as a set, so a negated one is not told apart).
func (t *Table) amountDiffers(a *action.Action) string {
	if !hasKind(a, action.Pay) || len(a.Amounts) == 0 || len(t.namedRefs) == 0 {
		return ""
	}
	var named []refAmount
	var names []string
	for i, name := range t.namedRefs {
		if ras := t.refAmounts[i]; len(ras) > 0 {
			named = append(named, ras...)
			names = append(names, name)
		}
	}
	if len(named) == 0 {
		return ""
	}
	slices.Sort(names)
	for _, am := range a.Amounts {
		if slices.ContainsFunc(named, func(ra refAmount) bool { return sameAmount(ra.value, am.Value) }) {
			continue
		}
		return fmt.Sprintf("the user asked for %s (%s), and %s pays %s",
			strings.Join(names, " or "), describeRefs(named), toolName(a), formatAmount(am))
	}
	return ""
}

// sameAmount: equal to the cent.
func sameAmount(a, b float64) bool { return math.Abs(a-b) < 0.005 }

// describeRefs names a few of the amounts the outputs gave and where.
func describeRefs(ras []refAmount) string {
	var parts []string
	for _, ra := range ras {
		s := strconv.FormatFloat(ra.value, 'f', -1, 64) + " in " + ra.field
		if ra.tool != "" {
			s += " of the output of " + ra.tool
		}
		if ra.decisionID != "" {
			s += " (decision " + ra.decisionID + ")"
		}
		if !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
		if len(parts) == 3 {
			break
		}
	}
	if len(ras) > len(parts) {
		parts = append(parts, "…")
	}
	return strings.Join(parts, "; ")
}

func toolName(a *action.Action) string {
	if a.Tool != "" {
		return a.Tool
	}
	return "the call"
}
