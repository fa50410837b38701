package baseline

import (
	"path"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
)

// Event is one decided call as a baseline learns it.
type Event struct {
	Session string `json:"session"`
	Tool    string `json:"tool"`
	// Kind is the call's most consequential kind; Kinds all of them.
	Kind  string   `json:"kind"`
	Kinds []string `json:"kinds,omitempty"`
	// Destinations are "type:value" strings (Destinations).
	Destinations []string `json:"destinations,omitempty"`
	// Effect is allow, ask or deny. Only allowed calls are learned.
	Effect string `json:"effect"`
	// Hour is the hour of day (UTC) the call was decided at.
	Hour int `json:"hour"`
}

// Destination types.
const (
	DestHost       = "host"
	DestRecipient  = "recipient"
	DestAccount    = "account"
	DestPath       = "path"
	DestProgram    = "program"
	DestSubcommand = "subcommand"
)

// maxDestsPerCall bounds what one call contributes, so that a call naming
// thousands of hosts costs no more than a few lookups.
const maxDestsPerCall = 64

// Destinations lists where a call goes, as "type:value": hosts,
// recipients, accounts, path prefixes (depth from the configuration),
// shell programs and "program subcommand" pairs. Values are lower-cased
// where case does not matter; the list is deduplicated and bounded.
func (c *Config) Destinations(a *action.Action) []string { return c.DestinationsIn(a, "") }

// DestinationsIn is Destinations for a session working in workDir: every
// path under it is the one destination "path:WORKDIR" — the place the
// agent works, where a file it never touched before is not somewhere new.
func (c *Config) DestinationsIn(a *action.Action, workDir string) []string {
	if a == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(typ, v string) {
		v = strings.TrimSpace(v)
		if v == "" || len(out) >= maxDestsPerCall {
			return
		}
		d := typ + ":" + v
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, h := range a.Hosts {
		add(DestHost, strings.ToLower(h))
	}
	for _, r := range a.Recipients {
		add(DestRecipient, strings.ToLower(r.Address))
	}
	for _, acc := range a.Accounts {
		add(DestAccount, strings.ToUpper(strings.ReplaceAll(acc, " ", "")))
	}
	wd := ""
	if workDir != "" && strings.HasPrefix(workDir, "/") {
		wd = path.Clean(workDir)
	}
	for _, p := range a.Paths {
		if wd != "" && wd != "/" && (path.Clean(p.Path) == wd || strings.HasPrefix(path.Clean(p.Path), wd+"/")) {
			add(DestPath, wd)
			continue
		}
		add(DestPath, prefix(p.Path, c.Learning.PathDepth))
	}
	for _, cmd := range a.Commands {
		if cmd.Name == "" {
			continue
		}
		add(DestProgram, cmd.Name)
		if sub := subcommand(cmd.Argv); sub != "" {
			add(DestSubcommand, cmd.Name+" "+sub)
		}
	}
	return out
}

// prefix keeps the first depth components of an absolute path (the
// directory the agent works in, not each file); a relative path keeps its
// first component.
func prefix(p string, depth int) string {
	if p == "" {
		return ""
	}
	p = path.Clean(p)
	abs := strings.HasPrefix(p, "/")
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if !abs {
		depth = 1
	}
	if len(parts) > depth {
		parts = parts[:depth]
	}
	out := strings.Join(parts, "/")
	if abs {
		out = "/" + out
	}
	return out
}

// subcommand is the first argument after the program that is not a flag
// and looks like a word (git push, kubectl apply).
func subcommand(argv []string) string {
	for _, a := range argv[min(1, len(argv)):] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if len(a) > 32 || strings.ContainsAny(a, "/.=:@\"' ") {
			return ""
		}
		return a
	}
	return ""
}

// EventOf is the event of a decided call in a session working in workDir.
func (c *Config) EventOf(session, workDir, tool, effect string, hour int, a *action.Action) Event {
	ev := Event{Session: session, Tool: tool, Effect: effect, Hour: hour}
	if a != nil {
		ev.Kind = string(a.Kind)
		for _, k := range a.Kinds {
			ev.Kinds = append(ev.Kinds, string(k))
		}
		ev.Destinations = c.DestinationsIn(a, workDir)
	}
	if len(ev.Kinds) == 0 && ev.Kind != "" {
		ev.Kinds = []string{ev.Kind}
	}
	return ev
}
