// Settling the qualified kinds: once every sentence is read, the kinds an
// item condition qualifies ask, preparations and extensions follow the
// verb they serve, and an "only" clause narrows the umbrella verb before
// it.

package mandate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
)

// settleQualified moves the qualified kinds that are granted to ask, and
// says why.
func (b *build) settleQualified() {
	for _, k := range action.AllKinds() {
		q, ok := b.qualified[k]
		if !ok || !slices.Contains(b.m.Allow, k) || slices.Contains(b.m.Deny, k) {
			continue
		}
		b.m.Allow = slices.DeleteFunc(b.m.Allow, func(x action.Kind) bool { return x == k })
		if !slices.Contains(b.m.Ask, k) {
			b.m.Ask = append(b.m.Ask, k)
		}
		if q.checkable && q.cond.attributes() > 0 && !b.spared {
			c := q.cond
			c.Kind, c.Text = k, q.phrase
			if !c.listed() && !c.channelled() && !c.Messages && len(c.Names) == 0 {
				// "delete the *.iso files bigger than 1 GB": the pattern
				// named is part of what the words say of the items.
				c.Names = b.bareGlobs(c.NotNames)
			}
			b.m.Conditions = append(b.m.Conditions, c)
			shown := c.describe()
			b.recognise(q.phrase, "ask "+string(k),
				fmt.Sprintf("%q is a condition on the items %q acts on: a %s call that shows every item it acts on is %s is allowed, every other %s call is put to you", q.phrase, q.verb, k, shown, k))
			b.recognise(q.phrase, fmt.Sprintf("condition %s %s", k, shown), "a condition Mandate can check on the call")
			continue
		}
		if q.askFirst {
			continue // askPrevious said why
		}
		b.recognise(q.phrase, "ask "+string(k),
			fmt.Sprintf("%q is a condition on the items %q acts on that Mandate cannot check on every call: each %s call is put to you", q.phrase, q.verb, k))
	}
}

// settlePreparation asks write, under the condition that the call prepares
// the payment, when paying is granted and writing is neither granted,
// ruled out nor asked otherwise: "buy the book" names paying, not the cart,
// form or quote it is prepared in, so a cart's add_to_cart goes through
// while an Edit of a file or a command line is put to a person. Granting
// write as a whole would be wider than the words.
func (b *build) settlePreparation() {
	w := action.Write
	if b.payPhrase == "" || !slices.Contains(b.m.Allow, action.Pay) ||
		slices.Contains(b.m.Allow, w) || slices.Contains(b.m.Deny, w) || slices.Contains(b.m.Ask, w) {
		return
	}
	b.m.Ask = append(b.m.Ask, w)
	b.m.Conditions = append(b.m.Conditions, ItemCondition{Kind: w, PreparesPayment: true, Text: b.payPhrase})
	b.recognise(b.payPhrase, "ask write",
		fmt.Sprintf("verb %q (pay): the cart, form or quote a payment is prepared in is not named; a write that only prepares it (a tool call that changes no file and runs no command) is allowed, every other write is put to you", b.payPhrase))
	b.recognise(b.payPhrase, "condition write prepares the payment", "a condition Mandate can check on the call")
}

// settleExtensions narrows a folder by the file type named with it: "the
// .log files in ~/tmp" is ~/tmp/**/*.log, not all of ~/tmp beside every
// .log file anywhere — the folder alone would be wider than the words.
// A bare extension ("**/.log", from ".log" or ".log-Dateien") and folders
// ("D/**") named in the same words become "D/**/*.log" for each folder.
func (b *build) settleExtensions() {
	var exts, names, dirs, rest []string
	for _, p := range b.m.Scope.Paths {
		e, ok := strings.CutPrefix(p, "**/.")
		named, isName := strings.CutPrefix(p, "**/")
		switch {
		case ok && e != "" && !strings.ContainsAny(e, "/.*?["):
			e, _, _ = strings.Cut(e, "-") // ".log-Dateien": the files of type log
			exts = append(exts, e)
		case isName && strings.ContainsAny(named, "*?") && !strings.ContainsRune(named, '/'):
			names = append(names, named) // "*.log", "report-*.csv"
		case strings.HasSuffix(p, "/**") && !strings.Contains(strings.TrimSuffix(p, "/**"), "*"):
			dirs = append(dirs, p)
		default:
			rest = append(rest, p)
		}
	}
	if slices.ContainsFunc(rest, func(p string) bool { return strings.HasPrefix(p, "**/") }) {
		// "renomme les fichiers scan_*.pdf dans ~/Documents/factures en
		// facture_….pdf": a file named beside the pattern is a new name
		// that lands in the folder too, so the pattern narrows nothing.
		for _, n := range names {
			rest = append(rest, "**/"+n)
		}
		names = nil
	}
	if len(exts)+len(names) == 0 || len(dirs) == 0 {
		return
	}
	for _, d := range dirs {
		for _, n := range names {
			g := d + "/" + n
			rest = append(rest, g)
			b.recognise(g, "scope path "+g, fmt.Sprintf("the files %s in %s: the folder narrowed by the pattern named with it", n, strings.TrimSuffix(d, "/**")))
		}
		for _, e := range exts {
			g := d + "/*." + e
			rest = append(rest, g)
			b.recognise(g, "scope path "+g, fmt.Sprintf("the .%s files in %s: the folder narrowed by the file type named with it", e, strings.TrimSuffix(d, "/**")))
		}
	}
	b.m.Scope.Paths = rest
}

// settleExceptedTypes reads a file type a prohibition names ("excepto
// los .log", "except the .log files", "außer den .log-Dateien") as every
// file of that type, not one file literally named ".log": the target
// "**/.log" becomes "D/**/*.log" for each folder D in scope, or "**/*.log"
// with none. A folder-rooted pattern also holds a delete of the folder
// itself ("rm -rf ~/tmp" would take the .log files with it; touches
// checks a call on a directory above the pattern's fixed prefix). The
// literal target stays beside it, for the dotfile the words may name
// (".env"), unless a compound says files ("-Dateien").
func (b *build) settleExceptedTypes() {
	var dirs []string
	for _, p := range b.m.Scope.Paths {
		if d, ok := strings.CutSuffix(p, "/**"); ok && !strings.ContainsAny(d, "*?[") {
			dirs = append(dirs, d)
		}
	}
	var out []Prohibition
	for _, p := range b.m.Prohibitions {
		w, ok := strings.CutPrefix(p.Target, "**/.")
		e, compound, _ := strings.Cut(w, "-")
		if !ok || !slices.Contains(fileExts, strings.ToLower(e)) || strings.ContainsAny(w, "/.*?[") {
			out = append(out, p)
			continue
		}
		if compound == "" {
			out = append(out, p)
		}
		globs := []string{"**/*." + e}
		if len(dirs) > 0 {
			globs = globs[:0]
			for _, d := range dirs {
				globs = append(globs, d+"/**/*."+e)
			}
		}
		for _, g := range globs {
			q := p
			q.Target = g
			out = append(out, q)
			b.recognise(p.Text, "prohibit "+string(p.Kind)+" on "+g,
				fmt.Sprintf("the file type .%s: every such file, and a call on a folder that holds them", e))
		}
	}
	b.m.Prohibitions = out
}

// narrowByOnly reads "clean up my Downloads folder, only delete files
// older than a year": an "only" on one verb says that is all the sentence
// asks of a broader verb sharing its kind ("clean up" writes and deletes;
// only deleting is asked). The broader verb's other kinds are not granted
// unless something else in the words asks for them (before: the kinds
// granted before the sentence). A verb sharing no kind with the "only"
// verb ("… and email Bob") keeps its grant, unless it is an umbrella verb
// (umbrella_verbs: "tidy up", "aufräumen", "ranger", "ordenar",
// "sistemare") standing before it: "räum das Repo auf: entferne nur die
// Build-Artefakte" spells the tidying out as removing, so tidying's write
// is not granted either.
func (b *build) narrowByOnly(anchors, only []*anchor, before []action.Kind) {
	consequential := func(k action.Kind) bool { return k != action.Read && k != action.Fetch }
	shares := func(a, o *anchor) bool {
		return slices.ContainsFunc(a.kinds, func(k action.Kind) bool { return consequential(k) && slices.Contains(o.kinds, k) })
	}
	for _, o := range only {
		if !granting(o) {
			continue
		}
		narrowed := map[*anchor]bool{}
		seenOnly := false // the loop is past o
		for _, a := range anchors {
			if a == o {
				seenOnly = true
				continue
			}
			// An umbrella verb before the "only" verb ("räum das Repo auf:
			// entferne nur …") is what that clause spells out, whatever
			// kinds the two have.
			if granting(a) && (shares(a, o) || a.umbrella && !seenOnly) {
				narrowed[a] = true
			}
		}
		for a := range narrowed {
			for _, k := range a.kinds {
				if !consequential(k) || slices.Contains(o.kinds, k) || slices.Contains(before, k) || !slices.Contains(b.m.Allow, k) {
					continue
				}
				if slices.ContainsFunc(anchors, func(x *anchor) bool { return !narrowed[x] && granting(x) && slices.Contains(x.kinds, k) }) {
					continue // asked for by another verb of the sentence
				}
				b.m.Allow = slices.DeleteFunc(b.m.Allow, func(x action.Kind) bool { return x == k })
				delete(b.allowBy, k)
				b.recognise(o.word, "drop allow "+string(k),
					fmt.Sprintf("only %q (%s) is asked of %q: its %s is not granted", o.word, kindsString(o.kinds), a.word, k))
			}
		}
	}
}
