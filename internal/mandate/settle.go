// Settling: once every sentence is read, spend caps are chosen, kinds both
// granted and denied are weighed, and read is granted implicitly.

package mandate

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/fold"
)

// Ways a denial is narrower than its kind.
const (
	narrowElsewhere = "elsewhere" // "don't post it anywhere else": all but what was named
	narrowExcept    = "except"    // "don't email anyone outside x.com": all but what the exception names
	narrowObject    = "object"    // "don't modify the staging database", "no PR": one thing the draft cannot name
	narrowOperation = "operation" // "no apply", "don't merge": one operation of the kind
	narrowCondition = "condition" // "if there's an error, don't change anything": only then
	narrowAsk       = "ask"       // "ask me before deleting anything": a person decides
	narrowReadOnly  = "read only" // "run the tests, just tell me what fails": reading only, against the run asked for
)

// roPhrase is the reason recorded for a read-only phrase ("read only").
const roPhrase = "read-only phrase"

// denial is one "don't" that denied a kind.
type denial struct {
	kind   action.Kind
	clause string // the prohibition's text
	phrase string
	narrow string
}

// finish settles spend caps, conflicts between granted and denied kinds,
// and the implicit read.
func (b *build) finish() {
	switch {
	case len(b.spend) > 0:
		cur := b.spend[0].money.Currency
		best := b.spend[0]
		for _, c := range b.spend {
			if c.money.Currency == cur && c.money.Amount < best.money.Amount {
				best = c
			}
		}
		b.m.Limits.Spend = &Money{Amount: best.money.Amount, Currency: cur}
		for _, c := range b.spend {
			if c.money.Currency != cur {
				b.recognise(c.phrase, "not applied: "+c.money.String(), "a cap in "+cur+" was stated first; one cap, one currency")
				continue
			}
			meaning := "limit spend " + best.money.String()
			if c != best {
				meaning = "not applied: " + c.money.String() + " (a smaller cap was stated)"
			}
			b.recognise(c.phrase, meaning, c.why)
		}
	case len(b.payAmts) > 0:
		cur := b.payAmts[0].money.Currency
		total := 0.0
		for _, c := range b.payAmts {
			if c.money.Currency == cur {
				total += c.money.Amount
			}
		}
		total = roundCents(total)
		b.m.Limits.Spend = &Money{Amount: total, Currency: cur}
		for _, c := range b.payAmts {
			if c.money.Currency != cur {
				b.recognise(c.phrase, "not applied: "+c.money.String(), "the cap is in "+cur+", named first; one cap, one currency")
				continue
			}
			why := c.why
			if len(b.payAmts) > 1 {
				why += "; amounts in " + cur + " add up"
			}
			b.recognise(c.phrase, "limit spend "+b.m.Limits.Spend.String(), why)
		}
	}

	for _, k := range slices.Clone(b.m.Allow) {
		if slices.Contains(b.m.Deny, k) {
			b.settleConflict(k)
		}
	}
	for _, k := range slices.Clone(b.m.Deny) {
		if !slices.Contains(b.m.Allow, k) {
			b.settleObjectDenial(k)
		}
	}
	for _, k := range slices.Clone(b.m.Allow) {
		if slices.Contains(b.m.Deny, k) {
			b.m.Allow = slices.DeleteFunc(b.m.Allow, func(x action.Kind) bool { return x == k })
			b.recognise(b.denyBy[k], "drop allow "+string(k),
				fmt.Sprintf("%s is both granted (by %q) and denied (by %q): denied wins", k, b.allowBy[k], b.denyBy[k]))
		}
	}
	b.settleQualified()
	b.settleAskedAbout()
	b.settleRoles()
	for _, k := range b.undecided {
		if !slices.Contains(b.m.Allow, k) && !slices.Contains(b.m.Deny, k) && !slices.Contains(b.m.Ask, k) {
			b.m.Ask = append(b.m.Ask, k)
		}
	}
	b.settlePreparation()
	b.settleExtensions()
	b.settleExceptedTypes()
	b.settleFileObjects()
	if b.nothingElse != "" && len(b.m.Scope.Paths) > 0 {
		b.m.Scope.PathsOnly = true
		b.recognise(b.nothingElse, "scope paths only", "restrictor with paths named: the working directory is not in scope beside them")
	}
	b.settleFolderHeld()
	if !slices.Contains(b.m.Deny, action.Read) && !slices.Contains(b.m.Allow, action.Read) {
		b.m.Allow = append(b.m.Allow, action.Read)
		b.recognise("(implicit)", "allow read", "implicit: an agent must look before it acts")
	}
	byRank := func(x, y action.Kind) int { return x.Rank() - y.Rank() }
	slices.SortFunc(b.m.Allow, byRank)
	slices.SortFunc(b.m.Deny, byRank)
	slices.SortFunc(b.m.Ask, byRank)
}

// settleConflict weighs the denials of a kind that was also granted.
// When every denial only says "nowhere else" ("DM it to me, don't post it
// anywhere else") or "no one outside X", the grant stands: the scope keeps
// what was named. When
// every denial is narrower than the kind — one thing the draft cannot name
// ("don't modify the staging database", "no PR"), one operation of it ("no
// apply"), or only under a condition ("if there's an error, don't change
// anything") — the draft cannot tell which applies to a call: the kind is
// neither granted nor denied, so each such call is put to a person.
// Otherwise the denial wins (in finish).
func (b *build) settleConflict(k action.Kind) {
	if k == action.Read {
		return // reading is never undecided: a prohibition on it holds
	}
	var ds []denial
	for _, d := range b.denials {
		if d.kind == k {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return // denied by a limit or the like: the general rule applies
	}
	elsewhere, narrow := true, true
	for _, d := range ds {
		elsewhere = elsewhere && (d.narrow == narrowElsewhere || d.narrow == narrowExcept)
		narrow = narrow && d.narrow != ""
	}
	if !narrow {
		return // "Buy it. Actually, don't buy anything": the denial wins
	}
	b.m.Deny = slices.DeleteFunc(b.m.Deny, func(x action.Kind) bool { return x == k })
	for _, d := range ds {
		b.m.Prohibitions = slices.DeleteFunc(b.m.Prohibitions, func(p Prohibition) bool {
			return p.Kind == k && p.Target == "" && p.Text == d.clause
		})
	}
	if elsewhere {
		b.recognise(b.denyBy[k], "keep allow "+string(k),
			fmt.Sprintf("%q rules out %s beyond what was named, and %q asks for it: the scope holds what was named", b.denyBy[k], k, b.allowBy[k]))
		return
	}
	b.m.Allow = slices.DeleteFunc(b.m.Allow, func(x action.Kind) bool { return x == k })
	b.undecided = append(b.undecided, k)
	b.recognise(b.denyBy[k], "ask "+string(k),
		fmt.Sprintf("%s is asked for (by %q) and ruled out (by %q) for something the draft cannot tell apart: each such call is for a person to decide", k, b.allowBy[k], b.denyBy[k]))
	if !slices.ContainsFunc(ds, func(d denial) bool { return d.narrow != narrowObject || b.namedFileFolder(d.clause) == "" }) {
		b.folderHeld = append(b.folderHeld, k)
	}
}

// namedFileFolder returns the folder of a file the scope names (notes of
// notes/summary.md) when a word of the clause names it ("do not change
// the notes"), or "".
func (b *build) namedFileFolder(clause string) string {
	words := strings.FieldsFunc(fold.String(clause), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, e := range b.ents {
		if e.kind != entPath || !e.file {
			continue
		}
		dir := path.Dir(strings.TrimPrefix(e.value, "~/"))
		for _, seg := range strings.Split(dir, "/") {
			if seg != "." && seg != "" && slices.Contains(words, fold.String(seg)) {
				return seg
			}
		}
	}
	return ""
}

// settleFolderHeld grants again a kind put to a person only because "do
// not change the notes" ruled it out for the folder of the one file the
// words ask to change ("write the summary to notes/summary.md"): when
// only the named paths are in scope, every other file of the folder is
// outside it and asked (builtin.path-outside-scope), so the one write
// asked for needs no person, and the rest of the notes stay protected.
func (b *build) settleFolderHeld() {
	for _, k := range b.folderHeld {
		if !b.m.Scope.PathsOnly || !slices.Contains(b.m.Ask, k) || slices.Contains(b.m.Deny, k) {
			continue
		}
		if _, q := b.qualified[k]; q {
			continue
		}
		b.m.Ask = slices.DeleteFunc(b.m.Ask, func(x action.Kind) bool { return x == k })
		b.m.Allow = append(b.m.Allow, k)
		b.recognise(b.denyBy[k], "allow "+string(k),
			fmt.Sprintf("%q rules out changing the folder of the file %q asks to change; only the named paths are in scope, so every other file there is put to you", b.denyBy[k], b.allowBy[k]))
	}
}

// settleObjectDenial takes back the denial of a kind nothing asked for
// when every denial of it concerns one thing the draft cannot name
// ("check why, but don't modify the staging database"): denying the kind
// would forbid what the words did not (editing a local file), so the kind
// stays merely ungranted and each such call is put to a person. So for a
// denial an exception narrows ("don't write to anyone outside x.com"):
// the words leave writing to x.com open without asking for it.
func (b *build) settleObjectDenial(k action.Kind) {
	if k == action.Read {
		return
	}
	var ds []denial
	for _, d := range b.denials {
		if d.kind == k {
			if d.narrow != narrowObject && d.narrow != narrowAsk && d.narrow != narrowExcept {
				return
			}
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return
	}
	b.m.Deny = slices.DeleteFunc(b.m.Deny, func(x action.Kind) bool { return x == k })
	for _, d := range ds {
		b.m.Prohibitions = slices.DeleteFunc(b.m.Prohibitions, func(p Prohibition) bool {
			return p.Kind == k && p.Target == "" && p.Text == d.clause
		})
	}
	b.undecided = append(b.undecided, k)
	b.recognise(b.denyBy[k], "ask "+string(k),
		fmt.Sprintf("%q rules out %s for one thing the draft cannot name: %s is not granted, and each such call is for a person to decide", b.denyBy[k], k, k))
}

func roundCents(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// settleAskedAbout puts to a person the kinds only an indirect question
// names ("dimmi cosa cambia": write): no verb asked for them, but the
// words may mean the act, so a call of that kind is neither allowed nor,
// unless the words rule the whole kind out, denied. A denial narrower
// than the kind ("no apply") leaves it asked, as when it is asked for.
func (b *build) settleAskedAbout() {
	for _, k := range action.AllKinds() {
		verb, ok := b.askedAbout[k]
		if !ok || slices.Contains(b.m.Allow, k) || slices.Contains(b.m.Ask, k) {
			continue
		}
		if slices.Contains(b.m.Deny, k) {
			if slices.ContainsFunc(b.denials, func(d denial) bool { return d.kind == k && d.narrow == "" }) {
				continue // "don't change anything": the denial holds
			}
			b.m.Deny = slices.DeleteFunc(b.m.Deny, func(x action.Kind) bool { return x == k })
			b.m.Prohibitions = slices.DeleteFunc(b.m.Prohibitions, func(p Prohibition) bool {
				return p.Kind == k && p.Target == "" && slices.ContainsFunc(b.denials, func(d denial) bool { return d.kind == k && d.clause == p.Text })
			})
		}
		b.m.Ask = append(b.m.Ask, k)
		b.recognise(verb, "ask "+string(k),
			fmt.Sprintf("%q is what an indirect question asks about: each %s call is put to you", verb, k))
	}
}
