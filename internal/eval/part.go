package eval

import (
	"os"
	"path/filepath"
	"strings"
)

// Parts of a corpus, by path: a file under a directory whose name contains
// "heldout" is held out — written by someone who never read the engine,
// and never to be listed case by case. Only the directories below the
// checkout the file lives in count (see belowRoot): a checkout cloned into
// ~/heldout-review/ is not held out as a whole.
const (
	PartDev      = "dev"
	PartHeldOut  = "held-out"
	heldOutToken = "heldout"
)

// rootMarkers name the entries that make a directory the root of a
// checkout: the module file or the repository's .git (a file in a worktree).
var rootMarkers = []string{"go.mod", ".git"}

// partOf says which part a file belongs to, by its path below its root.
func partOf(file string) string {
	for _, el := range strings.Split(filepath.ToSlash(belowRoot(file)), "/") {
		if strings.Contains(strings.ToLower(el), heldOutToken) {
			return PartHeldOut
		}
	}
	return PartDev
}

// belowRoot returns the file's path relative to the nearest enclosing
// directory holding a root marker; failing that, relative to the working
// directory when the file is below it; failing that, the path as given.
func belowRoot(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	for dir := filepath.Dir(abs); ; {
		for _, m := range rootMarkers {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				if rel, err := filepath.Rel(dir, abs); err == nil {
					return rel
				}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel
		}
	}
	return file
}
