package shell

import (
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// wrapperCmd peels a wrapper off and analyses the command it runs.
// A wrapper's entry says which of its flags take a value (flags), how
// many operands precede the command (skip: timeout's duration, chroot's
// root), its running form (sub: "poetry run"), and what it adds (cred:
// injected secrets; note).
func wrapperCmd(inv *invocation, def *cmdSpec) {
	name := inv.name()
	p := parseFlags(inv.argv, 1, def.flags)
	start := p.rest
	if def.cred {
		inv.kind(act.Credential)
		inv.w.res.Sensitive = true
	}
	if def.note != "" {
		inv.note(def.note)
	}
	if def.sub != "" {
		if start >= len(inv.argv) || inv.argv[start] != def.sub && !(def.sub == "exec" && inv.argv[start] == "x") {
			// Not the running form: the tool's own subcommand.
			toolSubcommand(inv, start)
			return
		}
		// Options may follow the subcommand too.
		p2 := parseFlags(inv.argv, start+1, def.flags)
		start = p2.rest
	}
	start += def.skip
	switch name {
	case "sudo", "doas":
		if p.has("l", "list", "v", "validate", "k", "K", "reset-timestamp", "remove-timestamp") && start >= len(inv.argv) {
			inv.readsOnly()
			return
		}
		if p.has("e", "edit") {
			inv.kind(act.Write)
			inv.note("edits files as root")
			for i := start; i < len(inv.argv); i++ {
				inv.addPath(i, act.Write)
			}
			return
		}
		if u, ok := p.value("u", "user"); ok {
			inv.note("runs as user " + u)
		} else {
			inv.note("runs as root")
		}
		if start >= len(inv.argv) {
			inv.kind(act.Execute)
			inv.note("opens a root shell")
			return
		}
	case "strace", "ltrace":
		if p.has("p", "attach") {
			inv.kind(act.Execute)
			inv.note("attaches to a running process")
			return
		}
		if o, ok := p.value("o", "output"); ok {
			inv.w.addPath(o, act.Write, inv.env, false)
		}
	case "time":
		if o, ok := p.value("o", "output"); ok {
			inv.w.addPath(o, act.Write, inv.env, false)
		}
	case "ionice":
		if p.has("p", "pid", "P", "pgid", "u", "uid") {
			inv.kind(act.Write)
			return
		}
	case "chroot":
		if start >= len(inv.argv) {
			inv.kind(act.Execute)
			inv.note("starts a shell in another root directory")
			return
		}
	case "busybox":
		if start >= len(inv.argv) {
			inv.readsOnly()
			return
		}
	case "dotenv":
		f := ".env"
		if v, ok := p.value("e"); ok {
			f = v
		}
		inv.w.addPath(f, act.Read, inv.env, false)
	case "sshpass":
		inv.note("a password is given to ssh")
	}
	if start >= len(inv.argv) {
		if inv.ks == 0 {
			inv.kind(act.Execute)
		}
		return
	}
	inv.unwrap(start, name)
}

// toolSubcommand handles the non-running forms of wrapper-like tools
// (poetry install, op read, conda create …).
func toolSubcommand(inv *invocation, start int) {
	sub := ""
	if start < len(inv.argv) {
		sub = inv.argv[start]
	}
	name := inv.name()
	switch {
	case name == "op" && (sub == "read" || sub == "item" || sub == "inject" || sub == "signin" || sub == "document"),
		name == "doppler" && (sub == "secrets" || sub == "configs"),
		name == "chamber" && (sub == "read" || sub == "export" || sub == "env"),
		name == "aws-vault" && (sub == "login" || sub == "export"),
		name == "berglas" && (sub == "access" || sub == "read"),
		name == "direnv" && sub == "export":
		inv.kind(act.Credential)
		inv.w.res.Sensitive = true
		inv.note(name + " " + sub + " reads secrets")
	case sub == "" || sub == "list" || sub == "ls" || sub == "show" || sub == "info" || sub == "version" ||
		sub == "--version" || sub == "env" && name != "op" || sub == "status" || sub == "which" || sub == "search" || sub == "check":
		inv.readsOnly()
	case sub == "remove" || sub == "uninstall" || sub == "rm" || sub == "delete" || sub == "prune" || sub == "clean":
		inv.kind(act.Delete)
	case sub == "shell" || sub == "activate" || sub == "x" || sub == "run" || sub == "exec" || sub == "dlx":
		inv.kind(act.Execute)
	case sub == "publish" || sub == "upload" || sub == "push":
		inv.kind(act.Send)
		inv.external = true
		inv.note(name + " " + sub + " publishes to a registry")
	default:
		inv.kind(act.Write, act.Fetch)
		inv.note(name + " " + sub + " changes the environment or installs software")
	}
}

// envCmd: env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE…] [COMMAND…].
func envCmd(inv *invocation, _ *cmdSpec) {
	argv := inv.argv
	i := 1
	for i < len(argv) {
		a := argv[i]
		switch {
		case a == "--":
			i++
		case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir" || a == "-P":
			i += 2
			continue
		case a == "-S" || a == "--split-string" || strings.HasPrefix(a, "-S") || strings.HasPrefix(a, "--split-string="):
			s := strings.TrimPrefix(strings.TrimPrefix(a, "--split-string="), "-S")
			rest := argv[i+1:]
			if s == "" && a != "--split-string=" && len(rest) > 0 {
				s, rest = rest[0], rest[1:]
			}
			text := s
			for _, r := range rest {
				text += " " + Quote(r)
			}
			inv.runScript(text, "env -S")
			return
		case strings.HasPrefix(a, "--") || strings.HasPrefix(a, "-") && len(a) > 1:
			i++
			continue
		case strings.Contains(a, "=") && !strings.HasPrefix(a, "="):
			name, val, _ := strings.Cut(a, "=")
			if inv.w.k.hijack[name] {
				inv.hijack = name
			}
			if inv.w.k.cls.Secrets().SensitiveKey(name) && !inv.w.k.cls.Secrets().IsPlaceholder(val) && !inv.dynamicArg(i) {
				inv.w.res.Sensitive = true
				inv.w.note("passes a credential in " + name)
			}
			i++
			continue
		}
		break
	}
	if i >= len(argv) {
		inv.kind(act.Credential)
		inv.w.res.Sensitive = true
		inv.note("env without a command prints every environment variable, secrets included")
		return
	}
	inv.unwrap(i, "env")
}

// xargsCmd: the command xargs runs gets arguments from its input.
func xargsCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "adEILnPs", long: []string{"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}, stop: true})
	if f, ok := p.value("a", "arg-file"); ok {
		inv.w.addPath(f, act.Read, inv.env, false)
	}
	start := p.rest
	if start >= len(inv.argv) {
		inv.readsOnly()
		inv.note("xargs without a command echoes its input")
		return
	}
	argv := append(append([]string(nil), inv.argv...), "<input>")
	dyn := append(append([]bool(nil), inv.dyn...), true)
	inv.argv, inv.dyn = argv, dyn
	inv.note("arguments come from the input")
	inv.unwrap(start, "xargs")
}

// parallelCmd: parallel CMD ::: ARGS, or commands read from input.
func parallelCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "jSa", long: []string{"jobs", "sshlogin", "arg-file", "results", "joblog", "delay", "timeout", "retries"}, stop: true})
	start := p.rest
	end := len(inv.argv)
	for i := start; i < len(inv.argv); i++ {
		if inv.argv[i] == ":::" || inv.argv[i] == "::::" || inv.argv[i] == ":::+" {
			end = i
			break
		}
	}
	if p.has("S", "sshlogin") {
		inv.external = true
		inv.note("runs jobs on remote hosts")
	}
	if start >= end {
		inv.kind(act.Execute)
		inv.note("runs commands read from its input")
		return
	}
	inv.argv, inv.dyn = inv.argv[:end], inv.dyn[:end]
	inv.unwrap(start, "parallel")
}

// watchCmd: watch runs its command through sh -c unless -x is given.
func watchCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "nq", long: []string{"interval", "differences", "equexit"}, stop: true})
	start := p.rest
	if start >= len(inv.argv) {
		inv.kind(act.Read)
		return
	}
	if p.has("x", "exec") {
		inv.unwrap(start, "watch")
		return
	}
	for i := start; i < len(inv.argv); i++ {
		if inv.dynamicArg(i) {
			inv.kind(act.Execute)
			inv.note("watch runs a command line built at run time")
			return
		}
	}
	inv.runScript(strings.Join(inv.argv[start:], " "), "watch")
}

// suCmd: su [-c CMD] [user], runuser -u USER -- CMD, sg GROUP -c CMD.
func suCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "csgGuw", long: []string{"command", "shell", "group", "supp-group", "user", "whitelist-environment", "session-command"}})
	if c, ok := p.value("c", "command", "session-command"); ok {
		inv.note("runs as another user")
		inv.runScript(c, inv.name()+" -c")
		return
	}
	if inv.name() == "runuser" {
		if _, ok := p.value("u", "user"); ok && len(p.ops) > 0 {
			inv.unwrap(p.ops[0], "runuser")
			return
		}
	}
	if inv.name() == "sg" && len(p.ops) > 1 {
		inv.runScript(strings.Join(inv.argv[p.ops[1]:], " "), "sg")
		return
	}
	inv.kind(act.Execute)
	inv.note("opens a shell as another user")
}

// flockCmd: flock [opts] FILE CMD… | flock [opts] FILE -c CMD | flock FD.
func flockCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "wEc", long: []string{"timeout", "conflict-exit-code", "command"}, stop: true})
	if c, ok := p.value("c", "command"); ok {
		inv.runScript(c, "flock -c")
		return
	}
	if len(p.ops) < 2 {
		inv.readsOnly()
		return
	}
	inv.addPath(p.ops[0], act.Write)
	inv.unwrap(p.ops[1], "flock")
}

// execCmd: exec and command run their operand (command -v only looks it
// up).
func execCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "a", stop: true})
	if inv.name() == "command" && p.has("v", "V") {
		inv.readsOnly()
		return
	}
	if p.rest >= len(inv.argv) {
		inv.readsOnly()
		return
	}
	inv.unwrap(p.rest, inv.name())
}

// scriptCmd: script -c CMD [file] records a session to file.
func scriptCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "cEIOBTm", long: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format"}})
	for _, i := range p.ops {
		inv.addPath(i, act.Write)
	}
	if c, ok := p.value("c", "command"); ok {
		inv.runScript(c, "script -c")
		return
	}
	inv.kind(act.Execute)
	inv.note("records an interactive shell")
}

func nixShellCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "pIA", long: []string{"run", "command", "packages", "arg", "argstr", "attr", "expr"}})
	inv.kind(act.Fetch)
	if c, ok := p.value("run", "command"); ok {
		inv.runScript(c, "nix-shell --run")
		return
	}
	inv.kind(act.Execute)
}

func sopsCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Credential)
	inv.w.res.Sensitive = true
	if len(inv.argv) > 3 && (inv.argv[1] == "exec-env" || inv.argv[1] == "exec-file") {
		inv.addPath(2, act.Read)
		inv.note("decrypts secrets for a command")
		inv.runScript(inv.argv[3], "sops "+inv.argv[1])
		return
	}
	p := parseFlags(inv.argv, 1, flagDef{short: "", long: []string{"output", "input-type", "output-type"}})
	if p.has("d", "decrypt") {
		inv.note("sops -d prints decrypted secrets")
	} else {
		inv.kind(act.Write)
	}
	for _, i := range p.ops {
		inv.addPath(i, act.Read)
	}
}

// shellCmd: sh/bash/zsh with -c STRING, a script file, or standard input.
func shellCmd(inv *invocation, _ *cmdSpec) {
	argv := inv.argv
	hasC, noexec, fromStdin := false, false, false
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			i++
			break
		}
		if strings.HasPrefix(a, "--") {
			if a == "--rcfile" || a == "--init-file" {
				i++
			}
			continue
		}
		if (strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+")) && len(a) > 1 {
			cluster := a[1:]
			if strings.Contains(cluster, "c") && a[0] == '-' {
				hasC = true
			}
			if strings.Contains(cluster, "n") && a[0] == '-' {
				noexec = true
			}
			if strings.Contains(cluster, "s") && a[0] == '-' {
				// -s: commands come from standard input; the
				// words after are its positional parameters.
				fromStdin = true
			}
			if strings.ContainsAny(cluster, "oO") {
				i++
			}
			continue
		}
		break
	}
	if noexec && !hasC {
		inv.readsOnly()
		inv.note("-n only checks syntax")
		if i < len(argv) {
			inv.addPath(i, act.Read)
		}
		return
	}
	switch {
	case hasC:
		if i >= len(argv) {
			inv.kind(act.Execute)
			return
		}
		if inv.dynamicArg(i) {
			inv.kind(act.Execute)
			inv.runsArg(i)
			inv.note(inv.name() + " -c runs a command line built at run time")
			inv.w.note("the command line of " + inv.name() + " -c is built at run time: " + truncate(argv[i], 120))
			return
		}
		inv.runScript(argv[i], inv.name()+" -c")
	case fromStdin:
		inv.stdinScript()
	case i < len(argv):
		p := inv.addPath(i, act.Execute)
		inv.kind(act.Execute)
		inv.runsArg(i)
		inv.runsFile(p)
		inv.note("runs the script " + p)
	default:
		inv.stdinScript()
	}
}

// stdinScript handles a shell reading its script from standard input.
func (inv *invocation) stdinScript() {
	switch {
	case inv.in == nil:
		inv.kind(act.Execute)
		inv.note("starts an interactive shell")
	case inv.in.literal:
		if inv.in.via == "base64 -d" {
			inv.note(inv.name() + " runs a script decoded from base64")
		}
		inv.runScript(inv.in.text, inv.name()+" < "+inv.in.via)
	default:
		inv.kind(act.Execute)
		inv.runsStdin()
		inv.note(inv.name() + " runs a script from its input (" + inv.in.via + "), which is not known in advance")
	}
}

// evalCmd: eval joins its arguments and runs them as a command line.
func evalCmd(inv *invocation, _ *cmdSpec) {
	for i := 1; i < len(inv.argv); i++ {
		if inv.dynamicArg(i) {
			inv.kind(act.Execute)
			for j := 1; j < len(inv.argv); j++ {
				inv.runsArg(j)
			}
			inv.note("eval runs a command line built at run time")
			return
		}
	}
	if len(inv.argv) < 2 {
		inv.readsOnly()
		return
	}
	inv.runScript(strings.Join(inv.argv[1:], " "), "eval")
}

func sourceCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Execute)
	if len(inv.argv) > 1 {
		p := inv.addPath(1, act.Execute)
		inv.runsArg(1)
		inv.runsFile(p)
		inv.note("runs the commands in " + p + " in this shell")
	}
}

// interpDef says how an interpreter takes inline code (an entry's
// language, code_flags and module_flag; its flags are the ones with
// values).
type interpDef struct {
	lang      string
	codeFlags []string // flags followed by code
	module    string   // flag that names a module to run
}

// interpCmd: python -c CODE, node -e CODE, ruby script.rb, python -m mod …
func interpCmd(inv *invocation, s *cmdSpec) {
	inv.kind(act.Execute)
	name := inv.name()
	def := s.interp
	if def == nil {
		// java, dotnet, swift … : run what they are given.
		p := parseFlags(inv.argv, 1, flagDef{stop: true})
		if len(p.ops) > 0 {
			inv.addPath(p.ops[0], act.Execute)
		}
		inv.note("runs a " + name + " program")
		return
	}
	if name == "deno" || name == "bun" {
		if len(inv.argv) > 2 && inv.argv[1] == "eval" {
			inv.code(def.lang, inv.argv[2], name+" eval")
			return
		}
		if len(inv.argv) > 1 && (inv.argv[1] == "x" || inv.argv[1] == "install" || inv.argv[1] == "add") {
			inv.kind(act.Fetch)
			inv.note(name + " " + inv.argv[1] + " fetches and runs packages")
			return
		}
	}
	stop := s.flags
	stop.stop = true
	p := parseFlags(inv.argv, 1, stop)
	for _, f := range def.codeFlags {
		if v := p.values(f); len(v) > 0 {
			for _, code := range v {
				if strings.HasPrefix(strings.ToLower(f), "enc") || f == "ec" {
					inv.note("runs an encoded PowerShell command")
					continue
				}
				inv.code(def.lang, code, name+" -"+f)
			}
			return
		}
	}
	if def.module != "" {
		if m, ok := p.value(def.module); ok {
			inv.note("runs the module " + m)
			switch m {
			case "http.server", "SimpleHTTPServer":
				inv.note("serves the current directory over HTTP")
				inv.external = true
			case "pip":
				inv.kind(act.Write, act.Fetch)
			case "pytest", "unittest":
			}
			return
		}
	}
	if len(p.ops) > 0 && inv.argv[p.ops[0]] == "-" {
		inv.stdinCode(def.lang)
		return
	}
	if len(p.ops) > 0 {
		i := p.ops[0]
		if name == "deno" || name == "bun" {
			if inv.argv[i] == "run" || inv.argv[i] == "test" || inv.argv[i] == "task" {
				if len(p.ops) > 1 {
					i = p.ops[1]
				}
			}
		}
		f := inv.addPath(i, act.Execute)
		inv.runsArg(i)
		inv.runsFile(f)
		inv.note("runs the " + def.lang + " script " + f)
		return
	}
	inv.stdinCode(def.lang)
}

// stdinCode handles an interpreter reading its program from standard input.
func (inv *invocation) stdinCode(lang string) {
	switch {
	case inv.in == nil:
		inv.note("starts an interactive interpreter")
	case inv.in.literal:
		inv.code(lang, inv.in.text, inv.name()+" < "+inv.in.via)
	default:
		inv.runsStdin()
		inv.note(inv.name() + " runs a program from its input (" + inv.in.via + "), which is not known in advance")
	}
}

// code analyses inline program text given to an interpreter.
func (inv *invocation) code(lang, code, via string) {
	inv.kind(act.Execute)
	r := inv.w.k.code.Scan(lang, code)
	inv.ks |= r.Kinds
	if r.Destructive {
		inv.destructive = true
	}
	if r.External {
		inv.external = true
	}
	if r.Sensitive {
		inv.w.res.Sensitive = true
	}
	for _, n := range r.Notes {
		inv.note(n)
	}
	for _, u := range r.Unexamined {
		inv.w.cut(u)
	}
	for _, p := range r.Paths {
		inv.w.addPath(p.Path, p.Access, inv.env, false)
	}
	for _, u := range r.URLs {
		inv.addURL(u)
	}
	for _, s := range r.Shells {
		inv.w.script(s, inv.env.sub(via), inv.depth+1)
	}
}

// Quote quotes s for re-parsing as one shell word.
func Quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>(){}*?[]#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
