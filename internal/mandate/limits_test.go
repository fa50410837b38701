package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// Rule 10: an amount after a limit phrase is the spend cap, else amounts in
// a pay clause; a limit phrase with a number and a noun caps that count.
func TestRule10Limits(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "don't spend more than 50 dollars on the gift", lang: "en", allow: ks(r), spend: "50 USD"},
		{text: "order the groceries, delivery fee 4 €", lang: "en", allow: ks(r, p), ask: ks(w)},
		{text: "send at most 3 emails", lang: "en", allow: ks(r, s), counts: map[action.Kind]int{s: 3}},
		{text: "buy at most 2", lang: "en", allow: ks(r, p), ask: []action.Kind{w}, counts: map[action.Kind]int{p: 2}},
		{text: "Kaufe die Tickets, höchstens 120 EUR", lang: "de", allow: ks(r, p), ask: []action.Kind{w}, spend: "120 EUR"},
	})
}

// Rule 10, the kind a count binds to: a counted noun that names the items
// the verb acts on caps the verb's kind, not the noun's own ("archive …, at
// most 10 messages" caps archiving, not sending).
func TestRule10LimitBindsToTheVerbsItems(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Archive the old newsletters, at most 10 messages.", lang: "en", allow: ks(r, w), counts: map[action.Kind]int{w: 10}},
		{text: "Clean up my inbox, delete at most 10 messages", lang: "en", allow: ks(r, w, d), counts: map[action.Kind]int{d: 10}},
		{text: "Archiviere die alten Newsletter, höchstens 10 Nachrichten.", lang: "de", allow: ks(r, w), counts: map[action.Kind]int{w: 10}},
		{text: "Archiva los boletines antiguos, como máximo 10 mensajes.", lang: "es", allow: ks(r, w), counts: map[action.Kind]int{w: 10}},
		{text: "Archivia le vecchie newsletter, al massimo 10 messaggi.", lang: "it", allow: ks(r, w), counts: map[action.Kind]int{w: 10}},
		// The noun's own kind, when the verb asks for it.
		{text: "Send at most 3 emails to the team", lang: "en", allow: ks(r), ask: ks(s), counts: map[action.Kind]int{s: 3}},
	})
}
