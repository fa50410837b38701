package mandate

import "testing"

// Rule 8: reading about the web, web verbs and a host named for a buying
// verb grant fetch.
func TestRule08Web(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "compare flight prices for Lisbon", lang: "en", allow: ks(r, f)},
		{text: "research the best standing desks", lang: "en", allow: ks(r, f)},
		{text: "buy the charger on amazon.de", lang: "en", allow: ks(r, f, p), ask: ks(w), hosts: []string{"amazon.de"}},
		{text: "read the README", lang: "en", allow: ks(r)},
	})
}

// Rule 9: entities in a positive clause go to their dimension; after an
// exception word the sense flips.
func TestRule09Scope(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: `pay "Stadtwerke München" 84 EUR`, lang: "en", allow: ks(r, p), ask: ks(w),
			accounts: []string{"Stadtwerke München"}, spend: "84 EUR"},
		{text: "email everyone at orbit-saas.com", lang: "en", allow: ks(r, s), recipients: []string{"*@orbit-saas.com"}},
		{text: "delete everything in ~/tmp except ~/tmp/keep/", lang: "en", allow: ks(r, d),
			paths: []string{"~/tmp/**"}, prohibit: []string{"delete:~/tmp/keep/**"}},
		{text: "don't email anyone outside orbit-saas.com", lang: "en", allow: ks(r), ask: ks(s),
			recipients: []string{"*@orbit-saas.com"}},
	})
}
