package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// Never wider than the words (issue 12): restrictions a user says every
// day, in the testdata/compile/intent12d.jsonl cases' shapes.

// "…, but ask me first" in a clause of its own asks about the verb before
// it (askPrevious), as "without asking me" does; at the end of the verb's
// own clause it does the same (askAfter).
var askFirstAfterCases = []compileCase{
	{text: "Delete the logs in ./logs, but ask me first.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"logs/**"}},
	{text: "Delete the logs but ask me first", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Lösche die Logs in ./logs, aber frag mich vorher.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"logs/**"}},
	{text: "Publie l'annonce dans #annonces, mais demande-moi d'abord.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{s}, recipients: []string{"#annonces"}},
	{text: "Cancella i log in ./logs, ma chiedimi prima.", lang: "it",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"logs/**"}},
}

// A negative determiner before items of any sort and an item condition
// ("delete no files older than a year") asks for no item: the verb is
// ruled out, not asked (noItems).
var noItemsConditionCases = []compileCase{
	{text: "Delete no files older than a year.", lang: "en",
		allow: []action.Kind{r}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	{text: "Lösche keine Dateien, die älter als ein Jahr sind.", lang: "de",
		allow: []action.Kind{r}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	{text: "Non cancellare nessun file più vecchio di un anno.", lang: "it",
		allow: []action.Kind{r}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	// Without the condition, as before.
	{text: "Delete no files.", lang: "en",
		allow: []action.Kind{r}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
}

// A delete of the messages in a named channel (channelDeletes): the
// channel bounds sending, not deleting, and a delete call does not show
// it, so deleting is asked.
var channelDeleteCases = []compileCase{
	{text: "Delete my messages in #random.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}, recipients: []string{"#random"}},
	{text: "Supprime mes messages dans #bavardage, rien d'autre.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{d}, recipients: []string{"#bavardage"}},
	{text: "Cancella solo i miei messaggi in #prove.", lang: "it",
		allow: []action.Kind{r}, ask: []action.Kind{d}, recipients: []string{"#prove"}},
	// Posting there is a send the channel bounds.
	{text: "Post the release notes in #releases.", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"#releases"}},
}

// An "only" sentence spells out an umbrella verb of the sentence before
// it: the umbrella's other kinds are not granted.
var onlyNextSentenceCases = []compileCase{
	{text: "Clean up the repo. Actually, only remove the files in ./build.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"build/**"}},
	{text: "Räum meine Mails auf. Aber lösche nur die von LinkedIn.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Range ~/Documents. Supprime seulement les fichiers .tmp.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"~/Documents/**/*.tmp"}},
	// A verb that is no umbrella keeps its grant.
	{text: "Fix the typo in README.md. Only delete the old files in ./dist.", lang: "en",
		allow: []action.Kind{r, w}, ask: []action.Kind{d}, paths: []string{"**/README.md", "dist/**"}},
}

func TestCompileOnlyNextSentence(t *testing.T) { runCompileCases(t, onlyNextSentenceCases) }
func TestCompileAskFirstAfter(t *testing.T)    { runCompileCases(t, askFirstAfterCases) }
func TestCompileNoItemsCondition(t *testing.T) { runCompileCases(t, noItemsConditionCases) }
func TestCompileChannelDeletes(t *testing.T)   { runCompileCases(t, channelDeleteCases) }
