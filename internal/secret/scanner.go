package secret

import (
	_ "embed"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/datafile"
)

//go:embed detectors.yaml
var builtinData []byte

// BuiltinFile is the name errors give the built-in detectors.
const BuiltinFile = "builtin:detectors.yaml"

// Scanner finds secrets with a set of detectors and key-name lists. It is
// immutable and safe for concurrent use; With returns an extended copy.
type Scanner struct {
	detectors []detector
	anchors   *[256][]anchorRef
	keys      keyLists
	// stems are the fragments at least one of which every sensitive key
	// contains, for the assignment detector's cheap pre-check.
	stems []string
}

type keyLists struct {
	words                                                        []string
	exact, qualifiers, benignSuffixes, benignNames, placeholders map[string]bool
}

// Additions are what a data file adds to a Scanner: the `secrets:`
// section of a catalog file, or detectors.yaml itself.
type Additions struct {
	Detectors []DetectorSpec `yaml:"detectors"`
	Keys      KeySpec        `yaml:"keys"`
}

// DetectorSpec is one detector as written in a data file.
type DetectorSpec struct {
	Type    string   `yaml:"type"`
	Anchors []string `yaml:"anchors"`
	Pattern string   `yaml:"pattern"`
	Fold    bool     `yaml:"fold"`
	Back    int      `yaml:"back"`
	Group   int      `yaml:"group"`
	Valid   string   `yaml:"valid"`
	Matcher string   `yaml:"matcher"`
	// Near makes an anchor-less detector: its pattern is searched for
	// only within Within bytes of a match of the detector type Near
	// (an AWS secret key beside its access key id, without a label).
	Near   string `yaml:"near"`
	Within int    `yaml:"within"`

	d detector
}

// KeySpec lists words of key names (see detectors.yaml for each list).
type KeySpec struct {
	Words          []string `yaml:"words"`
	Exact          []string `yaml:"exact"`
	KeyQualifiers  []string `yaml:"key_qualifiers"`
	BenignSuffixes []string `yaml:"benign_suffixes"`
	BenignNames    []string `yaml:"benign_names"`
	Placeholders   []string `yaml:"placeholders"`
}

// typeRE is what a detector's type may be: it ends up in redaction markers
// ([REDACTED:<type>:<hash>]), which allow nothing else.
var typeRE = regexp.MustCompile(`^[a-z0-9_]{1,48}$`)

// UnmarshalYAML reads and checks a detector: its type, anchors, pattern
// and named checks.
func (d *DetectorSpec) UnmarshalYAML(n *yaml.Node) error {
	type plain DetectorSpec
	var p plain
	if err := datafile.Decode(n, &p); err != nil {
		return err
	}
	*d = DetectorSpec(p)
	if !typeRE.MatchString(d.Type) {
		return datafile.At(n, "detector type %q: want lower-case letters, digits and _", d.Type)
	}
	if d.Near != "" {
		if d.Within < 1 || d.Within > 1024 {
			return datafile.At(n, "detector %s: near %s needs within: 1..1024 bytes (got %d)", d.Type, d.Near, d.Within)
		}
	} else if len(d.Anchors) == 0 {
		return datafile.At(n, "detector %s: anchors are missing (a literal every match contains)", d.Type)
	}
	for _, a := range d.Anchors {
		if a == "" {
			return datafile.At(n, "detector %s: empty anchor", d.Type)
		}
		if d.Fold && strings.ToLower(a) != a {
			return datafile.At(n, "detector %s: fold anchors are written in lower case (%q)", d.Type, a)
		}
	}
	if d.Pattern == "" {
		return datafile.At(n, "detector %s: pattern is missing", d.Type)
	}
	re, err := regexp.Compile(`^(?:` + d.Pattern + `)`)
	if err != nil {
		return datafile.At(n, "detector %s: pattern: %v", d.Type, err)
	}
	if d.Group < 0 || d.Group > re.NumSubexp() {
		return datafile.At(n, "detector %s: group %d, but the pattern has %d", d.Type, d.Group, re.NumSubexp())
	}
	if d.Back < 0 || d.Back > 256 {
		return datafile.At(n, "detector %s: back %d is outside 0..256", d.Type, d.Back)
	}
	dd := detector{typ: d.Type, anchors: d.Anchors, fold: d.Fold, back: d.Back, re: re, group: d.Group, near: d.Near, within: d.Within}
	if d.Near != "" {
		dd.reAny = regexp.MustCompile(d.Pattern) // it compiled anchored above
	}
	if d.Valid != "" {
		v, ok := validators[d.Valid]
		if !ok {
			return datafile.At(n, "detector %s: unknown check %q (want one of %s)", d.Type, d.Valid, strings.Join(slices.Sorted(maps.Keys(validators)), ", "))
		}
		dd.valid = v
	}
	switch d.Matcher {
	case "":
	case "assignment":
		if re.NumSubexp() < 2 || d.Group != 2 {
			return datafile.At(n, "detector %s: an assignment matcher's pattern captures the key (group 1) and the value (group 2)", d.Type)
		}
		dd.assignment = true
	default:
		return datafile.At(n, "detector %s: unknown matcher %q (want assignment)", d.Type, d.Matcher)
	}
	d.d = dd
	return nil
}

var builtinScanner = sync.OnceValue(func() *Scanner {
	s, err := parse(BuiltinFile, builtinData, &Scanner{})
	if err != nil {
		// The embedded table is part of the program; TestBuiltin
		// keeps this from ever happening in a release.
		panic(fmt.Sprintf("secret: built-in detectors: %v", err))
	}
	return s
})

// Builtin returns the scanner of the built-in detectors (detectors.yaml).
func Builtin() *Scanner { return builtinScanner() }

// Load returns base extended with the detectors and key lists of a data
// file (detectors.yaml's format); errors name the file and line.
func Load(file string, data []byte, base *Scanner) (*Scanner, error) {
	return parse(file, data, base)
}

func parse(file string, data []byte, base *Scanner) (*Scanner, error) {
	var a Additions
	if err := datafile.Load(file, data, &a); err != nil {
		return nil, err
	}
	return base.With(a), nil
}

// With returns a copy of sc with a's detectors after its own and a's words
// added to its key lists.
func (sc *Scanner) With(a Additions) *Scanner {
	out := &Scanner{detectors: slices.Clip(sc.detectors)}
	for _, d := range a.Detectors {
		out.detectors = append(out.detectors, d.d)
	}
	out.anchors = index(out.detectors)
	set := func(have map[string]bool, add []string) map[string]bool {
		m := maps.Clone(have)
		if m == nil {
			m = map[string]bool{}
		}
		for _, w := range add {
			m[strings.ToLower(w)] = true
		}
		return m
	}
	k := &out.keys
	k.words = slices.Clone(sc.keys.words)
	for _, w := range a.Keys.Words {
		if w = strings.ToLower(w); !slices.Contains(k.words, w) {
			k.words = append(k.words, w)
		}
	}
	k.exact = set(sc.keys.exact, a.Keys.Exact)
	k.qualifiers = set(sc.keys.qualifiers, a.Keys.KeyQualifiers)
	k.benignSuffixes = set(sc.keys.benignSuffixes, a.Keys.BenignSuffixes)
	k.benignNames = set(sc.keys.benignNames, a.Keys.BenignNames)
	k.placeholders = set(sc.keys.placeholders, a.Keys.Placeholders)
	out.stems = stems(k)
	return out
}

// stems are the shortest fragments that cover every sensitive key: every
// word and exact name, and "key" for the qualified ones, minus those that
// contain another.
func stems(k *keyLists) []string {
	cands := slices.Clone(k.words)
	cands = append(cands, slices.Sorted(maps.Keys(k.exact))...)
	if len(k.qualifiers) > 0 {
		cands = append(cands, "key")
	}
	slices.SortFunc(cands, func(a, b string) int { return len(a) - len(b) })
	var out []string
	for _, c := range cands {
		covered := false
		for _, o := range out {
			if strings.Contains(c, o) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, c)
		}
	}
	return out
}
