package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// A condition on the act ("if the tests pass") cannot be checked on a
// call: the verb it qualifies is asked, in every language. A conditional
// clause of its own qualifies the clause after it; one after its verb
// qualifies that verb. Hedges ("if possible"), "whether" after a verb of
// asking and a condition on a state ("any brand is fine if …") qualify
// nothing.
var actConditionCases = []compileCase{
	{text: "Run the tests and if they pass, push to main.", lang: "en",
		allow: []action.Kind{r, x}, ask: []action.Kind{s}},
	{text: "Push to main if the tests pass.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{s}},
	{text: "If the tests pass, push to main.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{s}},
	{text: "Führ die Tests aus und wenn alles grün ist, pushe auf main.", lang: "de",
		allow: []action.Kind{r, x}, ask: []action.Kind{s}},
	{text: "Pushe auf main, falls die Tests grün sind.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{s}},
	{text: "Lance les tests, et s'ils passent, pousse sur main.", lang: "fr",
		allow: []action.Kind{r, x}, ask: []action.Kind{s}},
	{text: "Ejecuta los tests y, si pasan, haz push a main.", lang: "es",
		allow: []action.Kind{r, x}, ask: []action.Kind{s}},
	{text: "Esegui i test e, se passano, fai il push.", lang: "it",
		allow: []action.Kind{r, x}, ask: []action.Kind{s}},
	{text: "Delete the old logs if the disk is full.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	// Not conditions.
	{text: "Move my meetings from Friday to Monday, same times if possible.", lang: "en",
		allow: []action.Kind{r, w}},
	{text: "Workflow-Datei darfst du anpassen wenn nötig.", lang: "de",
		allow: []action.Kind{r, w}},
	{text: "Ask Diego in a DM if the budget numbers are final.", recipients: []string{"Diego"}, lang: "en",
		allow: []action.Kind{r, s}},
	{text: "Fix the failing test, s'il vous plaît.", lang: "en",
		allow: []action.Kind{r, w}},
}

// "Leave everything else alone" and its equivalents are a "nothing
// else": the paths named hold every kind (Scope.PathsOnly), not a
// prohibition of one unnamed thing.
var restAloneCases = []compileCase{
	{text: "Wipe the cache in ./node_modules/.cache but leave everything else alone.", lang: "en",
		allow: []action.Kind{r, d}, paths: []string{"node_modules/.cache/**"}},
	{text: "Lösch den Cache in ./node_modules/.cache und lass den Rest in Ruhe.", lang: "de",
		allow: []action.Kind{r, d}, paths: []string{"node_modules/.cache/**"}},
	{text: "Supprime le cache dans ./node_modules/.cache et ne touche pas au reste.", lang: "fr",
		allow: []action.Kind{r, d}, paths: []string{"node_modules/.cache/**"}},
	{text: "Borra la caché en ./node_modules/.cache y deja lo demás como está.", lang: "es",
		allow: []action.Kind{r, d}, paths: []string{"node_modules/.cache/**"}},
	{text: "Cancella la cache in ./node_modules/.cache e lascia stare il resto.", lang: "it",
		allow: []action.Kind{r, d}, paths: []string{"node_modules/.cache/**"}},
	// "just the ones …" restricts the items like "only the ones …".
	{text: "Send the invoice PDFs to accounting@firma.example, just the ones from November.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{s}, recipients: []string{"accounting@firma.example"}},
}

func TestCompileActConditions(t *testing.T) { runCompileCases(t, actConditionCases) }
func TestCompileRestAlone(t *testing.T)     { runCompileCases(t, restAloneCases) }

// The working directory leaves the scope with "leave the rest alone".
func TestCompileRestAlonePathsOnly(t *testing.T) {
	for _, text := range []string{
		"Wipe the cache in ./node_modules/.cache but leave everything else alone.",
		"Cancella la cache in ./node_modules/.cache e non toccare altro.",
		// "the rest, no": a verbless "nothing else" (before it, Edit of
		// any file in the project was allowed).
		"Modifica solo i file in ./docs, il resto no.",
	} {
		d, err := Compile(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if !d.Mandate.Scope.PathsOnly {
			t.Errorf("%q: scope keeps the working directory: %+v", text, d.Mandate.Scope)
		}
	}
}
