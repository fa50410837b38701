package mandate

import (
	"slices"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// Never wider than the words: a restriction the draft cannot hold makes
// the kinds it qualifies ask, in every language.

// "Nothing else" after a verb whose object names nothing the scope holds.
var nothingElseUnheldCases = []compileCase{
	{text: "Delete the branch feature/old-login in acme/web, nothing else.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Lösche den Branch feature/alt in acme/web, sonst nichts.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Supprime la branche feature/ancienne dans acme/web, rien d'autre.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Borra la rama feature/vieja en acme/web, nada más.", lang: "es",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Elimina il branch feature/vecchio in acme/web, nient'altro.", lang: "it",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	// A named path or recipient holds it: the scope says "nothing else".
	{text: "Delete the temporary files in /tmp/cache/, nothing else.", lang: "en",
		allow: []action.Kind{r, d}, paths: []string{"/tmp/cache/**"}},
	// "Nowhere else", "no one else" restrict places and people, which
	// named recipients hold whatever the message is.
	{text: "Pubblica l'annuncio in #generale e da nessun'altra parte.", lang: "it",
		allow: []action.Kind{r, s}, recipients: []string{"#generale"}},
	{text: "Post the announcement in #general and nowhere else.", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"#general"}},
	{text: "Post the announcement and nowhere else.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{s}},
}

// A negation in a clause with no verb of its own ("…, aber nicht") rules
// out the sentence's last verb for one thing: asked, not granted.
var negatedRestCases = []compileCase{
	{text: "Schreib die Zusammenfassung nach notizen/zusammenfassung.md, ändere die Notizen aber nicht.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{w}, paths: []string{"notizen/zusammenfassung.md"}},
	{text: "Fix the tests in ./pkg, but not the parser.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}, paths: []string{"pkg/**"}},
	{text: "Rangez le dossier ~/docs, mais pas les factures.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{w}, paths: []string{"~/docs/**"}},
	// Reading is never ruled out by it.
	{text: "Read my mail, but not the private folder.", lang: "en",
		allow: []action.Kind{r}},
}

// "Nobody" as a subject rules out what it names ("nobody gets a refund").
var nobodySubjectCases = []compileCase{
	{text: "Answer the customer tickets, but nobody gets a refund.", lang: "en",
		allow: []action.Kind{r, s}, deny: []action.Kind{p}, prohibit: []string{"pay:"}},
	{text: "Beantworte die Kundenanfragen, aber niemand bekommt eine Erstattung.", lang: "de",
		allow: []action.Kind{r, s}, deny: []action.Kind{p}, prohibit: []string{"pay:"}},
	{text: "Contesta los tickets de los clientes, pero nadie recibe un reembolso.", lang: "es",
		allow: []action.Kind{r, s}, deny: []action.Kind{p}, prohibit: []string{"pay:"}},
	{text: "Rispondi ai ticket dei clienti, ma nessuno riceve un rimborso.", lang: "it",
		allow: []action.Kind{r, s}, deny: []action.Kind{p}, prohibit: []string{"pay:"}},
}

// An object pronoun after a negation is no article: "ne l'envoie pas".
var pronounAfterNegationCases = []compileCase{
	{text: "Prépare un brouillon de réponse au propriétaire, mais ne l'envoie pas.", lang: "fr",
		allow: []action.Kind{r, w}, deny: []action.Kind{s}, prohibit: []string{"send:"}},
	{text: "Prepara una bozza per il cliente, ma non la mandare.", lang: "it",
		allow: []action.Kind{r, w}, deny: []action.Kind{s}, prohibit: []string{"send:"}},
	{text: "Prepara el borrador para el cliente, pero no lo envíes.", lang: "es",
		allow: []action.Kind{r, w}, deny: []action.Kind{s}, prohibit: []string{"send:"}},
	{text: "Rédige la réponse au client, mais ne la publie pas.", lang: "fr",
		allow: []action.Kind{r, w}, deny: []action.Kind{s}, prohibit: []string{"send:"}},
}

func TestCompileNothingElseUnheld(t *testing.T)    { runCompileCases(t, nothingElseUnheldCases) }
func TestCompileNegatedRest(t *testing.T)          { runCompileCases(t, negatedRestCases) }
func TestCompileNobodySubject(t *testing.T)        { runCompileCases(t, nobodySubjectCases) }
func TestCompilePronounAfterNegation(t *testing.T) { runCompileCases(t, pronounAfterNegationCases) }

// "Create" takes its object's kind, as "open" and "file" do: creating an
// issue is sending one; creating a file is writing.
var createObjectCases = []compileCase{
	{text: "Do not push anything. Create a GitHub issue in acme/web describing the flaky checkout test.", lang: "en",
		allow: []action.Kind{r, s}, prohibit: []string{"send:operation:push"}},
	{text: "Create a new file notes/todo.md with the open points.", lang: "en",
		allow: []action.Kind{r, w}, paths: []string{"notes/todo.md"}},
	{text: "Erstelle ein Issue in acme/web zum Login-Fehler.", lang: "de",
		allow: []action.Kind{r, s}},
	{text: "Crea un issue en acme/web sobre el error.", lang: "es",
		allow: []action.Kind{r, s}},
}

// A negated verb's object noun binds the prohibition to the noun's kind:
// "don't edit existing issues" is about issues (sent), not only writes.
var objectNounProhibitionCases = []compileCase{
	{text: "Open a new issue in acme/web for the login crash. Don't close or edit any existing issues.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w, s}},
	{text: "Ouvre un ticket dans acme/web pour le crash, sans fermer ni modifier les tickets existants.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{w, s}},
	{text: "Erstelle ein Issue in acme/web zum Login-Fehler, schließe oder bearbeite aber keine bestehenden Issues.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{w, s}},
	// A noun of an act ("messages") does not: deleting them is deleting.
	{text: "Reply to Dana, don't delete any messages.", recipients: []string{"Dana"}, lang: "en",
		allow: []action.Kind{r, s}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
}

// "Only" on one verb narrows a broader verb of its sentence to it;
// "ne … que" is "only", not a negation.
var onlyNarrowsCases = []compileCase{
	{text: "Fais le ménage dans mon dossier Téléchargements, ne supprime que les fichiers de plus d'un an.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"~/Téléchargements/**"}},
	{text: "Limpia mi carpeta de Descargas, borra solo los archivos de más de un año.", lang: "es",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Ne supprime que les fichiers temporaires de ~/tmp.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"~/tmp/**"}},
	// A verb sharing no kind with the "only" verb keeps its grant.
	{text: "Clean up my Downloads folder and email bob@example.com, only delete files older than a year.", lang: "en",
		allow: []action.Kind{r, s}, ask: []action.Kind{d}, paths: []string{"~/Downloads/**"}, recipients: []string{"bob@example.com"}},
}

func TestCompileCreateObject(t *testing.T)          { runCompileCases(t, createObjectCases) }
func TestCompileObjectNounProhibition(t *testing.T) { runCompileCases(t, objectNounProhibitionCases) }
func TestCompileOnlyNarrows(t *testing.T)           { runCompileCases(t, onlyNarrowsCases) }

// A word inside a name ("acme/web") is no cue: the sentence is not about
// the web, so reading grants no fetch.
var slugNotCueCases = []compileCase{
	{text: "Review the open pull requests in acme/web.", lang: "en",
		allow: []action.Kind{r}},
	{text: "Überprüfe die offenen Pull Requests in acme/web.", lang: "de",
		allow: []action.Kind{r}},
	{text: "Revisa los pull requests abiertos en acme/web.", lang: "es",
		allow: []action.Kind{r}},
	{text: "Compare the prices on the web.", lang: "en",
		allow: []action.Kind{r, f}},
}

// An entity an exception spares in a negated clause is what the
// prohibition leaves open, not a place asked for: no fetch of it. The
// verb is ruled out for everything but it ("narrowExcept"): asked for
// elsewhere, the kind is granted and the scope holds the exception; not
// asked for, the kind is put to a person.
var exceptionEntityCases = []compileCase{
	{text: "Non scrivere a nessuno fuori da azienda.example. Manda il verbale al team.", lang: "it",
		allow: []action.Kind{r, s}, recipients: []string{"*@azienda.example"}},
	{text: "Schreib niemandem außerhalb von firma.example. Schick das Protokoll an das Team.", lang: "de",
		allow: []action.Kind{r, s}, recipients: []string{"*@firma.example"}},
	// Where the verb reaches the host (buying on a shop), it is fetched.
	{text: "Buy the cable on shop.example.", lang: "en",
		allow: []action.Kind{r, f, p}, ask: []action.Kind{w}, hosts: []string{"shop.example"}},
	{text: "Edit nothing outside docs.example.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}, hosts: []string{"docs.example"}},
}

// A verb form right after a copula is a state, not a request.
var copulaStateCases = []compileCase{
	{text: "Préviens l'équipe dans #dev que le build est réparé.", lang: "fr",
		allow: []action.Kind{r, s}, recipients: []string{"#dev"}},
	{text: "Tell the team in #dev that the build is fixed.", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"#dev"}},
	{text: "Avisa al equipo en #dev de que el build está arreglado.", lang: "es",
		allow: []action.Kind{r, s}, recipients: []string{"#dev"}},
	{text: "Avvisa il team in #dev che la build è stata riparata.", lang: "it",
		allow: []action.Kind{r, s}, recipients: []string{"#dev"}},
	{text: "Sag dem Team in #dev Bescheid, der Build ist repariert.", lang: "de",
		allow: []action.Kind{r, s}, recipients: []string{"#dev"}},
}

// A limit phrase that ends its clause reads the count before it.
var postfixLimitCases = []compileCase{
	{text: "Archive les vieilles newsletters, 10 messages au maximum.", lang: "fr",
		allow: []action.Kind{r, w}, counts: map[action.Kind]int{w: 10}},
	{text: "Send the reminders, 5 emails max.", lang: "en",
		allow: []action.Kind{r, s}, counts: map[action.Kind]int{s: 5}},
	{text: "Archiviere die alten Newsletter, 10 Nachrichten maximal.", lang: "de",
		allow: []action.Kind{r, w}, counts: map[action.Kind]int{w: 10}},
	{text: "Archiva los boletines viejos, 10 mensajes como máximo.", lang: "es",
		allow: []action.Kind{r, w}, counts: map[action.Kind]int{w: 10}},
}

func TestCompileSlugNotCue(t *testing.T)      { runCompileCases(t, slugNotCueCases) }
func TestCompileExceptionEntity(t *testing.T) { runCompileCases(t, exceptionEntityCases) }
func TestCompileCopulaState(t *testing.T)     { runCompileCases(t, copulaStateCases) }
func TestCompilePostfixLimit(t *testing.T)    { runCompileCases(t, postfixLimitCases) }

// "Ne … qu'à X" is "only to X", a restriction the scope holds, not a
// negation: every tail of an "only" pair is tried ("que", "qu'").
var onlyPairElidedCases = []compileCase{
	{text: "Ne réponds qu'à marie@exemple.fr.", lang: "fr",
		allow: []action.Kind{r, s}, recipients: []string{"marie@exemple.fr"}},
	{text: "N'envoie le rapport qu'à paul@exemple.fr.", lang: "fr",
		allow: []action.Kind{r, s}, recipients: []string{"paul@exemple.fr"}},
	// A name the scope cannot hold: each send is put to a person.
	{text: "Ne réponds qu'à Marie.", recipients: []string{"Marie"}, lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{s}},
	{text: "Ne supprime que les fichiers temporaires de ~/tmp.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"~/tmp/**"}},
}

// A real word is no typo of another ("logic" is not "login"); a
// misspelling that is no word still is ("delte").
var realWordNotTypoCases = []compileCase{
	{text: "Refactor the parser, do not logic.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	{text: "Don't delte anything.", lang: "en",
		allow: []action.Kind{r}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	{text: "Räum den Ordner auf, aber lösche nichts.", lang: "de",
		allow: []action.Kind{r, w}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	{text: "Range le dossier, mais ne supprme rien.", lang: "fr",
		allow: []action.Kind{r, w}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
}

func TestCompileOnlyPairElided(t *testing.T)  { runCompileCases(t, onlyPairElidedCases) }
func TestCompileRealWordNotTypo(t *testing.T) { runCompileCases(t, realWordNotTypoCases) }

// Every word of a lang/CODE.words list is one edit away from a verb form
// of its language: the lists hold nothing else.
func TestWordListsNearVerbForms(t *testing.T) {
	c, err := sharedCompiler()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range c.lx.langs {
		if len(l.words) == 0 {
			t.Errorf("%s: no lang/%s.words", l.code, l.code)
		}
		for w := range l.words {
			if !slices.ContainsFunc(c.lx.verbForms, func(e *entry) bool { return e.lang == l.code && editDistance1(w, e.words[0]) }) {
				t.Errorf("%s.words: %q is one edit from no verb form", l.code, w)
			}
		}
	}
}

// A relative clause on the items ("the branches that are merged") is a
// condition the draft cannot check when it holds words it did not read:
// the verb's kinds are asked, in every language.
var relativeClauseCases = []compileCase{
	{text: "Delete the branches that are already merged into main.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Supprime les mails qui datent de l'an dernier.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Lösche alle Dateien in ~/tmp, was nicht mehr gebraucht wird.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"~/tmp/**"}},
	{text: "Borra los correos que tengan adjuntos grandes.", lang: "es",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Cancella le mail che parlano del progetto.", lang: "it",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	// What the scope holds needs no person; after a verb of saying the
	// clause is what is said; after a verb it is no relative.
	{text: "Delete the files that are in ~/tmp/cache/.", lang: "en",
		allow: []action.Kind{r, d}, paths: []string{"~/tmp/cache/**"}},
	{text: "Tell the team that the release moved.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{s}},
	{text: "Find recent papers on federated learning and note who the main groups are.", lang: "en",
		allow: []action.Kind{r, w}},
}

func TestCompileRelativeClause(t *testing.T) { runCompileCases(t, relativeClauseCases) }

// Issue 11: "refund order X" pays (the refund), and setting up a call
// with people sends the invitation and changes the calendar.
var refundAndCallCases = []compileCase{
	{text: "Refund order 4711.", lang: "en", allow: []action.Kind{r, p}, ask: []action.Kind{w}},
	{text: "Erstatte die Bestellung 4711.", lang: "de", allow: []action.Kind{r, p}, ask: []action.Kind{w}},
	{text: "Rembourse la commande 4711.", lang: "fr", allow: []action.Kind{r, p}, ask: []action.Kind{w}},
	{text: "Reembolsa el pedido 4711.", lang: "es", allow: []action.Kind{r, p}, ask: []action.Kind{w}},
	{text: "Rimborsa l'ordine 4711.", lang: "it", allow: []action.Kind{r, p}, ask: []action.Kind{w}},
	{text: "Set up a call with everyone on the thread.", lang: "en", allow: []action.Kind{r, w, s}},
	{text: "Crée une réunion avec tout le monde du fil.", lang: "fr", allow: []action.Kind{r, w, s}},
	{text: "Crea una llamada con todos los del hilo.", lang: "es", allow: []action.Kind{r, w, s}},
	// "a refund" after an article stays a noun.
	{text: "Answer the customer tickets, but nobody gets a refund.", lang: "en",
		allow: []action.Kind{r, s}, deny: []action.Kind{p}, prohibit: []string{"pay:"}},
}

func TestCompileRefundAndCall(t *testing.T) { runCompileCases(t, refundAndCallCases) }
