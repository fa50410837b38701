package mandate

import (
	"path"
	"slices"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

// Scope dimensions, as named in Scope.None.
const (
	DimPaths      = "paths"
	DimHosts      = "hosts"
	DimRecipients = "recipients"
	DimAccounts   = "accounts"
	DimNames      = "names"
)

var dimensions = [...]string{DimPaths, DimHosts, DimRecipients, DimAccounts, DimNames}

// BranchTarget prefixes a prohibition target that names a git branch:
// "branch:main" is touched by a push to main ("don't push to main").
const BranchTarget = "branch:"

// matchesNothing reports whether dimension dim is listed in s.None.
func (s *Scope) matchesNothing(dim string) bool { return slices.Contains(s.None, dim) }

// Env is where a session runs, as far as Check needs to know.
type Env struct {
	// WorkDir is the session's working directory: relative paths and
	// relative scope globs are taken against it, and everything under it
	// is in scope.
	WorkDir string
	// HomeDir is the user's home directory: "~/…" globs and targets are
	// taken against it. When it is empty, a "~/…" glob matches "~/…"
	// paths and the same path under any conventional home directory
	// ("/home/<user>/…", "/Users/<user>/…", "/root/…"), since the user
	// who wrote "~/Documents" meant their own.
	HomeDir string
}

// Check is CheckIn with only the working directory known.
func (m *Mandate) Check(a *action.Action, workDir string, now time.Time) Report {
	return m.CheckIn(a, Env{WorkDir: workDir}, now)
}

// CheckIn holds a classified action against the mandate and reports, for
// each kind of resource, what lies outside the scope, which prohibitions
// apply, whether the action's kinds are allowed or denied, and whether the
// mandate has expired. It does no I/O and is safe on a nil mandate (which
// grants nothing) and on nil fields. The Report's lists are never nil, so
// that policy rules can take their size.
func (m *Mandate) CheckIn(a *action.Action, env Env, now time.Time) Report {
	workDir, home := env.WorkDir, env.HomeDir
	r := Report{
		PathsOutside:          []string{},
		SensitivePathsOutside: []string{},
		HostsOutside:          []string{},
		RecipientsOutside:     []string{},
		RecipientsByName:      []string{},
		AccountsOutside:       []string{},
		Prohibited:            []string{},
		ConditionsMet:         []string{},
		ScratchWrites:         []string{},
	}
	if m == nil {
		m = new(Mandate)
	}
	r.Expired = m.ExpiresAt != nil && now.After(*m.ExpiresAt)
	if a == nil {
		return r
	}
	if workDir != "" {
		workDir = path.Clean(workDir)
	}
	if home != "" {
		home = path.Clean(home)
	}
	s := &m.Scope

	kinds := actionKinds(a)
	r.KindAllowed = true
	for _, k := range kinds {
		if slices.Contains(m.Deny, k) {
			r.KindDenied = true
		}
		if slices.Contains(m.Ask, k) {
			r.KindAsk = true
		}
		if !slices.Contains(m.Allow, k) {
			r.KindAllowed = false
		}
	}
	if r.KindAsk && !r.KindDenied {
		if met := m.conditionsMet(a, kinds, nil, now); len(met) > 0 {
			r.KindAsk, r.ConditionsMet = false, met
		}
	}

	if sw := scratchWrites(a, workDir, home); len(sw) > 0 {
		r.ScratchWrites = sw
	}
	nonePaths := s.matchesNothing(DimPaths)
	for _, pr := range a.Paths {
		if pr.Path == "" {
			continue
		}
		p := resolvePath(pr.Path, workDir)
		explicit := !nonePaths && anyGlob(s.Paths, p, workDir, home)
		inWorkDir := !nonePaths && !s.PathsOnly && underDir(p, workDir)
		if !explicit && !inWorkDir && !slices.Contains(r.PathsOutside, p) {
			r.PathsOutside = append(r.PathsOutside, p)
		}
		if pr.Sensitive && !explicit && !slices.Contains(r.SensitivePathsOutside, p) {
			r.SensitivePathsOutside = append(r.SensitivePathsOutside, p)
		}
	}

	noneHosts := s.matchesNothing(DimHosts)
	forEachHost(a, func(h string) {
		if slices.Contains(r.HostsOutside, h) {
			return
		}
		if noneHosts || !slices.ContainsFunc(s.Hosts, func(e string) bool { return matchHost(e, h) }) {
			r.HostsOutside = append(r.HostsOutside, h)
		}
	})

	noneRecipients, noneNames := s.matchesNothing(DimRecipients), s.matchesNothing(DimNames)
	for _, rc := range a.Recipients {
		if strings.TrimSpace(rc.Address) == "" || slices.Contains(r.RecipientsOutside, rc.Address) {
			continue
		}
		// The address decides: a display name is written by whoever
		// writes the call, so it puts no address in scope on its own
		// ("Dana <eve@evil.example>"). When it names a person the user
		// named and the address reads as that name's holder's
		// (addressFitsName), the address is reported as named by its
		// display name only, for policy to hold against the address's
		// provenance.
		addr, name := recipientOf(rc)
		in := !noneRecipients && slices.ContainsFunc(s.Recipients, func(e string) bool { return matchRecipient(e, addr, "") })
		if !in && !noneRecipients && !noneNames {
			in = slices.ContainsFunc(s.Names, func(n string) bool { return matchName(n, addr, "") })
		}
		if !in {
			r.RecipientsOutside = append(r.RecipientsOutside, rc.Address)
			if name != "" && !noneRecipients && !noneNames && !slices.Contains(r.RecipientsByName, rc.Address) && addressFitsName(addr, name) &&
				(slices.ContainsFunc(s.Recipients, func(e string) bool { return namesPerson(e, name) }) ||
					slices.ContainsFunc(s.Names, func(n string) bool { return namesPerson(n, name) })) {
				r.RecipientsByName = append(r.RecipientsByName, rc.Address)
			}
		}
	}

	noneAccounts := s.matchesNothing(DimAccounts)
	for _, acct := range a.Accounts {
		if strings.TrimSpace(acct) == "" || slices.Contains(r.AccountsOutside, acct) {
			continue
		}
		in := !noneAccounts && slices.ContainsFunc(s.Accounts, func(e string) bool { return matchAccount(e, acct) })
		if !in && !noneAccounts && !noneNames {
			in = slices.ContainsFunc(s.Names, func(n string) bool { return matchName(n, acct, "") })
		}
		if !in {
			r.AccountsOutside = append(r.AccountsOutside, acct)
		}
	}

	for _, p := range m.Prohibitions {
		if p.Kind != "" && !slices.Contains(kinds, p.Kind) {
			continue
		}
		if p.Target != "" && !touches(p.Target, a, workDir, home) {
			continue
		}
		if !slices.Contains(r.Prohibited, p.Text) {
			r.Prohibited = append(r.Prohibited, p.Text)
		}
	}
	return r
}

// actionKinds is every kind the action involves: Kinds and Kind together,
// or Unknown when it states neither (what we cannot classify is the worst
// case).
func actionKinds(a *action.Action) []action.Kind {
	switch {
	case len(a.Kinds) == 0 && a.Kind == "":
		return []action.Kind{action.Unknown}
	case len(a.Kinds) == 0:
		return []action.Kind{a.Kind}
	case a.Kind == "" || slices.Contains(a.Kinds, a.Kind):
		return a.Kinds
	}
	return append(slices.Clip(a.Kinds), a.Kind)
}

// anyGlob reports whether p (resolved) matches one of the globs, each
// resolved against workDir.
func anyGlob(globs []string, p, workDir, home string) bool {
	for _, g := range globs {
		if g == "" {
			continue
		}
		if isHomePath(g) {
			if q, ok := homeForm(p, home); ok && matchGlob(path.Clean(g), q) {
				return true
			}
			continue
		}
		if matchIn(g, p, workDir) {
			return true
		}
	}
	return false
}

func isHomePath(p string) bool { return p == "~" || strings.HasPrefix(p, "~/") }

// homeForm writes a resolved path relative to the home directory ("~/…"),
// for matching against "~/…" globs: a path already so written stays; with
// home known, one under it is rewritten; with home unknown, one under a
// conventional home directory ("/home/<user>", "/Users/<user>", "/root")
// is. It reports false for a path in none of them.
func homeForm(p, home string) (string, bool) {
	switch {
	case isHomePath(p):
		return p, true
	case home != "":
		if underDir(p, home) && home != "/" {
			return "~" + p[len(home):], true
		}
		return "", false
	case p == "/root" || strings.HasPrefix(p, "/root/"):
		return "~" + p[len("/root"):], true
	}
	for _, base := range [...]string{"/home/", "/Users/"} {
		rest, ok := strings.CutPrefix(p, base)
		if !ok {
			continue
		}
		user, sub, _ := strings.Cut(rest, "/")
		if user == "" {
			return "", false
		}
		if sub == "" {
			return "~", true
		}
		return "~/" + sub, true
	}
	return "", false
}

// matchIn matches a scope glob against a resolved path, taking a relative
// glob against workDir without building the joined pattern.
func matchIn(g, p, workDir string) bool {
	relative := workDir != "" && !strings.HasPrefix(g, "/") && g != "~" && !strings.HasPrefix(g, "~/")
	if !relative {
		return matchGlob(path.Clean(g), p)
	}
	g = path.Clean(g)
	if g == ".." || strings.HasPrefix(g, "../") {
		return matchGlob(path.Join(workDir, g), p)
	}
	if !underDir(p, workDir) {
		return false
	}
	rest := strings.TrimPrefix(p[len(workDir):], "/")
	if workDir == "/" {
		rest = p[1:]
	}
	if g == "." {
		return rest == ""
	}
	return matchSegs(g, rest)
}

// underDir reports whether p is dir or inside it.
func underDir(p, dir string) bool {
	if dir == "" {
		return false
	}
	switch dir {
	case "/":
		return strings.HasPrefix(p, "/")
	case ".":
		return p != "" && !strings.HasPrefix(p, "/") && p != "~" && !strings.HasPrefix(p, "~/")
	}
	return strings.HasPrefix(p, dir) && (len(p) == len(dir) || p[len(dir)] == '/')
}

// forEachHost calls fn with every host the action reaches, normalised:
// a.Hosts and the hosts of a.URLs.
func forEachHost(a *action.Action, fn func(string)) {
	for _, h := range a.Hosts {
		if h = normHost(h); h != "" {
			fn(h)
		}
	}
	for _, u := range a.URLs {
		if h := normHost(hostOfURL(u)); h != "" {
			fn(h)
		}
	}
}

// hostOfURL extracts the host (with port) from a URL without allocating;
// a string without a scheme is taken as starting with the host.
func hostOfURL(u string) string {
	u = strings.TrimSpace(u)
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	} else {
		u = strings.TrimPrefix(u, "//")
	}
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.LastIndexByte(u, '@'); i >= 0 {
		u = u[i+1:]
	}
	return u
}

// touches reports whether the action touches a prohibition's target in
// any dimension. A path target is also touched by an action on one of its
// ancestors ("rm -rf ." touches "prod/**").
func touches(target string, a *action.Action, workDir, home string) bool {
	if branch, ok := strings.CutPrefix(target, BranchTarget); ok {
		return pushesBranch(a, branch)
	}
	if op, ok := strings.CutPrefix(target, OperationTarget); ok {
		return performs(a, op)
	}
	if strings.ContainsRune(target, '/') || strings.HasPrefix(target, ".") || strings.HasPrefix(target, "~") {
		t := resolvePath(target, workDir)
		for _, pr := range a.Paths {
			if pr.Path == "" {
				continue
			}
			p := resolvePath(pr.Path, workDir)
			if isHomePath(t) {
				// "don't touch ~/Documents" is touched by the same folder
				// under the home directory.
				q, ok := homeForm(p, home)
				if !ok {
					continue
				}
				p = q
			}
			if matchGlob(t, p) || underDir(globPrefix(t), p) {
				return true
			}
		}
	}
	found := false
	forEachHost(a, func(h string) { found = found || matchHost(target, h) })
	if found {
		return true
	}
	for _, rc := range a.Recipients {
		// A prohibition on a person is touched by their display name
		// and by an address that reads as theirs: "don't write to Eve"
		// holds for "Eve Ortiz <e.ortiz@x.example>" and for
		// eve@x.example (here the wider reading is the safe one).
		addr, name := recipientOf(rc)
		if matchRecipient(target, addr, name) || namesPerson(target, name) ||
			(personTarget(target) && addressFitsName(addr, target)) {
			return true
		}
	}
	for _, acct := range a.Accounts {
		if matchAccount(target, acct) || matchName(target, acct, "") {
			return true
		}
	}
	return false
}

// pushesBranch reports whether the action's commands may push the named
// branch: a `git push` whose refspecs name it (as "main", "+main",
// "HEAD:main" or "refs/heads/main"), and, since the branch it pushes
// cannot be known, a push that names none ("git push", "git push origin",
// "git push origin HEAD", --all, --mirror).
func pushesBranch(a *action.Action, branch string) bool {
	for _, c := range a.Commands {
		if c.Name != "git" {
			continue
		}
		args := c.Argv
		i := gitSubcommand(args)
		if i < 0 || args[i] != "push" {
			continue
		}
		var pos []string
		for j := i + 1; j < len(args); j++ {
			arg := args[j]
			switch {
			case arg == "--all" || arg == "--mirror" || arg == "--branches":
				return true
			case arg == "--repo" || arg == "-o" || arg == "--push-option" || arg == "--receive-pack" || arg == "--exec":
				j++ // an option with its value in the next argument
			case strings.HasPrefix(arg, "-"):
			default:
				pos = append(pos, arg)
			}
		}
		if len(pos) < 2 {
			return true // no refspec: whatever branch is checked out
		}
		for _, ref := range pos[1:] {
			ref = strings.TrimPrefix(ref, "+")
			if _, dst, ok := strings.Cut(ref, ":"); ok {
				ref = dst
			}
			ref = strings.TrimPrefix(ref, "refs/heads/")
			if ref == branch || ref == "HEAD" || ref == "@" {
				return true
			}
		}
	}
	return false
}

// gitSubcommand returns the index of git's subcommand in argv (argv[0]
// is git), past global options ("-C dir", "-c k=v", "--git-dir=…"), or -1.
func gitSubcommand(argv []string) int {
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" ||
			a == "--exec-path" || a == "--config-env" || a == "--super-prefix":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return i
		}
	}
	return -1
}

// globPrefix is the literal leading part of a glob, up to the first
// segment with pattern syntax.
func globPrefix(g string) string {
	i := strings.IndexAny(g, `*?[\`)
	if i < 0 {
		return g
	}
	j := strings.LastIndexByte(g[:i], '/')
	switch {
	case j > 0:
		return g[:j]
	case j == 0:
		return "/"
	}
	return ""
}
