package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/policies"
)

// Policy is a compiled, immutable rule set: the built-in pack plus any
// operator files. It is safe for concurrent use; to change policy, load a new
// one and swap it in.
type Policy struct {
	rules []*rule // enabled rules, in load order
	// sequences are the enabled sequence rules, in load order.
	sequences []*sequence
	seqInfo   []SequenceInfo
	lets      []*let
	letIndex  map[string]int
	info      []RuleInfo
	defaults  map[action.Kind]Effect
	adapter   types.Adapter
	hash      string
}

// RuleInfo describes one loaded rule, for documentation and the dashboard.
type RuleInfo struct {
	Name        string `json:"name"`
	Effect      Effect `json:"effect"`
	File        string `json:"file"`
	Line        int    `json:"line"`
	Description string `json:"description,omitempty"`
	When        string `json:"when"`
	// Disabled is true when a `disable:` entry turned the rule off; it is
	// then never evaluated.
	Disabled bool `json:"disabled,omitempty"`
	// Judge is true when an ask of this rule may go to the judge model
	// (`judge: eligible`); ApprovalTimeout, when set, is the deadline of
	// the approvals it asks for (`approval_timeout: 2m`).
	Judge           bool          `json:"judge,omitempty"`
	ApprovalTimeout time.Duration `json:"approval_timeout,omitempty"`
}

// builtinDir is where the built-in pack lives inside policies.FS.
const builtinDir = "builtin"

// Builtin returns the embedded built-in pack, compiled.
func Builtin() (*Policy, error) {
	srcs, err := builtinSources()
	if err != nil {
		return nil, err
	}
	return compileSources(srcs)
}

// Load returns the built-in pack followed by every *.yaml and *.yml file
// (except *_test.yaml fixture files) in each of dirs, in order, files sorted
// by name within a directory. A path in dirs that is a file is loaded as
// one. Rule names must be unique across everything loaded; later defaults
// override earlier ones; `disable` entries may name any loaded rule.
//
// Files identical to a file of the built-in pack are skipped: they are the
// pack itself, checked out on disk.
//
// Errors name the file, the rule and the line:column of each problem.
func Load(dirs ...string) (*Policy, error) {
	srcs, err := builtinSources()
	if err != nil {
		return nil, err
	}
	// A file identical to one of the built-in pack is that file on disk
	// (`mandate policy test policies/builtin` in a checkout): it is already
	// loaded, so it is skipped rather than reported as a duplicate.
	builtin := map[[sha256.Size]byte]bool{}
	for _, s := range srcs {
		builtin[sha256.Sum256(s.data)] = true
	}
	for _, dir := range dirs {
		more, err := dirSources(dir)
		if err != nil {
			return nil, err
		}
		for _, s := range more {
			if !builtin[sha256.Sum256(s.data)] {
				srcs = append(srcs, s)
			}
		}
	}
	return compileSources(srcs)
}

// source is one rule file's name and bytes.
type source struct {
	name    string
	data    []byte
	builtin bool
}

// isRuleFile reports whether a file name is a rule file: YAML, and not a
// fixture file for `mandate policy test`.
func isRuleFile(name string) bool {
	ext := path.Ext(name)
	if ext != ".yaml" && ext != ".yml" {
		return false
	}
	return !strings.HasSuffix(strings.TrimSuffix(name, ext), "_test")
}

func builtinSources() ([]source, error) {
	entries, err := fs.ReadDir(policies.FS, builtinDir)
	if err != nil {
		return nil, fmt.Errorf("policy: reading the built-in pack: %w", err)
	}
	var srcs []source
	for _, ent := range entries {
		if ent.IsDir() || !isRuleFile(ent.Name()) {
			continue
		}
		name := path.Join(builtinDir, ent.Name())
		data, err := fs.ReadFile(policies.FS, name)
		if err != nil {
			return nil, fmt.Errorf("policy: reading the built-in pack: %w", err)
		}
		srcs = append(srcs, source{name: name, data: data, builtin: true})
	}
	return srcs, nil
}

func dirSources(dir string) ([]source, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if !st.IsDir() {
		data, err := os.ReadFile(dir)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		return []source{{name: dir, data: data}}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	var srcs []source
	for _, ent := range entries {
		if ent.IsDir() || !isRuleFile(ent.Name()) {
			continue
		}
		name := filepath.Join(dir, ent.Name())
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		srcs = append(srcs, source{name: name, data: data})
	}
	return srcs, nil
}

// compileSources parses and compiles files in order into a Policy.
func compileSources(srcs []source) (*Policy, error) {
	env, err := newEnv()
	if err != nil {
		return nil, err
	}
	return compileWith(env, srcs)
}

// compileWith is compileSources with a ready environment, so tests and the
// fuzz target can reuse one (building it costs far more than a small file).
func compileWith(env *cel.Env, srcs []source) (*Policy, error) {
	var e errs
	c := &compiler{env: env, lets: map[string]letEstimate{}, letExprs: map[string]ast.Expr{}, costs: newActualCost()}
	p := &Policy{defaults: map[action.Kind]Effect{}, letIndex: map[string]int{}, adapter: env.CELTypeAdapter()}
	ruleAt := map[string]defined{} // rule names are one namespace, let names another
	letAt := map[string]defined{}
	type disableRef struct {
		file string
		ref  sourceRef
	}
	var disables []disableRef
	var all []*rule
	var seqs []*sequence
	// Every file is parsed first: a list let is extended (extend:) where
	// it is defined, by entries of the files after it as well.
	files := make([]*sourceFile, len(srcs))
	c.extends = map[string][]extension{}
	for i, src := range srcs {
		files[i] = parseFile(src.name, src.data, src.builtin, &e)
		for _, x := range files[i].extends {
			c.extends[x.name] = append(c.extends[x.name], extension{file: files[i], sl: x})
		}
	}
	for _, f := range files {
		compileOnce(f.lets, letAt, f.name,
			func(sl sourceLet) (string, position) { return sl.name, nodePos(sl.key) },
			func(sl sourceLet, prev defined) {
				e.add(f.name, nodePos(sl.key), "", "let: %q is already defined at %s", sl.name, prev)
			},
			func(sl sourceLet) (*let, bool) {
				l, ok := c.compileLet(f, sl, &e)
				if ok {
					p.letIndex[sl.name] = len(p.lets)
					p.lets = append(p.lets, l)
				}
				return l, ok
			})
		all = append(all, compileOnce(f.rules, ruleAt, f.name,
			func(sr sourceRule) (string, position) { return sr.name, sr.namePos },
			func(sr sourceRule, prev defined) {
				e.add(f.name, sr.namePos, sr.name, "a rule of this name is already defined at %s", prev)
			},
			func(sr sourceRule) (*rule, bool) { return c.compileRule(f, sr, &e) })...)
		seqs = append(seqs, compileOnce(f.sequences, ruleAt, f.name,
			func(ss sourceSequence) (string, position) { return ss.name, ss.namePos },
			func(ss sourceSequence, prev defined) {
				e.add(f.name, ss.namePos, ss.name, "a rule or sequence of this name is already defined at %s", prev)
			},
			func(ss sourceSequence) (*sequence, bool) { return c.compileSequence(f, ss, &e) })...)
		for _, d := range f.defaults {
			p.defaults[d.kind] = d.effect
		}
		for _, ref := range f.disable {
			disables = append(disables, disableRef{f.name, ref})
		}
		if e.full() {
			break
		}
	}
	for _, f := range files {
		for _, x := range f.extends {
			if _, ok := letAt[x.name]; !ok {
				e.add(f.name, nodePos(x.key), "", "extend: no let named %q is defined", x.name)
			}
		}
	}
	disabled := map[string]bool{}
	for _, d := range disables {
		if _, ok := ruleAt[d.ref.name]; !ok {
			e.add(d.file, d.ref.pos, "", "disable: no rule named %q is loaded", d.ref.name)
			continue
		}
		disabled[d.ref.name] = true
	}
	if len(e.list) > 0 {
		return nil, errors.Join(e.list...)
	}
	for _, r := range all {
		p.info = append(p.info, RuleInfo{
			Name: r.name, Effect: r.effect, File: r.file, Line: r.line,
			Description: r.description, When: r.when, Disabled: disabled[r.name],
			Judge: r.ask.judge, ApprovalTimeout: r.ask.timeout,
		})
		if !disabled[r.name] {
			p.rules = append(p.rules, r)
		}
	}
	for _, q := range seqs {
		info := SequenceInfo{Name: q.name, Effect: q.effect, By: q.by, Within: q.within, File: q.file, Line: q.line, Description: q.description, Disabled: disabled[q.name]}
		for _, s := range q.steps {
			info.Steps = append(info.Steps, s.name+": "+s.when)
		}
		p.seqInfo = append(p.seqInfo, info)
		if !disabled[q.name] {
			p.sequences = append(p.sequences, q)
		}
	}
	p.hash = p.computeHash()
	return p, nil
}

// computeHash hashes what decides verdicts: the enabled rules in evaluation
// order and the defaults. File names and positions are left out, so moving a
// rule between files does not change the hash; any edit to a rule does.
func (p *Policy) computeHash() string {
	type hashedRule struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		When        string `json:"when"`
		Effect      Effect `json:"effect"`
		Reason      string `json:"reason"`
		// Omitted when unset, so rules without them hash as before.
		Judge           string `json:"judge,omitempty"`
		ApprovalTimeout string `json:"approval_timeout,omitempty"`
	}
	type hashedLet struct {
		Name string `json:"name"`
		Expr string `json:"expr"`
	}
	type hashedStep struct {
		Name    string   `json:"name"`
		When    string   `json:"when"`
		Count   int      `json:"count"`
		Decided []Effect `json:"decided,omitempty"`
	}
	type hashedSequence struct {
		Name        string       `json:"name"`
		Description string       `json:"description"`
		By          By           `json:"by"`
		Within      string       `json:"within"`
		Steps       []hashedStep `json:"steps"`
		Effect      Effect       `json:"effect"`
		Reason      string       `json:"reason"`
	}
	type hashed struct {
		Lets     []hashedLet       `json:"lets"`
		Rules    []hashedRule      `json:"rules"`
		Defaults map[string]Effect `json:"defaults"` // encoding/json sorts map keys
		// Omitted when there are none, so a rule set without them hashes
		// as before.
		Sequences []hashedSequence `json:"sequences,omitempty"`
	}
	h := hashed{Defaults: map[string]Effect{}}
	for _, l := range p.lets {
		h.Lets = append(h.Lets, hashedLet{l.name, l.expr})
	}
	for _, r := range p.rules {
		h.Rules = append(h.Rules, hashedRule{r.name, r.description, r.when, r.effect, r.reason.src, r.ask.judgeKey(), r.ask.timeoutKey()})
	}
	for k, v := range p.defaults {
		h.Defaults[string(k)] = v
	}
	for _, q := range p.sequences {
		hs := hashedSequence{Name: q.name, Description: q.description, By: q.by, Within: q.within, Effect: q.effect, Reason: q.reason.src}
		for _, s := range q.steps {
			hs.Steps = append(hs.Steps, hashedStep{s.name, s.when, s.count, s.decided})
		}
		h.Sequences = append(h.Sequences, hs)
	}
	b, err := json.Marshal(h)
	if err != nil {
		// Only strings and maps of strings are marshalled; this cannot fail.
		panic(fmt.Sprintf("policy: hashing rules: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Hash identifies the effective rule set: the hex SHA-256 of the let
// definitions, the enabled rules (name, description, condition, effect,
// reason, in order) and the per-kind defaults. It is stable across runs and machines and changes when
// any rule or default does. Decisions record it.
func (p *Policy) Hash() string { return p.hash }

// Rules describes every loaded rule in evaluation order, disabled ones
// included (marked Disabled).
func (p *Policy) Rules() []RuleInfo { return slices.Clone(p.info) }

// Defaults returns the per-kind default effects set by the loaded files.
// Kinds missing from it default to ask.
func (p *Policy) Defaults() map[action.Kind]Effect { return maps.Clone(p.defaults) }

// defined is where a let, rule or sequence name was first defined.
type defined struct {
	file string
	pos  position
}

func (d defined) String() string { return fmt.Sprintf("%s:%d:%d", d.file, d.pos.line, d.pos.col) }

// compileOnce compiles the items whose name no earlier item of the
// namespace at took, in order, and enters the name of each that compiles;
// an item whose name is taken goes to taken with where it was defined.
func compileOnce[S, T any](items []S, at map[string]defined, file string, name func(S) (string, position), taken func(S, defined), compile func(S) (T, bool)) []T {
	var out []T
	for _, it := range items {
		n, pos := name(it)
		if prev, dup := at[n]; dup {
			taken(it, prev)
			continue
		}
		v, ok := compile(it)
		if !ok {
			continue
		}
		at[n] = defined{file, pos}
		out = append(out, v)
	}
	return out
}
