package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// An exception ("außer", "except", "sauf", "salvo", "tranne") narrows
// like "only": after an umbrella verb, the excepting clause spells the
// tidying out, so tidying's own write is not granted. Before the rule
// "Räum meinen Posteingang auf: alles außer … löschen" allowed write
// (dev-cmp-wider12-de-002).
var exceptionNarrowsCases = []compileCase{
	{text: "Räum meinen Posteingang auf: alles außer den Mails von meiner Bank löschen.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Tidy up my inbox: delete everything except the mails from my bank.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Range ma boîte de réception : supprime tout sauf les mails de ma banque.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Ordena mi bandeja de entrada: borra todo salvo los correos de mi banco.", lang: "es",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Sistema la mia casella di posta: cancella tutto tranne le email della mia banca.", lang: "it",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	// A verb that is no umbrella and shares no kind keeps its grant.
	{text: "Fix the typo in README.md and delete everything in ./dist except the generated files.", lang: "en",
		allow: []action.Kind{r, w}, ask: []action.Kind{d}, paths: []string{"**/README.md", "dist/**"}},
}

func TestRuleExceptionNarrowsLikeOnly(t *testing.T) { runCompileCases(t, exceptionNarrowsCases) }
