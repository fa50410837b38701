package action

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/act"
	"github.com/mandate-dev/mandate/internal/datafile"
	"github.com/mandate-dev/mandate/internal/shell"
)

// The tool catalog is YAML; docs/catalog.md describes the format for people.
// A file holds a list of tools:
//
//	tools:
//	  - name: send_email
//	    aliases: [gmail_send_message]
//	    family: email
//	    kind: send
//	    args:
//	      to: recipient
//	      bcc: recipient:bcc
//	      attachments: path:read
//	    when:
//	      - arg: method
//	        in: [POST, PUT]
//	        kind: send

type catalogFile struct {
	Tools []catalogEntry `yaml:"tools"`
}

type catalogEntry struct {
	Name        string             `yaml:"name"`
	Aliases     []string           `yaml:"aliases"`
	Servers     []string           `yaml:"servers"`
	Builtin     bool               `yaml:"builtin"`
	Family      string             `yaml:"family"`
	Kind        string             `yaml:"kind"`
	Kinds       []string           `yaml:"kinds"`
	External    bool               `yaml:"external"`
	Destructive bool               `yaml:"destructive"`
	Public      bool               `yaml:"public"`
	Recurring   bool               `yaml:"recurring"`
	Trust       string             `yaml:"trust"`
	Access      string             `yaml:"access"`
	Note        string             `yaml:"note"`
	Args        map[string]argSpec `yaml:"args"`
	When        []whenSpec         `yaml:"when"`
}

// argSpec is an argument's role, written either as a scalar "role" or
// "role:param" (path:write, recipient:bcc, amount:minor, code:python) or as a
// mapping with the same information spelled out.
type argSpec struct {
	Role     string `yaml:"role"`
	Access   string `yaml:"access"`
	Field    string `yaml:"field"`
	Minor    bool   `yaml:"minor_units"`
	Currency string `yaml:"currency"`
	Language string `yaml:"language"`
	line     int
}

var argSpecKeys = []string{"role", "access", "field", "minor_units", "currency", "language"}

func (a *argSpec) UnmarshalYAML(n *yaml.Node) error {
	a.line = n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		role, param, _ := strings.Cut(n.Value, ":")
		a.Role = strings.TrimSpace(role)
		param = strings.TrimSpace(param)
		switch a.Role {
		case "path", "glob":
			a.Access = param
		case "recipient":
			a.Field = param
		case "amount":
			if param == "minor" {
				a.Minor = true
			} else if param != "" {
				a.Currency = param
			}
		case "code":
			a.Language = param
		default:
			if param != "" {
				return datafile.At(n, "role %q takes no parameter (got %q)", a.Role, param)
			}
		}
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; !slices.Contains(argSpecKeys, k) {
				return datafile.At(n.Content[i], "unknown argument field %q (want one of %s)", k, strings.Join(argSpecKeys, ", "))
			}
		}
		type plain argSpec
		var p plain
		if err := n.Decode(&p); err != nil {
			return err
		}
		*a = argSpec(p)
		a.line = n.Line
		return nil
	default:
		return datafile.At(n, "argument role must be a string or a mapping")
	}
}

type whenSpec struct {
	Arg         string   `yaml:"arg"`
	Equals      *string  `yaml:"equals"`
	In          []string `yaml:"in"`
	NotIn       []string `yaml:"not_in"`
	Contains    string   `yaml:"contains"`
	Matches     string   `yaml:"matches"`
	Present     bool     `yaml:"present"`
	Kind        string   `yaml:"kind"`
	Kinds       []string `yaml:"kinds"`
	Destructive bool     `yaml:"destructive"`
	External    bool     `yaml:"external"`
	Public      bool     `yaml:"public"`
	Recurring   bool     `yaml:"recurring"`
	Note        string   `yaml:"note"`
}

// role is what an argument's value means.
type role uint8

const (
	roleNone      role = iota // nothing beyond the generic scan for secrets
	rolePath                  // a local file path, with an access
	roleGlob                  // a local path pattern (listed, not read)
	roleURL                   // a URL
	roleHost                  // a host name
	roleRecipient             // a destination of a send
	roleAccount               // a bank or payment account
	roleAmount                // money
	roleCurrency              // the currency of the call's amounts
	roleShell                 // a shell command line
	roleSQL                   // SQL statements
	roleCode                  // program source to be run
	roleRemote                // an identifier on the remote side (a repo path), not a local path
	roleContent               // free text: no path or URL extraction
)

var roleNames = map[string]role{
	"none": roleNone, "path": rolePath, "glob": roleGlob, "url": roleURL, "host": roleHost,
	"recipient": roleRecipient, "account": roleAccount, "amount": roleAmount, "currency": roleCurrency,
	"shell": roleShell, "sql": roleSQL, "code": roleCode, "remote": roleRemote, "content": roleContent,
}

// argRule is a compiled argSpec.
type argRule struct {
	key      string // snake_case key, or a dotted path of them
	role     role
	access   Kind
	field    string
	minor    bool
	currency string
	language string
	line     int
}

// condition is a compiled whenSpec.
type condition struct {
	arg         string
	op          string // equals, in, not_in, contains, matches, present
	values      []string
	re          *regexp.Regexp
	kinds       kindSet
	destructive bool
	external    bool
	public      bool
	recurring   bool
	note        string
}

// toolEntry is one compiled catalog entry.
type toolEntry struct {
	name        string
	file        string
	family      string
	kinds       kindSet
	external    bool
	destructive bool
	public      bool
	recurring   bool
	access      Kind
	note        string
	servers     []string
	builtin     bool
	// trust is the trust of the tool's output for flow (user, own,
	// open), when the entry says; "" leaves it to the tool's family.
	trust    string
	args     map[string]*argRule // by snake key or dotted path
	hasShell bool
	when     []condition
}

// catalog indexes entries by every normalised name and alias.
type catalog struct {
	byName    map[string][]*toolEntry
	byCompact map[string][]*toolEntry
}

var familyRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

func newCatalog() *catalog {
	return &catalog{byName: map[string][]*toolEntry{}, byCompact: map[string][]*toolEntry{}}
}

// add compiles the tools section of one knowledge file and indexes its
// entries; later entries replace earlier ones with the same name and
// server restriction.
func (c *catalog) add(file string, tools *yaml.Node) error {
	var entries []catalogEntry
	if err := datafile.Decode(tools, &entries); err != nil {
		return withFile(file, err)
	}
	seen := map[string]*toolEntry{}
	for i := range entries {
		e := &entries[i]
		line := tools.Line
		if i < len(tools.Content) {
			line = tools.Content[i].Line
		}
		where := fmt.Sprintf("%s:%d: tool", file, line)
		if e.Name != "" {
			where += fmt.Sprintf(" %q", e.Name)
		}
		te, err := compileEntry(file, e)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		srv := strings.Join(te.servers, ",")
		if te.builtin {
			srv = "<builtin>"
		}
		for _, n := range append([]string{e.Name}, e.Aliases...) {
			_, sn := NormalizeToolName(n)
			if sn == "" {
				return fmt.Errorf("%s: name or alias %q is empty after normalisation", where, n)
			}
			key := sn + "|" + srv
			if prev, ok := seen[key]; ok {
				if prev == te {
					continue // two spellings of one name in the same entry
				}
				return fmt.Errorf("%s: name %q is already used by %q in the same file", where, n, prev.name)
			}
			seen[key] = te
			c.byName[sn] = replaceEntry(c.byName[sn], te)
			cn := compactName(sn)
			c.byCompact[cn] = replaceEntry(c.byCompact[cn], te)
		}
	}
	return nil
}

// withFile names the file in a datafile error that does not say it yet.
func withFile(file string, err error) error {
	if de, ok := err.(*datafile.Error); ok && de.File == "" {
		c := *de
		c.File = file
		return &c
	}
	return err
}

// checkLanguages reports a code argument whose language the code
// knowledge does not know (languages are data too, so this waits until
// every file is read).
func (c *catalog) checkLanguages(code *shell.CodeRules) error {
	for _, list := range c.byName {
		for _, e := range list {
			for _, r := range e.args {
				if r.role == roleCode && r.language != "" && code.Language(r.language) == "" {
					return fmt.Errorf("%s:%d: tool %q: argument %q: unknown code language %q (want one of %s)", e.file, r.line, e.name, r.key, r.language, strings.Join(code.Names(), ", "))
				}
			}
		}
	}
	return nil
}

// replaceEntry appends te, dropping an earlier entry with the same server
// restriction: later files win.
func replaceEntry(list []*toolEntry, te *toolEntry) []*toolEntry {
	out := list[:0:0]
	for _, x := range list {
		if x.builtin == te.builtin && slices.Equal(x.servers, te.servers) && x.file != te.file {
			continue
		}
		out = append(out, x)
	}
	return append(out, te)
}

func compileEntry(file string, e *catalogEntry) (*toolEntry, error) {
	if strings.TrimSpace(e.Name) == "" {
		return nil, errors.New("missing name")
	}
	te := &toolEntry{name: e.Name, file: file, external: e.External, destructive: e.Destructive, public: e.Public,
		recurring: e.Recurring, note: e.Note, builtin: e.Builtin}
	if e.Family != "" {
		if !familyRE.MatchString(e.Family) {
			return nil, fmt.Errorf("family %q must be a lower-case word", e.Family)
		}
		te.family = e.Family
	}
	switch e.Trust {
	case "", "user", "own", "open":
		te.trust = e.Trust
	default:
		return nil, fmt.Errorf("trust %q: want own, open or user", e.Trust)
	}
	if e.Kind == "" && len(e.Kinds) == 0 {
		return nil, errors.New("missing kind (one of " + act.Names() + ")")
	}
	ks, err := act.ParseSet(append([]string{e.Kind}, e.Kinds...)...)
	if err != nil {
		return nil, err
	}
	te.kinds |= ks
	if e.Builtin && len(e.Servers) > 0 {
		return nil, errors.New("builtin and servers are exclusive: a built-in tool has no server")
	}
	for _, s := range e.Servers {
		ss := snakeCase(s)
		if ss == "" {
			return nil, fmt.Errorf("server name %q is empty after normalisation", s)
		}
		te.servers = append(te.servers, ss)
	}
	slices.Sort(te.servers)
	if e.Access != "" {
		k, err := act.Access(e.Access)
		if err != nil {
			return nil, err
		}
		te.access = k
	}
	if len(e.Args) > 0 {
		te.args = make(map[string]*argRule, len(e.Args))
	}
	for key, spec := range e.Args {
		r, err := compileArg(key, spec)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", key, err)
		}
		if _, dup := te.args[r.key]; dup {
			return nil, fmt.Errorf("argument %q: the same argument is listed twice in another spelling", key)
		}
		te.args[r.key] = r
		if r.role == roleShell {
			te.hasShell = true
		}
	}
	for i, w := range e.When {
		cond, err := compileWhen(w)
		if err != nil {
			return nil, fmt.Errorf("when[%d]: %w", i, err)
		}
		te.when = append(te.when, cond)
	}
	return te, nil
}

func compileArg(key string, spec argSpec) (*argRule, error) {
	r := &argRule{key: argKey(key), field: spec.Field, minor: spec.Minor, language: spec.Language, line: spec.line}
	if r.key == "" {
		return nil, errors.New("empty argument name")
	}
	ro, ok := roleNames[spec.Role]
	if !ok {
		names := make([]string, 0, len(roleNames))
		for n := range roleNames {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown role %q (want one of %s)", spec.Role, strings.Join(names, ", "))
	}
	r.role = ro
	if spec.Access != "" {
		if ro != rolePath && ro != roleGlob {
			return nil, fmt.Errorf("access is only for path and glob roles, not %q", spec.Role)
		}
		k, err := act.Access(spec.Access)
		if err != nil {
			return nil, err
		}
		r.access = k
	}
	if spec.Field != "" && ro != roleRecipient {
		return nil, fmt.Errorf("field is only for the recipient role, not %q", spec.Role)
	}
	if (spec.Minor || spec.Currency != "") && ro != roleAmount {
		return nil, fmt.Errorf("minor_units and currency are only for the amount role, not %q", spec.Role)
	}
	if spec.Currency != "" {
		cur := strings.ToUpper(spec.Currency)
		if !currencyCodeRE.MatchString(cur) {
			return nil, fmt.Errorf("currency %q is not an ISO 4217 code", spec.Currency)
		}
		r.currency = cur
	}
	if spec.Language != "" && ro != roleCode {
		return nil, fmt.Errorf("language is only for the code role, not %q", spec.Role)
	}
	return r, nil
}

func compileWhen(w whenSpec) (condition, error) {
	c := condition{arg: argKey(w.Arg), destructive: w.Destructive, external: w.External, public: w.Public,
		recurring: w.Recurring, note: w.Note}
	if c.arg == "" {
		return c, errors.New("missing arg")
	}
	ops := 0
	if w.Equals != nil {
		ops++
		c.op, c.values = "equals", []string{strings.ToLower(*w.Equals)}
	}
	if len(w.In) > 0 {
		ops++
		c.op = "in"
		for _, v := range w.In {
			c.values = append(c.values, strings.ToLower(v))
		}
	}
	if len(w.NotIn) > 0 {
		ops++
		c.op = "not_in"
		for _, v := range w.NotIn {
			c.values = append(c.values, strings.ToLower(v))
		}
	}
	if w.Contains != "" {
		ops++
		c.op, c.values = "contains", []string{strings.ToLower(w.Contains)}
	}
	if w.Matches != "" {
		ops++
		re, err := regexp.Compile(w.Matches)
		if err != nil {
			return c, fmt.Errorf("matches: %w", err)
		}
		c.op, c.re = "matches", re
	}
	if w.Present {
		ops++
		c.op = "present"
	}
	if ops != 1 {
		return c, errors.New("needs exactly one of equals, in, not_in, contains, matches, present")
	}
	ks, err := act.ParseSet(append([]string{w.Kind}, w.Kinds...)...)
	if err != nil {
		return c, err
	}
	c.kinds |= ks
	if c.kinds == 0 && !c.destructive && !c.external && !c.public && !c.recurring && c.note == "" {
		return c, errors.New("has no effect: give kind, destructive, external, public, recurring or note")
	}
	return c, nil
}

// argKey normalises an argument name or dotted path to snake_case parts.
func argKey(k string) string {
	parts := strings.Split(strings.TrimSpace(k), ".")
	for i, p := range parts {
		parts[i] = snakeCase(p)
		if parts[i] == "" {
			return ""
		}
	}
	return strings.Join(parts, ".")
}

// lookup finds the entry for a normalised tool name. Entries restricted to
// servers win over general ones when the server matches; built-in entries
// (Claude Code's own tools) only match names without a server, and win
// there. Among equals the entry loaded last wins.
func (c *catalog) lookup(server, tool string) *toolEntry {
	list := c.byName[tool]
	if len(list) == 0 {
		list = c.byCompact[compactName(tool)]
	}
	var builtin, general *toolEntry
	for i := len(list) - 1; i >= 0; i-- {
		e := list[i]
		switch {
		case len(e.servers) > 0:
			if server != "" && serverMatches(server, e.servers) {
				return e
			}
		case e.builtin:
			if builtin == nil {
				builtin = e
			}
		default:
			if general == nil {
				general = e
			}
		}
	}
	if server == "" && builtin != nil {
		return builtin
	}
	return general
}

// serverMatches reports whether a call's server name is one of servers,
// allowing decorations around it ("claude_ai_gmail" is "gmail").
func serverMatches(server string, servers []string) bool {
	for _, s := range servers {
		if server == s || strings.HasSuffix(server, "_"+s) || strings.HasPrefix(server, s+"_") {
			return true
		}
	}
	return false
}
