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
	b.otherPaths = true
}

// settleFileObjects takes the working directory out of scope when every
// path the words name is a file a write or delete acts on: only those
// files may be changed (Scope.PathsOnly).
func (b *build) settleFileObjects() {
	if len(b.fileObjects) == 0 || b.otherPaths || b.m.Scope.PathsOnly {
		return
	}
	b.m.Scope.PathsOnly = true
	b.recognise(strings.Join(b.fileObjects, ", "), "scope paths only",
		fmt.Sprintf("the words name only the files to change (%s), no directory to work in: the working directory is not in scope beside them", strings.Join(b.fileObjects, ", ")))
}
