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
