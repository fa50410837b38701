// Operations: one operation of a kind that a "don't" names ("don't push",
// "don't merge it"), with the calls it holds on. The table is data
// (operations.yaml); a prohibition targets one as "operation:NAME".

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

// OperationTarget prefixes a prohibition target that names an operation:
// "operation:push" holds on `git push` and the tools that push commits.
const OperationTarget = "operation:"

const operationsFile = "builtin:operations.yaml"

//go:embed operations.yaml
var operationsData []byte

// operation is how the calls of one operation are recognised.
type operation struct {
	Commands []string `yaml:"commands"`
	Tools    []string `yaml:"tools"`
}

var loadOperations = sync.OnceValues(func() (map[string]operation, error) {
	var ops map[string]operation
	if err := datafile.Load(operationsFile, operationsData, &ops); err != nil {
		return nil, err
	}
	for name, op := range ops {
		if len(op.Commands)+len(op.Tools) == 0 {
			return nil, fmt.Errorf("%s: %s: no commands and no tools", operationsFile, name)
		}
		for _, c := range op.Commands {
			if len(strings.Fields(c)) < 2 {
				return nil, fmt.Errorf("%s: %s: command %q needs a program and a subcommand", operationsFile, name, c)
			}
		}
	}
	return ops, nil
})

// performs reports whether the action is a call of the named operation.
// An operation the table does not hold is taken as performed: a
// prohibition Mandate cannot examine holds.
func performs(a *action.Action, name string) bool {
	ops, err := loadOperations()
	op, ok := ops[name]
	if err != nil || !ok {
		return true
	}
	tool := a.Tool
	if i := strings.LastIndexAny(tool, "/."); i >= 0 {
		tool = tool[i+1:]
	}
	if i := strings.LastIndex(tool, "__"); i >= 0 {
		tool = tool[i+2:]
	}
	if slices.Contains(op.Tools, tool) {
		return true
	}
	for _, c := range a.Commands {
		for _, want := range op.Commands {
			if runsSubcommand(c, strings.Fields(want)) {
				return true
			}
		}
	}
	return false
}

// runsSubcommand reports whether a command is the program words[0] with
// the subcommand words after it, flags skipped (and git's global options:
// "git -C repo push").
func runsSubcommand(c action.Command, words []string) bool {
	if c.Name != words[0] || len(c.Argv) == 0 {
		return false
	}
	var rest []string
	if c.Name == "git" {
		i := gitSubcommand(c.Argv)
		if i < 0 {
			return false
		}
		rest = c.Argv[i:]
	} else {
		for _, arg := range c.Argv[1:] {
			if !strings.HasPrefix(arg, "-") {
				rest = append(rest, arg)
			}
		}
	}
	return len(rest) >= len(words)-1 && slices.Equal(rest[:len(words)-1], words[1:])
}
