package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// "No one outside X": a negated verb an exception leaves open for what it
// names rules out every other recipient. Asked for elsewhere in the words,
// the kind is granted and the scope holds the exception; alone, the kind
// is put to a person. In every language, with the verb of writing aimed
// at the "nobody" pronoun read as a send.
func TestCompileNobodyOutside(t *testing.T) {
	s, r := action.Send, action.Read
	runCompileCases(t, []compileCase{
		{text: "Don't write to anyone outside acme.example.", lang: "en",
			allow: []action.Kind{r}, ask: []action.Kind{s}, recipients: []string{"*@acme.example"}},
		{text: "Don't email anyone outside acme.example. Send the report to the team.", lang: "en",
			allow: []action.Kind{r, s}, recipients: []string{"*@acme.example"}},
		{text: "Schreib niemandem außer bob@acme.example.", lang: "de",
			allow: []action.Kind{r}, ask: []action.Kind{s}, recipients: []string{"bob@acme.example"}},
		{text: "Schreib niemandem außerhalb von acme.example. Schick das Protokoll an das Team.", lang: "de",
			allow: []action.Kind{r, s}, recipients: []string{"*@acme.example"}},
		{text: "N'écris à personne en dehors de acme.example.", lang: "fr",
			allow: []action.Kind{r}, ask: []action.Kind{s}, recipients: []string{"*@acme.example"}},
		{text: "N'écris à personne en dehors de acme.example. Envoie le compte rendu à l'équipe.", lang: "fr",
			allow: []action.Kind{r, s}, recipients: []string{"*@acme.example"}},
		{text: "No escribas a nadie fuera de acme.example.", lang: "es",
			allow: []action.Kind{r}, ask: []action.Kind{s}, recipients: []string{"*@acme.example"}},
		{text: "No escribas a nadie fuera de acme.example. Envía el acta al equipo.", lang: "es",
			allow: []action.Kind{r, s}, recipients: []string{"*@acme.example"}},
		{text: "Non scrivere a nessuno al di fuori di acme.example.", lang: "it",
			allow: []action.Kind{r}, ask: []action.Kind{s}, recipients: []string{"*@acme.example"}},
		{text: "Non scrivere a nessuno al di fuori di acme.example. Manda il verbale al team.", lang: "it",
			allow: []action.Kind{r, s}, recipients: []string{"*@acme.example"}},
	})
}

// A verb of writing aimed at a person sends; aimed at a file it writes.
func TestCompileWrittenToPerson(t *testing.T) {
	s, r, w := action.Send, action.Read, action.Write
	runCompileCases(t, []compileCase{
		{text: "Write to the landlord that the heating is broken.", lang: "en", allow: []action.Kind{r, s}},
		{text: "Write the summary to notes/summary.md.", lang: "en", allow: []action.Kind{r, w}, paths: []string{"notes/summary.md"}},
		{text: "Add to README the new install steps.", lang: "en", allow: []action.Kind{r, w}},
		{text: "Schreib an Anna, dass ich später komme.", lang: "de", allow: []action.Kind{r, s}},
		{text: "Écrire à Julie que je serai en retard.", lang: "fr", allow: []action.Kind{r, s}},
		{text: "Escribe a Juan que llego tarde.", lang: "es", allow: []action.Kind{r, s}},
		{text: "Escribir al casero que la calefacción no funciona.", lang: "es", allow: []action.Kind{r, s}},
		{text: "Scrivere a Marco che la riunione è spostata.", lang: "it", allow: []action.Kind{r, s}},
		{text: "Scrivi il riassunto in note/riassunto.md.", lang: "it", allow: []action.Kind{r, w}, paths: []string{"note/riassunto.md"}},
	})
}

// Booking a thing that costs nothing to book writes an entry; booking a
// flight pays.
func TestCompileFreeBookings(t *testing.T) {
	r, w, p := action.Read, action.Write, action.Pay
	runCompileCases(t, []compileCase{
		{text: "Book a table for four at Trattoria Roma on Friday at 8pm.", lang: "en", allow: []action.Kind{r, w}},
		{text: "Book a flight to Rome.", lang: "en", allow: []action.Kind{r, p}, ask: []action.Kind{w}},
		{text: "Reserviere einen Tisch für vier Personen im Café Luitpold am Samstag, aber bezahle nichts.", lang: "de",
			allow: []action.Kind{r, w}, deny: []action.Kind{p}, prohibit: []string{"pay:"}},
		{text: "Réserve une table pour quatre au Bistrot Paul samedi soir.", lang: "fr", allow: []action.Kind{r, w}},
		{text: "Reserva una mesa para cuatro en Casa Lucio.", lang: "es", allow: []action.Kind{r, w}},
		{text: "Prenota un tavolo per quattro da Enzo.", lang: "it", allow: []action.Kind{r, w}},
	})
}
