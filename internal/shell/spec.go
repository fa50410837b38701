package shell

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/act"
	"github.com/mandate-dev/mandate/internal/datafile"
	"github.com/mandate-dev/mandate/internal/secret"
	"github.com/mandate-dev/mandate/internal/vocab"
)

// The shell programs Mandate knows are data (data/commands-*.yaml): what
// each does, which of its flags take a value, what its subcommands do, and
// for the few whose command lines need code to read (git refspecs, SQL
// given to a database client, kubectl's specials) the name of a Go handler
// registered in handlers below.

// CommandSpec is one program, or a group of programs that behave alike, as
// a knowledge file's commands section writes it.
type CommandSpec struct {
	Names       []string `yaml:"names"`
	Kind        string   `yaml:"kind"`
	ReadOnly    bool     `yaml:"read_only"`
	Operands    string   `yaml:"operands"`
	Skip        int      `yaml:"skip"`
	Flags       flagSpec `yaml:"flags"`
	Handler     string   `yaml:"handler"`
	Note        string   `yaml:"note"`
	External    bool     `yaml:"external"`
	Credential  bool     `yaml:"credential"`
	Destructive bool     `yaml:"destructive"`
	// Subcommand is a wrapper's running form ("poetry run", "op run").
	Subcommand string `yaml:"subcommand"`
	// Language, CodeFlags and ModuleFlag describe an interpreter.
	Language   string   `yaml:"language"`
	CodeFlags  []string `yaml:"code_flags"`
	ModuleFlag string   `yaml:"module_flag"`
	// Subcommands, None, Default and Special describe a program driven
	// by subcommands.
	Subcommands subTable `yaml:"subcommands"`
	None        *ActSpec `yaml:"none"`
	Default     *ActSpec `yaml:"default"`
	Special     string   `yaml:"special"`
	// FileFlags are flags naming files the program reads (kubectl -f).
	FileFlags []string `yaml:"file_flags"`
	// Verbs are operation words of a CLI that the verb vocabulary does
	// not have ("ls", "get-iam-policy"); a vocabulary verb may not be
	// redefined here. DestructiveVerbs destroy what they act on.
	Verbs            vocab.Table `yaml:"verbs"`
	DestructiveVerbs []string    `yaml:"destructive_verbs"`

	file string
	line int
}

// flagSpec says which flags take a value (flagDef as data).
type flagSpec struct {
	Short      string   `yaml:"short"`
	Long       []string `yaml:"long"`
	Stop       bool     `yaml:"stop"`
	LongSingle bool     `yaml:"long_single"`
}

func (f flagSpec) def() flagDef {
	return flagDef{short: f.Short, long: f.Long, stop: f.Stop, longSingle: f.LongSingle}
}

// UnmarshalYAML decodes and checks one command entry.
func (c *CommandSpec) UnmarshalYAML(n *yaml.Node) error {
	type plain CommandSpec
	var p plain
	if err := datafile.Decode(n, &p); err != nil {
		return err
	}
	*c = CommandSpec(p)
	c.line = n.Line
	if len(c.Names) == 0 {
		return datafile.At(n, "command without names")
	}
	for _, name := range c.Names {
		if name == "" || strings.ContainsAny(name, "/ \t\n") {
			return datafile.At(n, "command name %q: a program's base name, without spaces or slashes", name)
		}
	}
	what := "command " + c.Names[0]
	if c.Kind != "" {
		if k, ok := act.ByName[c.Kind]; !ok || k == act.Unknown {
			return datafile.At(datafile.Field(n, "kind"), "%s: unknown kind %q (want one of %s)", what, c.Kind, act.Names())
		}
	}
	if c.Operands != "" {
		if _, err := act.Access(c.Operands); err != nil {
			return datafile.At(datafile.Field(n, "operands"), "%s: %v", what, err)
		}
	}
	if c.Skip < 0 || c.Skip > 16 {
		return datafile.At(datafile.Field(n, "skip"), "%s: skip %d is outside 0..16", what, c.Skip)
	}
	tool := len(c.Subcommands.entries) > 0 || c.None != nil || c.Default != nil || c.Special != ""
	switch {
	case c.Handler != "":
		if _, ok := handlers[c.Handler]; !ok {
			return datafile.At(datafile.Field(n, "handler"), "%s: unknown handler %q (want one of %s)", what, c.Handler, strings.Join(slices.Sorted(maps.Keys(handlers)), ", "))
		}
		if tool {
			return datafile.At(n, "%s: a handler and subcommands are exclusive: the subcommand table is the handler", what)
		}
	case !tool && c.Kind == "":
		return datafile.At(n, "%s: give a kind, a handler or subcommands", what)
	}
	if c.Special != "" {
		if _, ok := specials[c.Special]; !ok {
			return datafile.At(datafile.Field(n, "special"), "%s: unknown special %q (want one of %s)", what, c.Special, strings.Join(slices.Sorted(maps.Keys(specials)), ", "))
		}
	}
	if c.Subcommand != "" && c.Handler != "wrapper" {
		return datafile.At(datafile.Field(n, "subcommand"), "%s: subcommand is for wrappers (handler: wrapper)", what)
	}
	if (c.Language != "" || len(c.CodeFlags) > 0 || c.ModuleFlag != "") && c.Handler != "interpreter" {
		return datafile.At(n, "%s: language, code_flags and module_flag are for interpreters (handler: interpreter)", what)
	}
	if (len(c.CodeFlags) > 0 || c.ModuleFlag != "") && c.Language == "" {
		return datafile.At(n, "%s: code_flags and module_flag need a language", what)
	}
	return nil
}

// ActSpec is what a subcommand does: a scalar of words ("write external",
// "delete destructive", an action name such as "install"), or a mapping.
type ActSpec struct {
	Do       string   `yaml:"do"`
	Note     string   `yaml:"note"`
	Issuer   string   `yaml:"issuer"`
	Operands string   `yaml:"operands"`
	Next     subTable `yaml:"next"`

	file string
	line int
}

// UnmarshalYAML reads the scalar or the mapping form.
func (a *ActSpec) UnmarshalYAML(n *yaml.Node) error {
	a.line = n.Line
	if n.Kind == yaml.ScalarNode {
		a.Do = n.Value
		return nil
	}
	type plain ActSpec
	var p plain
	if err := datafile.Decode(n, &p); err != nil {
		return err
	}
	*a = ActSpec(p)
	a.line = n.Line
	if a.Operands != "" {
		if _, err := act.Access(a.Operands); err != nil {
			return datafile.At(n, "%v", err)
		}
	}
	return nil
}

// subTable maps subcommands to what they do. A key may list several
// words ("ls list show: read"); a word may appear only once.
type subTable struct {
	entries []subEntry
}

type subEntry struct {
	words []string
	act   ActSpec
}

// UnmarshalYAML reads the table in order, checking for repeated words.
func (t *subTable) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return datafile.At(n, "want a mapping of subcommands to what they do")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ws := strings.Fields(k.Value)
		if len(ws) == 0 {
			return datafile.At(k, "empty subcommand")
		}
		for _, w := range ws {
			if seen[w] {
				return datafile.At(k, "subcommand %q is listed twice", w)
			}
			seen[w] = true
		}
		var a ActSpec
		if err := a.UnmarshalYAML(n.Content[i+1]); err != nil {
			return err
		}
		t.entries = append(t.entries, subEntry{ws, a})
	}
	return nil
}

// Sections are the sections of a knowledge file that the shell analysis
// reads; package action's knowledge file embeds them inline, so that they
// are written beside the tool catalog in the same files (docs/catalog.md).
type Sections struct {
	// Commands are the shell programs (spec.go).
	Commands []CommandSpec `yaml:"commands"`
	// Actions name subcommand actions for commands to use ("install").
	Actions map[string]ActSpec `yaml:"actions"`
	// Issuers are the hosts of services whose CLIs print their own
	// tokens: the token sent there is authentication, not a leak.
	Issuers map[string][]string `yaml:"issuers"`
	// Shell is knowledge about the shell itself.
	Shell Spec `yaml:"shell"`
	// Code is what inline program text is scanned for (code.go).
	Code CodeSpec `yaml:"code"`
}

// Merge adds the sections o of file to s: commands are appended (a later
// one replaces an earlier one of the same name when compiled), an action
// or issuer of the same name is replaced, the shell and code sections are
// appended.
func (s *Sections) Merge(file string, o *Sections) {
	if s.Actions == nil {
		s.Actions = map[string]ActSpec{}
		s.Issuers = map[string][]string{}
	}
	for i := range o.Commands {
		o.Commands[i].file = file
	}
	s.Commands = append(s.Commands, o.Commands...)
	for name, a := range o.Actions {
		a.file = file
		s.Actions[name] = a
	}
	for name, hosts := range o.Issuers {
		s.Issuers[name] = hosts
	}
	s.Shell.merge(&o.Shell)
	s.Code.merge(&o.Code)
}

// Spec is the shell section of a knowledge file: what the shell
// itself does with variables, standard input and program names.
type Spec struct {
	// HijackVariables change which program runs or what it loads: a
	// read-only command with one of them set is no longer read-only.
	HijackVariables []string `yaml:"hijack_variables"`
	// StdinPrograms run or transform what arrives on their standard
	// input, so a pipeline's known output matters to them.
	StdinPrograms []string `yaml:"stdin_programs"`
	// SystemDirectories hold the system's own programs: "/usr/bin/rm" is
	// rm, "./rm" is some other program.
	SystemDirectories []string `yaml:"system_directories"`
	// DataPrograms only print, compare or count their arguments: a
	// $(…) value among them decides nothing the line touches, so it
	// need not be examined (echo "built $(date)"). Any other program's
	// argument computed by a substitution is not examined, and asks.
	DataPrograms []string `yaml:"data_programs"`
	// ValuePrograms print one short value (a number, a name, a date):
	// a substitution of one of them with literal arguments ($(id -u))
	// names no file or host by itself, so it need not be examined.
	ValuePrograms []string `yaml:"value_programs"`
	// Development and Truncation are what makes a build or test command
	// more than that, and the ways of emptying a file (dev.go).
	Development devSpec   `yaml:"development"`
	Truncation  truncSpec `yaml:"truncation"`
}

func (s *Spec) merge(o *Spec) {
	s.HijackVariables = append(s.HijackVariables, o.HijackVariables...)
	s.StdinPrograms = append(s.StdinPrograms, o.StdinPrograms...)
	s.SystemDirectories = append(s.SystemDirectories, o.SystemDirectories...)
	s.DataPrograms = append(s.DataPrograms, o.DataPrograms...)
	s.ValuePrograms = append(s.ValuePrograms, o.ValuePrograms...)
	s.Development.merge(&o.Development)
	s.Truncation.merge(&o.Truncation)
}

// Knowledge is the compiled shell knowledge: the programs, the shell's own
// rules and the code patterns, with what the analysis asks of the rest of
// the classifier. It is immutable once built.
type Knowledge struct {
	commands                    map[string]*cmdSpec
	hijack, stdin, systemDirs   map[string]bool
	dataPrograms, valuePrograms map[string]bool
	dev                         *devKnowledge
	// verbs and lead are the vocabulary's verbs and lead verbs.
	verbs, lead map[string]act.Set
	// issuers are the hosts of services by name (the issuers section).
	issuers map[string][]string
	code    *CodeRules
	cls     Classifier
}

// Classifier is what the analysis asks of the rest of the classifier's
// knowledge, which package action holds: its rules for sensitive paths and
// secrets, and the readers of links, addresses and exposure that its
// argument walk uses too.
type Classifier interface {
	// Path normalises raw against dir and home and judges it by the
	// sensitive-path rules, with notes on what it found.
	Path(raw string, access act.Kind, dir, home string) (act.PathRef, []string)
	// NotSecret reports a file name that looks like a secret's but is
	// not one (".env.example").
	NotSecret(name string) bool
	// Secrets is the secret scanner, operator detectors included.
	Secrets() *secret.Scanner
	// FindSecret returns the first secret-looking span of s.
	FindSecret(s string) (secret.Match, bool)
	// URLSecrets names the credentials a URL carries.
	URLSecrets(u *url.URL) []string
	// Addresses splits a recipient value into recipients; cut is set
	// when it holds more than MaxRecipients.
	Addresses(s string) (rs []act.Recipient, cut bool)
	// LinkAction is what following u does besides fetching it.
	LinkAction(u *url.URL) (act.Kind, string)
	// PublicCommand and AdminCommand explain how a command line opens
	// something to anyone or grants administrator access, or are "".
	PublicCommand(name string, argv []string) string
	AdminCommand(argv []string) string
}

// lookup finds a program, also under its name without a version suffix
// ("python3.12" is python, "pip3" is pip) and mkfs.*.
func (sk *Knowledge) lookup(base string) *cmdSpec {
	if s, ok := sk.commands[base]; ok {
		return s
	}
	if strings.HasPrefix(base, "mkfs") {
		return sk.commands["mkfs"]
	}
	// A one-letter stem is no program's name ("k2" is not kubectl's k).
	trimmed := strings.TrimRight(base, "0123456789.-")
	if trimmed != base && len(trimmed) > 1 {
		if s, ok := sk.commands[trimmed]; ok {
			return s
		}
	}
	return nil
}

// verb is the kinds an operation word names: the vocabulary's verbs and
// lead verbs, then the command's own verbs.
func (sk *Knowledge) verb(s *cmdSpec, w string) act.Set {
	if k := sk.verbs[w]; k != 0 {
		return k
	}
	if k := sk.lead[w]; k != 0 {
		return k
	}
	return s.verbs[w]
}

// Compile builds the shell knowledge from the sections of every knowledge
// file, merged in load order (Sections.Merge); a later command entry
// replaces an earlier one of the same name. code is CompileCode's rules,
// verbs and lead the vocabulary's verbs and lead verbs, and cls answers
// what the analysis asks of the rest of the classifier.
func Compile(secs *Sections, code *CodeRules, verbs, lead map[string]act.Set, cls Classifier) (*Knowledge, error) {
	cmds, actions, issuers, sh := secs.Commands, secs.Actions, secs.Issuers, &secs.Shell
	sk := &Knowledge{commands: map[string]*cmdSpec{}, hijack: datafile.WordSet(sh.HijackVariables),
		stdin: datafile.WordSet(sh.StdinPrograms), systemDirs: datafile.WordSet(sh.SystemDirectories), dataPrograms: datafile.WordSet(sh.DataPrograms),
		valuePrograms: datafile.WordSet(sh.ValuePrograms),
		verbs:         verbs, lead: lead, issuers: issuers, code: code, cls: cls}
	dev, err := compileDev(&sh.Development, &sh.Truncation)
	if err != nil {
		return nil, fmt.Errorf("shell truncation sed_emptying: %w", err)
	}
	sk.dev = dev
	ac := &actCompiler{actions: actions, issuers: issuers, done: map[string]subAct{}}
	for i := range cmds {
		c := &cmds[i]
		spec, err := c.compile(ac, verbs, lead)
		if err != nil {
			line := c.line
			var le *lineErr
			if errors.As(err, &le) {
				line = le.line
			}
			return nil, fmt.Errorf("%s:%d: command %s: %w", c.file, line, c.Names[0], err)
		}
		for _, n := range c.Names {
			sk.commands[n] = spec
		}
	}
	return sk, nil
}

func (c *CommandSpec) compile(ac *actCompiler, verbs, lead map[string]act.Set) (*cmdSpec, error) {
	s := &cmdSpec{kind: act.Kind(c.Kind), ro: c.ReadOnly, ops: act.Kind(c.Operands), skip: c.Skip, flags: c.Flags.def(),
		note: c.Note, external: c.External, cred: c.Credential, destr: c.Destructive, sub: c.Subcommand,
		fileFlags: c.FileFlags, fn: handlers[c.Handler]}
	if c.Language != "" {
		s.interp = &interpDef{lang: c.Language, codeFlags: c.CodeFlags, module: c.ModuleFlag}
	}
	if len(c.Verbs) > 0 {
		s.verbs = map[string]act.Set{}
		for w, ks := range c.Verbs {
			if have := verbs[w] | lead[w]; have != 0 {
				return nil, fmt.Errorf("verb %q is the vocabulary's (%s): a command's verbs may only add words", w, have.Text())
			}
			for _, k := range ks {
				s.verbs[w] = s.verbs[w] | act.Bit(act.Kind(k))
			}
		}
	}
	if len(c.DestructiveVerbs) > 0 {
		s.destroying = datafile.WordSet(c.DestructiveVerbs)
	}
	if c.Subcommands.entries == nil && c.None == nil && c.Default == nil && c.Special == "" {
		return s, nil
	}
	t := &subTool{global: s.flags, special: specials[c.Special]}
	var err error
	if t.subs, err = ac.table(&c.Subcommands, 0); err != nil {
		return nil, err
	}
	t.def, t.none = exe, rd
	if c.Default != nil {
		if t.def, err = ac.act(c.Default, 0); err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
	}
	if c.None != nil {
		if t.none, err = ac.act(c.None, 0); err != nil {
			return nil, fmt.Errorf("none: %w", err)
		}
	}
	s.tool = t
	if s.fn == nil {
		s.fn = subcmdTool
	}
	return s, nil
}

// lineErr is an error at a line of the file being compiled.
type lineErr struct {
	line int
	err  error
}

func (e *lineErr) Error() string { return e.err.Error() }
func (e *lineErr) Unwrap() error { return e.err }

// actCompiler compiles subcommand actions, resolving action names and
// issuers.
type actCompiler struct {
	actions map[string]ActSpec
	issuers map[string][]string
	done    map[string]subAct
	// resolving guards against an action defined through itself.
	resolving []string
}

// maxActDepth bounds nested subcommand tables ("gh pr create").
const maxActDepth = 4

func (ac *actCompiler) table(t *subTable, depth int) (map[string]subAct, error) {
	if len(t.entries) == 0 {
		return nil, nil
	}
	if depth >= maxActDepth {
		return nil, fmt.Errorf("subcommands nested more than %d deep", maxActDepth)
	}
	m := make(map[string]subAct, len(t.entries))
	for i := range t.entries {
		e := &t.entries[i]
		a, err := ac.act(&e.act, depth+1)
		if err != nil {
			var le *lineErr
			if errors.As(err, &le) {
				return nil, &lineErr{le.line, fmt.Errorf("subcommand %s: %w", e.words[0], le.err)}
			}
			return nil, &lineErr{e.act.line, fmt.Errorf("subcommand %s: %w", e.words[0], err)}
		}
		for _, w := range e.words {
			m[w] = a
		}
	}
	return m, nil
}

func (ac *actCompiler) act(a *ActSpec, depth int) (subAct, error) {
	var out subAct
	var ks act.Set
	for _, w := range strings.Fields(a.Do) {
		switch {
		case w == "external":
			out.ext = true
		case w == "destructive":
			out.destr = true
		case act.ByName[w] != "" && w != string(act.Unknown):
			ks.Add(act.Kind(w))
		default:
			p, err := ac.preset(w)
			if err != nil {
				return out, err
			}
			ks.Add(p.kinds...)
			out.ext = out.ext || p.ext
			out.destr = out.destr || p.destr
			if out.note == "" {
				out.note = p.note
			}
			if out.issuer == nil {
				out.issuer = p.issuer
			}
			if out.ops == "" {
				out.ops = p.ops
			}
			if out.next == nil {
				out.next = p.next
			}
		}
	}
	if ks == 0 {
		return out, fmt.Errorf("%q names no kind", a.Do)
	}
	out.kinds = ks.List()
	out.ro = ks == act.Bit(act.Read)
	out.cred = ks.Has(act.Credential)
	if a.Note != "" {
		out.note = a.Note
	}
	if a.Issuer != "" {
		hosts, ok := ac.issuers[a.Issuer]
		if !ok {
			return out, fmt.Errorf("unknown issuer %q (want one of %s)", a.Issuer, strings.Join(slices.Sorted(maps.Keys(ac.issuers)), ", "))
		}
		out.issuer = hosts
	}
	if a.Operands != "" {
		out.ops = act.Kind(a.Operands)
	}
	if len(a.Next.entries) > 0 {
		next, err := ac.table(&a.Next, depth)
		if err != nil {
			return out, err
		}
		out.next = next
	}
	return out, nil
}

// preset compiles the action named w (from an actions section).
func (ac *actCompiler) preset(w string) (subAct, error) {
	if a, ok := ac.done[w]; ok {
		return a, nil
	}
	spec, ok := ac.actions[w]
	if !ok {
		return subAct{}, fmt.Errorf("unknown word %q (want a kind, external, destructive or an action: %s)", w, strings.Join(slices.Sorted(maps.Keys(ac.actions)), ", "))
	}
	if slices.Contains(ac.resolving, w) {
		return subAct{}, fmt.Errorf("action %q is defined through itself", w)
	}
	ac.resolving = append(ac.resolving, w)
	a, err := ac.act(&spec, 0)
	ac.resolving = ac.resolving[:len(ac.resolving)-1]
	if err != nil {
		return subAct{}, fmt.Errorf("action %s (%s:%d): %w", w, spec.file, spec.line, err)
	}
	ac.done[w] = a
	return a, nil
}

// handlers are the Go handlers command entries name: the procedural part
// of Mandate's command knowledge, for command lines a table cannot read.
var handlers = map[string]func(*invocation, *cmdSpec){
	"alias": aliasCmd, "ansible": ansibleCmd, "awk": awkCmd, "aws": awsCmd, "cd": cdCmd, "chmod": chmodCmd,
	"copy": copyCmd, "crontab": crontabCmd, "curl": curlCmd, "database": dbCmd, "db_dump": dbDumpCmd, "dd": ddCmd,
	"env": envCmd, "eval": evalCmd, "exec": execCmd, "fd": fdCmd, "find": findCmd, "flock": flockCmd,
	"gcloud": cloudVerbCmd, "getent": getentCmd, "git": gitCmd, "gpg": gpgCmd, "grep": grepCmd, "gsutil": gsutilCmd,
	"host_operand": hostOperandCmd, "hostname": hostnameCmd, "httpie": httpieCmd, "interpreter": interpCmd,
	"keychain": keychainCmd, "mail": mailCmd, "mysqladmin": mysqladminCmd, "netcat": netcatCmd, "nix_shell": nixShellCmd,
	"npx": npxCmd, "open": openCmd, "openssl": opensslCmd, "package_manager": pkgCmd, "parallel": parallelCmd,
	"perl": perlCmd, "printenv": printenvCmd, "redis": redisCmd, "rm": rmCmd, "rustup": rustupCmd, "scp": scpCmd,
	"script": scriptCmd, "secret_store": secretStoreCmd, "sed": sedCmd, "service": serviceCmd, "set": setCmd,
	"shell": shellCmd, "sops": sopsCmd, "sort": sortCmd, "source": sourceCmd, "ssh": sshCmd, "ssh_keygen": sshKeygenCmd,
	"su": suCmd, "tar": tarCmd, "timedatectl": dateCmd, "trap": trapCmd, "twilio": twilioCmd, "uniq": uniqCmd,
	"watch": watchCmd, "wget": wgetCmd, "wrapper": wrapperCmd, "xargs": xargsCmd, "yq": yqCmd, "zip": zipCmd,
}

// specials handle what a subcommand table cannot for the programs that
// name them (kubectl get secret -o yaml, docker run -v, gh api -X …); they
// return true when they decided.
var specials = map[string]func(inv *invocation, t *subTool, sub int) bool{
	"docker": dockerSpecial, "gh": ghSpecial, "kubectl": kubectlSpecial, "npm": npmSpecial, "terraform": terraformSpecial,
}

// Programs is how many program names k knows.
func (k *Knowledge) Programs() int { return len(k.commands) }

// UnusedHandlers lists, sorted, the named handlers that no program of k
// uses: dead code, or an entry that lost its handler.
func (k *Knowledge) UnusedHandlers() []string {
	used := map[uintptr]bool{}
	for _, s := range k.commands {
		if s.fn != nil {
			used[reflect.ValueOf(s.fn).Pointer()] = true
		}
	}
	var out []string
	for name, fn := range handlers {
		if !used[reflect.ValueOf(fn).Pointer()] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Line is the line of the file the command was written at.
func (c *CommandSpec) Line() int { return c.line }
