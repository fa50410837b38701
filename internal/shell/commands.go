package shell

import (
	"path"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// cmdSpec is what Mandate knows about a program, compiled from a commands
// entry (spec.go).
type cmdSpec struct {
	kind act.Kind
	// ro: changes nothing when nothing else (flags, redirections) says
	// otherwise.
	ro bool
	// ops is the access of operands taken as paths ("" = operands are
	// not paths); skip leading operands are not paths (grep's pattern),
	// or, for a wrapper, come before the command it runs (timeout's
	// duration).
	ops   act.Kind
	skip  int
	flags flagDef
	// fn analyses commands too rich for the fields above.
	fn       func(*invocation, *cmdSpec)
	note     string
	external bool
	cred     bool // reads (or, for a wrapper, injects) credentials
	destr    bool
	// sub is a wrapper's running form ("poetry run").
	sub string
	// interp says how an interpreter takes inline code.
	interp *interpDef
	// tool is the subcommand table of a program driven by subcommands.
	tool *subTool
	// fileFlags name files the program reads (kubectl -f).
	fileFlags []string
	// verbs are a CLI's own operation words; destroying its verbs that
	// destroy what they act on.
	verbs      map[string]act.Set
	destroying map[string]bool
}

// Handlers. Each reads the invocation's argv and records kinds, paths,
// hosts and notes on it.

func rmCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Delete)
	p := parseFlags(inv.argv, 1, flagDef{long: []string{"interactive", "preserve-root"}})
	recursive := p.has("r", "R", "recursive")
	force := p.has("f", "force")
	if inv.name() == "trash" || inv.name() == "trash-put" || inv.name() == "gio-trash" {
		recursive, force = false, false
		inv.note("moves files to the trash")
	}
	if recursive || force {
		inv.destructive = true
	}
	if p.has("no-preserve-root") {
		inv.note("--no-preserve-root allows deleting /")
	}
	for _, i := range p.ops {
		t := inv.addPath(i, act.Delete)
		switch {
		case recursive && force:
			inv.note("rm -rf deletes " + t + " recursively")
		case recursive:
			inv.note("rm -r deletes " + t + " recursively")
		default:
			inv.note("deletes " + t)
		}
		if recursive && isBroadPath(t, inv.w.home) {
			inv.note("the target " + t + " is the root, a top-level or the home directory")
		}
	}
	if len(p.ops) == 0 {
		inv.note("deletes files named on its input")
	}
}

func ddCmd(inv *invocation, _ *cmdSpec) {
	wrote := false
	for i, a := range inv.argv[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			continue
		}
		switch k {
		case "if":
			inv.addPath(i+1, act.Read)
		case "of":
			t := inv.w.addPath(v, act.Write, inv.env, inv.dynamicArg(i+1))
			wrote = true
			inv.destructive = true
			inv.kind(act.Delete)
			inv.note("dd overwrites " + t)
			if strings.HasPrefix(t, "/dev/") {
				inv.note("dd writes the raw device " + t + ", destroying what is on it")
			}
		}
	}
	if !wrote {
		inv.ks = 0
		inv.readsOnly()
	}
}

func chmodCmd(inv *invocation, s *cmdSpec) {
	inv.kind(act.Write)
	p := parseFlags(inv.argv, 1, s.flags)
	recursive := p.has("R", "recursive")
	skip := 1
	if p.has("reference") {
		skip = 0
	}
	if inv.name() == "chattr" || inv.name() == "setfacl" {
		skip = 1
	}
	ops := p.ops
	if len(ops) > skip {
		ops = ops[skip:]
	} else {
		ops = nil
	}
	for _, i := range ops {
		t := inv.addPath(i, act.Write)
		if recursive && isBroadPath(t, inv.w.home) {
			inv.destructive = true
			inv.note(inv.name() + " -R on " + t + " changes every file below it")
		}
	}
}

func copyCmd(inv *invocation, s *cmdSpec) {
	inv.kind(act.Write)
	p := parseFlags(inv.argv, 1, s.flags)
	ops := p.ops
	target, hasTarget := p.value("t", "target-directory")
	if hasTarget {
		inv.w.addPath(target, act.Write, inv.env, false)
	} else if len(ops) > 0 {
		dst := inv.addPath(ops[len(ops)-1], act.Write)
		ops = ops[:len(ops)-1]
		if inv.name() == "mv" && len(ops) > 0 {
			inv.note("mv moves files to " + dst)
		}
	}
	srcAccess := act.Read
	if inv.name() == "mv" {
		// The source is gone afterwards; the kind stays write (it
		// still exists under the new name).
		srcAccess = act.Write
	}
	for _, i := range ops {
		inv.addPath(i, srcAccess)
	}
	if inv.name() == "cp" && !hasTarget && len(ops) == 1 && inv.w.k.cls.NotSecret(path.Base(inv.argv[ops[0]])) &&
		(p.has("n", "no-clobber") || strings.HasPrefix(valueOr(p, "update"), "none")) {
		// cp -n .env.example .env creates the env file from its
		// example and never overwrites a real one: no secret is
		// touched. Without -n it could replace the user's secrets.
		dst := inv.w.resolve(inv.argv[p.ops[len(p.ops)-1]], inv.env)
		for k := range inv.w.res.Paths {
			if r := &inv.w.res.Paths[k]; r.Path == dst && r.Access == act.Write {
				r.Sensitive, r.Why = false, ""
			}
		}
		inv.note("creates " + dst + " from its example without overwriting an existing one")
	}
	if inv.name() == "ln" && p.has("s", "symbolic") {
		inv.note("creates a symbolic link")
	}
}

func grepCmd(inv *invocation, s *cmdSpec) {
	inv.readsOnly()
	p := parseFlags(inv.argv, 1, s.flags)
	skip := 1
	if p.has("e", "regexp", "f", "file") {
		skip = 0
	}
	for _, f := range p.values("f", "file") {
		inv.w.addPath(f, act.Read, inv.env, false)
	}
	ops := p.ops
	if len(ops) >= skip {
		ops = ops[skip:]
	}
	for _, i := range ops {
		inv.addPath(i, act.Read)
	}
	if len(ops) == 0 && (p.has("r", "R", "recursive") || inv.name() == "rg" || inv.name() == "ag" || inv.name() == "ack") && inv.in == nil {
		inv.w.addPath(".", act.Read, inv.env, false)
	}
	if p.has("pre") {
		inv.kind(act.Execute)
		inv.note("--pre runs a command on every file")
	}
}

func sortCmd(inv *invocation, s *cmdSpec) {
	inv.generic(s)
	p := parseFlags(inv.argv, 1, flagDef{short: "oktT", long: []string{"output", "key", "field-separator", "temporary-directory", "buffer-size", "parallel"}})
	if out, ok := p.value("o", "output"); ok {
		inv.kind(act.Write)
		inv.w.addPath(out, act.Write, inv.env, false)
	}
}

func uniqCmd(inv *invocation, s *cmdSpec) {
	inv.readsOnly()
	p := parseFlags(inv.argv, 1, s.flags)
	if len(p.ops) > 0 {
		inv.addPath(p.ops[0], act.Read)
	}
	if len(p.ops) > 1 {
		inv.kind(act.Write)
		inv.addPath(p.ops[1], act.Write)
	}
}

func findCmd(inv *invocation, _ *cmdSpec) {
	inv.readsOnly()
	argv := inv.argv
	i := 1
	// Leading options -H -L -P -O3 -D debug.
	for i < len(argv) && (argv[i] == "-H" || argv[i] == "-L" || argv[i] == "-P" || strings.HasPrefix(argv[i], "-O") || argv[i] == "-D") {
		if argv[i] == "-D" {
			i++
		}
		i++
	}
	var starts []string
	for ; i < len(argv); i++ {
		a := argv[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == "\\(" {
			break
		}
		starts = append(starts, inv.addPath(i, act.Read))
	}
	if len(starts) == 0 {
		starts = append(starts, inv.w.addPath(".", act.Read, inv.env, false))
	}
	under := starts[0]
	if under == "" {
		under = "."
	}
	for ; i < len(argv); i++ {
		switch a := argv[i]; a {
		case "-delete":
			inv.kind(act.Delete)
			inv.destructive = true
			for _, st := range starts {
				inv.w.addPath(st, act.Delete, inv.env, false)
				inv.note("find -delete deletes matching files under " + st)
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			end := i + 1
			for end < len(argv) && argv[end] != ";" && argv[end] != "+" && argv[end] != "\\;" {
				end++
			}
			if end > i+1 {
				sub := make([]string, 0, end-i-1)
				dyn := make([]bool, 0, end-i-1)
				for j := i + 1; j < end; j++ {
					v := argv[j]
					d := inv.dynamicArg(j)
					if strings.Contains(v, "{}") {
						v = strings.ReplaceAll(v, "{}", strings.TrimSuffix(under, "/")+"/…")
						d = true
					}
					sub = append(sub, v)
					dyn = append(dyn, d)
				}
				inner := &invocation{w: inv.w, env: inv.env.sub("find " + a), argv: sub, dyn: dyn, depth: inv.depth}
				inner.run()
				inv.readOnly = false
				inv.note("find " + a + " runs " + path.Base(sub[0]) + " on files found under " + under)
			}
			i = end
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(argv) {
				inv.kind(act.Write)
				inv.addPath(i+1, act.Write)
				i++
			}
		case "-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-type", "-newer", "-perm", "-user",
			"-group", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-maxdepth",
			"-mindepth", "-printf", "-wholename", "-iwholename", "-lname", "-ilname", "-inum", "-links",
			"-samefile", "-uid", "-gid", "-used", "-fstype", "-context", "-regextype", "-files0-from", "-xtype":
			i++
		}
	}
}

func fdCmd(inv *invocation, _ *cmdSpec) {
	inv.readsOnly()
	p := parseFlags(inv.argv, 1, flagDef{short: "edtEScjx", long: []string{"extension", "max-depth", "type", "exclude", "size", "changed-within", "changed-before", "threads", "exec", "exec-batch", "search-path", "base-directory", "owner", "color", "max-results"}})
	if len(p.ops) > 1 {
		for _, i := range p.ops[1:] {
			inv.addPath(i, act.Read)
		}
	}
	for _, n := range []string{"x", "exec", "X", "exec-batch"} {
		if p.has(n) {
			idx := slices.Index(inv.argv, "-"+n)
			if idx < 0 {
				idx = slices.Index(inv.argv, "--"+n)
			}
			if idx >= 0 && idx+1 < len(inv.argv) {
				inner := &invocation{w: inv.w, env: inv.env.sub("fd --exec"), argv: inv.argv[idx+1:], dyn: inv.dyn[idx+1:], depth: inv.depth}
				inner.run()
				inv.readOnly = false
			}
		}
	}
}

func sedCmd(inv *invocation, _ *cmdSpec) {
	inv.readsOnly()
	p := parseFlags(inv.argv, 1, flagDef{short: "efl", long: []string{"expression", "file", "line-length"}})
	inPlace := p.has("i", "in-place", "I")
	// GNU sed takes -i's suffix attached (-i.bak); the parser saw those
	// characters as flags, which is harmless here.
	for _, a := range inv.argv[1:] {
		if strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place") {
			inPlace = true
		}
	}
	scripts := p.values("e", "expression")
	for _, f := range p.values("f", "file") {
		inv.w.addPath(f, act.Read, inv.env, false)
		scripts = append(scripts, "")
	}
	ops := p.ops
	if len(scripts) == 0 && len(ops) > 0 {
		scripts = append(scripts, inv.argv[ops[0]])
		ops = ops[1:]
	}
	inv.filterFiles("sed", ops, inPlace)
	for _, s := range scripts {
		if inPlace && inv.w.k.dev.sedEmpties(s) {
			inv.destructive = true
			inv.note("sed -i '" + s + "' deletes every line: it empties the file")
		}
		if sedExecutes(s) {
			inv.kind(act.Execute)
			inv.note("the sed script runs commands (e) or writes files (w)")
		}
	}
}

// sedExecutes reports sed scripts with the e command or flag (run a
// command) or w (write a file). It errs toward yes.
func sedExecutes(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != 'e' && c != 'w' && c != 'W' {
			continue
		}
		prevOK := i == 0 || strings.IndexByte("/;{}\n 0123456789$!", s[i-1]) >= 0
		nextOK := i+1 == len(s) || strings.IndexByte(" \t;}\n", s[i+1]) >= 0
		if prevOK && nextOK {
			return true
		}
	}
	return false
}

func yqCmd(inv *invocation, s *cmdSpec) {
	inv.generic(s)
	p := parseFlags(inv.argv, 1, flagDef{short: "oIp", long: []string{"output-format", "input-format", "indent"}})
	if p.has("i", "inplace") {
		inv.kind(act.Write)
		inv.readOnly = false
		for _, i := range p.ops[min(1, len(p.ops)):] {
			inv.addPath(i, act.Write)
		}
	}
}

func printenvCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{})
	if len(p.ops) == 0 {
		inv.kind(act.Credential)
		inv.w.res.Sensitive = true
		inv.note(inv.name() + " prints every environment variable, secrets included")
		return
	}
	inv.readsOnly()
	for _, i := range p.ops {
		if isSecretVar(inv.argv[i]) {
			inv.kind(act.Credential)
			inv.w.res.Sensitive = true
			inv.note("prints the credential variable " + inv.argv[i])
		}
	}
}

func isSecretVar(name string) bool {
	return strings.Contains(name, "TOKEN") || strings.Contains(name, "SECRET") || strings.Contains(name, "PASSWORD") ||
		strings.Contains(name, "KEY") || strings.Contains(name, "CREDENTIAL") || strings.Contains(name, "PASS")
}

func setCmd(inv *invocation, _ *cmdSpec) {
	if len(inv.argv) == 1 {
		inv.kind(act.Credential)
		inv.w.res.Sensitive = true
		inv.note("set without arguments prints every shell variable, secrets included")
		return
	}
	inv.readsOnly()
}

func cdCmd(inv *invocation, _ *cmdSpec) {
	inv.readsOnly()
	if inv.name() == "popd" {
		inv.env.cwdLost = true
		return
	}
	p := parseFlags(inv.argv, 1, flagDef{})
	target := "~"
	if len(p.ops) > 0 {
		target = inv.argv[p.ops[0]]
		if inv.dynamicArg(p.ops[0]) || target == "-" {
			inv.env.cwdLost = true
			return
		}
	}
	dir := inv.env.cwd
	if inv.env.cwdLost {
		dir = ""
	}
	np, rel := act.NormPath(target, dir, inv.w.home)
	if rel {
		inv.env.cwdLost = true
		return
	}
	inv.env.cwd, inv.env.cwdLost = np, false
}

func getentCmd(inv *invocation, _ *cmdSpec) {
	inv.readsOnly()
	if len(inv.argv) > 1 && (inv.argv[1] == "shadow" || inv.argv[1] == "gshadow") {
		inv.kind(act.Credential)
		inv.w.res.Sensitive = true
		inv.note("reads password hashes")
	}
}

func aliasCmd(inv *invocation, _ *cmdSpec) {
	inv.readsOnly()
	for _, a := range inv.argv[1:] {
		if _, v, ok := strings.Cut(a, "="); ok && v != "" {
			// The alias runs later in this shell: analyse its body.
			inv.w.script(v, inv.env.sub("alias"), inv.depth+1)
		}
	}
}

func trapCmd(inv *invocation, _ *cmdSpec) {
	inv.readsOnly()
	if len(inv.argv) > 2 && !strings.HasPrefix(inv.argv[1], "-") {
		inv.w.script(inv.argv[1], inv.env.sub("trap"), inv.depth+1)
	}
}

func hostnameCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{})
	if len(p.ops) > 0 {
		inv.kind(act.Write)
		inv.note("sets the host name")
		return
	}
	inv.readsOnly()
}

func hostOperandCmd(inv *invocation, s *cmdSpec) {
	inv.kind(act.Fetch)
	p := parseFlags(inv.argv, 1, s.flags)
	for _, i := range p.ops {
		a := strings.TrimPrefix(inv.argv[i], "@")
		if strings.Contains(a, ".") || a == "localhost" {
			if h := act.HostOnly(a); h != "" {
				inv.w.host(h)
			}
		}
	}
}

func tarCmd(inv *invocation, _ *cmdSpec) {
	argv := inv.argv
	mode := ""
	var archive string
	p := parseFlags(argv, 1, flagDef{short: "fCTXbIHVgKLNM", long: []string{"file", "directory", "files-from", "exclude-from", "exclude", "use-compress-program", "to-command", "transform", "owner", "group", "mode", "format", "newer", "after-date", "label"}})
	// Old-style "tar czf x.tgz dir": the first word is a bundle of
	// letters without a dash.
	ops := p.ops
	if len(argv) > 1 && !strings.HasPrefix(argv[1], "-") && len(ops) > 0 && ops[0] == 1 {
		letters := argv[1]
		ops = ops[1:]
		for _, c := range letters {
			p.add(string(c), "")
		}
		if strings.Contains(letters, "f") && len(ops) > 0 {
			archive = argv[ops[0]]
			ops = ops[1:]
		}
	}
	if f, ok := p.value("f", "file"); ok && f != "" {
		archive = f
	}
	switch {
	case p.has("c", "create", "r", "append", "u", "update"):
		mode = "create"
	case p.has("x", "extract", "get"):
		mode = "extract"
	case p.has("t", "list"):
		mode = "list"
	}
	switch mode {
	case "create":
		inv.kind(act.Write)
		if archive != "" && archive != "-" {
			inv.w.addPath(archive, act.Write, inv.env, false)
		}
		for _, i := range ops {
			inv.addPath(i, act.Read)
		}
	case "extract":
		inv.kind(act.Write)
		if archive != "" && archive != "-" {
			inv.w.addPath(archive, act.Read, inv.env, false)
		}
		dir := "."
		if d, ok := p.value("C", "directory"); ok {
			dir = d
		}
		inv.w.addPath(dir, act.Write, inv.env, false)
		inv.note("extracts files, overwriting existing ones")
	case "list":
		inv.readsOnly()
		if archive != "" && archive != "-" {
			inv.w.addPath(archive, act.Read, inv.env, false)
		}
	default:
		inv.kind(act.Write)
	}
	if p.has("to-command", "use-compress-program", "I") {
		inv.kind(act.Execute)
		inv.note("tar runs a command of the caller's choice")
	}
}

func zipCmd(inv *invocation, _ *cmdSpec) {
	name := inv.name()
	p := parseFlags(inv.argv, 1, flagDef{short: "dxi", long: []string{}})
	switch {
	case name == "unzip" && p.has("l", "v", "t", "Z"):
		inv.readsOnly()
		for _, i := range p.ops {
			inv.addPath(i, act.Read)
		}
		return
	case (name == "gzip" || name == "bzip2" || name == "xz" || name == "zstd") && p.has("c", "stdout", "t", "l", "list"):
		inv.readsOnly()
		for _, i := range p.ops {
			inv.addPath(i, act.Read)
		}
		return
	}
	inv.kind(act.Write)
	for _, i := range p.ops {
		inv.addPath(i, act.Write)
	}
	if d, ok := p.value("d"); ok && name == "unzip" {
		inv.w.addPath(d, act.Write, inv.env, false)
	}
}

func perlCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "eEIMmlFx0", long: []string{}})
	inPlace := false
	for _, a := range inv.argv[1:] {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i") && !strings.HasPrefix(a, "-I") {
			inPlace = true
		}
	}
	codes := p.values("e", "E")
	ops := p.ops
	if len(codes) == 0 && len(ops) > 0 {
		inv.kind(act.Execute)
		inv.runsArg(ops[0])
		inv.runsFile(inv.addPath(ops[0], act.Execute))
		inv.note("runs the Perl script " + inv.argv[ops[0]])
		ops = ops[1:]
	}
	inv.filterFiles("perl", ops, inPlace)
	for _, c := range codes {
		inv.code("perl", c, "perl -e")
	}
	if len(codes) == 0 && len(p.ops) == 0 {
		inv.stdinCode("perl")
	}
}

func crontabCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "u"})
	switch {
	case p.has("l"):
		inv.readsOnly()
	case p.has("r"):
		inv.kind(act.Delete)
		inv.destructive = true
		inv.note("crontab -r deletes every scheduled job")
	default:
		inv.kind(act.Write, act.Execute)
		inv.note("installs scheduled jobs")
		for _, i := range p.ops {
			inv.addPath(i, act.Read)
		}
	}
}

func pkgCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{stop: true, short: "c", long: []string{}})
	if len(p.ops) == 0 {
		inv.kind(act.Read)
		return
	}
	sub := inv.argv[p.ops[0]]
	switch sub {
	case "list", "search", "show", "info", "policy", "depends", "rdepends", "query", "-Q", "-Ss", "-Si", "-Qi",
		"outdated", "deps", "uses", "desc", "home", "leaves", "config", "doctor", "madison", "provides", "whatprovides":
		inv.readsOnly()
	case "remove", "purge", "uninstall", "erase", "autoremove", "-R", "-Rs", "-Rns", "del", "rm", "zap", "cleanup", "clean":
		inv.kind(act.Delete)
		inv.note(inv.name() + " " + sub + " removes packages")
	default:
		inv.kind(act.Write, act.Fetch)
		inv.note(inv.name() + " " + sub + " changes installed software")
	}
}

func serviceCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "HMpt", long: []string{"host", "machine", "property", "type", "state"}})
	if len(p.ops) == 0 {
		inv.readsOnly()
		return
	}
	verb := inv.argv[p.ops[0]]
	if inv.name() == "service" && len(p.ops) > 1 {
		verb = inv.argv[p.ops[1]]
	}
	switch verb {
	case "status", "show", "list-units", "list-unit-files", "list-timers", "is-active", "is-enabled",
		"is-failed", "cat", "list", "print", "list-dependencies", "help", "--status-all":
		inv.readsOnly()
	case "disable", "mask", "remove", "bootout", "unload":
		inv.kind(act.Write, act.Execute)
		inv.note("stops a service from running")
	default:
		inv.kind(act.Execute)
		inv.note("controls a system service (" + verb + ")")
	}
}

func sshKeygenCmd(inv *invocation, _ *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "fbtCNOIZnaEFGMPRsTVzDSrwu"})
	inv.kind(act.Write)
	if f, ok := p.value("f"); ok {
		inv.w.addPath(f, act.Write, inv.env, false)
	}
	if p.has("y") || p.has("l") || p.has("F") || p.has("R") {
		inv.ks = 0
		inv.kind(act.Read)
		if p.has("y") {
			inv.kind(act.Credential)
		}
	}
}

func gpgCmd(inv *invocation, _ *cmdSpec) {
	a := strings.Join(inv.argv[1:], " ")
	switch {
	case strings.Contains(a, "--export-secret") || strings.Contains(a, "--decrypt") || strings.Contains(a, "-d "):
		inv.kind(act.Credential)
		inv.w.res.Sensitive = true
		inv.note("exports secret keys or decrypts secrets")
	case strings.Contains(a, "--delete"):
		inv.kind(act.Delete)
		inv.destructive = true
	case strings.Contains(a, "--list") || strings.Contains(a, "--verify") || strings.Contains(a, "-k"):
		inv.readsOnly()
	default:
		inv.kind(act.Write)
	}
}

func opensslCmd(inv *invocation, _ *cmdSpec) {
	if len(inv.argv) < 2 {
		inv.kind(act.Execute)
		return
	}
	switch inv.argv[1] {
	case "s_client":
		// With nothing (or an empty line, or /dev/null) on its input,
		// s_client only connects and prints the server's certificate:
		// a fetch. Whatever else is piped in is sent to the server.
		if inv.in == nil || inv.in.literal && strings.TrimSpace(inv.in.text) == "" || inv.in.via == "file /dev/null" {
			inv.kind(act.Fetch)
			inv.note("openssl s_client connects and reads the certificate, sending nothing")
		} else {
			inv.kind(act.Send)
			inv.external = true
		}
		for i, a := range inv.argv {
			if a == "-connect" && i+1 < len(inv.argv) {
				if h := act.HostOnly(inv.argv[i+1]); h != "" {
					inv.w.host(h)
				}
			}
		}
	case "genrsa", "genpkey", "req", "x509", "ca", "pkcs12", "enc", "rsa", "ec", "pkey", "crl", "dgst":
		// Inspecting a certificate or key (x509 -noout -enddate) prints
		// and writes nothing; -out/-keyout write files, and req -new
		// and ca write files (a key, the CA database) of their own.
		out := false
		for i, a := range inv.argv {
			if (a == "-in" || a == "-inkey" || a == "-key" || a == "-signkey") && i+1 < len(inv.argv) {
				inv.addPath(i+1, act.Read)
			}
			if (a == "-out" || a == "-keyout") && i+1 < len(inv.argv) {
				inv.addPath(i+1, act.Write)
				out = true
			}
		}
		switch sub := inv.argv[1]; {
		case out || sub == "ca" || sub == "req" && (slices.Index(inv.argv, "-new") > 0 || slices.Index(inv.argv, "-newkey") > 0):
			inv.kind(act.Write)
		default:
			inv.readsOnly()
		}
	default:
		inv.readsOnly()
		for i, a := range inv.argv {
			if a == "-in" && i+1 < len(inv.argv) {
				inv.addPath(i+1, act.Read)
			}
		}
	}
}

func dateCmd(inv *invocation, _ *cmdSpec) {
	if len(inv.argv) > 1 && (inv.argv[1] == "set-time" || inv.argv[1] == "set-timezone" || inv.argv[1] == "set-ntp") {
		inv.kind(act.Write)
		return
	}
	inv.readsOnly()
}

func openCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Execute)
	for i := 1; i < len(inv.argv); i++ {
		a := inv.argv[i]
		if strings.HasPrefix(a, "-") {
			continue
		}
		if strings.Contains(a, "://") {
			inv.addURL(a)
			continue
		}
		inv.addPath(i, act.Execute)
	}
	inv.note("opens files or URLs with their default application")
}

// valueOr returns the value of flag name, or "".
func valueOr(p parsedArgs, name string) string {
	v, _ := p.value(name)
	return v
}

// filterFiles adds the files a filter (sed, perl) reads its input from, or
// edits in place when inPlace (-i).
func (inv *invocation) filterFiles(prog string, ops []int, inPlace bool) {
	access := act.Read
	if inPlace {
		access = act.Write
		inv.kind(act.Write)
		inv.note(prog + " -i edits files in place")
	}
	for _, i := range ops {
		inv.addPath(i, access)
	}
}

// isBroadPath reports whether p is the root, a top-level directory, the home
// directory or one of its ancestors: recursive changes there are
// catastrophic.
func isBroadPath(p, home string) bool {
	if p == "/" || p == "~" || p == "*" || p == "/*" || p == "~/*" || p == "." && home == "" {
		return true
	}
	if strings.HasPrefix(p, "/") && strings.Count(strings.TrimSuffix(p, "/*"), "/") <= 1 {
		return true
	}
	if home != "" {
		h := strings.TrimSuffix(home, "/")
		q := strings.TrimSuffix(strings.TrimSuffix(p, "/*"), "/")
		if q == h || strings.HasPrefix(h, q+"/") {
			return true
		}
	}
	return false
}
