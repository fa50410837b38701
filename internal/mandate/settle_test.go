package mandate

import "testing"

// Rule 13: read is granted implicitly unless a clause prohibits it.
func TestRule13ImplicitRead(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Send the report to alice@example.com", lang: "en", allow: ks(r, s), recipients: []string{"alice@example.com"}},
		{text: "Delete the build cache", lang: "en", allow: ks(r, d)},
		{text: "don't read my private mails", lang: "en", allow: nil, ask: nil, deny: ks(r)},
		{text: "Bezahle die Rechnung", lang: "de", allow: ks(r, p), ask: ks(w)},
	})
}

// Rule 14: a kind both granted and denied is denied — unless every denial
// is narrower than the kind: "nowhere else" keeps the grant; one thing,
// one operation, a condition or "ask me first" puts the kind to a person.
func TestRule14Conflicts(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Buy the charger. Actually, don't buy anything.", lang: "en", allow: ks(r), deny: ks(p)},
		{text: "DM it to me, don't post it anywhere else", lang: "en", allow: ks(r, s)},
		{text: "fix the migration, but don't change the database schema", lang: "en", allow: ks(r), ask: ks(w)},
		{text: "run a terraform plan, no apply", lang: "en", allow: ks(r), deny: ks(w), ask: ks(x)},
		{text: "if one looks like phishing, don't change anything", lang: "en", allow: ks(r), deny: ks(w)},
		{text: "ask me before deleting anything over 1 GB", lang: "en", allow: ks(r), ask: ks(d)},
		{text: "check why, but don't modify the staging database", lang: "en", allow: ks(r), ask: ks(w)},
	})
}
