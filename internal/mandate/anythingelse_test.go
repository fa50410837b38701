package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// anythingElseCases: "don't X anything else" after X with what it acts on
// named is "nothing else" about X: the scope holds what was named and the
// grant stands, as "anyone else" does for people.
var anythingElseCases = []compileCase{
	{text: "Pay my dentist's invoice, 137.50 EUR to DE44500105175407324931, and don't transfer anything else.", lang: "en",
		allow: []action.Kind{r, p}, ask: []action.Kind{w}, accounts: []string{"DE44500105175407324931"}, spend: "137.5 EUR"},
	{text: "Delete ~/tmp/old.log and don't delete anything else.", lang: "en",
		allow: []action.Kind{r, d}, paths: []string{"~/tmp/old.log"}},
	{text: "Email the report to ana@example.com and don't email anything else.", lang: "en",
		allow: []action.Kind{r, s}, recipients: []string{"ana@example.com"}},
	// Without anything named, the "else" cannot be told apart: asked.
	{text: "Delete the branch feature/old in acme/web, and don't delete anything else.", lang: "en",
		allow: []action.Kind{r}, ask: []action.Kind{d}},
}

func TestRuleAnythingElse(t *testing.T) { runCompileCases(t, anythingElseCases) }
