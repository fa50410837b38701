package mandate

import "testing"

// Rule 5: verbs map to kinds; nouns are not verbs; light verbs take their
// object's kind; some verbs hold their object; writing to someone sends.
func TestRule05Verbs(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Cancel the order", lang: "en", allow: ks(r, d)},
		{text: "checkout is erroring, look into it", lang: "en", allow: ks(r)},
		{text: "Install the linter and run it on ./lib", lang: "en",
			allow: ks(r, w, x), paths: []string{"lib/**"}},
		{text: "put me on the waitlist", lang: "en", allow: ks(r, w, s)},
		{text: "Lade Paula zum Fest ein", recipients: []string{"Paula"}, lang: "de", allow: ks(r, w, s)},
		{text: "Teile die Funktion auf", lang: "de", allow: ks(r, w)},
		{text: "guárdala en la carpeta docs/", lang: "es", allow: ks(r, w), paths: []string{"docs/**"}},
		{text: "open a PR for the fix", lang: "en", allow: ks(r, s)},
		{text: "make a payment of 40 EUR to the school", lang: "en", allow: ks(r, p), ask: ks(w), spend: "40 EUR"},
		{text: "do the rename we discussed", lang: "en", allow: ks(r, w)},
		{text: "make a chart of the results", lang: "en", allow: ks(r, w)},
		{text: "file the bill under Finance", lang: "en", allow: ks(r, w)},
		{text: "list the repos with open issues", lang: "en", allow: ks(r)},
		{text: "give her read access to the folder", lang: "en", allow: ks(r, w, s)},
		{text: "put a label on every deploy request", lang: "en", allow: ks(r, w)},
		{text: "let #general know the build is green", lang: "en", allow: ks(r, s), recipients: []string{"#general"}},
		{text: "let me know what you find", lang: "en", allow: ks(r)},
		{text: "write in #standup that the build is green", lang: "en", allow: ks(r, s), recipients: []string{"#standup"}},
		{text: "draft a note to ops@example.com", lang: "en", allow: ks(r, w), recipients: []string{"ops@example.com"}},
		{text: "fix the workflow, but as a PR", lang: "en", allow: ks(r, w, s)},
	})
}
