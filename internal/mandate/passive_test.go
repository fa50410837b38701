package mandate

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// passiveCases: a reflexive or passive form of a verb asks for (or, negated,
// rules out) the verb's kind, in the languages whose lexicon has a passive
// section; a past passive tells what happened and grants nothing.
var passiveCases = []compileCase{
	// Spanish "pasiva refleja": se + third person.
	{text: "El archivo notas.txt se mueve a ~/archivo.", lang: "es",
		allow: []action.Kind{r, w}, paths: []string{"**/notas.txt", "~/archivo/**"}},
	{text: "Los borradores de ~/tmp se borran.", lang: "es",
		allow: []action.Kind{r, d}, paths: []string{"~/tmp/**"}},
	{text: "No se borra nada.", lang: "es",
		allow: []action.Kind{r}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	// Italian "si passivante" and the passive with venire/andare.
	{text: "Il file note.txt si sposta in ~/archivio.", lang: "it",
		allow: []action.Kind{r, w}, paths: []string{"**/note.txt", "~/archivio/**"}},
	{text: "I file temporanei in ~/tmp si cancellano.", lang: "it",
		allow: []action.Kind{r, d}, paths: []string{"~/tmp/**"}},
	{text: "Le vecchie copie in ~/tmp vengono cancellate.", lang: "it",
		allow: []action.Kind{r, d}, paths: []string{"~/tmp/**"}},
	{text: "Non si cancella niente.", lang: "it",
		allow: []action.Kind{r}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	// German passive with a present or modal auxiliary, either side.
	{text: "Die Datei notizen.txt wird nach ~/archiv verschoben.", lang: "de",
		allow: []action.Kind{r, w}, paths: []string{"**/notizen.txt", "~/archiv/**"}},
	{text: "Die alten Logs in ~/tmp werden gelöscht.", lang: "de",
		allow: []action.Kind{r, d}, paths: []string{"~/tmp/**"}},
	{text: "Die Logs in ~/tmp sollen gelöscht werden.", lang: "de",
		allow: []action.Kind{r, d}, paths: []string{"~/tmp/**"}},
	{text: "Es wird nichts gelöscht.", lang: "de",
		allow: []action.Kind{r}, deny: []action.Kind{d}, prohibit: []string{"delete:"}},
	// A passive's subject is what it acts on: a condition said of it, in
	// a clause of its own before the verb, restricts the verb's kind.
	{text: "Alles in /var/log/myapp, was älter als 30 Tage ist, kann gelöscht werden.", lang: "de",
		allow: []action.Kind{r}, ask: []action.Kind{d}, paths: []string{"/var/log/myapp/**"}},
	// A past passive only tells what happened.
	{text: "Sag mir, welche Dateien gestern gelöscht wurden.", lang: "de",
		allow: []action.Kind{r}},
}

func TestRulePassiveForm(t *testing.T) { runCompileCases(t, passiveCases) }

// TestPassiveCandidates: the forms a word may be the passive of.
func TestPassiveCandidates(t *testing.T) {
	pf := passiveForms{prefixes: []string{"ge"}, endings: []string{"t", "et"}, forms: map[string]string{"verschoben": "verschieben"}}
	for _, tc := range []struct {
		w    string
		want []string
	}{
		{"gelöscht", []string{"gelöscht"[:len("gelöscht")-1], "löscht"[:len("löscht")-1]}},
		{"verschoben", []string{"verschieben"}},
		{"gesendet", []string{"gesende", "gesend", "sende", "send"}},
		{"ab", nil},
	} {
		got := pf.candidates(tc.w)
		if len(got) != len(tc.want) {
			t.Errorf("candidates(%q) = %q, want %q", tc.w, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("candidates(%q) = %q, want %q", tc.w, got, tc.want)
				break
			}
		}
	}
}

// TestPassiveTableErrors: a bad passive section is a load error naming it.
func TestPassiveTableErrors(t *testing.T) {
	lx, err := loadLexicon()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []passiveTable{
		{Markers: []string{"se"}, Within: 0},
		{Markers: []string{"se"}, Within: 9},
		{Markers: []string{"se lo"}, Within: 1},
		{Markers: []string{"se"}, Within: 1, Endings: []string{"a b"}},
		{Markers: []string{"se"}, Within: 1, Forms: map[string]string{"x": "y z"}},
	} {
		if _, err := lx.passiveOf(tc); err == nil {
			t.Errorf("passiveOf(%+v) accepted", tc)
		}
	}
}
