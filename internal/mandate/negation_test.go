package mandate

import "testing"

// Rule 6: negations before or after a verb, and negated nouns, deny a kind
// and prohibit the clause; with an entity the prohibition is targeted.
func TestRule06Negations(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "no purchases", lang: "en", allow: ks(r), deny: ks(p), prohibit: []string{"pay:"}},
		{text: "keine Buchungen", lang: "de", allow: ks(r), deny: ks(p)},
		{text: "aucune suppression", lang: "fr", allow: ks(r), deny: ks(d)},
		{text: "don't email bob@x.com", lang: "en", allow: ks(r), prohibit: []string{"send:bob@x.com"}},
		{text: "ne supprime rien dans ~/Documents", lang: "fr", allow: ks(r), prohibit: []string{"delete:~/Documents/**"}},
		{text: "don't touch anything", lang: "en", allow: ks(r), deny: readOnlyDeny},
		{text: "fix the tests without touching the logic", lang: "en", allow: ks(r), ask: ks(w)},
		{text: "Reply to the new tickets, leave the open ones alone", lang: "en", allow: ks(r, s), ask: ks(w)},
		{text: "don't push to main", lang: "en", allow: ks(r), prohibit: []string{"send:branch:main"}},
		{text: "never force push master", lang: "en", allow: ks(r), prohibit: []string{"send:branch:master"}},
		{text: "I never read them", lang: "en", allow: ks(r)},
		{text: "no need to reply", lang: "en", allow: ks(r)},
	})
}

// Rule 6, pronouns: "no one", "nobody", "niemandem", "personne", "nadie",
// "nessuno" after a verb rule out its kind as a whole, in every language —
// also with words after them ("tell nobody about the offer").
func TestRule06NegationByPronoun(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Reply to no one, summarise the new mail.", lang: "en", allow: ks(r), deny: ks(s), prohibit: []string{"send:"}},
		{text: "Tell nobody about the offer", lang: "en", allow: ks(r), deny: ks(s)},
		{text: "Antworte niemandem, lies nur die neuen Mails und fass sie zusammen.", lang: "de", allow: ks(r), deny: ks(s)},
		{text: "Réponds à personne, résume les nouveaux mails.", lang: "fr", allow: ks(r), deny: ks(s)},
		{text: "Ne réponds à personne", lang: "fr", allow: ks(r), deny: ks(s)},
		{text: "Responde a nadie y resume los correos.", lang: "es", allow: ks(r), deny: ks(s)},
		{text: "Non rispondere a nessuno, riassumi le email.", lang: "it", allow: ks(r), deny: ks(s)},
	})
}

// Rule 6, "I don't want you to X": the construction prohibits X in every
// language, as a plain "don't X" does — the subjunctive or second-person
// form of the verb after it included ("que tu supprimes", "dass du
// löschst").
func TestRule06DontWantYouTo(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "I don't want you to delete anything.", lang: "en", allow: ks(r), deny: ks(d)},
		{text: "Ich will nicht, dass du etwas löschst.", lang: "de", allow: ks(r), deny: ks(d)},
		{text: "Je ne veux pas que tu supprimes.", lang: "fr", allow: ks(r), deny: ks(d)},
		{text: "No quiero que borres nada.", lang: "es", allow: ks(r), deny: ks(d)},
		{text: "Non voglio che tu cancelli nulla.", lang: "it", allow: ks(r), deny: ks(d)},
		{text: "I don't want you to pay.", lang: "en", allow: ks(r), deny: ks(p)},
		{text: "Ich will nicht, dass du bezahlst.", lang: "de", allow: ks(r), deny: ks(p)},
		{text: "Je ne veux pas que tu paies.", lang: "fr", allow: ks(r), deny: ks(p)},
		{text: "No quiero que pagues.", lang: "es", allow: ks(r), deny: ks(p)},
		{text: "Non voglio che tu paghi.", lang: "it", allow: ks(r), deny: ks(p)},
		{text: "Ich möchte nicht, dass du etwas schickst.", lang: "de", allow: ks(r), deny: ks(s)},
	})
}

// "Without asking me first" after a verb asks it, as "ask me before" does
// before one — with a "don't" before the verb too, and for the verb of the
// clause before when its own clause has none ("…, aber nicht ohne mich zu
// fragen" asks the paying, not a send).
func TestRuleAskAfter(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Draft a reply to Anna, but don't send it without asking me first.", lang: "en", allow: ks(r, w), ask: ks(s)},
		{text: "Bezahl die Rechnung von Stefan, aber nicht ohne mich zu fragen.", lang: "de", allow: ks(r), ask: ks(p)},
		{text: "Prépare la réponse à Anna, mais ne l'envoie pas sans me demander.", lang: "fr", allow: ks(r, w), ask: ks(s)},
		{text: "Prepara la respuesta a Ana, pero no la envíes sin preguntarme.", lang: "es", allow: ks(r, w), ask: ks(s)},
		{text: "Prepara la risposta ad Anna, ma non mandarla senza chiedermi.", lang: "it", allow: ks(r, w), ask: ks(s)},
		{text: "Draft a reply to Anna. Don't send it.", lang: "en", allow: ks(r, w), deny: ks(s)},
	})
}

// German sends with a separable particle ("abschicken", "absenden",
// "schick … ab") are sends, so "Nicht abschicken" rules the send out of a
// draft's task; the particle at the clause's end is the same verb.
func TestSeparableSendVerbs(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Schreib einen Entwurf an Anna. Nicht abschicken.", lang: "de", allow: ks(r, w), deny: ks(s)},
		{text: "Schreib einen Entwurf an Anna, aber nicht absenden.", lang: "de", allow: ks(r, w), deny: ks(s)},
		{text: "Schreib einen Entwurf an Anna, aber schick ihn nicht ab.", lang: "de", allow: ks(r, w), ask: ks(s)},
		{text: "Schick den Bericht an Anna ab.", lang: "de", allow: ks(r, s), recipients: []string{"Anna"}},
	})
}

// Rule 6, quantifiers: a negative determiner before items of any sort as
// the verb's whole object ("delete no files", "ne supprime aucun fichier")
// and "anything" after a negated verb ("don't delete anything", "ne
// supprime quoi que ce soit") rule out the verb's kind as a whole, in every
// language, as "delete nothing" does. Items described further ("no files
// older than a year") are some items, and stay asked.
func TestRule06NegationByQuantifier(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "Tidy the repo but delete no files.", lang: "en", allow: ks(r, w), deny: ks(d)},
		{text: "Tidy the repo but don't delete anything.", lang: "en", allow: ks(r, w), deny: ks(d)},
		{text: "Räum das Repo auf, aber lösche keine Dateien.", lang: "de", allow: ks(r, w), deny: ks(d)},
		{text: "Räum das Repo auf, aber lösche nichts.", lang: "de", allow: ks(r, w), deny: ks(d)},
		{text: "Range le dépôt, mais ne supprime aucun fichier.", lang: "fr", allow: ks(r, w), deny: ks(d)},
		{text: "Range le dépôt, mais ne supprime quoi que ce soit.", lang: "fr", allow: ks(r, w), deny: ks(d)},
		{text: "Range le dépôt, mais je ne veux pas que tu supprimes quoi que ce soit.", lang: "fr", allow: ks(r, w), deny: ks(d)},
		{text: "Range le dépôt, mais ne supprime rien.", lang: "fr", allow: ks(r, w), deny: ks(d)},
		{text: "Ordena el repositorio, pero no borres ningún archivo.", lang: "es", allow: ks(r, w), deny: ks(d)},
		{text: "Ordena el repositorio, pero no borres nada.", lang: "es", allow: ks(r, w), deny: ks(d)},
		{text: "Riordina il repository, ma non cancellare nessun file.", lang: "it", allow: ks(r, w), deny: ks(d)},
		{text: "Riordina il repository, ma non cancellare niente.", lang: "it", allow: ks(r, w), deny: ks(d)},
		{text: "Riordina il repository, ma non cancellare nulla.", lang: "it", allow: ks(r, w), deny: ks(d)},
		{text: "Tidy the repo but delete no files older than a year.", lang: "en", allow: ks(r, w), ask: ks(d)},
		// Spanish negative imperatives of writing verbs are verbs too.
		{text: "Lee los logs y no modifiques ningún archivo.", lang: "es", allow: ks(r), deny: ks(w)},
		{text: "Lee los logs y no cambies nada.", lang: "es", allow: ks(r), deny: ks(w)},
		{text: "Lee el README y no edites ningún archivo.", lang: "es", allow: ks(r), deny: ks(w)},
	})
}

// Cloning a repository into a folder writes it there: "clone … into ~/src
// and run its tests" grants the write of the clone with the fetch and the
// run, in English, French, Spanish and Italian.
func TestCloneWrites(t *testing.T) {
	runCompileCases(t, []compileCase{
		{text: "clone github.com/quill-labs/tinyparse into ~/src and run its test suite", lang: "en", allow: ks(r, f, w, x), paths: []string{"~/src/**"}, hosts: []string{"github.com"}},
		{text: "clone github.com/quill-labs/tinyparse dans ~/src et lance ses tests", lang: "fr", allow: ks(r, f, w, x), paths: []string{"~/src/**"}, hosts: []string{"github.com"}},
		{text: "clona github.com/quill-labs/tinyparse en ~/src y ejecuta sus tests", lang: "es", allow: ks(r, f, w, x), paths: []string{"~/src/**"}, hosts: []string{"github.com"}},
		{text: "clona github.com/quill-labs/tinyparse in ~/src e lancia i test", lang: "it", allow: ks(r, f, w, x), paths: []string{"~/src/**"}, hosts: []string{"github.com"}},
	})
}
