package action

import (
	"maps"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/act"
	"github.com/mandate-dev/mandate/internal/datafile"
)

// Sensitive paths: where secrets and credentials live, as data
// (data/paths.yaml). The rules apply wherever the path is, inside the
// project directory too: a project's .env holds the same kind of secrets as
// ~/.aws/credentials.

// pathSpec is the sensitive_paths section of a knowledge file.
type pathSpec struct {
	Absolute     map[string]string `yaml:"absolute"`
	Directories  map[string]string `yaml:"directories"`
	NotSecret    []string          `yaml:"not_secret"`
	Files        map[string]string `yaml:"files"`
	Patterns     []pathPattern     `yaml:"patterns"`
	Extensions   map[string]string `yaml:"extensions"`
	LatePatterns []pathPattern     `yaml:"late_patterns"`
	Passwords    passwordSpec      `yaml:"password_documents"`
}

// pathPattern is a path.Match pattern for a file name (name) or a whole
// path (path), with names it does not cover.
type pathPattern struct {
	Name   string   `yaml:"name"`
	Path   string   `yaml:"path"`
	Unless []string `yaml:"unless"`
	Why    string   `yaml:"why"`

	name, path glob
	unless     []glob
}

// UnmarshalYAML checks a pattern.
func (pp *pathPattern) UnmarshalYAML(n *yaml.Node) error {
	type plain pathPattern
	var p plain
	if err := datafile.Decode(n, &p); err != nil {
		return err
	}
	*pp = pathPattern(p)
	if (pp.Name == "") == (pp.Path == "") {
		return datafile.At(n, "a pattern has either name (a file name) or path (a whole path)")
	}
	if pp.Why == "" {
		return datafile.At(n, "pattern %s%s: why is missing", pp.Name, pp.Path)
	}
	for _, q := range append([]string{pp.Name, pp.Path}, pp.Unless...) {
		if _, err := path.Match(q, ""); err != nil {
			return datafile.At(n, "bad pattern %q: %v", q, err)
		}
	}
	if pp.Path != "" && !strings.HasPrefix(pp.Path, "/") {
		return datafile.At(n, "path pattern %q must be absolute", pp.Path)
	}
	pp.name, pp.path = compileGlob(pp.Name), compileGlob(pp.Path)
	for _, u := range pp.Unless {
		pp.unless = append(pp.unless, compileGlob(u))
	}
	return nil
}

func (pp *pathPattern) match(p, base string) bool {
	subject, q := base, &pp.name
	if pp.Path != "" {
		subject, q = p, &pp.path
	}
	if !q.match(subject) {
		return false
	}
	for i := range pp.unless {
		if pp.unless[i].match(base) {
			return false
		}
	}
	return true
}

// glob is a compiled path.Match pattern. Most patterns are literals
// around stars ("id_*", "*.env", "credentials*.json"): those are matched
// with prefix, suffix and substring tests, far cheaper than path.Match,
// which every path the classifier sees goes through. Others use
// path.Match.
type glob struct {
	pattern string
	// parts are the literals between the stars, when the pattern has no
	// other metacharacter.
	parts  []string
	simple bool
}

func compileGlob(pattern string) glob {
	g := glob{pattern: pattern}
	if !strings.ContainsAny(pattern, `?[\`) {
		g.parts, g.simple = strings.Split(pattern, "*"), true
	}
	return g
}

func (g *glob) match(s string) bool {
	if !g.simple {
		ok, _ := path.Match(g.pattern, s)
		return ok
	}
	if len(g.parts) == 1 {
		return s == g.parts[0]
	}
	first, last := g.parts[0], g.parts[len(g.parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	// "*" matches no "/": a path pattern's stars stay in one element.
	mid := s[len(first) : len(s)-len(last)]
	for _, part := range g.parts[1 : len(g.parts)-1] {
		i := strings.Index(mid, part)
		if i < 0 || strings.Contains(mid[:i], "/") {
			return false
		}
		mid = mid[i+len(part):]
	}
	return !strings.Contains(mid, "/")
}

// passwordSpec describes password documents (see data/paths.yaml).
type passwordSpec struct {
	Extensions []string `yaml:"extensions"`
	Words      []string `yaml:"words"`
	Phrases    []string `yaml:"phrases"`
	Managers   []string `yaml:"managers"`
	Benign     []string `yaml:"benign"`
	Stems      []string `yaml:"stems"`
}

func (p *pathSpec) merge(o *pathSpec) {
	p.Absolute = mergeStrings(p.Absolute, o.Absolute)
	p.Directories = mergeStrings(p.Directories, o.Directories)
	p.NotSecret = append(p.NotSecret, o.NotSecret...)
	p.Files = mergeStrings(p.Files, o.Files)
	p.Patterns = append(p.Patterns, o.Patterns...)
	p.Extensions = mergeStrings(p.Extensions, o.Extensions)
	p.LatePatterns = append(p.LatePatterns, o.LatePatterns...)
	pw, opw := &p.Passwords, &o.Passwords
	pw.Extensions = append(pw.Extensions, opw.Extensions...)
	pw.Words = append(pw.Words, opw.Words...)
	pw.Phrases = append(pw.Phrases, opw.Phrases...)
	pw.Managers = append(pw.Managers, opw.Managers...)
	pw.Benign = append(pw.Benign, opw.Benign...)
	pw.Stems = append(pw.Stems, opw.Stems...)
}

func mergeStrings(a, b map[string]string) map[string]string {
	if a == nil {
		a = map[string]string{}
	}
	maps.Copy(a, b)
	return a
}

// pathRules is the compiled sensitive_paths knowledge.
type pathRules struct {
	absolute map[string]string
	// dirs are fragments starting and ending with "/", matched against
	// "/"+path+"/": everything under them (and the directory or file
	// itself) is sensitive. Longest first: the most specific says why.
	dirs       []dirRule
	notSecret  map[string]bool
	files      map[string]string
	patterns   []pathPattern
	extensions map[string]string
	late       []pathPattern
	pw         passwordRules
}

type dirRule struct{ frag, why string }

type passwordRules struct {
	exts, words, benign map[string]bool
	phrases             [][]string
	managers, stems     []string
}

func compilePaths(p *pathSpec) *pathRules {
	r := &pathRules{absolute: p.Absolute, notSecret: datafile.WordSet(p.NotSecret), files: p.Files,
		patterns: p.Patterns, extensions: p.Extensions, late: p.LatePatterns}
	for d, why := range p.Directories {
		r.dirs = append(r.dirs, dirRule{"/" + strings.Trim(d, "/") + "/", why})
	}
	slices.SortFunc(r.dirs, func(a, b dirRule) int {
		if len(a.frag) != len(b.frag) {
			return len(b.frag) - len(a.frag)
		}
		return strings.Compare(a.frag, b.frag)
	})
	pw := &p.Passwords
	r.pw = passwordRules{exts: datafile.WordSet(pw.Extensions), words: datafile.WordSet(pw.Words), benign: datafile.WordSet(pw.Benign),
		managers: pw.Managers, stems: pw.Stems}
	for _, ph := range pw.Phrases {
		r.pw.phrases = append(r.pw.phrases, strings.Fields(ph))
	}
	return r
}

// sensitive reports whether p (already normalised) is a place secrets
// live, and why. A second result, harmlessEnv, reports an example env file
// (".env.example"), which is recognised but not secret.
func (r *pathRules) sensitive(p string) (why string, harmlessEnv bool) {
	if p == "" {
		return "", false
	}
	if w, ok := r.absolute[p]; ok {
		return w, false
	}
	// Match directory fragments against "/"+p+"/" so that relative paths
	// (".ssh/id_rsa") and the directory itself ("~/.ssh") count.
	probe := p
	if !strings.HasPrefix(probe, "/") {
		probe = "/" + probe
	}
	probe += "/"
	for _, d := range r.dirs {
		if strings.Contains(probe, d.frag) {
			return d.why, false
		}
	}
	base := path.Base(p)
	if r.notSecret[base] {
		return "", true
	}
	if w := r.files[base]; w != "" {
		return w, false
	}
	for i := range r.patterns {
		if r.patterns[i].match(p, base) {
			return r.patterns[i].Why, false
		}
	}
	// An extension counts only after a name (".pem" alone is a name).
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		if w, ok := r.extensions[base[i:]]; ok {
			return w, false
		}
	}
	for i := range r.late {
		if r.late[i].match(p, base) {
			return r.late[i].Why, false
		}
	}
	return r.passwordDocument(base), false
}

// passwordDocument reports why a file named base holds passwords, or "".
func (r *pathRules) passwordDocument(base string) string {
	pw := &r.pw
	stem, ext := base, ""
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		stem, ext = base[:i], base[i:]
	}
	if !pw.exts[ext] && !pw.exts[strings.ToLower(ext)] || !hasStemFold(stem, pw.stems) {
		return ""
	}
	lower := strings.ToLower(stem)
	words := strings.FieldsFunc(lower, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f)
	})
	found := ""
	for i, w := range words {
		if pw.benign[w] {
			return ""
		}
		if pw.words[w] || phraseAt(words, i, pw.phrases) {
			found = "file of passwords or login data"
		}
	}
	if found != "" {
		return found
	}
	compact := strings.Join(words, "")
	for _, m := range pw.managers {
		if strings.Contains(compact, m) {
			return "password manager export"
		}
	}
	return ""
}

// phraseAt reports whether one of phrases starts at words[i].
func phraseAt(words []string, i int, phrases [][]string) bool {
	for _, ph := range phrases {
		if i+len(ph) <= len(words) && slices.Equal(words[i:i+len(ph)], ph) {
			return true
		}
	}
	return false
}

// hasStemFold reports whether s contains one of the lower-case stems,
// ignoring ASCII case, without allocating.
func hasStemFold(s string, stems []string) bool {
	for _, st := range stems {
		for i := 0; i+len(st) <= len(s); i++ {
			j := 0
			for ; j < len(st); j++ {
				c := s[i+j]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				if c != st[j] {
					break
				}
			}
			if j == len(st) {
				return true
			}
		}
	}
	return false
}

// ref builds a PathRef for a raw path string: normalised and checked for
// sensitivity. It returns notes for a relative path left unresolved and for
// example env files.
func (r *pathRules) ref(raw string, access Kind, dir, home string) (PathRef, []string) {
	p, rel := act.NormPath(raw, dir, home)
	ref := PathRef{Path: p, Access: access}
	var notes []string
	if rel {
		notes = append(notes, "relative path "+p+" kept as is: working directory unknown")
	}
	why, harmless := r.sensitive(p)
	if why == "" && p != raw {
		// The raw form may carry what normalisation dropped ("~user").
		why, _ = r.sensitive(raw)
	}
	if why != "" {
		ref.Sensitive, ref.Why = true, why
	}
	if harmless {
		notes = append(notes, p+" is an example env file, not treated as secret")
	}
	return ref, notes
}
