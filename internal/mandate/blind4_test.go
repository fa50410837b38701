package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// Restrictions from the blind-r4 compile cases (issue 12): "not yet", the
// user's own act after an auxiliary, items spared by sender in a
// hands-off phrase, "guarda todo lo que", "login form", and nothing
// outside a path.
var blind4Cases = []compileCase{
	{text: "Schreib die Einladung, aber schick sie noch nicht ab.", lang: "de",
		allow: []action.Kind{r, w}, deny: []action.Kind{s}, prohibit: []string{"send:"}},
	{text: "Such mir einen Flug nach Lissabon raus, buchen tue ich selbst.", lang: "de",
		allow: []action.Kind{r, f}},
	{text: "Búscame un vuelo a Lisboa, reservar lo hago yo.", lang: "es",
		allow: []action.Kind{r, f}},
	{text: "Delete the marketing emails in my inbox, but leave anything from @mybank.com alone.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}, prohibit: []string{":@mybank.com"}},
	{text: "Borra los correos del boletín, pero guarda todo lo que venga de mi banco.", lang: "es",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
	{text: "Fix the login form.", lang: "en",
		allow: []action.Kind{r, w}},
	{text: "Arregla el formulario de login.", lang: "es",
		allow: []action.Kind{r, w}},
}

func TestCompileBlind4(t *testing.T) { runCompileCases(t, blind4Cases) }

// "keine Dateien außerhalb von ./src ändern": the exception of a negated
// clause is a path, so nothing but it is in scope.
func TestCompileNegatedExceptionPathsOnly(t *testing.T) {
	for _, text := range []string{
		"Bitte keine Dateien außerhalb von ./src ändern. Refaktoriere die Funktion parseConfig.",
		"Don't change any files outside ./src. Refactor parseConfig.",
	} {
		d, err := Compile(text)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Mandate.Scope.PathsOnly {
			t.Errorf("%q: paths_only not set", text)
		}
	}
}
