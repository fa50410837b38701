package shell

import (
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// subAct is what one subcommand of a tool does.
type subAct struct {
	kinds []act.Kind
	ro    bool
	destr bool
	ext   bool
	cred  bool
	// issuer, for a credential, are the hosts of the service that issued
	// it (see tokenIssuers): the token sent there is authentication, not
	// a secret leaving.
	issuer []string
	note   string
	// ops is the access of the remaining operands taken as paths.
	ops act.Kind
	// next, for command groups ("docker volume …", "gh pr …"), maps the
	// following word to its action; def applies when it is missing or
	// unknown.
	next map[string]subAct
}

// subTool describes a program driven by subcommands.
type subTool struct {
	global flagDef           // options before the subcommand
	subs   map[string]subAct // by subcommand
	def    subAct            // unknown subcommand
	none   subAct            // no subcommand
	// special handles what the table cannot (it returns true when it
	// did); sub is the index of the subcommand in argv.
	special func(inv *invocation, t *subTool, sub int) bool
}

var (
	rd     = subAct{kinds: []act.Kind{act.Read}, ro: true}
	ftch   = subAct{kinds: []act.Kind{act.Fetch}}
	wr     = subAct{kinds: []act.Kind{act.Write}}
	wrExt  = subAct{kinds: []act.Kind{act.Write}, ext: true}
	exe    = subAct{kinds: []act.Kind{act.Execute}}
	exeExt = subAct{kinds: []act.Kind{act.Execute}, ext: true}
	del    = subAct{kinds: []act.Kind{act.Delete}}
	delD   = subAct{kinds: []act.Kind{act.Delete}, destr: true}
	delExt = subAct{kinds: []act.Kind{act.Delete}, destr: true, ext: true}
	snd    = subAct{kinds: []act.Kind{act.Send}, ext: true}
	cred   = subAct{kinds: []act.Kind{act.Credential}, cred: true}
	inst   = subAct{kinds: []act.Kind{act.Write, act.Fetch}, note: "installs software from a registry"}
)

// with returns a with its note set, for handlers that build actions.
func with(a subAct, note string) subAct { a.note = note; return a }

// subcmdTool dispatches tools driven by subcommands (cmdSpec.tool).
func subcmdTool(inv *invocation, s *cmdSpec) {
	t := s.tool
	if t == nil {
		inv.kind(act.Execute)
		return
	}
	name := inv.name()
	p := parseFlags(inv.argv, 1, withStop(t.global))
	if p.rest >= len(inv.argv) {
		inv.act(t.none, "")
		return
	}
	if t.special != nil && t.special(inv, t, p.rest) {
		return
	}
	sub := inv.argv[p.rest]
	a, ok := t.subs[sub]
	if !ok {
		a = t.def
	}
	label := sub
	if a.next != nil {
		q := parseFlags(inv.argv, p.rest+1, withStop(t.global))
		if q.rest < len(inv.argv) {
			if n, ok := a.next[inv.argv[q.rest]]; ok {
				label = sub + " " + inv.argv[q.rest]
				a = n
			}
		}
	}
	inv.act(a, name+" "+label)
	if a.ops != "" {
		q := parseFlags(inv.argv, p.rest+1, t.global)
		for _, i := range q.ops {
			inv.addPath(i, a.ops)
		}
	}
	// Files given with -f/--filename are read (kubectl apply -f x.yaml).
	if len(s.fileFlags) > 0 {
		q := parseFlags(inv.argv, 1, t.global)
		for _, f := range q.values(s.fileFlags...) {
			if f != "-" && !strings.Contains(f, "://") {
				inv.w.addPath(f, act.Read, inv.env, false)
			}
		}
	}
}

// npxCmd: npx, bunx, pnpx and uvx fetch a package and run it.
func npxCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Execute, act.Fetch)
	p := parseFlags(inv.argv, 1, flagDef{short: "p", long: []string{"package", "from", "with", "python"}, stop: true})
	if p.rest < len(inv.argv) {
		inv.note("runs the package " + inv.argv[p.rest] + " fetched from the registry")
	}
}

// twilioCmd: the Twilio CLI's …:create commands send.
func twilioCmd(inv *invocation, _ *cmdSpec) {
	inv.kind(act.Execute)
	inv.external = true
	if strings.Contains(strings.Join(inv.argv, " "), ":create") {
		inv.kind(act.Send)
		inv.note("sends through Twilio")
	}
}

// rustupCmd: rustup show, which and --version read; the rest installs.
func rustupCmd(inv *invocation, _ *cmdSpec) {
	if len(inv.argv) > 1 && (inv.argv[1] == "show" || inv.argv[1] == "which" || inv.argv[1] == "--version") {
		inv.readsOnly()
		return
	}
	inv.kind(act.Write, act.Fetch)
}

func withStop(f flagDef) flagDef { f.stop = true; return f }

// act applies a subcommand's action.
func (inv *invocation) act(a subAct, label string) {
	inv.kind(a.kinds...)
	if len(a.kinds) == 0 {
		inv.kind(act.Execute)
	}
	inv.readOnly = a.ro
	inv.destructive = inv.destructive || a.destr
	inv.external = inv.external || a.ext
	if a.cred {
		inv.w.credential(a.issuer)
		inv.kind(act.Credential)
	}
	if a.note != "" {
		inv.note(a.note)
	} else if label != "" && (a.destr || a.ext) {
		inv.note(label + " acts on remote systems")
	}
}

func npmSpecial(inv *invocation, t *subTool, sub int) bool {
	verb := inv.argv[sub]
	if verb == "version" && sub+1 < len(inv.argv) && !strings.HasPrefix(inv.argv[sub+1], "-") {
		inv.act(wr, "")
		inv.note(inv.name() + " version bumps the version and commits it")
		return true
	}
	if verb == "npm" && inv.name() == "yarn" && sub+1 < len(inv.argv) {
		// Yarn Berry's "yarn npm publish|login|info".
		switch inv.argv[sub+1] {
		case "publish":
			inv.act(with(snd, "publishes to a package registry"), "")
		case "login", "logout":
			inv.act(cred, "")
		default:
			inv.act(rd, "")
		}
		return true
	}
	if inv.name() == "yarn" {
		if _, ok := t.subs[verb]; !ok && !strings.HasPrefix(verb, "-") {
			inv.act(exe, "")
			inv.note("runs the package script " + verb)
			return true
		}
	}
	if (verb == "publish" || verb == "pack") && slices.Index(inv.argv, "--dry-run") >= 0 {
		inv.act(rd, "")
		return true
	}
	if verb == "audit" && sub+1 < len(inv.argv) && inv.argv[sub+1] == "fix" {
		inv.act(inst, "")
		return true
	}
	if verb == "config" && sub+1 < len(inv.argv) && (inv.argv[sub+1] == "set" || inv.argv[sub+1] == "delete") {
		inv.act(wr, "")
		return true
	}
	return false
}

func ghSpecial(inv *invocation, _ *subTool, sub int) bool {
	verb := inv.argv[sub]
	if verb != "api" {
		return false
	}
	p := parseFlags(inv.argv, sub+1, flagDef{short: "XfFHqt", long: []string{"method", "field", "raw-field", "header", "jq", "template", "input", "hostname", "cache", "preview"}})
	method := "GET"
	if m, ok := p.value("X", "method"); ok {
		method = strings.ToUpper(m)
	} else if p.has("f", "F", "field", "raw-field", "input") {
		method = "POST"
	}
	switch method {
	case "GET", "HEAD":
		inv.act(ftch, "")
	case "DELETE":
		inv.act(delExt, "")
		inv.kind(act.Send)
	default:
		inv.act(snd, "")
		inv.note("gh api sends a " + method + " request")
	}
	return true
}
