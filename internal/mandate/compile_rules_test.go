package mandate

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mandate-dev/mandate/internal/action"
)

// Verbs that ask for several kinds, and kinds a verb implies.
var impliedKindCases = []compileCase{
	// Installing writes files and runs code.
	{text: "Install the linter and run it on ./lib", lang: "en",
		allow: []action.Kind{r, w, x}, paths: []string{"lib/**"}},
	// Uploading sends and writes where it lands.
	{text: "Upload the slides to the team drive", lang: "en",
		allow: []action.Kind{r, w, s}},
	// Inviting sends the invitation and changes the event.
	{text: "Lade Paula zum Sommerfest ein", recipients: []string{"Paula"}, lang: "de",
		allow: []action.Kind{r, w, s}},
	// Paying is prepared in a cart, a form or a quote: not named, so a
	// write is asked unless it only prepares the payment.
	{text: "Buy two tickets for the concert on Friday", lang: "en",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}},
	{text: "Achète une lampe de bureau", lang: "fr",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}},
	// …and only while paying is granted: taken back, nothing is asked.
	{text: "Book the hotel. Actually, don't book anything.", lang: "en",
		allow: []action.Kind{r}, deny: []action.Kind{p}, prohibit: []string{"pay:"}},
	// Merging a pull request publishes it.
	{text: "merge the dependabot PR once CI passes", lang: "en",
		allow: []action.Kind{r, w, s}},
}

// Light verbs take their kind from their object.
var lightVerbCases = []compileCase{
	{text: "open a pull request for the docs fix", lang: "en",
		allow: []action.Kind{r, s}},
	{text: "file an issue about the crash upstream", lang: "en",
		allow: []action.Kind{r, s}},
	{text: "make a payment of 40 EUR to the school", lang: "en",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, spend: "40 EUR"},
	{text: "make a backup script for my photos", lang: "en", // no kind in the object: make writes
		allow: []action.Kind{r, w}},
	{text: "do the rename we discussed", lang: "en", // a verb form as the object
		allow: []action.Kind{r, w}},
	{text: "give her edit access to the folder", lang: "en",
		allow: []action.Kind{r, w, s}},
	// "open issues" is a state, not an act: a light verb without a kind
	// of its own needs its object introduced.
	{text: "list the repos with open issues", lang: "en",
		allow: []action.Kind{r}},
	{text: "fais un rollback de la dernière version", lang: "fr",
		allow: []action.Kind{r, w}},
	{text: "haz una copia de seguridad de la base", lang: "es",
		allow: []action.Kind{r, w}},
	{text: "Mach mir eine Liste der offenen Rechnungen", lang: "de", // a read noun: nothing to change
		allow: []action.Kind{r}},
	// The head of a compound decides: "read access" is access, not reading.
	{text: "give the auditor read access to the ledger", lang: "en",
		allow: []action.Kind{r, w, s}},
	// …and a noun that only modifies another is not the object.
	{text: "put a label on every deploy request", lang: "en",
		allow: []action.Kind{r, w}},
	{text: "schedule a post in #news for Monday", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"#news"}},
}

// Verbs whose object stands inside them, verbs of writing addressed to
// someone, and work to be delivered as something.
var constructionCases = []compileCase{
	{text: "let the on-call channel know the backup finished", lang: "en",
		allow: []action.Kind{r, s}},
	{text: "let me know what you find", lang: "en", // "let me know" is a report to the user
		allow: []action.Kind{r}},
	{text: "Gib dem Team Bescheid, dass der Server läuft", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{s}},
	{text: "write in #standup that the build is green", lang: "en", // written there is sent there, no file written
		allow: []action.Kind{r, s}, recipients: []string{"#standup"}},
	{text: "Schreib in #general, dass das Deployment fertig ist", lang: "de",
		allow: []action.Kind{r, s}, recipients: []string{"#general"}},
	{text: "Escribe en #general que el despliegue está listo", lang: "es",
		allow: []action.Kind{r, s}, recipients: []string{"#general"}},
	{text: "Écris à paul@exemple.fr que la réunion est annulée", lang: "fr",
		allow: []action.Kind{r, s}, recipients: []string{"paul@exemple.fr"}},
	{text: "draft a note to ops@example.com about the outage", lang: "en", // drafting is not sending
		allow: []action.Kind{r, w}, recipients: []string{"ops@example.com"}},
	{text: "update the changelog, but as a pull request", lang: "en",
		allow: []action.Kind{r, w, s}},
	{text: "Corrige la config, mais seulement sous forme de PR", lang: "fr",
		allow: []action.Kind{r, w, s}},
	{text: "add Sam to #release-crew", lang: "en", // adding to a channel sends (an invitation)
		allow: []action.Kind{r, w, s}, recipients: []string{"#release-crew"}},
	{text: "sign me up for the newsletter with jo@example.org", lang: "en",
		allow: []action.Kind{r, w, s}, recipients: []string{"jo@example.org"}},
}

// An amount after a noun in a clause of its own prices that thing: it
// is not the cap on the whole payment.
var amountCases = []compileCase{
	{text: "order the groceries on my list, delivery fee 4 €", lang: "en",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}},
	{text: "pay the deposit to the landlord, 800 EUR", lang: "en",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, spend: "800 EUR"},
	{text: "Überweise Jonas 150 € fürs Konzert", lang: "de",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, spend: "150 EUR"},
	{text: "compra el regalo, envío 5 €", lang: "es",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}},
}

// Negations that are not prohibitions, and prohibitions narrower than
// their kind.
var negationCases = []compileCase{
	// The user telling of their own habit forbids nothing.
	{text: "archive the build notifications, I never open them", lang: "en",
		allow: []action.Kind{r, w}},
	// "No need to" neither asks nor forbids.
	{text: "accept the invite, no reply needed", lang: "en",
		allow: []action.Kind{r, s}},
	{text: "tag the release, no need to announce it", lang: "en",
		allow: []action.Kind{r, w}},
	// "Nowhere else": the grant stands; scope keeps what was named.
	{text: "post the summary in #ops and don't post it anywhere else", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"#ops"}},
	// A kind asked for and ruled out for one thing the draft cannot name:
	// neither granted nor denied.
	{text: "tidy the config files but don't change the database schema", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	// …or for one operation of the kind: "no apply" is not "run nothing"
	// (applying also writes, which nothing else asked for: denied).
	{text: "run terraform plan for dev. No apply.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{x}, deny: []action.Kind{w}},
	// …or only under a condition.
	{text: "label the invoices. If one looks like phishing, don't change anything", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	// A general "don't" of the same kind still wins: cleaning up is
	// tidying then, not deleting.
	{text: "Clean up my downloads. Don't delete anything.", lang: "en",
		allow: []action.Kind{r, w}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	// With nothing granted, a "don't" about one thing leaves its kind
	// ungranted rather than denied: editing a local file was not ruled out.
	{text: "check the staging database but don't modify the schema", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	// …and a "don't" about an operation the table knows prohibits that
	// operation, not its kind (operations.yaml).
	{text: "commit the fix but don't push", lang: "en",
		allow: []action.Kind{r, w}, prohibit: []string{"send:operation:push"}},
	// Where the object comes first: "keine neuen Pakete installieren".
	{text: "Repariere den Build, aber keine neuen Pakete installieren", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{w, x}},
	// "Don't touch" one thing the draft cannot name, with writing asked
	// for: writing is left to a person. Deleting, an act users name,
	// stays as asked.
	{text: "fix the flaky test without touching the retry logic", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	{text: "prune the old preview environments, leave the demo ones alone", lang: "en",
		allow: []action.Kind{r, d}, ask: []action.Kind{w}},
	{text: "Räum die Ablage auf, aber lass die Verträge in Ruhe", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	{text: "leave it alone", lang: "en", // nothing named: hands off everything
		allow: []action.Kind{r}, deny: readOnlyDeny},
	// "Ask me before …": the user wants a person to decide those calls.
	{text: "delete the duplicates, but ask me before deleting anything over 1 GB", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "tidy my inbox and ask me before you send anything", lang: "en",
		allow: []action.Kind{r, w}, ask: []action.Kind{s}},
	{text: "Range mes fichiers, demande-moi avant de supprimer quoi que ce soit", lang: "fr",
		allow: []action.Kind{r, w}, ask: []action.Kind{d}},
	// Ruling out substitutions is one thing of writing.
	{text: "reorder the usual groceries, no substitutions", lang: "en",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}},
	// A verb after "before" has the subject of the verb it follows.
	{text: "add it to the basket, I want to compare before buying", lang: "en",
		allow: []action.Kind{r, w}},
}

// Where a form that is also a noun is the subject, not a verb.
var nounOrVerbCases = []compileCase{
	{text: "order is missing from the report, find out why", lang: "en",
		allow: []action.Kind{r}},
	{text: "build job keeps failing, look into it", lang: "en",
		allow: []action.Kind{r}},
	// "move" after "if yes" is a verb; "if yes" is a condition on the
	// act Mandate cannot check, so its kind is asked (act_conditions).
	{text: "if yes move them to the archive", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	{text: "the checkout keeps timing out, investigate", lang: "en",
		allow: []action.Kind{r}},
	{text: "Teile die Funktion in zwei auf", lang: "de", // separable: "teile … auf" splits, "teile" alone shares
		allow: []action.Kind{r, w}},
	{text: "Lade die Fotos in den Familienordner hoch", lang: "de",
		allow: []action.Kind{r, w, s}},
}

// Spanish verb forms with their pronouns attached.
var encliticCases = []compileCase{
	{text: "busca el contrato y envíalo a ana@ejemplo.es", lang: "es",
		allow: []action.Kind{r, s}, recipients: []string{"ana@ejemplo.es"}},
	{text: "bórralos todos", lang: "es",
		allow: []action.Kind{r, d}},
	{text: "guárdalo en la carpeta de facturas", lang: "es",
		allow: []action.Kind{r, w}},
	{text: "mándaselo a Pedro, por favor", recipients: []string{"Pedro"}, lang: "es",
		allow: []action.Kind{r, s}},
	{text: "la vela está rota, mira el pedido", lang: "es", // "vela" is a word of its own
		allow: []action.Kind{r}},
}

// A read-only phrase after a share is the access it grants.
var accessLevelCases = []compileCase{
	{text: "comparte la hoja con luis@ejemplo.es en solo lectura", lang: "es",
		allow: []action.Kind{r, s}, recipients: []string{"luis@ejemplo.es"}},
	{text: "Read only: summarise the shared folder", lang: "en",
		allow: []action.Kind{r}, deny: readOnlyDeny},
	{text: "Teile den Ordner mit jan@firma.de, nur lesen", lang: "de",
		allow: []action.Kind{r, s}, recipients: []string{"jan@firma.de"}},
	{text: "Nur lesen: teile mir mit, was im Ordner liegt", lang: "de", // the phrase comes first: the task
		allow: []action.Kind{r}, deny: readOnlyDeny},
}

// Prohibitions aimed at a git branch.
var branchCases = []compileCase{
	{text: "push the fix to a new branch and open a PR, never push to main", lang: "en",
		allow: []action.Kind{r, s}, prohibit: []string{"send:branch:main"}},
	{text: "don't force push master", lang: "en",
		allow: []action.Kind{r}, prohibit: []string{"send:branch:master"}},
	{text: "Pushe nicht auf main", lang: "de",
		allow: []action.Kind{r}, prohibit: []string{"send:branch:main"}},
	{text: "don't push anything", lang: "en", // no branch: every push, and only pushes
		allow: []action.Kind{r}, prohibit: []string{"send:operation:push"}},
	{text: "don't change the main config", lang: "en", // "main" as a word, not a branch
		allow: []action.Kind{r}, ask: []action.Kind{w}},
}

// Italian is a table like the others.
var italianCases = []compileCase{
	{text: "Confronta i prezzi su due negozi online, non comprare niente", lang: "it",
		allow: []action.Kind{r, f}, deny: []action.Kind{p}, prohibit: []string{"pay:"}},
	{text: "Riordina la mia casella di posta ma non cancellare nulla", lang: "it",
		allow: []action.Kind{r, w}, deny: []action.Kind{d}},
	{text: "Paga la bolletta della luce, 84,20 € a IT60 X054 2811 1010 0000 0123 456", lang: "it",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"IT60X0542811101000000123456"}, spend: "84.2 EUR"},
	{text: "Sola lettura: riassumi le email di oggi", lang: "it",
		allow: []action.Kind{r}, deny: readOnlyDeny},
	{text: "Manda il report a luca@esempio.it, a nessun altro", lang: "it",
		allow: []action.Kind{r, s}, recipients: []string{"luca@esempio.it"}},
	{text: "correggi il test in ./pkg/auth e fai girare i test", lang: "it",
		allow: []action.Kind{r, w, x}, paths: []string{"pkg/auth/**"}},
	{text: "inviagli il contratto e niente pagamenti per ora", lang: "it", // an enclitic; "per ora" is no duration
		allow: []action.Kind{r, s}, deny: []action.Kind{p}},
	{text: "non pushare su main", lang: "it",
		allow: []action.Kind{r}, deny: []action.Kind{}, prohibit: []string{"send:branch:main"}},
}

// Folders of the user's home named in words.
var homeFolderCases = []compileCase{
	{text: "tidy up my Desktop folder", lang: "en",
		allow: []action.Kind{r, w}, paths: []string{"~/Desktop/**"}},
	{text: "delete the duplicates in my Pictures", lang: "en",
		allow: []action.Kind{r, d}, paths: []string{"~/Pictures/**"}},
	{text: "email my documents to bob@example.com", lang: "en", // "documents", not the Documents folder
		allow: []action.Kind{r, s}, recipients: []string{"bob@example.com"}},
	{text: "Sortiere den Ordner Dokumente nach Jahr", lang: "de",
		allow: []action.Kind{r, w}, paths: []string{"~/Dokumente/**"}},
	{text: "vacía la carpeta Descargas", lang: "es",
		allow: []action.Kind{r, d}, paths: []string{"~/Descargas/**"}},
}

func TestCompileHomeFolders(t *testing.T)   { runCompileCases(t, homeFolderCases) }
func TestCompileItalian(t *testing.T)       { runCompileCases(t, italianCases) }
func TestCompileImpliedKinds(t *testing.T)  { runCompileCases(t, impliedKindCases) }
func TestCompileLightVerbs(t *testing.T)    { runCompileCases(t, lightVerbCases) }
func TestCompileNegations(t *testing.T)     { runCompileCases(t, negationCases) }
func TestCompileNounOrVerb(t *testing.T)    { runCompileCases(t, nounOrVerbCases) }
func TestCompileEnclitics(t *testing.T)     { runCompileCases(t, encliticCases) }
func TestCompileAccessLevel(t *testing.T)   { runCompileCases(t, accessLevelCases) }
func TestCompileBranchTargets(t *testing.T) { runCompileCases(t, branchCases) }
func TestCompileConstructions(t *testing.T) { runCompileCases(t, constructionCases) }
func TestCompileItemAmounts(t *testing.T)   { runCompileCases(t, amountCases) }

// TestCompileExplainsNewRules holds that the rules above say why in the
// draft: the user must see why a kind was granted, kept or left open.
func TestCompileExplainsNewRules(t *testing.T) {
	tests := []struct{ text, meaning, why string }{
		{"Buy two tickets", "ask write", "only prepares it"},
		{"Buy two tickets", "condition write prepares the payment", "can check"},
		{"open a pull request", "allow send", `with object "pull request"`},
		{"run terraform plan for dev. No apply.", "ask execute", "a person to decide"},
		{"post it in #ops, don't post it anywhere else", "keep allow send", "beyond what was named"},
		{"archive them, I never delete them", "nothing ruled out", "their own action"},
		{"never push to main", "prohibit send on branch:main", "other pushes are not"},
		{"write in #ops that the deploy is done", "allow send", "as its addressee"},
		{"fix it, but as a PR", "allow send", "delivered as"},
	}
	for _, tc := range tests {
		dr, err := Compile(tc.text, WithNow(testNow))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(dr.Recognised, func(r Recognition) bool {
			return r.Meaning == tc.meaning && strings.Contains(r.Why, tc.why)
		}) {
			t.Errorf("%q: no %q explained with %q; have %+v", tc.text, tc.meaning, tc.why, dr.Recognised)
		}
	}
}

// TestLexiconRules loads small tables that use the lists behind the rules
// above, and refuses tables that misuse them.
func TestLexiconRules(t *testing.T) {
	table := `code: xx
name: Test
markers: [the, a, it]
determiners: [the, a]
verbs:
  write: [install, save]
  execute: [install, run]
  pay: [buy]
light_verbs:
  write: [make]
  object: [do]
nouns:
  pay: [purchase]
object_nouns:
  send: [ticket]
general_verbs: [run, buy]
enclitics: [it]
separable_particles: [up]
`
	lx, err := loadLexiconFS(fstest.MapFS{"lang/xx.yaml": {Data: []byte(table)}})
	if err != nil {
		t.Fatal(err)
	}
	c := newCompilerFor(lx)
	for _, tc := range []struct {
		text  string
		allow []action.Kind
	}{
		{"install the tool", []action.Kind{r, w, x}}, // listed under two kinds: both
		{"do a ticket", []action.Kind{r, s}},         // a light verb takes its object's kind
		{"do a purchase", []action.Kind{r, p}},       // …and preparing it is asked (settlePreparation)
		{"make a thing", []action.Kind{r, w}},        // …or its own, with no kind in the object
		{"saveit, the file", []action.Kind{r, w}},    // a verb with an enclitic
	} {
		dr := c.compile(tc.text, testNow)
		sameKinds(t, tc.text, dr.Mandate.Allow, tc.allow)
	}
	for _, bad := range []string{
		"code: xx\nlight_verbs: {shop: [do]}\n",               // unknown kind
		"code: xx\ngeneral_verbs: [fly]\n",                    // not a verb
		"code: xx\nenclitics: [two words]\n",                  // not one word
		"code: xx\nseparable_particles: [two words]\n",        // not one word
		"code: xx\nverbs: {any: [touch], write: [touch]}\n",   // "any" and a kind
		"code: xx\nverbs: {touch: [touch], write: [touch]}\n", // "touch" and a kind
		"code: xx\nobject_nouns: {shop: [x]}\n",               // unknown kind
		"code: xx\nnouns: {pay: [a … b]}\n",                   // a gap outside a verb
		"code: xx\nverbs: {send: [let …]}\n",                  // nothing after the gap
		"code: xx\nhands_off: [stay away]\n",                  // hands off without a gap
		"code: xx\nhome_folders: {names: [a/b]}\n",            // not a folder name
	} {
		if _, err := loadLexiconFS(fstest.MapFS{"lang/xx.yaml": {Data: []byte(bad)}}); err == nil {
			t.Errorf("loaded %q", bad)
		}
	}
}
