// Package shell analyses shell command lines and inline program text for
// the classifier (package action asks it through its analyzeShell seam).
//
// Command lines are parsed with mvdan.cc/sh and every simple command is
// visited wherever it hides: pipelines, && || ; lists, subshells, { } groups,
// $(…) and backticks (in any word, quoted or not, in assignments and
// redirections), process substitution, function bodies, if/for/while/case,
// here-documents and here-strings fed to an interpreter, and the strings
// given to sh -c, eval, ssh, watch, su -c, find -exec, xargs and awk's
// system(). Each command is looked up in a table of known programs; what is
// not known is Execute, never Read.
//
// What it knows about programs is data: the commands, actions, issuers,
// shell and code sections of the knowledge files that package action
// loads (Sections; docs/catalog.md). It imports act, never action; what
// it asks of the rest of the classifier is the Classifier interface.
package shell

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/mandate-dev/mandate/internal/act"
)

// Limits on what a recorded Command keeps (act/limits.go has the limits on
// the analysis itself).
const (
	maxArgvRecord   = 48  // argv elements kept in a recorded Command
	maxArgRecordLen = 512 // bytes per recorded argv element
)

// Result is everything a command line does.
type Result struct {
	Commands    []act.Command
	Kinds       act.Set
	Paths       []act.PathRef
	URLs        []string
	Hosts       []string
	Recipients  []act.Recipient
	Notes       []string
	External    bool
	Destructive bool
	Sensitive   bool
	// public is set when a command opens something to anyone (see
	// publicCommand).
	Public bool
	// adminGrant is set when a command grants administrator access
	// (see adminCommand).
	AdminGrant bool
	// credHeader is set by a credential sent in a request header; it
	// makes the line sensitive unless the only credentials in it are
	// tokens sent back to the services that issued them.
	credHeader bool
	// unexamined says what the analysis did not examine (see
	// Action.Unexamined).
	Unexamined []string
	Err        error
}

// Analyze parses and analyses a command line within the call's budget. parsers, if not nil, recycles Bash parsers (they are large and
// not safe to share at once).
func (k *Knowledge) Analyze(bg *Budget, script, workDir, homeDir string, parsers *sync.Pool) *Result {
	res := &Result{}
	w := &shellWalker{k: k, res: res, home: homeDir, parsers: parsers, bg: bg}
	env := &shellEnv{cwd: workDir}
	w.script(script, env, 0)
	if bg.stopped != "" {
		w.cut(bg.stopped)
	}
	w.settleCredentials()
	if res.Err != nil && len(res.Commands) == 0 {
		res.Commands = append(res.Commands, act.Command{Argv: []string{truncate(script, maxArgRecordLen)}, Kind: act.Execute,
			Note: "unparseable shell: " + res.Err.Error()})
		res.Kinds.Add(act.Execute)
	}
	return res
}

// NewBashParser is the New function of a parser pool.
func NewBashParser() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }

// parseShellFile parses src as Bash, falling back to POSIX sh.
func parseShellFile(src string, parsers *sync.Pool) (*syntax.File, error) {
	var p *syntax.Parser
	if parsers != nil {
		p = parsers.Get().(*syntax.Parser)
		defer parsers.Put(p)
	} else {
		p = syntax.NewParser(syntax.Variant(syntax.LangBash))
	}
	f, err := p.Parse(strings.NewReader(src), "")
	if err == nil {
		return f, nil
	}
	if f2, err2 := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), ""); err2 == nil {
		return f2, nil
	}
	return nil, err
}

type shellWalker struct {
	k        *Knowledge
	res      *Result
	home     string
	funcs    map[string]act.Set // functions the script defines, with what their bodies do
	commands int
	limited  bool
	parsers  *sync.Pool
	// bg is the call's work budget, shared with its other command lines.
	bg *Budget
	// hijacked is a variable that changes which code runs (PATH,
	// LD_PRELOAD, GOFLAGS …), set or exported for the rest of the line.
	hijacked string
	// fetches counts the commands so far that fetch from the network;
	// a substitution or pipe stage that raises it delivers fetched data.
	fetches int
	// fetchedFiles are the files fetching commands wrote (curl -o x.sh).
	fetchedFiles map[string]bool
	// issuers holds, for each credential command whose token belongs to
	// a known service, that service's hosts.
	issuers [][]string
	// otherCreds counts credential commands with no known issuer.
	otherCreds int
}

// credential records a credential a command reads or prints; issuer is
// its service's hosts, or nil when it may be sent anywhere.
func (w *shellWalker) credential(issuer []string) {
	if len(issuer) == 0 {
		w.otherCreds++
		w.res.Sensitive = true
		return
	}
	w.issuers = append(w.issuers, issuer)
}

// settleCredentials decides, once the whole line is known, whether its
// issued tokens make it sensitive: they do unless every host the line
// reaches belongs to every issuing service (curl -H "Authorization: token
// $(gh auth token)" https://api.github.com/user).
func (w *shellWalker) settleCredentials() {
	if len(w.issuers) == 0 {
		if w.res.credHeader {
			w.res.Sensitive = true
		}
		return
	}
	if len(w.res.Hosts) > 0 && w.otherCreds == 0 {
		ok := true
		for _, h := range w.res.Hosts {
			for _, iss := range w.issuers {
				if !slices.ContainsFunc(iss, func(p string) bool { return matchHostPattern(p, h) }) {
					ok = false
				}
			}
		}
		if ok {
			w.note("the token goes only to the service that issued it (" + strings.Join(w.res.Hosts, ", ") + ")")
			return
		}
	}
	w.res.Sensitive = true
}

// matchHostPattern matches a host against "example.com" or
// "*.example.com" (which also matches example.com itself).
func matchHostPattern(p, h string) bool {
	h = strings.ToLower(h)
	if rest, ok := strings.CutPrefix(p, "*."); ok {
		return h == rest || strings.HasSuffix(h, "."+rest)
	}
	return h == p
}

// shellEnv is the state a command sees: the working directory (tracked
// through cd) and the constructs it was found inside.
type shellEnv struct {
	cwd string
	// cwdLost is set after a cd whose target is not known; relative
	// paths are then left relative.
	cwdLost bool
	via     []string
	// remote is the host commands run on (ssh host 'cmd'); their paths
	// are not local and are not recorded as local paths.
	remote string
}

func (e *shellEnv) sub(via ...string) *shellEnv {
	c := *e
	if len(via) > 0 {
		c.via = append(append([]string(nil), e.via...), via...)
	}
	return &c
}

// stdinSrc is what a command reads on standard input, when it is known.
type stdinSrc struct {
	text    string // literal content, if known
	literal bool
	via     string // how it arrives: "here-document", "pipe", …
	// fetched is set when what arrives came from the network (a pipe
	// from curl, a redirect from <(curl …)).
	fetched bool
}

// script parses src and walks it. depth counts nested interpreters.
func (w *shellWalker) script(src string, env *shellEnv, depth int) {
	if depth > act.MaxShellDepth {
		w.cut(fmt.Sprintf("interpreters nested more than %d deep (MaxShellDepth): the innermost command line was not examined", act.MaxShellDepth))
		return
	}
	d, n, over := shellShape(src, act.MaxShellNesting, act.MaxShellTokens)
	if over {
		w.emit(act.Command{Argv: []string{truncate(src, maxArgRecordLen)}, Kind: act.Execute, Via: env.via,
			Note: "not parsed: too deep or too long to analyse"}, act.Bit(act.Execute))
		if d > act.MaxShellNesting {
			w.cut(fmt.Sprintf("the command line nests (…), $(…), `…` or { } more than %d deep (MaxShellNesting): it was not parsed or examined", act.MaxShellNesting))
		} else {
			w.cut(fmt.Sprintf("the command line has more than %d words and operators (MaxShellTokens; at least %d): it was not parsed or examined", act.MaxShellTokens, n))
		}
		return
	}
	// Parsing costs about as much for two tokens as walking one node
	// does: every line the call holds, nested ones again, is paid for
	// from the one budget.
	if !w.bg.spend(1 + n/2) {
		return
	}
	f, err := parseShellFile(src, w.parsers)
	if err != nil {
		if depth == 0 {
			w.res.Err = fmt.Errorf("parse shell: %w", err)
		} else {
			w.emit(act.Command{Argv: []string{truncate(src, maxArgRecordLen)}, Kind: act.Execute, Via: env.via,
				Note: "nested command line does not parse; treated as execute"}, act.Bit(act.Execute))
		}
		w.note("shell text does not parse: " + err.Error())
		return
	}
	w.stmts(f.Stmts, env, depth)
}

func (w *shellWalker) stmts(ss []*syntax.Stmt, env *shellEnv, depth int) {
	for _, s := range ss {
		w.stmt(s, env, nil, depth)
	}
}

// stmt walks one statement. in is its standard input when a pipeline
// feeds it something known.
func (w *shellWalker) stmt(s *syntax.Stmt, env *shellEnv, in *stdinSrc, depth int) {
	if s == nil || !w.bg.spend(1) {
		return
	}
	var writes, truncs []string
	for _, r := range s.Redirs {
		fetchesBefore := w.fetches
		w.scanWord(r.Word, env, depth)
		if r.Hdoc != nil {
			w.scanWord(r.Hdoc, env, depth)
		}
		fetched := w.fetches > fetchesBefore
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				txt := w.heredocText(r)
				in = &stdinSrc{text: txt, literal: true, via: "here-document"}
			} else {
				in = &stdinSrc{literal: true, via: "here-document"}
			}
		case syntax.WordHdoc:
			v := w.word(r.Word, env)
			in = &stdinSrc{text: v.s + "\n", literal: !v.dyn, via: "here-string", fetched: fetched}
		case syntax.RdrIn:
			v := w.word(r.Word, env)
			w.addPath(v.s, act.Read, env, v.dyn)
			in = &stdinSrc{via: "file " + v.s, fetched: fetched || w.fetchedFiles[w.resolve(v.s, env)]}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.AppAll,
			syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
			v := w.word(r.Word, env)
			if t := w.redirectTarget(v, env); t != "" {
				writes = append(writes, t)
				switch r.Op {
				case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob:
					truncs = append(truncs, t)
				}
			}
		case syntax.DplOut, syntax.DplIn:
			// 2>&1, >&2, <&0: descriptors. ">&file" writes a file.
			v := w.word(r.Word, env)
			if !isFD(v.s) && r.Op == syntax.DplOut {
				if t := w.redirectTarget(v, env); t != "" {
					writes = append(writes, t)
				}
			}
		}
	}
	before := len(w.res.Commands)
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		w.call(c, env, in, depth)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			// Both sides run in subshells: cd does not leak.
			fetchesBefore := w.fetches
			w.stmt(c.X, env.sub(), in, depth)
			out := &stdinSrc{via: "pipe"}
			if w.readsStdinScript(c.Y, env) {
				out = w.literalOutput(c.X, env, in)
			}
			if w.fetches > fetchesBefore || in != nil && in.fetched {
				o := *out
				o.fetched = true
				out = &o
			}
			w.stmt(c.Y, env.sub(), out, depth)
		default:
			w.stmt(c.X, env, in, depth)
			w.stmt(c.Y, env, nil, depth)
		}
	case *syntax.Subshell:
		w.stmts(c.Stmts, env.sub(), depth)
	case *syntax.Block:
		w.stmts(c.Stmts, env, depth)
	case *syntax.IfClause:
		for cl := c; cl != nil; cl = cl.Else {
			w.stmts(cl.Cond, env, depth)
			w.stmts(cl.Then, env, depth)
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond, env, depth)
		w.stmts(c.Do, env, depth)
	case *syntax.ForClause:
		w.scanNode(c.Loop, env, depth)
		w.stmts(c.Do, env, depth)
	case *syntax.CaseClause:
		w.scanWord(c.Word, env, depth)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				w.scanWord(p, env, depth)
			}
			w.stmts(it.Stmts, env, depth)
		}
	case *syntax.FuncDecl:
		// The body is analysed as if it ran: a definition is usually
		// followed by a call, and a later call then counts as what the
		// body does.
		start := len(w.res.Commands)
		w.stmt(c.Body, env.sub("function "+funcName(c)), nil, depth)
		var ks act.Set
		for _, cmd := range w.res.Commands[start:] {
			ks.Add(cmd.Kind)
		}
		if n := funcName(c); n != "" {
			if w.funcs == nil {
				w.funcs = map[string]act.Set{}
			}
			w.funcs[n] = ks
		}
	case *syntax.DeclClause:
		w.decl(c, env, depth)
	case *syntax.TimeClause:
		w.stmt(c.Stmt, env.sub("time"), in, depth)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, env.sub("coproc"), in, depth)
	case *syntax.TestDecl:
		w.stmt(c.Body, env, in, depth)
	case *syntax.ArithmCmd, *syntax.TestClause, *syntax.LetClause:
		w.scanNode(c, env, depth)
	default:
		w.emit(act.Command{Kind: act.Execute, Via: env.via, Note: fmt.Sprintf("shell construct %T not understood", c)}, act.Bit(act.Execute))
	}
	if len(writes) > 0 {
		w.applyRedirects(writes, before, env)
	}
	if len(truncs) > 0 && w.emptiesOutput(s, env) {
		w.res.Destructive = true
		for _, t := range truncs {
			w.note("the redirection empties " + t)
		}
		for i := before; i < len(w.res.Commands); i++ {
			w.res.Commands[i].Destructive = true
		}
	}
}

// emptiesOutput reports whether a statement writes nothing to its standard
// output (no command at all, :, true, cat /dev/null …): redirected to a
// file, it empties the file.
func (w *shellWalker) emptiesOutput(s *syntax.Stmt, env *shellEnv) bool {
	switch c := s.Cmd.(type) {
	case nil:
		return true
	case *syntax.CallExpr:
		argv := make([]string, 0, len(c.Args))
		for _, wd := range c.Args {
			v := w.word(wd, env)
			if v.dyn || v.glob {
				return false
			}
			argv = append(argv, v.s)
		}
		return w.k.dev.emptiesOutput(argv)
	}
	return false
}

// applyRedirects records output redirections: the statement writes those
// files, so none of its commands is read-only any more.
func (w *shellWalker) applyRedirects(writes []string, before int, env *shellEnv) {
	for _, t := range writes {
		w.note("redirection writes " + t)
		if strings.HasPrefix(t, "/dev/sd") || strings.HasPrefix(t, "/dev/nvme") || strings.HasPrefix(t, "/dev/disk") ||
			strings.HasPrefix(t, "/dev/hd") || strings.HasPrefix(t, "/dev/mmcblk") || strings.HasPrefix(t, "/dev/xvd") {
			w.res.Destructive = true
			w.note("redirection overwrites the block device " + t)
		}
	}
	w.res.Kinds.Add(act.Write)
	if before < len(w.res.Commands) {
		for i := before; i < len(w.res.Commands); i++ {
			c := &w.res.Commands[i]
			c.ReadOnly = false
			if c.Kind.Rank() < act.Write.Rank() {
				c.Kind = act.Write
			}
		}
		return
	}
	w.emit(act.Command{Name: ">", Argv: append([]string{">"}, writes...), Kind: act.Write, Via: env.via, Note: "redirection"}, act.Bit(act.Write))
}

// redirectTarget records the file an output redirection writes and returns
// its normalised name ("" for /dev/null and other harmless devices).
func (w *shellWalker) redirectTarget(v wordVal, env *shellEnv) string {
	switch v.s {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-":
		return ""
	}
	if strings.HasPrefix(v.s, "/dev/fd/") {
		return ""
	}
	return w.addPath(v.s, act.Write, env, v.dyn)
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func funcName(f *syntax.FuncDecl) string {
	if f.Name != nil {
		return f.Name.Value
	}
	if len(f.Names) > 0 {
		return f.Names[0].Value
	}
	return ""
}

// decl handles export/declare/local/readonly/typeset: their values may
// hold substitutions and secrets, and bare "export -p"/"declare -p" print
// every variable.
func (w *shellWalker) decl(d *syntax.DeclClause, env *shellEnv, depth int) {
	named := false
	for _, a := range d.Args {
		w.assign(a, env, depth)
		if a.Name != nil && w.k.hijack[a.Name.Value] && a.Value != nil {
			w.hijacked = a.Name.Value
		}
		if a.Name != nil {
			named = true
		} else if a.Value != nil {
			if v := w.word(a.Value, env); !strings.HasPrefix(v.s, "-") {
				named = true
			}
		}
	}
	variant := ""
	if d.Variant != nil {
		variant = d.Variant.Value
	}
	if !named && (variant == "export" || variant == "declare" || variant == "typeset") {
		w.emit(act.Command{Argv: []string{variant}, Name: variant, Kind: act.Credential, Via: env.via,
			Note: variant + " without names prints the environment, secrets included"}, act.Bit(act.Credential))
		w.res.Sensitive = true
	}
}

// assign scans an assignment's value and flags secrets assigned to
// credential-ish names.
func (w *shellWalker) assign(a *syntax.Assign, env *shellEnv, depth int) {
	if a.Value != nil {
		w.scanWord(a.Value, env, depth)
		v := w.word(a.Value, env)
		if a.Name != nil && !v.dyn && w.k.cls.Secrets().SensitiveKey(a.Name.Value) && !w.k.cls.Secrets().IsPlaceholder(v.s) {
			w.res.Sensitive = true
			w.note("assigns a credential to " + a.Name.Value)
		} else if m, ok := w.k.cls.FindSecret(v.s); ok {
			w.res.Sensitive = true
			w.note("assigns a secret-looking value (" + m.Type + ")")
		}
	}
	if a.Array != nil {
		for _, el := range a.Array.Elems {
			if el.Value != nil {
				w.scanWord(el.Value, env, depth)
			}
		}
	}
	if a.Index != nil {
		w.scanNode(a.Index, env, depth)
	}
}

// call handles a simple command.
func (w *shellWalker) call(c *syntax.CallExpr, env *shellEnv, in *stdinSrc, depth int) {
	hijack := ""
	for _, a := range c.Assigns {
		w.assign(a, env, depth)
		if len(c.Args) > 0 && a.Name != nil && w.k.hijack[a.Name.Value] {
			hijack = a.Name.Value
		}
	}
	if len(c.Args) == 0 {
		for _, a := range c.Assigns {
			if a.Name != nil && w.k.hijack[a.Name.Value] {
				w.hijacked = a.Name.Value
			}
		}
		return
	}
	argv := make([]string, len(c.Args))
	dyn := make([]bool, len(c.Args))
	var fetched []bool
	for i, wd := range c.Args {
		fetchesBefore := w.fetches
		w.scanWord(wd, env, depth)
		if w.fetches > fetchesBefore {
			if fetched == nil {
				fetched = make([]bool, len(c.Args))
			}
			fetched[i] = true
		}
		v := w.word(wd, env)
		argv[i], dyn[i] = v.s, v.dyn
		if i == 0 && v.glob {
			dyn[0] = true
		}
	}
	inv := &invocation{w: w, env: env, argv: argv, dyn: dyn, fetched: fetched, in: in, depth: depth}
	if hijack != "" {
		inv.hijack = hijack
	}
	inv.run()
}

// scanWord walks the command substitutions inside a word (at any depth:
// in double quotes, parameter defaults, arithmetic, array indices).
func (w *shellWalker) scanWord(wd *syntax.Word, env *shellEnv, depth int) {
	if wd == nil {
		return
	}
	w.scanNode(wd, env, depth)
}

func (w *shellWalker) scanNode(n syntax.Node, env *shellEnv, depth int) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if !w.bg.spend(1) {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			via := "$(…)"
			if x.Backquotes {
				via = "`…`"
			}
			w.stmts(x.Stmts, env.sub(via), depth)
			return false
		case *syntax.ProcSubst:
			via := "<(…)"
			if x.Op == syntax.CmdOut {
				via = ">(…)"
			}
			w.stmts(x.Stmts, env.sub(via), depth)
			return false
		}
		return true
	})
}

// valueSubst reports whether a substitution only prints one short value
// (its commands are value programs with literal arguments: $(id -u),
// $(date +%s)), and returns it in its source form. Such a value names no
// file or host by itself, so it need not be examined.
func (w *shellWalker) valueSubst(x *syntax.CmdSubst, env *shellEnv) (string, bool) {
	if len(x.Stmts) != 1 || len(x.Stmts[0].Redirs) > 0 {
		return "", false
	}
	c, ok := x.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 || len(c.Assigns) > 0 {
		return "", false
	}
	argv := make([]string, len(c.Args))
	for i, wd := range c.Args {
		v := w.word(wd, env)
		if v.dyn || v.glob {
			return "", false
		}
		argv[i] = v.s
	}
	if !w.k.valuePrograms[argv[0]] {
		return "", false
	}
	return "$(" + strings.Join(argv, " ") + ")", true
}

// substMarker stands for a command substitution's output in a word's
// value when it is only known at run time.
const substMarker = "$(…)"

// wordVal is a word as far as it is known before running anything.
type wordVal struct {
	s    string // the value; unknown parts are kept as their source form ("$X", "$(…)")
	dyn  bool   // some part is only known at run time
	glob bool   // unquoted glob or brace characters
}

func (w *shellWalker) word(wd *syntax.Word, env *shellEnv) wordVal {
	var v wordVal
	if wd == nil {
		return v
	}
	var b strings.Builder
	for i, p := range wd.Parts {
		w.part(&b, &v, p, env, false, i == 0)
	}
	v.s = b.String()
	return v
}

func (w *shellWalker) part(b *strings.Builder, v *wordVal, p syntax.WordPart, env *shellEnv, quoted, first bool) {
	switch x := p.(type) {
	case *syntax.Lit:
		if quoted {
			b.WriteString(unquoteDouble(x))
			return
		}
		if hasUnescaped(x.Value, "*?[") || hasBraceExpansion(x.Value) {
			v.glob = true
		}
		b.WriteString(unescapeBare(x.Value))
	case *syntax.SglQuoted:
		b.WriteString(unquoteSingle(x))
	case *syntax.DblQuoted:
		for _, q := range x.Parts {
			w.part(b, v, q, env, true, false)
		}
	case *syntax.ParamExp:
		name := ""
		if x.Param != nil {
			name = x.Param.Value
		}
		plain := x.Exp == nil && x.Slice == nil && x.Repl == nil && x.Index == nil && !x.Length && !x.Excl && x.Names == 0
		switch {
		case plain && name == "HOME":
			b.WriteString(act.HomeOr(w.home))
		case plain && name == "PWD" && env.cwd != "" && !env.cwdLost:
			b.WriteString(env.cwd)
		default:
			v.dyn = true
			b.WriteString("$" + name)
		}
	case *syntax.CmdSubst:
		// A substitution whose output is known without running it
		// ($(cat <<'EOF' … EOF), $(echo /etc/shadow)) is that text, as
		// the shell would give it: trailing newlines dropped.
		if len(x.Stmts) == 1 {
			if out := w.literalOutput(x.Stmts[0], env, nil); out.literal {
				b.WriteString(strings.TrimRight(out.text, "\n"))
				return
			}
		}
		v.dyn = true
		if val, ok := w.valueSubst(x, env); ok {
			b.WriteString(val)
			return
		}
		b.WriteString(substMarker)
	case *syntax.ArithmExp:
		v.dyn = true
		b.WriteString("$((…))")
	case *syntax.ProcSubst:
		v.dyn = true
		b.WriteString("/dev/fd/…")
	case *syntax.ExtGlob:
		v.glob = true
		b.WriteString(x.Op.String())
		if x.Pattern != nil {
			b.WriteString(x.Pattern.Value)
		}
		b.WriteString(")")
	case *syntax.BraceExp:
		v.glob = true
		b.WriteString("{…}")
	default:
		v.dyn = true
	}
}

// heredocText is a here-document's body as the command will read it. An
// unquoted delimiter means the body was expanded: literal parts are
// unescaped, substitutions stay as their source form.
func (w *shellWalker) heredocText(r *syntax.Redirect) string {
	quotedDelim := false
	if r.Word != nil {
		for _, p := range r.Word.Parts {
			switch x := p.(type) {
			case *syntax.SglQuoted, *syntax.DblQuoted:
				quotedDelim = true
			case *syntax.Lit:
				if strings.Contains(x.Value, `\`) {
					quotedDelim = true
				}
			}
		}
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if quotedDelim {
				b.WriteString(x.Value)
			} else {
				b.WriteString(unquoteHeredoc(x))
			}
		case *syntax.ParamExp:
			if x.Param != nil && x.Param.Value == "HOME" && x.Exp == nil && x.Slice == nil && x.Repl == nil {
				b.WriteString(act.HomeOr(w.home))
			} else if x.Param != nil {
				// Keep it as a variable reference for the consumer
				// to see as dynamic.
				b.WriteString("${" + x.Param.Value + "}")
			}
		default:
			b.WriteString("$(:)")
		}
	}
	return b.String()
}

// literalOutput is what a pipeline stage writes to its standard output when
// that is known without running it: echo/printf of literals, cat of a
// here-document, and base64 -d of a known input.
func (w *shellWalker) literalOutput(s *syntax.Stmt, env *shellEnv, in *stdinSrc) *stdinSrc {
	dynamic := &stdinSrc{via: "pipe"}
	if s == nil {
		return dynamic
	}
	var heredoc *stdinSrc
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				heredoc = &stdinSrc{text: w.heredocText(r), literal: true, via: "here-document"}
			}
		case syntax.WordHdoc:
			v := w.word(r.Word, env)
			heredoc = &stdinSrc{text: v.s + "\n", literal: !v.dyn, via: "here-string"}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll:
			return dynamic // output goes to a file
		}
	}
	if heredoc != nil {
		in = heredoc
	}
	switch c := s.Cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			return w.literalOutput(c.Y, env, w.literalOutput(c.X, env, in))
		}
		return dynamic
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return dynamic
		}
		argv := make([]string, 0, len(c.Args))
		for _, wd := range c.Args {
			v := w.word(wd, env)
			if v.dyn {
				return dynamic
			}
			argv = append(argv, v.s)
		}
		return pipeTransform(argv, in)
	}
	return dynamic
}

// readsStdinScript reports whether a pipeline stage may run or pass on what
// it reads (a shell, an interpreter, a database client, or a filter in
// front of one); only then is the previous stage's output worth working out.
func (w *shellWalker) readsStdinScript(s *syntax.Stmt, env *shellEnv) bool {
	if s == nil {
		return false
	}
	switch c := s.Cmd.(type) {
	case *syntax.BinaryCmd:
		return w.readsStdinScript(c.X, env)
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return false
		}
		v := w.word(c.Args[0], env)
		return v.dyn || w.k.stdin[path.Base(v.s)] || w.k.lookup(path.Base(v.s)) == nil
	}
	return true
}

// pipeTransform computes the output of the few filters whose output is
// known from their literal input.
func pipeTransform(argv []string, in *stdinSrc) *stdinSrc {
	dynamic := &stdinSrc{via: "pipe"}
	name := path.Base(argv[0])
	switch name {
	case "echo":
		args := argv[1:]
		nl := "\n"
		for len(args) > 0 && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E" || args[0] == "-ne" || args[0] == "-en") {
			if strings.Contains(args[0], "n") {
				nl = ""
			}
			args = args[1:]
		}
		return &stdinSrc{text: strings.Join(args, " ") + nl, literal: true, via: "echo"}
	case "printf":
		if len(argv) == 2 && !strings.Contains(argv[1], "%") {
			return &stdinSrc{text: strings.ReplaceAll(argv[1], `\n`, "\n"), literal: true, via: "printf"}
		}
		if len(argv) >= 3 && (argv[1] == "%s" || argv[1] == `%s\n`) {
			return &stdinSrc{text: strings.Join(argv[2:], ""), literal: true, via: "printf"}
		}
	case "cat":
		if len(argv) == 1 && in != nil && in.literal {
			return in
		}
	case "base64":
		if in != nil && in.literal && len(argv) >= 2 && (argv[1] == "-d" || argv[1] == "--decode" || argv[1] == "-D") {
			if dec, ok := decodeBase64(in.text); ok {
				return &stdinSrc{text: dec, literal: true, via: "base64 -d"}
			}
		}
	case "rev":
		if in != nil && in.literal && len(argv) == 1 {
			lines := strings.Split(strings.TrimSuffix(in.text, "\n"), "\n")
			for i, l := range lines {
				r := []rune(l)
				for a, z := 0, len(r)-1; a < z; a, z = a+1, z-1 {
					r[a], r[z] = r[z], r[a]
				}
				lines[i] = string(r)
			}
			return &stdinSrc{text: strings.Join(lines, "\n") + "\n", literal: true, via: "rev"}
		}
	}
	return dynamic
}

// addPath records a path the line touches and returns its normalised form.
// Paths on a remote host (ssh) are not local and are only noted.
// resolve normalises raw as addPath would, without recording it.
func (w *shellWalker) resolve(raw string, env *shellEnv) string {
	dir := env.cwd
	if env.cwdLost {
		dir = ""
	}
	p, _ := act.NormPath(raw, dir, w.home)
	return p
}

func (w *shellWalker) addPath(raw string, access act.Kind, env *shellEnv, dynamic bool) string {
	if raw == "" {
		return ""
	}
	if env.remote != "" {
		w.note(fmt.Sprintf("%s %s on host %s", accessVerb(access), raw, env.remote))
		return raw
	}
	dir := env.cwd
	if env.cwdLost {
		dir = ""
	}
	ref, notes := w.k.cls.Path(raw, access, dir, w.home)
	for _, n := range notes {
		w.note(n)
	}
	if dynamic {
		w.note("path " + ref.Path + " is only known at run time")
		if strings.Contains(raw, substMarker) {
			w.cut("the path " + truncate(raw, 80) + " is the output of a command substitution, known only when the line runs: it was not examined")
		}
	}
	for i := range w.res.Paths {
		if w.res.Paths[i].Path == ref.Path && w.res.Paths[i].Access == ref.Access {
			return ref.Path
		}
	}
	w.res.Paths = append(w.res.Paths, ref)
	return ref.Path
}

func accessVerb(k act.Kind) string {
	switch k {
	case act.Read:
		return "reads"
	case act.Write:
		return "writes"
	case act.Delete:
		return "deletes"
	case act.Execute:
		return "runs"
	}
	return "touches"
}

// addresses is the package's addresses, recording a cut-off list as not
// examined.
func (w *shellWalker) addresses(s string) []act.Recipient {
	as, cut := w.k.cls.Addresses(s)
	if cut {
		w.cut(fmt.Sprintf("a command names more than %d recipients in one argument (MaxRecipients): the rest were not examined", act.MaxRecipients))
	}
	return as
}

// cut records something the analysis did not examine; what was not
// examined may run anything.
func (w *shellWalker) cut(why string) {
	w.res.Kinds.Add(act.Execute)
	if !slices.Contains(w.res.Unexamined, why) {
		w.res.Unexamined = append(w.res.Unexamined, why)
	}
}

func (w *shellWalker) note(s string) {
	if len(w.res.Notes) < act.MaxNotes*2 {
		w.res.Notes = act.AppendNew(w.res.Notes, s)
	}
}

func (w *shellWalker) url(u string) { w.res.URLs = act.AppendNew(w.res.URLs, u) }

func (w *shellWalker) host(h string) {
	if h = strings.ToLower(h); h != "" {
		w.res.Hosts = act.AppendNew(w.res.Hosts, h)
	}
}

// emit records a command with the kinds it has.
func (w *shellWalker) emit(c act.Command, ks act.Set) {
	if ks == 0 {
		ks.Add(act.Execute)
	}
	c.Kind = ks.Top()
	if len(c.Argv) > maxArgvRecord {
		c.Argv = append(c.Argv[:maxArgvRecord:maxArgvRecord], "…")
	}
	for i, a := range c.Argv {
		if len(a) > maxArgRecordLen {
			c.Argv[i] = truncate(a, maxArgRecordLen)
		}
	}
	if c.Argv == nil {
		c.Argv = []string{}
	}
	w.res.Commands = append(w.res.Commands, c)
	w.res.Kinds |= ks
	if ks.Has(act.Fetch) {
		w.fetches++
	}
	if c.Destructive {
		w.res.Destructive = true
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
