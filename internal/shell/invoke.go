package shell

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// invocation is one simple command being analysed: its argv after shell
// expansion (as far as it is known), and what has been found so far.
type invocation struct {
	w    *shellWalker
	env  *shellEnv
	argv []string
	dyn  []bool
	// fetched marks the arguments built from the output of a fetch
	// ("$(curl …)", <(curl …)); nil when none is.
	fetched []bool
	in      *stdinSrc
	depth   int
	// hijack names a variable assigned for this command that changes
	// which program runs (PATH=…, LD_PRELOAD=…).
	hijack string
	// hazard is why the command does more than build and test (see
	// Command.Hazard).
	hazard string

	ks          act.Set
	readOnly    bool
	destructive bool
	external    bool
	notes       []string
	// done is set when the invocation handed its work to an inner one
	// (a wrapper) and records no command of its own.
	done bool
	// runsFetched is set when the program text the command runs came
	// from the network (see Command.RunsFetched).
	runsFetched bool
	// pathsBefore is how many paths the walk had recorded when the
	// command started; the ones after are its own.
	pathsBefore int
	// linkKinds are what the URLs the command fetches do when followed
	// (see linkAction), with notes why.
	linkKinds act.Set
	linkNotes []string
}

func (inv *invocation) kind(ks ...act.Kind) { inv.ks.Add(ks...) }
func (inv *invocation) note(s string)       { inv.notes = append(inv.notes, s) }

// readsOnly marks a command that only reads: its kind is read, and what
// it runs is known to change nothing.
func (inv *invocation) readsOnly() {
	inv.kind(act.Read)
	inv.readOnly = true
}

// name is the program's base name.
func (inv *invocation) name() string { return path.Base(inv.argv[0]) }

func (inv *invocation) run() {
	w := inv.w
	if w.commands >= act.MaxShellCommands {
		if !w.limited {
			w.limited = true
			w.cut(fmt.Sprintf("more than %d commands in the line (MaxShellCommands): the rest were not examined", act.MaxShellCommands))
		}
		return
	}
	w.commands++
	if len(inv.argv) == 0 {
		return
	}
	inv.pathsBefore = len(w.res.Paths)
	prog := inv.argv[0]
	if inv.dyn[0] {
		if strings.Contains(prog, substMarker) {
			w.cut("the program a command substitution names (" + truncate(prog, 80) + ") is known only when the line runs: it was not examined")
		}
		inv.kind(act.Execute)
		inv.note("program name is only known at run time")
		inv.emit()
		return
	}
	if prog == "" {
		inv.kind(act.Execute)
		inv.note("empty program name")
		inv.emit()
		return
	}
	base := inv.name()
	if strings.Contains(prog, "/") && !w.k.systemDirs[path.Dir(prog)] {
		p := w.addPath(prog, act.Execute, inv.env, false)
		inv.kind(act.Execute)
		inv.note("runs " + p)
		inv.runsFile(p)
		inv.pathArgs(1, act.Write)
		inv.emit()
		return
	}
	if ks, ok := w.funcs[base]; ok {
		inv.ks = ks
		inv.readOnly = ks != 0 && ks&^act.Bit(act.Read) == 0
		inv.note("calls shell function " + base + " defined in the command line")
		inv.emit()
		return
	}
	if !w.k.dataPrograms[base] {
		inv.substitutedArgs()
	}
	inv.development()
	spec := w.k.lookup(base)
	if spec == nil {
		inv.kind(act.Execute)
		inv.note("unknown program " + base)
		inv.pathArgs(1, act.Write)
		inv.urlArgs(1)
		inv.emit()
		return
	}
	if spec.fn != nil {
		spec.fn(inv, spec)
	} else {
		inv.generic(spec)
	}
	if !inv.done {
		inv.emit()
	}
}

// development records what makes the command more than its usual work
// (Command.Hazard), the files its output flags write, and a null file
// copied over a file, which empties it (dev.go).
func (inv *invocation) development() {
	dk := inv.w.k.dev
	if h := dk.hazard(inv); h != "" {
		inv.hazard = h
		inv.note(h)
	}
	dk.outputs(inv)
	if target, ok := dk.copiesNull(inv.argv); ok {
		inv.destructive = true
		inv.note(inv.name() + " of an empty file over " + target + " empties it")
	}
}

// substitutedArgs records the arguments whose value a command
// substitution computes when the line runs: what they name (a file, a
// host, a recipient) was not examined.
func (inv *invocation) substitutedArgs() {
	for i := 1; i < len(inv.argv); i++ {
		if inv.dyn[i] && strings.Contains(inv.argv[i], substMarker) {
			inv.w.cut(fmt.Sprintf("an argument of %s is the output of a command substitution (%s), known only when the line runs: what it names was not examined", inv.name(), truncate(inv.argv[i], 80)))
			return
		}
	}
}

// emit records the command.
func (inv *invocation) emit() {
	hijack := inv.hijack
	if hijack == "" {
		hijack = inv.w.hijacked
	}
	if hijack != "" {
		inv.kind(act.Execute)
		inv.readOnly = false
		inv.note(hijack + " is set for this command: which code runs is not known")
		if inv.hazard == "" {
			inv.hazard = hijack + " is set for " + inv.name() + ": it changes which code runs"
		}
	}
	for i, a := range inv.argv {
		if i == 0 || len(a) < 8 {
			continue
		}
		if m, ok := inv.w.k.cls.FindSecret(a); ok {
			inv.w.res.Sensitive = true
			inv.w.note("command line holds a secret-looking value (" + m.Type + ")")
			break
		}
	}
	if inv.ks == 0 {
		inv.kind(act.Execute)
	}
	if inv.linkKinds != 0 && inv.ks.Has(act.Fetch) && !inv.ks.Has(act.Send) {
		inv.ks |= inv.linkKinds
		for _, n := range inv.linkNotes {
			inv.note(n)
		}
	}
	if inv.ks&^act.Bit(act.Read) != 0 {
		inv.readOnly = false
	}
	if !inv.readOnly && inv.ks&^(act.Bit(act.Read)|act.Bit(act.Fetch)) != 0 {
		if n := inv.w.k.cls.PublicCommand(inv.name(), inv.argv); n != "" {
			inv.w.res.Public = true
			inv.note(n)
		}
		if n := inv.w.k.cls.AdminCommand(inv.argv); n != "" {
			inv.w.res.AdminGrant = true
			inv.note(n)
		}
	}
	if inv.destructive {
		inv.ks.Add(act.Delete)
	}
	if inv.external {
		inv.w.res.External = true
	}
	if inv.ks.Has(act.Fetch) {
		// What a fetching command writes is fetched content: running
		// it later in the line runs code nobody has seen.
		for _, p := range inv.w.res.Paths[min(inv.pathsBefore, len(inv.w.res.Paths)):] {
			if p.Access == act.Write {
				if inv.w.fetchedFiles == nil {
					inv.w.fetchedFiles = map[string]bool{}
				}
				inv.w.fetchedFiles[p.Path] = true
			}
		}
	}
	if inv.runsFetched {
		inv.note("runs code fetched from the network in the same command line")
	}
	c := act.Command{
		Argv:        append([]string(nil), inv.argv...),
		Name:        inv.name(),
		ReadOnly:    inv.readOnly,
		Destructive: inv.destructive,
		RunsFetched: inv.runsFetched,
		Hazard:      inv.hazard,
		Via:         inv.env.via,
		Note:        strings.Join(inv.notes, "; "),
	}
	for _, n := range inv.notes {
		inv.w.note(n)
	}
	inv.w.emit(c, inv.ks)
}

// unwrap runs argv[start:] as the real command, found inside via (a
// wrapper such as sudo or a construct such as find -exec).
func (inv *invocation) unwrap(start int, via string) {
	inv.done = true
	if start >= len(inv.argv) {
		// A wrapper with nothing to run.
		inv.done = false
		return
	}
	// The wrapper's own notes go with the inner command.
	for _, n := range inv.notes {
		inv.w.note(n)
	}
	inner := &invocation{
		w: inv.w, env: inv.env.sub(via), argv: inv.argv[start:], dyn: inv.dyn[start:], in: inv.in,
		depth: inv.depth, hijack: inv.hijack,
	}
	if start < len(inv.fetched) {
		inner.fetched = inv.fetched[start:]
	}
	inner.ks = inv.ks
	inner.external = inv.external
	inv.w.commands-- // the wrapper itself does not count
	inner.run()
}

// runScript analyses text as a nested shell command line.
func (inv *invocation) runScript(text, via string) {
	inv.done = true
	for _, n := range inv.notes {
		inv.w.note(n)
	}
	env := inv.env.sub(via)
	if inv.ks&^act.Bit(act.Execute) != 0 || inv.external {
		// Keep what the wrapper itself contributes (credential
		// injection, network, remote execution).
		c := act.Command{Argv: append([]string(nil), inv.argv...), Name: inv.name(), Via: inv.env.via,
			Note: strings.Join(inv.notes, "; ")}
		if inv.external {
			inv.w.res.External = true
		}
		inv.w.emit(c, inv.ks)
	}
	inv.w.script(text, env, inv.depth+1)
}

// dynamicArg reports whether argv[i] is only known at run time.
func (inv *invocation) dynamicArg(i int) bool { return i < len(inv.dyn) && inv.dyn[i] }

// fetchedArg reports whether argv[i] was built from fetched data.
func (inv *invocation) fetchedArg(i int) bool { return i < len(inv.fetched) && inv.fetched[i] }

// runsArg notes that the command runs argv[i] as program text (a -c
// string, eval's words, a script given as <(…)).
func (inv *invocation) runsArg(i int) {
	if inv.fetchedArg(i) {
		inv.runsFetched = true
	}
}

// runsFile notes that the command runs the script file p (normalised).
func (inv *invocation) runsFile(p string) {
	if p != "" && inv.w.fetchedFiles[p] {
		inv.runsFetched = true
	}
}

// runsStdin notes that the command runs what arrives on its input.
func (inv *invocation) runsStdin() {
	if inv.in != nil && inv.in.fetched {
		inv.runsFetched = true
	}
}

// generic applies a table entry: kind, read-only-ness, and operands as
// paths.
func (inv *invocation) generic(s *cmdSpec) {
	inv.kind(s.kind)
	inv.readOnly = s.ro
	inv.destructive = inv.destructive || s.destr
	inv.external = inv.external || s.external
	if s.cred {
		inv.kind(act.Credential)
		inv.w.res.Sensitive = true
	}
	if s.note != "" {
		inv.note(s.note)
	}
	if s.ops == "" {
		return
	}
	p := parseFlags(inv.argv, 1, s.flags)
	for _, i := range p.ops[min(s.skip, len(p.ops)):] {
		inv.addPath(i, s.ops)
	}
}

// addPath records argv[i] as a path with access.
func (inv *invocation) addPath(i int, access act.Kind) string {
	a := inv.argv[i]
	if a == "-" || a == "" {
		return ""
	}
	return inv.w.addPath(a, access, inv.env, inv.dynamicArg(i))
}

// pathArgs records the arguments from start on that look like paths.
func (inv *invocation) pathArgs(start int, access act.Kind) {
	for i := start; i < len(inv.argv); i++ {
		a := inv.argv[i]
		if strings.HasPrefix(a, "-") || strings.Contains(a, "://") {
			continue
		}
		if act.LooksLikePath(a) {
			inv.addPath(i, access)
		}
	}
}

// urlArgs records URLs among the arguments.
func (inv *invocation) urlArgs(start int) {
	for i := start; i < len(inv.argv); i++ {
		if strings.Contains(inv.argv[i], "://") {
			inv.addURL(inv.argv[i])
		}
	}
}

// addURL records a URL (a scheme-less one gets http://) and its host.
func (inv *invocation) addURL(raw string) string {
	u := raw
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	h := act.HostOnly(u)
	if h == "" {
		return ""
	}
	inv.w.url(raw)
	inv.w.host(h)
	if pu, err := url.Parse(u); err == nil {
		for _, n := range inv.w.k.cls.URLSecrets(pu) {
			inv.w.res.Sensitive = true
			inv.w.note(n)
		}
		if k, n := inv.w.k.cls.LinkAction(pu); k != "" {
			inv.linkKinds.Add(k)
			inv.linkNotes = append(inv.linkNotes, n)
		}
	}
	return h
}

// parsedArgs is a command line split into flags and operands.
type parsedArgs struct {
	// flags in command-line order; a flag without a value has "".
	flags []flagArg
	ops   []int // operand indices into argv
	// rest is where the operands of a stop-at-operand parse begin.
	rest int
}

type flagArg struct {
	name  string // without dashes: "r", "force"
	value string
}

func (p *parsedArgs) add(name, value string) { p.flags = append(p.flags, flagArg{name, value}) }

func (p parsedArgs) has(names ...string) bool {
	for _, f := range p.flags {
		for _, n := range names {
			if f.name == n {
				return true
			}
		}
	}
	return false
}

// value returns the last value given to any of names; ok reports whether
// one of them was given at all.
func (p parsedArgs) value(names ...string) (v string, ok bool) {
	for _, f := range p.flags {
		for _, n := range names {
			if f.name == n {
				v, ok = f.value, true
			}
		}
	}
	return v, ok
}

// values returns every value given to names, in command-line order.
func (p parsedArgs) values(names ...string) []string {
	var out []string
	for _, f := range p.flags {
		for _, n := range names {
			if f.name == n {
				out = append(out, f.value)
			}
		}
	}
	return out
}

// flagDef says which flags take a value.
type flagDef struct {
	short string   // short flags with a value, e.g. "no" for -n N -o FILE
	long  []string // long flags with a value, without dashes
	// stop ends option parsing at the first operand (the command of a
	// wrapper, the subcommand of a tool).
	stop bool
	// longSingle accepts long options with one dash (find, java, go).
	longSingle bool
}

func (f flagDef) longTakes(name string) bool {
	for _, l := range f.long {
		if l == name {
			return true
		}
	}
	return false
}

// parseFlags parses argv[start:] in the usual getopt style: "--" ends
// options, "--name=value", "--name value" for long flags that take one,
// "-abc" clusters where a value flag takes the rest or the next argument.
func parseFlags(argv []string, start int, f flagDef) parsedArgs {
	p := parsedArgs{rest: len(argv)}
	for i := start; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			for j := i + 1; j < len(argv); j++ {
				p.ops = append(p.ops, j)
			}
			if p.rest == len(argv) {
				p.rest = i + 1
			}
			return p
		case strings.HasPrefix(a, "--") || f.longSingle && strings.HasPrefix(a, "-") && len(a) > 2:
			name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !hasVal && f.longTakes(name) && i+1 < len(argv) {
				i++
				val, hasVal = argv[i], true
			}
			p.add(name, val)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				c := string(a[j])
				if strings.Contains(f.short, c) {
					val := a[j+1:]
					if val == "" && i+1 < len(argv) {
						i++
						val = argv[i]
					}
					p.add(c, val)
					break
				}
				p.add(c, "")
			}
		default:
			if f.stop {
				p.rest = i
				for j := i; j < len(argv); j++ {
					p.ops = append(p.ops, j)
				}
				return p
			}
			p.ops = append(p.ops, i)
		}
	}
	return p
}

// hasUnescaped reports whether s has one of chars not preceded by a
// backslash.
func hasUnescaped(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte(chars, s[i]) >= 0 {
			return true
		}
	}
	return false
}

// hasBraceExpansion reports an unquoted {a,b} or {1..3} in s.
func hasBraceExpansion(s string) bool {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return false
	}
	closing := strings.IndexByte(s[open:], '}')
	if closing < 0 {
		return false
	}
	inner := s[open+1 : open+closing]
	return strings.Contains(inner, ",") || strings.Contains(inner, "..")
}

func decodeBase64(s string) (string, bool) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}
