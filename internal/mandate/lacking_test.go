package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// Items that lack something ("with no reply", "ohne Antwort", "sans
// réponse", "sin respuesta", "senza risposta") are a condition on what
// the verb acts on: its kinds are asked, and nothing is ruled out. A
// "without" before a verb ("without deleting anything") still prohibits.
func TestRuleItemsLacking(t *testing.T) {
	r, w, d := action.Read, action.Write, action.Delete
	runCompileCases(t, []compileCase{
		{text: "Archive the threads with no reply.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{w}},
		{text: "Delete the drafts with no subject.", lang: "en", allow: []action.Kind{r}, ask: []action.Kind{d}},
		{text: "Archiviere alle Mails ohne Antwort.", lang: "de", allow: []action.Kind{r}, ask: []action.Kind{w}},
		{text: "Archive les conversations sans réponse.", lang: "fr", allow: []action.Kind{r}, ask: []action.Kind{w}},
		{text: "Archiva los hilos sin respuesta.", lang: "es", allow: []action.Kind{r}, ask: []action.Kind{w}},
		{text: "Archivia le conversazioni senza risposta.", lang: "it", allow: []action.Kind{r}, ask: []action.Kind{w}},
		{text: "Clean up the folder without deleting anything.", lang: "en",
			allow: []action.Kind{r, w}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	})
}
