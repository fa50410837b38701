// Scratch space: the files a session creates in the system's temporary
// directories (scratch.yaml). CheckIn reports them (Report.ScratchWrites);
// the policy lets such writes through without a write grant.

package mandate

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/datafile"
)

const scratchFile = "builtin:scratch.yaml"

//go:embed scratch.yaml
var scratchData []byte

type scratchSpec struct {
	TempDirs        []string `yaml:"temp_dirs"`
	EditingTools    []string `yaml:"editing_tools"`
	EditingCommands []string `yaml:"editing_commands"`
}

var loadScratch = sync.OnceValues(func() (*scratchSpec, error) {
	var s scratchSpec
	if err := datafile.Load(scratchFile, scratchData, &s); err != nil {
		return nil, err
	}
	for _, d := range s.TempDirs {
		if !strings.HasPrefix(d, "/") || !strings.HasSuffix(d, "/") {
			return nil, fmt.Errorf("%s: temp dir %q: want an absolute path ending in /", scratchFile, d)
		}
	}
	return &s, nil
})

// scratchWrites returns the paths the action writes that are scratch:
// under a temporary directory, outside the working and home directories,
// by no tool or command that edits a file in place. An unreadable table
// makes nothing scratch.
func scratchWrites(a *action.Action, workDir, home string) []string {
	spec, err := loadScratch()
	if err != nil {
		return nil
	}
	for _, c := range a.Commands {
		if !c.ReadOnly && slices.Contains(spec.EditingCommands, c.Name) {
			return nil
		}
	}
	tool := a.Tool
	if i := strings.LastIndex(tool, "__"); i >= 0 {
		tool = tool[i+2:] // mcp__fs__edit_file
	}
	if slices.Contains(spec.EditingTools, tool) {
		return nil
	}
	var out []string
	for _, p := range a.Paths {
		path := resolvePath(p.Path, workDir)
		if p.Access != action.Write || path == "" || slices.Contains(out, path) {
			continue
		}
		if !slices.ContainsFunc(spec.TempDirs, func(d string) bool { return strings.HasPrefix(path+"/", d) }) ||
			underDir(path, workDir) || underDir(path, home) {
			continue
		}
		out = append(out, path)
	}
	return out
}
