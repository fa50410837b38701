package shell

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/act"
	"github.com/mandate-dev/mandate/internal/datafile"
)

// Inline program text (python -c, node -e, perl -e, awk programs, a code
// argument of a tool) is not parsed: it is scanned for the cheap, telling
// signs of file deletion, file writes, network traffic, environment dumps
// and commands handed to a shell. Whatever the scan finds, running code is
// Execute; the scan only adds what it can see.

type CodeResult struct {
	Kinds       act.Set
	Destructive bool
	External    bool
	Sensitive   bool
	Notes       []string
	Paths       []act.PathRef // raw paths with access; normalised by the caller
	URLs        []string
	Shells      []string // literal command lines run through a shell
	// unexamined says what of the code was not examined (its length or
	// its matches past the limits).
	Unexamined []string
}

// CodeSpec is the code section of a knowledge file (data/code.yaml).
type CodeSpec struct {
	Languages map[string][]string `yaml:"languages"`
	Patterns  []codePatternSpec   `yaml:"patterns"`
}

// codePatternSpec is one pattern as written.
type codePatternSpec struct {
	Pattern     string   `yaml:"pattern"`
	Languages   []string `yaml:"languages"`
	Kind        string   `yaml:"kind"`
	Group       int      `yaml:"group"`
	Exec        bool     `yaml:"exec"`
	Destructive bool     `yaml:"destructive"`
	External    bool     `yaml:"external"`
	Sensitive   bool     `yaml:"sensitive"`
	Note        string   `yaml:"note"`

	re   *regexp.Regexp
	line int
}

// UnmarshalYAML compiles and checks a pattern.
func (c *codePatternSpec) UnmarshalYAML(n *yaml.Node) error {
	type plain codePatternSpec
	var p plain
	if err := datafile.Decode(n, &p); err != nil {
		return err
	}
	*c = codePatternSpec(p)
	c.line = n.Line
	re, err := regexp.Compile(c.Pattern)
	if err != nil || c.Pattern == "" {
		return datafile.At(n, "code pattern %q: %v", c.Pattern, err)
	}
	c.re = re
	if _, ok := act.ByName[c.Kind]; !ok || c.Kind == string(act.Unknown) {
		return datafile.At(n, "code pattern: unknown kind %q (want one of %s)", c.Kind, act.Names())
	}
	if c.Group < 0 || c.Group > re.NumSubexp() {
		return datafile.At(n, "code pattern: group %d, but the pattern has %d", c.Group, re.NumSubexp())
	}
	if c.Exec && c.Group == 0 {
		return datafile.At(n, "code pattern: exec needs the group that is the command line")
	}
	return nil
}

func (c *CodeSpec) merge(o *CodeSpec) {
	c.Languages = datafile.AppendGroups(c.Languages, o.Languages)
	c.Patterns = append(c.Patterns, o.Patterns...)
}

// CodeRules is the compiled code knowledge.
type CodeRules struct {
	// languages maps every name and alias to its language.
	languages map[string]string
	patterns  []codePattern
}

func CompileCode(c *CodeSpec) (*CodeRules, error) {
	r := &CodeRules{languages: map[string]string{}}
	for lang, aliases := range c.Languages {
		r.languages[lang] = lang
		for _, a := range aliases {
			r.languages[strings.ToLower(a)] = lang
		}
	}
	for _, p := range c.Patterns {
		cp := codePattern{re: p.re, kind: act.Kind(p.Kind), group: p.Group, exec: p.Exec, destructive: p.Destructive,
			external: p.External, sensitive: p.Sensitive, note: p.Note}
		for _, l := range p.Languages {
			lang, ok := r.languages[l]
			if !ok {
				return nil, fmt.Errorf("code pattern at line %d: unknown language %q", p.line, l)
			}
			cp.langs = append(cp.langs, lang)
		}
		r.patterns = append(r.patterns, cp)
	}
	return r, nil
}

// names lists the languages and their aliases.
func (r *CodeRules) Names() []string { return slices.Sorted(maps.Keys(r.languages)) }

// Patterns is how many code patterns r holds.
func (r *CodeRules) Patterns() int { return len(r.patterns) }

// language normalises a language name; "" if unknown.
func (r *CodeRules) Language(s string) string { return r.languages[strings.ToLower(s)] }

type codePattern struct {
	re *regexp.Regexp
	// langs are the languages it applies to, none for all.
	langs []string
	kind  act.Kind
	// group, if > 0, is a literal path (for file patterns) or command
	// line (for exec patterns) in the match.
	group       int
	exec        bool // the group is a shell command line
	destructive bool
	external    bool
	sensitive   bool
	note        string
}

// scan scans inline code of a language ("" tries all).
func (cr *CodeRules) Scan(lang, code string) CodeResult {
	var r CodeResult
	r.Kinds.Add(act.Execute)
	if len(code) > act.MaxScanPerString {
		code = code[:act.MaxScanPerString]
		r.Unexamined = append(r.Unexamined, fmt.Sprintf("the code is longer than %d bytes (MaxScanPerString): the rest was not examined", act.MaxScanPerString))
	}
	lang = cr.Language(lang)
	switch lang {
	case "shell":
		r.Shells = append(r.Shells, code)
		return r
	case "sql":
		s := ClassifySQL(code)
		r.Kinds |= s.kinds
		r.Destructive = s.destructive
		r.Notes = append(r.Notes, s.notes...)
		return r
	}
	seenNote := map[string]bool{}
	for i := range cr.patterns {
		p := &cr.patterns[i]
		if lang != "" && len(p.langs) > 0 && !slices.Contains(p.langs, lang) {
			continue
		}
		ms := p.re.FindAllStringSubmatch(code, act.MaxCodeMatches+1)
		if len(ms) == 0 {
			continue
		}
		if len(ms) > act.MaxCodeMatches {
			ms = ms[:act.MaxCodeMatches]
			r.cutMatches()
		}
		r.Kinds.Add(p.kind)
		r.Destructive = r.Destructive || p.destructive
		r.External = r.External || p.external
		r.Sensitive = r.Sensitive || p.sensitive
		if p.note != "" && !seenNote[p.note] {
			seenNote[p.note] = true
			r.Notes = append(r.Notes, p.note)
		}
		if p.group == 0 {
			continue
		}
		for _, m := range ms {
			v := ""
			for g := p.group; g < len(m) && v == ""; g++ {
				v = m[g]
			}
			if v == "" {
				continue
			}
			if p.exec {
				r.Shells = append(r.Shells, unescapeCodeString(v))
				continue
			}
			r.Paths = append(r.Paths, act.PathRef{Path: v, Access: p.kind})
		}
	}
	us := act.URLRE.FindAllString(code, act.MaxCodeMatches+1)
	if len(us) > act.MaxCodeMatches {
		us = us[:act.MaxCodeMatches]
		r.cutMatches()
	}
	for _, u := range us {
		r.URLs = append(r.URLs, strings.TrimRight(u, ".,;:!?"))
	}
	return r
}

// cutMatches records that a pattern matched more often than is examined.
func (r *CodeResult) cutMatches() {
	why := fmt.Sprintf("the code does one thing more than %d times (MaxCodeMatches): the rest were not examined", act.MaxCodeMatches)
	if !slices.Contains(r.Unexamined, why) {
		r.Unexamined = append(r.Unexamined, why)
	}
}

// unescapeCodeString undoes the common backslash escapes of a quoted
// string literal in a program.
func unescapeCodeString(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\"`, `"`, `\'`, `'`, `\\`, `\`, `\n`, "\n", `\t`, "\t", "\\`", "`")
	return r.Replace(s)
}

// awkCmd: awk programs are read-only unless they call system(), pipe to or
// from commands, or print to files.
var (
	awkSystemRE   = regexp.MustCompile(`system\s*\(\s*("(?:[^"\\]|\\.)*")?`)
	awkPipeOutRE  = regexp.MustCompile(`\|&?\s*("(?:[^"\\]|\\.)*")?`)
	awkPipeInRE   = regexp.MustCompile(`("(?:[^"\\]|\\.)*")?\s*\|&?\s*getline`)
	awkPrintOutRE = regexp.MustCompile(`(?:print|printf)[^;{}>]*>>?\s*("(?:[^"\\]|\\.)*")?`)
)

func awkCmd(inv *invocation, _ *cmdSpec) {
	inv.readsOnly()
	p := parseFlags(inv.argv, 1, flagDef{short: "fvF", long: []string{"file", "assign", "field-separator", "include", "load", "source", "exec"}})
	var progs []string
	for _, f := range p.values("f", "file", "exec", "include") {
		inv.kind(act.Execute)
		inv.w.addPath(f, act.Execute, inv.env, false)
		inv.note("runs the awk program in " + f)
	}
	progs = append(progs, p.values("source")...)
	ops := p.ops
	if len(p.values("f", "file", "exec")) == 0 && len(p.values("source")) == 0 && len(ops) > 0 {
		if inv.dynamicArg(ops[0]) {
			inv.kind(act.Execute)
			inv.note("the awk program is built at run time")
		}
		progs = append(progs, inv.argv[ops[0]])
		ops = ops[1:]
	}
	for _, i := range ops {
		if !strings.Contains(inv.argv[i], "=") {
			inv.addPath(i, act.Read)
		}
	}
	for _, prog := range progs {
		awkProgram(inv, prog)
	}
}

func awkProgram(inv *invocation, prog string) {
	body := awkStripStrings(prog)
	run := func(lit, via string) {
		inv.kind(act.Execute)
		if lit == "" {
			inv.note("awk runs a command built at run time (" + via + ")")
			return
		}
		inv.w.script(unescapeCodeString(strings.Trim(lit, `"`)), inv.env.sub("awk "+via), inv.depth+1)
	}
	for _, m := range awkSystemRE.FindAllStringSubmatchIndex(body, 16) {
		run(awkLiteral(prog, m, 1), "system()")
	}
	for _, m := range awkPipeInRE.FindAllStringSubmatchIndex(body, 16) {
		run(awkLiteral(prog, m, 1), "getline")
	}
	for _, m := range awkPipeOutRE.FindAllStringSubmatchIndex(body, 16) {
		// Skip the getline pipes already handled and "||".
		end := m[1]
		if strings.HasPrefix(strings.TrimSpace(body[end:]), "getline") || m[0] > 0 && body[m[0]-1] == '|' || end < len(body) && body[end] == '|' {
			continue
		}
		run(awkLiteral(prog, m, 1), "pipe")
	}
	for _, m := range awkPrintOutRE.FindAllStringSubmatchIndex(body, 16) {
		inv.kind(act.Write)
		if f := awkLiteral(prog, m, 1); f != "" {
			inv.w.addPath(strings.Trim(f, `"`), act.Write, inv.env, false)
		} else {
			inv.note("awk writes to a file named at run time")
		}
	}
}

// awkStripStrings blanks the inside of string literals (keeping their
// length, so offsets stay valid) so that operators inside strings are not
// mistaken for code.
func awkStripStrings(s string) string {
	b := []byte(s)
	in := false
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\' && in:
			b[i] = ' '
			if i+1 < len(b) {
				b[i+1] = ' '
				i++
			}
		case b[i] == '"':
			in = !in
		case in:
			b[i] = ' '
		}
	}
	return string(b)
}

// awkLiteral returns the original text of submatch g of m (a string
// literal, quotes included), or "" when the group did not match.
func awkLiteral(orig string, m []int, g int) string {
	if len(m) <= 2*g+1 || m[2*g] < 0 {
		return ""
	}
	return orig[m[2*g]:m[2*g+1]]
}
