package action

import (
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/mandate-dev/mandate/internal/shell"
)

// Files whose content runs later without anyone calling it: CI workflow
// definitions, git hooks and shell startup files. Writing a command into
// one is running it, only later and elsewhere (on a CI runner holding the
// repository's secrets, at the next commit, in the next shell). A write
// there is analysed for the two things that matter most: code that sends
// secrets out, and code fetched from the network and run unseen.

// deferredKind says how a file's content runs.
type deferredKind uint8

const (
	notDeferred   deferredKind = iota
	deferredCI                 // YAML: the commands are in run:/script: entries
	deferredShell              // the whole content is a shell script
)

// deferredFile reports how the file at p (normalised) runs its content.
func deferredFile(p string) deferredKind {
	base := path.Base(p)
	switch base {
	case ".gitlab-ci.yml", "bitbucket-pipelines.yml", "azure-pipelines.yml", ".travis.yml":
		return deferredCI
	case ".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".zshenv", ".bash_login", ".envrc":
		return deferredShell
	}
	// The rest live under a dot directory (.github, .git/hooks …): a
	// path without one is ruled out at once.
	if !strings.Contains(p, "/.") && !strings.HasPrefix(p, ".") {
		return notDeferred
	}
	probe := "/" + strings.TrimPrefix(p, "/")
	switch {
	case strings.Contains(probe, "/.github/workflows/") && (strings.HasSuffix(base, ".yml") || strings.HasSuffix(base, ".yaml")),
		strings.Contains(probe, "/.circleci/") && strings.HasSuffix(base, ".yml"),
		strings.Contains(probe, "/.buildkite/") && (strings.HasSuffix(base, ".yml") || strings.HasSuffix(base, ".yaml")),
		strings.Contains(probe, "/.gitlab/ci/") && strings.HasSuffix(base, ".yml"):
		return deferredCI
	case strings.Contains(probe, "/.git/hooks/"), strings.Contains(probe, "/.husky/") && !strings.HasPrefix(base, "."):
		return deferredShell
	}
	return notDeferred
}

// writtenText collects what a call writes into files: the values under
// contentKeys, at any depth (MultiEdit's edits[].new_string), in order.
func (an *argNames) writtenText(v any, key string, out *[]string, depth int) {
	if depth > 8 || len(*out) > 64 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		keys := sortedKeys(x)
		for _, k := range keys {
			an.writtenText(x[k], fastSnake(k), out, depth+1)
		}
	case []any:
		for _, e := range x {
			an.writtenText(e, key, out, depth+1)
		}
	case string:
		if an.content[key] && x != "" {
			*out = append(*out, x)
		}
	}
}

// ciCommands extracts the shell commands of a CI definition (or of the
// fragment an edit inserts): the values of run:, script:, before_script:
// and after_script: entries, inline, as YAML block scalars, or as lists.
func ciCommands(text string) []string {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t")
		line = strings.TrimPrefix(line, "- ")
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "run", "script", "before_script", "after_script", "command", "commands":
		default:
			continue
		}
		val = strings.TrimSpace(val)
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " \t"))
		switch {
		case val == "|" || val == ">" || strings.HasPrefix(val, "|") || strings.HasPrefix(val, ">") || val == "":
			// A block scalar or a list on the following, deeper lines.
			var block []string
			for i+1 < len(lines) {
				next := lines[i+1]
				if strings.TrimSpace(next) != "" && len(next)-len(strings.TrimLeft(next, " \t")) <= indent {
					break
				}
				i++
				t := strings.TrimSpace(next)
				if strings.HasPrefix(t, "- ") {
					out = append(out, unquoteYAML(strings.TrimPrefix(t, "- ")))
					continue
				}
				block = append(block, t)
			}
			if len(block) > 0 {
				out = append(out, strings.Join(block, "\n"))
			}
		default:
			out = append(out, unquoteYAML(val))
		}
	}
	return out
}

func unquoteYAML(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// applyDeferred analyses what a call writes into files whose content runs
// later, and raises the action when that code would send secrets to a host
// (a send of sensitive data) or run code fetched from the network.
func (k *knowledge) applyDeferred(bg *shell.Budget, b *builder, call *Call, parsers *sync.Pool) {
	var kind deferredKind
	file := ""
	for _, p := range b.a.Paths {
		if p.Access == Write {
			if k := deferredFile(p.Path); k != notDeferred {
				kind, file = k, p.Path
				break
			}
		}
	}
	if kind == notDeferred {
		return
	}
	var texts []string
	k.args.writtenText(call.Args, "", &texts, 0)
	var scripts []string
	for _, t := range texts {
		if kind == deferredCI {
			scripts = append(scripts, ciCommands(t)...)
		} else {
			scripts = append(scripts, t)
		}
	}
	for _, s := range scripts {
		res := k.analyzeShell(bg, s, call.WorkingDir, call.HomeDir, parsers)
		for _, u := range res.Unexamined {
			b.unexamined("in the code it writes into " + file + ": " + u)
		}
		secret := res.Sensitive || res.Kinds.Has(Credential) || slices.ContainsFunc(res.Paths, func(p PathRef) bool { return p.Sensitive })
		leaks := secret && (res.Kinds.Has(Send) || res.Kinds.Has(Fetch)) && len(res.Hosts) > 0
		if leaks {
			b.kind(Send)
			b.external = true
			b.a.Sensitive = true
			for _, h := range res.Hosts {
				b.host(h)
			}
			b.note("the code it writes into " + file + " runs later and sends secrets to " + strings.Join(res.Hosts, ", "))
		}
		for _, c := range res.Commands {
			if c.RunsFetched {
				c.Via = append(slices.Clip(c.Via), "written to "+file)
				b.command(c)
				// It runs, and fetches, when the file's content does.
				b.kind(Execute, Fetch)
				for _, h := range res.Hosts {
					b.host(h)
				}
				b.note("the code it writes into " + file + " runs code fetched from the network")
			}
		}
	}
}
