package action

import "strings"

// items counts the items a classified call acts on (Action.Items): the
// length of an argument that lists them; else, for a command line, the
// paths it writes or deletes — unless a command finds its items itself
// (find, xargs), recurses (rm -r) or names them by a pattern, when the
// count is unknown (0); else, for a tool call, the paths it changes, the
// recipients of a send, or the one item a tool call that names none acts
// on.
func (an *argNames) items(a *Action, listed int) int {
	if listed > 0 {
		return listed
	}
	seen := map[string]bool{}
	for _, p := range a.Paths {
		if p.Access == Read {
			continue
		}
		if strings.ContainsAny(p.Path, "*?[") {
			return 0
		}
		seen[p.Path] = true
	}
	if len(a.Commands) > 0 {
		for _, c := range a.Commands {
			if c.ReadOnly {
				continue
			}
			if an.expanding[c.Name] {
				return 0
			}
			for _, v := range c.Via { // "xargs", "find -exec"
				if w, _, _ := strings.Cut(v, " "); an.expanding[w] {
					return 0
				}
			}
			for _, arg := range c.Argv[min(1, len(c.Argv)):] {
				if an.recursive[arg] {
					return 0
				}
			}
		}
		return len(seen) // 0 when it names none: deletes files named on its input
	}
	if len(seen) > 0 {
		return len(seen)
	}
	if len(a.Recipients) > 0 {
		addrs := map[string]bool{}
		for _, r := range a.Recipients {
			addrs[strings.ToLower(r.Address)] = true
		}
		return len(addrs)
	}
	return 1
}
