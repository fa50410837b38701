package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// The rules of docs/mandate.md, "How the text is read", one test each,
// with the document's own examples. Rules 1 to 4 are segmenting: entities,
// tokens, languages and clauses.

// Rule 1: entities are found first, on the raw text, so that their dots
// and commas do not end sentences.
func TestRule01Entities(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Clean up my Downloads folder", lang: "en",
			allow: ks(r, w, d), paths: []string{"~/Downloads/**"}},
		{text: "Sort my Pictures by date", lang: "en",
			allow: ks(r, w), paths: []string{"~/Pictures/**"}},
		{text: "Send the invoice to billing@acme.example, 1.234,50 EUR, see https://acme.example/inv", lang: "en",
			allow: ks(r, f, s), hosts: []string{"acme.example"}, recipients: []string{"billing@acme.example"}},
		{text: "guárdala en la carpeta docs/", lang: "es",
			allow: ks(r, w), paths: []string{"docs/**"}},
		{text: "put it in .env", lang: "en",
			allow: ks(r, w), paths: []string{"**/.env"}},
	})
}

// Rule 2: words are folded (case, accents, ß), an elision prefix splits
// off, contractions stay whole, hyphens split.
func TestRule02Tokens(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Lösche die alten Dateien", lang: "de", allow: ks(r, d)},
		{text: "LOSCHE die alten Dateien", lang: "de", allow: ks(r, d)},
		{text: "N'achète rien sur amazon.fr", lang: "fr",
			allow: ks(r), prohibit: []string{"pay:amazon.fr"}},
		{text: "Summarise the thread, read-only", lang: "en",
			allow: ks(r), deny: readOnlyDeny},
	})
}

// Rule 3: every detected language's table is applied; the text may mix
// them.
func TestRule03Languages(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Lies meine Mails, don't send anything", lang: "de",
			allow: ks(r), deny: ks(s), prohibit: []string{"send:"}},
		{text: "Busca hoteles en Lisboa, but do not book", lang: "en",
			allow: ks(r, f), deny: ks(p)},
		{text: "Lade Paula zum Fest ein", recipients: []string{"Paula"}, lang: "de", allow: ks(r, w, s)},
		{text: "fais un rollback de la dernière version", lang: "fr", allow: ks(r, w)},
	})
}

// Rule 4: a negation never reaches past the end of its clause; a
// conjunction joining a verb that has an object to another verb ends one.
func TestRule04Clauses(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Don't touch prod/ and fix src/foo.go", lang: "en",
			allow: ks(r, w), paths: []string{"src/foo.go"}, prohibit: []string{"write:prod/**", "delete:prod/**", "execute:prod/**"}},
		{text: "Read the logs, but don't restart anything", lang: "en",
			allow: ks(r), deny: ks(x)},
		// The denial reaches its own clause only, but it is about one
		// thing the draft cannot name: writing goes to a person.
		{text: "Fix the parser and don't touch the tests", lang: "en",
			allow: ks(r), ask: ks(w)},
		{text: "Lies die Logs, aber lösche nichts", lang: "de",
			allow: ks(r), deny: ks(d)},
	})
}

// ks lists kinds, for case tables.
func ks(k ...action.Kind) []action.Kind { return k }
