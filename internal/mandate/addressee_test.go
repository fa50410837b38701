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
		{text: "Write to the landlord that the heating is broken.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Write the summary to notes/summary.md.", lang: "en", allow: []action.Kind{r, w}, paths: []string{"notes/summary.md"}},
		{text: "Add to README the new install steps.", lang: "en", allow: []action.Kind{r, w}},
		{text: "Schreib an Anna, dass ich später komme.", recipients: []string{"Anna"}, lang: "de", allow: []action.Kind{r, s}},
		{text: "Écrire à Julie que je serai en retard.", recipients: []string{"Julie"}, lang: "fr", allow: []action.Kind{r, s}},
		{text: "Escribe a Juan que llego tarde.", recipients: []string{"Juan"}, lang: "es", allow: []action.Kind{r, s}},
		{text: "Escribir al casero que la calefacción no funciona.", lang: "es", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Scrivere a Marco che la riunione è spostata.", recipients: []string{"Marco"}, lang: "it", allow: []action.Kind{r, s}},
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

// A name the send is written to bounds it in the scope; a role the draft
// cannot resolve to an address puts send to a person, unless an address,
// a channel or a domain the words name bounds it; a person picked out by
// the items ("the customer tickets", "the clients who haven't paid") is
// no addressee of the user's.
func TestRuleAddresseeBoundsSend(t *testing.T) {
	s, r := action.Send, action.Read
	runCompileCases(t, []compileCase{
		{text: "Reply to Dana and tell her I can do Thursday.", lang: "en", allow: []action.Kind{r, s}, recipients: []string{"Dana"}},
		{text: "Antworte Frau Weber, dass der Termin passt.", lang: "de", allow: []action.Kind{r, s}, recipients: []string{"Frau Weber"}},
		{text: "Réponds à Sophie que je serai là à midi.", lang: "fr", allow: []action.Kind{r, s}, recipients: []string{"Sophie"}},
		{text: "Escribe a Javier que llego tarde.", lang: "es", allow: []action.Kind{r, s}, recipients: []string{"Javier"}},
		{text: "Avvisa la signora Rossi che il pacco è arrivato.", lang: "it", allow: []action.Kind{r, s}, recipients: []string{"signora Rossi"}},
		{text: "Post the update to Slack.", lang: "en", allow: []action.Kind{r, s}},
		// A verb of writing with a bare name sends only when what is
		// written follows.
		{text: "Schreib Tobias, dass ich später komme.", lang: "de", allow: []action.Kind{r, s}, recipients: []string{"Tobias"}},
		{text: "Schreib Notizen zum Meeting.", lang: "de", allow: []action.Kind{r, action.Write}},
		{text: "Écris Julie qu'on se voit demain à 10h.", lang: "fr", allow: []action.Kind{r, s}, recipients: []string{"Julie"}},
		{text: "Écris Julie que la réunion est annulée.", lang: "fr", allow: []action.Kind{r, s}, recipients: []string{"Julie"}},
		{text: "Schreib Notizen, dann speichere sie.", lang: "de", allow: []action.Kind{r, action.Write}},
		{text: "Let my manager know I'll be late tomorrow.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Schick meinem Chef den Bericht von gestern.", lang: "de", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Écris à mon chef que je suis malade.", lang: "fr", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Dile a mi jefe que hoy trabajo desde casa.", lang: "es", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Scrivi al mio capo che oggi sono in ferie.", lang: "it", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Send the minutes to the team at team@acme.example.", lang: "en", allow: []action.Kind{r, s}, recipients: []string{"team@acme.example"}},
		{text: "Answer the customer tickets.", lang: "en", allow: []action.Kind{r, s}},
		{text: "Email everyone on the Kickoff thread the new date.", lang: "en", allow: []action.Kind{r, s}},
		{text: "Send the photos to everyone.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Send at most 2 reminder emails to the clients who haven't paid.", lang: "en", allow: []action.Kind{r, s}, counts: map[action.Kind]int{s: 2}},
	})
}
