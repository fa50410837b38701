package mandate

import (
	"testing"
)

// Files named as what a write or delete acts on, with no directory named,
// are the only paths in scope: the working directory is not beside them.
func TestRuleFileObjectScopesWrites(t *testing.T) {
	cases := []struct {
		text      string
		pathsOnly bool
	}{
		{"Update notes.txt with today's date.", true},
		{"Aktualisiere config.yaml mit dem neuen Port.", true},
		{"Mets à jour notes.txt avec la date du jour.", true},
		{"Edita config.yaml y cambia el puerto a 8080.", true},
		{"Aggiorna note.txt con la data di oggi.", true},
		{"Write the summary to notes/summary.md.", true},
		{"Delete old.log.", true},
		// A directory named: the task works there, the working directory stays.
		{"Fix the failing test in ./pkg/auth.", false},
		{"Update CHANGELOG.md and fix the test in ./pkg/auth.", false},
		// A file type names many files; a file a change is for is not the
		// file changed.
		{"Remove the .orig and .rej files left over from the patch.", false},
		{"Write unit tests for src/config/loader.ts.", false},
		{"Schreib Tests für src/config/loader.ts.", false},
		// A file only read names nothing to change.
		{"Read notes.txt and fix the typo in the code.", false},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			d0, err := Compile(c.text)
			if err != nil {
				t.Fatal(err)
			}
			if got := d0.Mandate.Scope.PathsOnly; got != c.pathsOnly {
				t.Errorf("paths_only = %v, want %v (paths %q, allow %v)", got, c.pathsOnly, d0.Mandate.Scope.Paths, d0.Mandate.Allow)
			}
		})
	}
}
