package mandate

import (
	"slices"
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

// A question word right after a verb that only reads opens an indirect
// question ("dimmi cosa cambia", "find out how much it would cost to
// upgrade", "dime cuánto costaría pagar"): its verbs are what is asked
// about, so their kinds are asked, never granted, in every language.
// Before the rule each of these granted the kind (dev-cmp-wider12-it-005).
var indirectQuestionCases = []compileCase{
	{text: "Confronta le due versioni del contratto in ~/Documenti/contratti e dimmi cosa cambia.", lang: "it",
		allow: []action.Kind{r}, ask: []action.Kind{w}, paths: []string{"~/Documenti/contratti/**"}},
	{text: "Find out how much it would cost to upgrade the plan.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w}},
	{text: "Dime cuánto costaría pagar la factura.", lang: "es",
		allow: []action.Kind{r}, ask: []action.Kind{p}},
	{text: "Dis-moi combien il faudrait payer pour renouveler.", lang: "fr",
		allow: []action.Kind{r}, ask: []action.Kind{p}},
	{text: "Sag mir, welche Mails ich löschen soll.", lang: "de",
		allow: []action.Kind{r}},
	// German puts a comma before the question: the indirect question is
	// the segment after the reading verb.
	{text: "Schau nach, welche Rechnungen noch bezahlt werden müssen.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{p}},
	{text: "Schau nach, ob die Rechnung bezahlt ist, und bezahl sie dann.", lang: "de",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}},
	// A verb asked for outright keeps its grant…
	{text: "Fix the bug in ./lib and tell me what changed.", lang: "en",
		allow: []action.Kind{r, w}, paths: []string{"lib/**"}},
	// …and so does a verb of its own after "and".
	{text: "Check why the build fails in ./lib and fix it.", lang: "en",
		allow: []action.Kind{r, w}, paths: []string{"lib/**"}},
	// A general "don't" of the kind still denies it.
	{text: "Confronta le due versioni e dimmi cosa cambia, ma non modificare niente.", lang: "it",
		allow: []action.Kind{r}, deny: []action.Kind{w}},
	// A denial of one operation ("no apply") leaves the kind asked.
	{text: "run a terraform plan for staging and tell me what would change. no apply", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{w, x}},
}

func TestRuleIndirectQuestionAsks(t *testing.T) { runCompileCases(t, indirectQuestionCases) }

// "…, but only in ./docs" restricts the verb before it to what it names:
// it is no "but" that spares something ("delete everything but the
// config files"). Before the rule the English sentence prohibited writing
// in ./docs and left every other path open ("but" is the one break word
// that can mean "except"); the other languages read it right already.
var butOnlyCases = []compileCase{
	{text: "Fix the lint errors, but only in ./docs.", lang: "en",
		allow: []action.Kind{r, w}, paths: []string{"docs/**"}},
	{text: "Korrigiere die Tippfehler, aber nur in ./docs.", lang: "de",
		allow: []action.Kind{r, w}, paths: []string{"docs/**"}},
	{text: "Corrige les fautes, mais seulement dans ./docs.", lang: "fr",
		allow: []action.Kind{r, w}, paths: []string{"docs/**"}},
	{text: "Corrige las erratas, pero solo en ./docs.", lang: "es",
		allow: []action.Kind{r, w}, paths: []string{"docs/**"}},
	{text: "Correggi i refusi, ma solo in ./docs.", lang: "it",
		allow: []action.Kind{r, w}, paths: []string{"docs/**"}},
	// A "but" with nothing restricting still spares.
	{text: "Delete everything in ~/tmp but the config files.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"~/tmp/**"}},
}

func TestRuleButOnlyRestricts(t *testing.T) { runCompileCases(t, butOnlyCases) }

// TestExceptedFileType: a file type after an exception word is every file
// of that type in the folder named ("~/tmp/**/*.log"), not a file named
// ".log", and a delete of the folder itself, which would take them with
// it, is prohibited too.
func TestExceptedFileType(t *testing.T) {
	texts := []string{
		"Borra los archivos de ~/tmp, excepto los .log.",
		"Delete the files in ~/tmp except the .log files.",
		"Supprime les fichiers de ~/tmp sauf les .log.",
		"Lösche die Dateien in ~/tmp außer den .log-Dateien.",
		"Cancella i file in ~/tmp tranne i .log.",
	}
	env := Env{WorkDir: "/home/sam/projects/site", HomeDir: "/home/sam"}
	del := func(p string) action.Action {
		return action.Action{Kind: action.Delete, Paths: []action.PathRef{{Path: p}}}
	}
	for _, text := range texts {
		dr, err := Compile(text, WithNow(testNow))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(dr.Mandate.Prohibitions, func(p Prohibition) bool { return p.Target == "~/tmp/**/*.log" }) {
			t.Errorf("%q: prohibitions %+v, want one on ~/tmp/**/*.log", text, dr.Mandate.Prohibitions)
		}
		for p, want := range map[string]bool{
			"/home/sam/tmp/app.log":     true,
			"/home/sam/tmp/old/x.log":   true,
			"/home/sam/tmp":             true, // rm -rf ~/tmp
			"/home/sam/tmp/a.txt":       false,
			"/home/sam/projects/site/x": false,
		} {
			a := del(p)
			if got := len(dr.Mandate.CheckIn(&a, env, testNow).Prohibited) > 0; got != want {
				t.Errorf("%q: delete %s prohibited = %v, want %v", text, p, got, want)
			}
		}
	}
}
