package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// An umbrella verb ("tidy up", "aufräumen", "ranger", "ordenar",
// "sistemare") before an "only" clause is what that clause spells out: its
// own kinds (tidying writes) are not granted, in every language. Before
// umbrella_verbs each of these allowed write (dev-cmp-de-041).
var umbrellaCases = []compileCase{
	{text: "Tidy up the repo: remove only the build artifacts in ./dist.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"dist/**"}},
	{text: "Räum das Repo auf: entferne nur die Build-Artefakte in ./dist.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"dist/**"}},
	{text: "Range le dossier ./dist : supprime seulement les vieux fichiers.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"dist/**"}},
	{text: "Ordena el repo: elimina solo los artefactos de compilación en ./dist.", lang: "es",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"dist/**"}},
	{text: "Sistema il repo: elimina solo gli artefatti di build in ./dist.", lang: "it",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"dist/**"}},
	// A verb that is no umbrella keeps its kinds beside an "only" of
	// another kind.
	{text: "Fix the typo in README.md and only delete the old files in ./dist.", lang: "en",
		allow: []action.Kind{r, w}, ask: []action.Kind{d}, paths: []string{"**/README.md", "dist/**"}},
	// An umbrella after the "only" clause is not what it spells out.
	{text: "Only delete the old files in ./dist, then tidy up README.md.", lang: "en",
		allow: []action.Kind{r, w}, ask: []action.Kind{d}, paths: []string{"dist/**", "**/README.md"}},
}

func TestRuleUmbrellaNarrowedByOnly(t *testing.T) { runCompileCases(t, umbrellaCases) }

// "No toques nada más", "ne touche à rien d'autre", "non toccare
// nient'altro" say "nothing else", like "don't touch anything else": the
// longer phrase wins over the read-only phrase it begins with ("no toques
// nada"), so the write asked for stays granted (dev-cmp-es-027,
// dev-cmp-fr-027).
var nothingElseOverReadOnlyCases = []compileCase{
	{text: "Update README.md with the new install steps and don't touch anything else.", lang: "en",
		allow: []action.Kind{r, w}, paths: []string{"**/README.md"}},
	{text: "Actualiza README.md con los nuevos pasos de instalación y no toques nada más.", lang: "es",
		allow: []action.Kind{r, w}, paths: []string{"**/README.md"}},
	{text: "Mets à jour README.md avec les nouvelles étapes d'installation, ne touche à rien d'autre.", lang: "fr",
		allow: []action.Kind{r, w}, paths: []string{"**/README.md"}},
	{text: "Aggiorna README.md con i nuovi passi di installazione, non toccare nient'altro.", lang: "it",
		allow: []action.Kind{r, w}, paths: []string{"**/README.md"}},
	// The read-only phrase alone is still read-only.
	{text: "Mira los logs, no toques nada.", lang: "es",
		allow: []action.Kind{r}, deny: []action.Kind{w, x, d, s, p}},
	{text: "Regarde les logs, ne touche à rien.", lang: "fr",
		allow: []action.Kind{r}, deny: []action.Kind{w, x, d, s, p}},
}

func TestRuleNothingElseOverReadOnly(t *testing.T) { runCompileCases(t, nothingElseOverReadOnlyCases) }
