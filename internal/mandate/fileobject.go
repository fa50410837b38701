// Files named as the object of a change: "update notes.txt", "edita
// config.yaml", "mets à jour notes.txt" ask for a change to that file.
// The working directory is in scope beside named paths so that a task in
// a directory ("fix the test in ./pkg/auth") may touch what it needs; a
// task that names only files to change names no such directory, and a
// write to any other file of the project would be wider than the words.

package mandate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
)

// notePathObject records, for a path put in scope (token i of the
// segment), whether it is a file a write or delete verb acts on. A file
// type (".pyc files", "**/.pyc") names many files, and a file after a
// preposition of purpose ("write tests for src/loader.ts") is not the one
// changed.
func (b *build) notePathObject(st *segState, i int, e *entity, a *anchor) {
	if e.kind != entPath {
		return
	}
	fileType := strings.HasPrefix(e.value, "**/.")
	purpose := i > 0 && b.is(st.toks[i-1], rolePurpose)
	if e.file && !fileType && !purpose && granting(a) && (slices.Contains(a.kinds, action.Write) || slices.Contains(a.kinds, action.Delete)) {
		if !slices.Contains(b.fileObjects, e.raw) {
			b.fileObjects = append(b.fileObjects, e.raw)
		}
		return
	}
	if !e.file && !fileType && !purpose && granting(a) && onlyDeletes(a.kinds) {
		if !slices.Contains(b.deleteDirs, e.raw) {
			b.deleteDirs = append(b.deleteDirs, e.raw)
		}
		return
	}
	b.otherPaths = true
}

// onlyDeletes reports whether a verb asks for deleting and nothing else
// ("delete everything in ./tmp", "lösche alles in ./tmp"): its folder is
// where the deleting happens, not a directory to work in.
func onlyDeletes(kinds []action.Kind) bool {
	return len(kinds) > 0 && !slices.ContainsFunc(kinds, func(k action.Kind) bool { return k != action.Delete })
}

// settleFileObjects takes the working directory out of scope when every
// path the words name is a file a write or delete acts on: only those
// files may be changed (Scope.PathsOnly).
//
// A folder a verb only deletes in ("delete everything in ./build/cache")
// counts the same way when nothing else the draft grants writes or runs
// anything: the deleting is bound to that folder, and a delete elsewhere
// in the working directory would be wider than the words. A task that
// also writes or runs ("delete ./tmp and fix the tests") keeps the
// working directory, which the writing may need.
func (b *build) settleFileObjects() {
	if b.otherPaths || b.m.Scope.PathsOnly || len(b.fileObjects)+len(b.deleteDirs) == 0 {
		return
	}
	if len(b.deleteDirs) > 0 && (slices.Contains(b.m.Allow, action.Write) || slices.Contains(b.m.Allow, action.Execute)) {
		return
	}
	b.m.Scope.PathsOnly = true
	if len(b.fileObjects) > 0 {
		b.recognise(strings.Join(b.fileObjects, ", "), "scope paths only",
			fmt.Sprintf("the words name only the files to change (%s), no directory to work in: the working directory is not in scope beside them", strings.Join(b.fileObjects, ", ")))
	}
	if len(b.deleteDirs) > 0 {
		b.recognise(strings.Join(b.deleteDirs, ", "), "scope paths only",
			fmt.Sprintf("the words only delete in %s and ask for no writing or running: the rest of the working directory is not in scope for deleting", strings.Join(b.deleteDirs, ", ")))
	}
}
