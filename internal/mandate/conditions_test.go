package mandate

import (
	"testing"
	"time"
)

// Rule 7: restrictors and read-only phrases make a task read-only — unless
// they describe the access a share grants.
func TestRule07Restrictors(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "just read the logs", lang: "en", allow: ks(r), deny: readOnlyDeny},
		{text: "summarise the thread, read only", lang: "en", allow: ks(r), deny: readOnlyDeny},
		{text: "nur lesen, bitte", lang: "de", allow: ks(r), deny: readOnlyDeny},
		{text: "comparte la hoja con luis@example.es en solo lectura", lang: "es",
			allow: ks(r, s), recipients: []string{"luis@example.es"}},
	})
}

// Rule 11: a duration next to a marker expires the grant; "today" ends it
// at midnight.
func TestRule11Expiry(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "monitor the queue for the next 2 hours", lang: "en", allow: ks(r), expires: 2 * time.Hour},
		{text: "Überwache die Queue für die nächste Stunde", lang: "de", allow: ks(r), expires: time.Hour},
		{text: "pay the bill today", lang: "en", allow: ks(r, p), ask: ks(w), expires: -1},
		{text: "durante las próximas 3 horas, revisa los pedidos", lang: "es", allow: ks(r), expires: 3 * time.Hour},
	})
}

// Rule 12: a verb in a question, after an embedded question, or with the
// user as its subject grants nothing; a misspelt verb only ever denies.
func TestRule12NothingGranted(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "how much did I spend?", lang: "en", allow: ks(r)},
		{text: "tell me if there's an invoice to pay", lang: "en", allow: ks(r)},
		{text: "I'll send it myself", lang: "en", allow: ks(r)},
		{text: "don't delte the logs", lang: "en", allow: ks(r), ask: ks(d)},
		{text: "Check my emials and dont reply", lang: "en", allow: ks(r), deny: ks(s)},
	})
}
