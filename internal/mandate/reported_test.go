package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// Reported speech after a verb of sending: the words of the message are
// not requests of the agent, in every language. A purpose clause ("pour
// que", "para que") and a verb after a new clause are not reported speech.
var reportedSpeechCases = []compileCase{
	{text: "Tell him that I will delete the old branch tomorrow.", lang: "en",
		allow: []action.Kind{r, s}},
	{text: "Tell him to delete the file.", lang: "en",
		allow: []action.Kind{r, s}},
	{text: "Sag bitte Jonas, dass ich das Release auf Montag verschieben muss.", lang: "de",
		allow: []action.Kind{r, s}},
	{text: "Schreib ihr, dass sie die Rechnung bezahlen soll.", lang: "de",
		allow: []action.Kind{r, s}},
	{text: "Dis à Camille qu'elle doit supprimer le fichier.", lang: "fr",
		allow: []action.Kind{r, s}, recipients: []string{"Camille"}},
	{text: "Dis-lui que je vais supprimer le fichier.", lang: "fr",
		allow: []action.Kind{r, s}},
	{text: "Dis-lui de supprimer le fichier.", lang: "fr",
		allow: []action.Kind{r, s}},
	{text: "Dile a Javier que pague la factura.", lang: "es",
		allow: []action.Kind{r, s}, recipients: []string{"Javier"}},
	{text: "Dile que voy a pagar la factura.", lang: "es",
		allow: []action.Kind{r, s}},
	{text: "Digli che deve cancellare la riunione.", lang: "it",
		allow: []action.Kind{r, s}},
	{text: "Digli di cancellare la riunione.", lang: "it",
		allow: []action.Kind{r, s}},
	// A reported request runs to the end of its segment.
	{text: "Ask Bob to review and merge the PR.", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"Bob"}},
	// "so that" is no message: the verbs after the purpose clause are
	// still the user's requests.
	{text: "Envoie le rapport à Paul pour qu'il le relise, puis supprime le brouillon.", lang: "fr",
		allow: []action.Kind{r, d, s}, recipients: []string{"Paul"}},
	{text: "Manda el informe a Ana para que lo revise y borra el borrador.", lang: "es",
		allow: []action.Kind{r, d, s}, recipients: []string{"Ana"}},
	// The message ends where a new clause with a verb of its own begins.
	{text: "Tell Anna that I'm late and delete the draft.", lang: "en",
		allow: []action.Kind{r, d, s}, recipients: []string{"Anna"}},
	{text: "Dis à Paul que je suis en retard, et ne supprime rien.", lang: "fr",
		allow: []action.Kind{r, s}, deny: []action.Kind{d}, prohibit: []string{"delete:"}, recipients: []string{"Paul"}},
	// "push to main" is no request to anyone, and "ne … qu'à" is "only".
	{text: "Push to main if the tests pass.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{s}},
}

func TestCompileReportedSpeech(t *testing.T) { runCompileCases(t, reportedSpeechCases) }

// A clause that only names something keeps its restriction: a name in
// brackets does not cut the clause, nor does the colon of an object URL.
var namedObjectCases = []compileCase{
	{text: "Archiva como mucho 50 correos de GitHub (Dependabot) que sean de antes de octubre.", lang: "es",
		allow: []action.Kind{r}, ask: []action.Kind{w}, counts: map[action.Kind]int{w: 50}},
	{text: "Archive the emails (GitHub) older than a month.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	{text: "Cancella dal bucket s3://foto-backup le foto più vecchie di due anni.", lang: "it",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	// A hands-off whose noun phrase stands before it is "nothing else".
	{text: "Aggiorna il README, ma il resto della documentazione lascialo com'è.", lang: "it",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
}

func TestCompileNamedObjectKeepsRestriction(t *testing.T) { runCompileCases(t, namedObjectCases) }

// A date that restricts the items (date_conditions) makes the verb's
// kinds ask, in every language; "desde"/"depuis" alone also name a
// place ("desde mi cuenta corriente") and are not listed.
var dateConditionCases = []compileCase{
	{text: "Delete the emails since March.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Lösche alle Mails, die vor Oktober kamen.", lang: "de", allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Supprime les fichiers antérieurs à 2024.", lang: "fr", allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Archiva los correos de antes de octubre.", lang: "es", allow: []action.Kind{r}, ask: []action.Kind{w}},
	{text: "Archivia le mail di prima di ottobre.", lang: "it", allow: []action.Kind{r}, ask: []action.Kind{w}},
	{text: "Paga la factura de la luz desde mi cuenta corriente.", lang: "es", allow: []action.Kind{r, p}, ask: []action.Kind{w}},
}

func TestCompileDateConditions(t *testing.T) { runCompileCases(t, dateConditionCases) }

// A quoted title after a word for a work ("the book", "das Buch") names
// the work, not the payee; a quoted name alone in a pay clause still is.
var quotedWorkCases = []compileCase{
	{text: `Pay the invoice for the book "Der Schwarm" to DE89370400440532013000.`, lang: "en",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"DE89370400440532013000"}},
	{text: "Bestell mir bei thalia.de das Buch „Der Schwarm“, höchstens 15 Euro.", lang: "de",
		allow: []action.Kind{r, f, p}, ask: []action.Kind{w}, hosts: []string{"thalia.de"}, spend: "15 EUR"},
	{text: "Achète le livre « Le Petit Prince » sur fnac.com.", lang: "fr",
		allow: []action.Kind{r, f, p}, ask: []action.Kind{w}, hosts: []string{"fnac.com"}},
	{text: `Pay "Stadtwerke München" 84.20 EUR.`, lang: "en",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"Stadtwerke München"}, spend: "84.2 EUR"},
}

func TestCompileQuotedWorkIsNoPayee(t *testing.T) { runCompileCases(t, quotedWorkCases) }

// A preposition followed only by where the items are kept ("dalla
// posta", "from my inbox") restricts nothing; one followed by a sender
// ("from LinkedIn") still asks the delete.
var itemPlaceCases = []compileCase{
	{text: "Cancella le bozze vecchie dalla posta, al massimo 5, e non inviare niente.", lang: "it",
		allow: []action.Kind{r, d}, deny: []action.Kind{s}, prohibit: []string{"send:"}, counts: map[action.Kind]int{d: 5}},
	{text: "Delete the newsletters from my inbox.", lang: "en", allow: []action.Kind{r, d}},
	{text: "Lösche die Werbung aus dem Posteingang.", lang: "de", allow: []action.Kind{r, d}},
	{text: "Delete the emails from LinkedIn.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{d}},
}

func TestCompileItemPlaceRestrictsNothing(t *testing.T) { runCompileCases(t, itemPlaceCases) }
