package mandate

import (
	"slices"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// Item conditions put the kinds they qualify to a person, in every
// language; "only" before reading, before names or before "as a PR" does
// not.
var itemConditionCases = []compileCase{
	// "Only delete": all the clean-up asks is deleting, so its write is
	// not granted (narrowByOnly).
	{text: "Clean up my Downloads folder, only delete files older than a year.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"~/Downloads/**"}},
	{text: "Unsubscribe me from the newsletters, but keep everything from my bank.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Archive the old threads unless they are starred", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	{text: "Delete everything in ./build except the generated files", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"build/**"}},
	{text: "Lösche die Newsletter, aber behalte alles von meiner Bank.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Supprime uniquement les fichiers plus anciens que 2020 dans ~/tmp", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"~/tmp/**"}},
	{text: "Borra los correos de promociones, pero conserva los de mi banco", lang: "es",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Cancella le email vecchie, ma tieni quelle della banca", lang: "it",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	// Not conditions on items:
	{text: "Only read the logs", lang: "en",
		allow: []action.Kind{r}, deny: []action.Kind{w, d, s, p, x}},
	{text: "Reply only to dana@example.com", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"dana@example.com"}},
	{text: "Keep an eye on the build and tell me when it is green", lang: "en",
		allow: []action.Kind{r}},
}

func TestRuleItemConditions(t *testing.T) { runCompileCases(t, itemConditionCases) }

// TestExtensionNarrowsFolder: "the .log files in ~/tmp" is ~/tmp/**/*.log,
// not all of ~/tmp beside every .log file anywhere.
func TestExtensionNarrowsFolder(t *testing.T) {
	for text, want := range map[string][]string{
		"Delete all the .log files in ~/tmp.":         {"~/tmp/**/*.log"},
		"Lösche alle .log-Dateien in ~/tmp.":          {"~/tmp/**/*.log"},
		"Supprime tous les fichiers .log dans ~/tmp.": {"~/tmp/**/*.log"},
		"Delete ~/tmp/old":                            {"~/tmp/old/**"},
	} {
		dr, err := Compile(text, WithNow(testNow))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dr.Mandate.Scope.Paths, want) {
			t.Errorf("%q: paths %v, want %v", text, dr.Mandate.Scope.Paths, want)
		}
	}
}

// A delete whose items a preposition restricts in words the draft cannot
// read ("the emails from LinkedIn") is asked; where the preposition names
// the container ("delete it from my calendar") or the scope holds the
// items, it is granted.
func TestCompileLimitedDelete(t *testing.T) {
	r, d := action.Read, action.Delete
	runCompileCases(t, []compileCase{
		{text: "Delete all emails from LinkedIn.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{d}},
		{text: "Delete it from my calendar.", lang: "en", allow: []action.Kind{r, d}},
		{text: "Lösche alle Mails von LinkedIn.", lang: "de", allow: []action.Kind{r}, ask: []action.Kind{d}},
		{text: "Supprime tous les mails de Vinted.", lang: "fr", allow: []action.Kind{r}, ask: []action.Kind{d}},
		{text: "Borra todos los correos de LinkedIn.", lang: "es", allow: []action.Kind{r}, ask: []action.Kind{d}},
		{text: "Borra todos los archivos .log de ~/tmp.", lang: "es", allow: []action.Kind{r, d}, paths: []string{"~/tmp/**/*.log"}},
		{text: "Cancella tutte le mail di LinkedIn.", lang: "it", allow: []action.Kind{r}, ask: []action.Kind{d}},
	})
}

// A negation that reaches no verb, noun or entity, after a granting verb
// in its clause, restricts the verb's items: asked when the words after it
// are not all read; after a verb of saying it is what is said.
func TestCompileDanglingNegation(t *testing.T) {
	r, d, s := action.Read, action.Delete, action.Send
	runCompileCases(t, []compileCase{
		{text: "Delete the files not tracked by git.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{d}},
		{text: "Tell the team the build is not green.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Lösche alle nicht versionierten Dateien.", lang: "de", allow: []action.Kind{r}, ask: []action.Kind{d}},
		{text: "Supprime les fichiers pas suivis par git.", lang: "fr", allow: []action.Kind{r}, ask: []action.Kind{d}},
		{text: "Borra los archivos no versionados en git.", lang: "es", allow: []action.Kind{r}, ask: []action.Kind{d}},
		{text: "Cancella i file non tracciati da git.", lang: "it", allow: []action.Kind{r}, ask: []action.Kind{d}},
	})
}

// A verb that leaves some items out ("skip", "überspring", "ignore",
// "omite", "salta") restricts the verb before it as "only" does: its kinds
// are put to a person.
func TestCompileSpareVerbs(t *testing.T) {
	r, s, d := action.Read, action.Send, action.Delete
	runCompileCases(t, []compileCase{
		{text: "Reply to all emails from customers, but skip the angry ones.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Delete the old branches, skip release ones.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{d}},
		{text: "Beantworte alle Kundenmails, aber überspring die von Anwälten.", lang: "de", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Réponds à tous les mails des clients, mais ignore ceux des avocats.", lang: "fr", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Responde a todos los correos de clientes, pero omite los de abogados.", lang: "es", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Rispondi a tutte le mail dei clienti, ma salta quelle degli avvocati.", lang: "it", allow: []action.Kind{r}, ask: []action.Kind{s}},
	})
}

// "But" before a noun phrase with no verb of its own is "except": a
// named resource is kept out of the verb's reach, anything else puts the
// verb's kinds to a person. ("Alles außer", "tout sauf", "todo menos",
// "tutto tranne" are exceptions of their own, see TestRule09Scope.)
func TestCompileButExcept(t *testing.T) {
	r, s, d, w := action.Read, action.Send, action.Delete, action.Write
	runCompileCases(t, []compileCase{
		{text: "Delete everything in ~/tmp but the config files.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"~/tmp/**"}},
		{text: "Delete everything in ~/tmp but ~/tmp/keep.", lang: "en", allow: []action.Kind{r, d}, paths: []string{"~/tmp/**"}, prohibit: []string{"delete:~/tmp/keep/**"}},
		{text: "Reply to everyone but the recruiters.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{s}},
		{text: "Fix the workflow, but as a PR.", lang: "en", allow: []action.Kind{r, w, s}},
	})
}

// TestAgeByPreposition: "de más de un año", "de plus d'un an", "di più di
// un anno" are an age condition on the delete when an age follows them
// (older_than_with_age), and no condition before anything else.
func TestAgeByPreposition(t *testing.T) {
	for _, tc := range []struct {
		text string
		days int // 0: no condition
	}{
		{"Borra los archivos de ~/tmp de más de un año.", 365},
		{"Borra los archivos de ~/tmp con más de 30 días.", 30},
		{"Borra los archivos de más de un año en ~/tmp.", 365},
		{"Supprime les fichiers de ~/tmp de plus d'un an.", 365},
		{"Supprime dans ~/tmp les fichiers de plus de 30 jours.", 30},
		{"Supprime les fichiers de ~/tmp plus vieux que 30 jours.", 30},
		{"Cancella i file in ~/tmp di più di un anno.", 365},
		{"Cancella i file in ~/tmp più vecchi di un anno.", 365},
		{"Lösche die Dateien in ~/tmp, die älter als ein Jahr sind.", 365},
		{"Borra los pagos de más de 100 EUR.", 0},
	} {
		if got, _ := deleteAge(t, tc.text); got != tc.days {
			t.Errorf("%q: delete older than %d days, want %d", tc.text, got, tc.days)
		}
	}
}

// TestFrontedPlaceHoldsNothingElse: a place put before the verb ("In
// ~/tmp, delete …", "Dans ~/tmp, supprime …", "In ~/tmp cancella …") holds
// the verb's object as one after it does, so "nothing else" leaves the age
// condition checkable; a clause with a verb of its own does not lend its
// resource to the next verb, and "the logs" still say more than the age.
func TestFrontedPlaceHoldsNothingElse(t *testing.T) {
	for _, tc := range []struct {
		text string
		days int // 0: no condition on delete
	}{
		{"In ~/tmp, delete the files older than 30 days, nothing else.", 30},
		{"In ~/tmp delete the files older than 30 days, nothing else.", 30},
		{"Dans ~/tmp, supprime les fichiers de plus de 30 jours, rien d'autre.", 30},
		{"En ~/tmp, borra los archivos de más de 30 días, nada más.", 30},
		{"In ~/tmp cancella i file più vecchi di 30 giorni, nient'altro.", 30},
		{"In ~/Downloads lösche alles, was älter als ein Jahr ist, sonst nichts.", 365},
		{"In ~/tmp, delete the logs older than 30 days, nothing else.", 0},
		{"Read ~/tmp/notes.txt, delete the files older than 30 days, nothing else.", 0},
	} {
		if got, m := deleteAge(t, tc.text); got != tc.days || !slices.Contains(m.Ask, d) {
			t.Errorf("%q: delete older than %d days (ask %v), want %d asked", tc.text, got, m.Ask, tc.days)
		}
	}
}

// deleteAge compiles text and returns the age in days its delete
// condition states (0: none) and the mandate.
func deleteAge(t *testing.T, text string) (int, *Mandate) {
	t.Helper()
	dr, err := Compile(text, WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, c := range dr.Mandate.Conditions {
		if c.Kind == d {
			got = c.OlderThanDays
		}
	}
	return got, dr.Mandate
}
