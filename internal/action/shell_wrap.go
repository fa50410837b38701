package action

import (
	"strings"

	"github.com/mandate-dev/mandate/internal/secret"
)

// wrapDef describes a program that runs another program: its own flags,
// how many operands precede the command (timeout's duration, chroot's
// root), and what it adds (root rights, injected secrets).
type wrapDef struct {
	flags flagDef
	skip  int    // operands before the command
	sub   string // a subcommand that must come first ("run", "exec")
	note  string
	cred  bool // injects secrets into the command's environment
}

var wrappers = map[string]wrapDef{
	"sudo":             {flags: flagDef{short: "ughpCDrtTU", long: []string{"user", "group", "host", "prompt", "close-from", "chdir", "role", "type", "command-timeout", "other-user"}, stop: true}},
	"doas":             {flags: flagDef{short: "uC", stop: true}},
	"pkexec":           {flags: flagDef{long: []string{"user"}, stop: true}, note: "runs as another user"},
	"nohup":            {flags: flagDef{stop: true}},
	"nice":             {flags: flagDef{short: "n", long: []string{"adjustment"}, stop: true}},
	"ionice":           {flags: flagDef{short: "cnp", long: []string{"class", "classdata", "pid", "pgid", "uid"}, stop: true}},
	"stdbuf":           {flags: flagDef{short: "ioe", long: []string{"input", "output", "error"}, stop: true}},
	"timeout":          {flags: flagDef{short: "sk", long: []string{"signal", "kill-after"}, stop: true}, skip: 1},
	"time":             {flags: flagDef{short: "fo", long: []string{"format", "output"}, stop: true}},
	"builtin":          {flags: flagDef{stop: true}},
	"strace":           {flags: flagDef{short: "oepsuEaPIbX", long: []string{"output", "expr", "attach", "string-limit", "user", "env"}, stop: true}},
	"ltrace":           {flags: flagDef{short: "oepsuEaAnDlLxXF", long: []string{"output"}, stop: true}},
	"chroot":           {flags: flagDef{long: []string{"userspec", "groups"}, stop: true}, skip: 1, note: "runs inside another root directory"},
	"unshare":          {flags: flagDef{short: "S", long: []string{"setuid", "setgid", "map-user", "map-group", "root", "wd", "propagation"}, stop: true}},
	"nsenter":          {flags: flagDef{short: "tSGrwe", long: []string{"target", "setuid", "setgid", "root", "wd"}, stop: true}, note: "enters another process's namespaces"},
	"setsid":           {flags: flagDef{stop: true}},
	"firejail":         {flags: flagDef{stop: true}},
	"torsocks":         {flags: flagDef{short: "uapPi", stop: true}, note: "network traffic goes through Tor"},
	"torify":           {flags: flagDef{stop: true}, note: "network traffic goes through Tor"},
	"proxychains":      {flags: flagDef{short: "f", stop: true}, note: "network traffic goes through a proxy"},
	"proxychains4":     {flags: flagDef{short: "f", stop: true}, note: "network traffic goes through a proxy"},
	"caffeinate":       {flags: flagDef{short: "tw", stop: true}},
	"busybox":          {flags: flagDef{stop: true}},
	"chronic":          {flags: flagDef{stop: true}},
	"unbuffer":         {flags: flagDef{stop: true}},
	"catchsegv":        {flags: flagDef{stop: true}},
	"valgrind":         {flags: flagDef{stop: true}},
	"taskset":          {flags: flagDef{stop: true}, skip: 1},
	"numactl":          {flags: flagDef{short: "CNmpi", stop: true}},
	"cpulimit":         {flags: flagDef{short: "lpe", long: []string{"limit", "pid", "exe"}, stop: true}},
	"systemd-run":      {flags: flagDef{short: "pPuME", long: []string{"property", "unit", "description", "slice", "uid", "gid", "working-directory", "setenv", "machine", "host"}, stop: true}},
	"xvfb-run":         {flags: flagDef{short: "snfpe", long: []string{"server-args", "server-num", "auth-file", "xauth-protocol", "error-file"}, stop: true}},
	"dbus-run-session": {flags: flagDef{long: []string{"config-file", "dbus-daemon"}, stop: true}},
	"fakeroot":         {flags: flagDef{short: "ils", stop: true}},
	"with-contenv":     {flags: flagDef{stop: true}},
	"tini":             {flags: flagDef{short: "pe", stop: true}},
	"dumb-init":        {flags: flagDef{short: "r", long: []string{"rewrite"}, stop: true}},
	"gosu":             {flags: flagDef{stop: true}, skip: 1, note: "runs as another user"},
	"su-exec":          {flags: flagDef{stop: true}, skip: 1, note: "runs as another user"},
	"chpst":            {flags: flagDef{short: "ugUenlmdofcprt", stop: true}},
	"sem":              {flags: flagDef{short: "j", long: []string{"id", "jobs"}, stop: true}},
	"direnv":           {flags: flagDef{stop: true}, sub: "exec", skip: 1, note: "loads the directory's environment, secrets included", cred: true},
	"dotenv":           {flags: flagDef{short: "ecv", stop: true}, note: "loads a .env file's secrets into the command's environment", cred: true},
	"op":               {flags: flagDef{stop: true, long: []string{"env-file", "account"}}, sub: "run", note: "injects 1Password secrets into the command's environment", cred: true},
	"doppler":          {flags: flagDef{stop: true, short: "pc", long: []string{"project", "config", "token"}}, sub: "run", note: "injects Doppler secrets into the command's environment", cred: true},
	"aws-vault":        {flags: flagDef{stop: true, long: []string{"backend", "duration", "region"}}, sub: "exec", skip: 1, note: "injects AWS credentials into the command's environment", cred: true},
	"envchain":         {flags: flagDef{stop: true}, skip: 1, note: "injects keychain secrets into the command's environment", cred: true},
	"chamber":          {flags: flagDef{stop: true}, sub: "exec", note: "injects secrets into the command's environment", cred: true},
	"summon":           {flags: flagDef{short: "pfD", long: []string{"provider", "yaml"}, stop: true}, note: "injects secrets into the command's environment", cred: true},
	"berglas":          {flags: flagDef{stop: true}, sub: "exec", note: "injects secrets into the command's environment", cred: true},
	"sshpass":          {flags: flagDef{short: "pfdP", stop: true}, note: "passes an SSH password", cred: true},
	"poetry":           {flags: flagDef{stop: true, short: "CP", long: []string{"directory", "project"}}, sub: "run"},
	"pipenv":           {flags: flagDef{stop: true}, sub: "run"},
	"uv":               {flags: flagDef{stop: true, long: []string{"directory", "project", "python", "with", "package", "extra", "group"}}, sub: "run"},
	"rye":              {flags: flagDef{stop: true}, sub: "run"},
	"hatch":            {flags: flagDef{stop: true}, sub: "run"},
	"pdm":              {flags: flagDef{stop: true}, sub: "run"},
	"bundle":           {flags: flagDef{stop: true}, sub: "exec"},
	"rbenv":            {flags: flagDef{stop: true}, sub: "exec"},
	"pyenv":            {flags: flagDef{stop: true}, sub: "exec"},
	"nvm":              {flags: flagDef{stop: true}, sub: "exec", skip: 1},
	"conda":            {flags: flagDef{stop: true, short: "np", long: []string{"name", "prefix", "cwd"}}, sub: "run"},
	"mamba":            {flags: flagDef{stop: true, short: "np", long: []string{"name", "prefix", "cwd"}}, sub: "run"},
	"micromamba":       {flags: flagDef{stop: true, short: "np", long: []string{"name", "prefix", "cwd"}}, sub: "run"},
	"pixi":             {flags: flagDef{stop: true, short: "e", long: []string{"environment", "manifest-path"}}, sub: "run"},
	"asdf":             {flags: flagDef{stop: true}, sub: "exec"},
	"mise":             {flags: flagDef{stop: true}, sub: "exec"},
	"rtx":              {flags: flagDef{stop: true}, sub: "exec"},
	"devbox":           {flags: flagDef{stop: true}, sub: "run"},
	"nix":              {flags: flagDef{stop: true}, sub: "develop"},
}

// wrapperCmd peels a wrapper off and analyses the command it runs.
func wrapperCmd(inv *invocation, _ *cmdSpec) {
	name := inv.name()
	switch name {
	case "env":
		envCmd(inv)
		return
	case "xargs":
		xargsCmd(inv)
		return
	case "parallel":
		parallelCmd(inv)
		return
	case "watch":
		watchCmd(inv)
		return
	case "su", "runuser", "sg":
		suCmd(inv)
		return
	case "flock":
		flockCmd(inv)
		return
	case "exec", "command":
		execCmd(inv)
		return
	case "script":
		scriptCmd(inv)
		return
	case "nix-shell":
		nixShellCmd(inv)
		return
	case "sops":
		sopsCmd(inv)
		return
	}
	def, ok := wrappers[name]
	if !ok {
		inv.kind(Execute)
		return
	}
	p := parseFlags(inv.argv, 1, def.flags)
	start := p.rest
	if def.cred {
		inv.kind(Credential)
		inv.w.res.sensitive = true
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
			inv.kind(Read)
			inv.readOnly = true
			return
		}
		if p.has("e", "edit") {
			inv.kind(Write)
			inv.note("edits files as root")
			for i := start; i < len(inv.argv); i++ {
				inv.addPath(i, Write)
			}
			return
		}
		if u, ok := p.value("u", "user"); ok {
			inv.note("runs as user " + u)
		} else {
			inv.note("runs as root")
		}
		if start >= len(inv.argv) {
			inv.kind(Execute)
			inv.note("opens a root shell")
			return
		}
	case "strace", "ltrace":
		if p.has("p", "attach") {
			inv.kind(Execute)
			inv.note("attaches to a running process")
			return
		}
		if o, ok := p.value("o", "output"); ok {
			inv.w.addPath(o, Write, inv.env, false)
		}
	case "time":
		if o, ok := p.value("o", "output"); ok {
			inv.w.addPath(o, Write, inv.env, false)
		}
	case "ionice":
		if p.has("p", "pid", "P", "pgid", "u", "uid") {
			inv.kind(Write)
			return
		}
	case "chroot":
		if start >= len(inv.argv) {
			inv.kind(Execute)
			inv.note("starts a shell in another root directory")
			return
		}
	case "busybox":
		if start >= len(inv.argv) {
			inv.kind(Read)
			inv.readOnly = true
			return
		}
	case "dotenv":
		f := ".env"
		if v, ok := p.value("e"); ok {
			f = v
		}
		inv.w.addPath(f, Read, inv.env, false)
	case "sshpass":
		inv.note("a password is given to ssh")
	}
	if start >= len(inv.argv) {
		if inv.ks == 0 {
			inv.kind(Execute)
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
		inv.kind(Credential)
		inv.w.res.sensitive = true
		inv.note(name + " " + sub + " reads secrets")
	case sub == "" || sub == "list" || sub == "ls" || sub == "show" || sub == "info" || sub == "version" ||
		sub == "--version" || sub == "env" && name != "op" || sub == "status" || sub == "which" || sub == "search" || sub == "check":
		inv.kind(Read)
		inv.readOnly = true
	case sub == "remove" || sub == "uninstall" || sub == "rm" || sub == "delete" || sub == "prune" || sub == "clean":
		inv.kind(Delete)
	case sub == "shell" || sub == "activate" || sub == "x" || sub == "run" || sub == "exec" || sub == "dlx":
		inv.kind(Execute)
	case sub == "publish" || sub == "upload" || sub == "push":
		inv.kind(Send)
		inv.external = true
		inv.note(name + " " + sub + " publishes to a registry")
	default:
		inv.kind(Write, Fetch)
		inv.note(name + " " + sub + " changes the environment or installs software")
	}
}

// envCmd: env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE…] [COMMAND…].
func envCmd(inv *invocation) {
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
				text += " " + shellQuote(r)
			}
			inv.runScript(text, "env -S")
			return
		case strings.HasPrefix(a, "--") || strings.HasPrefix(a, "-") && len(a) > 1:
			i++
			continue
		case strings.Contains(a, "=") && !strings.HasPrefix(a, "="):
			name, val, _ := strings.Cut(a, "=")
			if hijackVars[name] {
				inv.hijack = name
			}
			if secret.SensitiveKey(name) && !secret.IsPlaceholder(val) && !inv.dynamicArg(i) {
				inv.w.res.sensitive = true
				inv.w.note("passes a credential in " + name)
			}
			i++
			continue
		}
		break
	}
	if i >= len(argv) {
		inv.kind(Credential)
		inv.w.res.sensitive = true
		inv.note("env without a command prints every environment variable, secrets included")
		return
	}
	inv.unwrap(i, "env")
}

// xargsCmd: the command xargs runs gets arguments from its input.
func xargsCmd(inv *invocation) {
	p := parseFlags(inv.argv, 1, flagDef{short: "adEILnPs", long: []string{"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}, stop: true})
	if f, ok := p.value("a", "arg-file"); ok {
		inv.w.addPath(f, Read, inv.env, false)
	}
	start := p.rest
	if start >= len(inv.argv) {
		inv.kind(Read)
		inv.readOnly = true
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
func parallelCmd(inv *invocation) {
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
		inv.kind(Execute)
		inv.note("runs commands read from its input")
		return
	}
	inv.argv, inv.dyn = inv.argv[:end], inv.dyn[:end]
	inv.unwrap(start, "parallel")
}

// watchCmd: watch runs its command through sh -c unless -x is given.
func watchCmd(inv *invocation) {
	p := parseFlags(inv.argv, 1, flagDef{short: "nq", long: []string{"interval", "differences", "equexit"}, stop: true})
	start := p.rest
	if start >= len(inv.argv) {
		inv.kind(Read)
		return
	}
	if p.has("x", "exec") {
		inv.unwrap(start, "watch")
		return
	}
	for i := start; i < len(inv.argv); i++ {
		if inv.dynamicArg(i) {
			inv.kind(Execute)
			inv.note("watch runs a command line built at run time")
			return
		}
	}
	inv.runScript(strings.Join(inv.argv[start:], " "), "watch")
}

// suCmd: su [-c CMD] [user], runuser -u USER -- CMD, sg GROUP -c CMD.
func suCmd(inv *invocation) {
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
	inv.kind(Execute)
	inv.note("opens a shell as another user")
}

// flockCmd: flock [opts] FILE CMD… | flock [opts] FILE -c CMD | flock FD.
func flockCmd(inv *invocation) {
	p := parseFlags(inv.argv, 1, flagDef{short: "wEc", long: []string{"timeout", "conflict-exit-code", "command"}, stop: true})
	if c, ok := p.value("c", "command"); ok {
		inv.runScript(c, "flock -c")
		return
	}
	if len(p.ops) < 2 {
		inv.kind(Read)
		inv.readOnly = true
		return
	}
	inv.addPath(p.ops[0], Write)
	inv.unwrap(p.ops[1], "flock")
}

// execCmd: exec and command run their operand (command -v only looks it
// up).
func execCmd(inv *invocation) {
	p := parseFlags(inv.argv, 1, flagDef{short: "a", stop: true})
	if inv.name() == "command" && p.has("v", "V") {
		inv.kind(Read)
		inv.readOnly = true
		return
	}
	if p.rest >= len(inv.argv) {
		inv.kind(Read)
		inv.readOnly = true
		return
	}
	inv.unwrap(p.rest, inv.name())
}

// scriptCmd: script -c CMD [file] records a session to file.
func scriptCmd(inv *invocation) {
	p := parseFlags(inv.argv, 1, flagDef{short: "cEIOBTm", long: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format"}})
	for _, i := range p.ops {
		inv.addPath(i, Write)
	}
	if c, ok := p.value("c", "command"); ok {
		inv.runScript(c, "script -c")
		return
	}
	inv.kind(Execute)
	inv.note("records an interactive shell")
}

func nixShellCmd(inv *invocation) {
	p := parseFlags(inv.argv, 1, flagDef{short: "pIA", long: []string{"run", "command", "packages", "arg", "argstr", "attr", "expr"}})
	inv.kind(Fetch)
	if c, ok := p.value("run", "command"); ok {
		inv.runScript(c, "nix-shell --run")
		return
	}
	inv.kind(Execute)
}

func sopsCmd(inv *invocation) {
	inv.kind(Credential)
	inv.w.res.sensitive = true
	if len(inv.argv) > 3 && (inv.argv[1] == "exec-env" || inv.argv[1] == "exec-file") {
		inv.addPath(2, Read)
		inv.note("decrypts secrets for a command")
		inv.runScript(inv.argv[3], "sops "+inv.argv[1])
		return
	}
	p := parseFlags(inv.argv, 1, flagDef{short: "", long: []string{"output", "input-type", "output-type"}})
	if p.has("d", "decrypt") {
		inv.note("sops -d prints decrypted secrets")
	} else {
		inv.kind(Write)
	}
	for _, i := range p.ops {
		inv.addPath(i, Read)
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
		inv.kind(Read)
		inv.readOnly = true
		inv.note("-n only checks syntax")
		if i < len(argv) {
			inv.addPath(i, Read)
		}
		return
	}
	switch {
	case hasC:
		if i >= len(argv) {
			inv.kind(Execute)
			return
		}
		if inv.dynamicArg(i) {
			inv.kind(Execute)
			inv.runsArg(i)
			inv.note(inv.name() + " -c runs a command line built at run time")
			inv.w.note("the command line of " + inv.name() + " -c is built at run time: " + truncate(argv[i], 120))
			return
		}
		inv.runScript(argv[i], inv.name()+" -c")
	case fromStdin:
		inv.stdinScript()
	case i < len(argv):
		p := inv.addPath(i, Execute)
		inv.kind(Execute)
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
		inv.kind(Execute)
		inv.note("starts an interactive shell")
	case inv.in.literal:
		if inv.in.via == "base64 -d" {
			inv.note(inv.name() + " runs a script decoded from base64")
		}
		inv.runScript(inv.in.text, inv.name()+" < "+inv.in.via)
	default:
		inv.kind(Execute)
		inv.runsStdin()
		inv.note(inv.name() + " runs a script from its input (" + inv.in.via + "), which is not known in advance")
	}
}

// evalCmd: eval joins its arguments and runs them as a command line.
func evalCmd(inv *invocation, _ *cmdSpec) {
	for i := 1; i < len(inv.argv); i++ {
		if inv.dynamicArg(i) {
			inv.kind(Execute)
			for j := 1; j < len(inv.argv); j++ {
				inv.runsArg(j)
			}
			inv.note("eval runs a command line built at run time")
			return
		}
	}
	if len(inv.argv) < 2 {
		inv.kind(Read)
		inv.readOnly = true
		return
	}
	inv.runScript(strings.Join(inv.argv[1:], " "), "eval")
}

func sourceCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(Execute)
	if len(inv.argv) > 1 {
		p := inv.addPath(1, Execute)
		inv.runsArg(1)
		inv.runsFile(p)
		inv.note("runs the commands in " + p + " in this shell")
	}
}

// interpDef says how an interpreter takes inline code.
type interpDef struct {
	lang      string
	codeFlags []string // flags followed by code
	valFlags  flagDef
	module    string // flag that names a module to run
}

var interpreters = map[string]interpDef{
	"python":     {lang: "python", codeFlags: []string{"c"}, valFlags: flagDef{short: "cmWXQ"}, module: "m"},
	"pypy":       {lang: "python", codeFlags: []string{"c"}, valFlags: flagDef{short: "cmWX"}, module: "m"},
	"node":       {lang: "javascript", codeFlags: []string{"e", "eval", "p", "print"}, valFlags: flagDef{short: "eprC", long: []string{"eval", "print", "require", "import", "loader", "experimental-loader", "input-type", "env-file", "conditions", "title"}}},
	"nodejs":     {lang: "javascript", codeFlags: []string{"e", "eval", "p", "print"}, valFlags: flagDef{short: "eprC", long: []string{"eval", "print", "require", "import", "loader"}}},
	"bun":        {lang: "javascript", codeFlags: []string{"e", "eval", "p", "print"}, valFlags: flagDef{short: "epr", long: []string{"eval", "print", "preload", "cwd"}}},
	"deno":       {lang: "javascript", valFlags: flagDef{long: []string{"config", "import-map", "allow-read", "allow-write", "allow-net"}}},
	"ts-node":    {lang: "javascript", codeFlags: []string{"e", "eval", "p", "print"}, valFlags: flagDef{short: "epr", long: []string{"eval", "print", "require", "project"}}},
	"tsx":        {lang: "javascript", codeFlags: []string{"e", "eval", "p", "print"}, valFlags: flagDef{short: "ep", long: []string{"eval", "print", "tsconfig"}}},
	"ruby":       {lang: "ruby", codeFlags: []string{"e"}, valFlags: flagDef{short: "erICExF", long: []string{"encoding"}}},
	"php":        {lang: "php", codeFlags: []string{"r"}, valFlags: flagDef{short: "rfdcBRFEz"}},
	"lua":        {lang: "lua", codeFlags: []string{"e"}, valFlags: flagDef{short: "el"}},
	"luajit":     {lang: "lua", codeFlags: []string{"e"}, valFlags: flagDef{short: "elbjO"}},
	"Rscript":    {lang: "r", codeFlags: []string{"e"}, valFlags: flagDef{short: "e"}},
	"julia":      {lang: "julia", codeFlags: []string{"e", "eval", "E", "print"}, valFlags: flagDef{short: "eEpLJt", long: []string{"eval", "print", "project", "threads", "load"}}},
	"osascript":  {lang: "applescript", codeFlags: []string{"e"}, valFlags: flagDef{short: "els"}},
	"pwsh":       {lang: "powershell", codeFlags: []string{"c", "command", "Command", "EncodedCommand", "encodedcommand", "ec"}, valFlags: flagDef{longSingle: true, short: "cf", long: []string{"c", "command", "Command", "EncodedCommand", "encodedcommand", "ec", "File", "file", "f", "ExecutionPolicy", "executionpolicy"}}},
	"powershell": {lang: "powershell", codeFlags: []string{"c", "command", "Command", "EncodedCommand", "encodedcommand", "ec"}, valFlags: flagDef{longSingle: true, short: "cf", long: []string{"c", "command", "Command", "EncodedCommand", "encodedcommand", "ec", "File", "file", "f", "ExecutionPolicy", "executionpolicy"}}},
	"java":       {lang: "java", valFlags: flagDef{longSingle: true, long: []string{"cp", "classpath", "jar", "p", "m"}}},
}

// interpCmd: python -c CODE, node -e CODE, ruby script.rb, python -m mod …
func interpCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(Execute)
	name := inv.name()
	def, ok := interpreters[name]
	if !ok {
		if t := strings.TrimRight(name, "0123456789.-"); t != name {
			def, ok = interpreters[t]
		}
	}
	if !ok {
		// java, dotnet, swift … : run what they are given.
		p := parseFlags(inv.argv, 1, flagDef{stop: true})
		if len(p.ops) > 0 {
			inv.addPath(p.ops[0], Execute)
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
			inv.kind(Fetch)
			inv.note(name + " " + inv.argv[1] + " fetches and runs packages")
			return
		}
	}
	stop := def.valFlags
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
				inv.kind(Write, Fetch)
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
		f := inv.addPath(i, Execute)
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
	inv.kind(Execute)
	r := scanCode(lang, code)
	inv.ks |= r.kinds
	if r.destructive {
		inv.destructive = true
	}
	if r.external {
		inv.external = true
	}
	if r.sensitive {
		inv.w.res.sensitive = true
	}
	for _, n := range r.notes {
		inv.note(n)
	}
	for _, p := range r.paths {
		inv.w.addPath(p.Path, p.Access, inv.env, false)
	}
	for _, u := range r.urls {
		inv.addURL(u)
	}
	for _, s := range r.shells {
		inv.w.script(s, inv.env.sub(via), inv.depth+1)
	}
}

// shellQuote quotes s for re-parsing as one shell word.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>(){}*?[]#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
