// Package vocab is Mandate's verb vocabulary: the English words that name
// kinds of action ("send", "delete", "deploy") and the kinds each names.
//
// It is one table for everything that reads words. The classifier reads
// tool names with it ("cancel_order" deletes, "deploy_site" writes and
// runs), cloud CLI tables read operation verbs with it, and the mandate's
// English lexicon must agree with it word for word. The built-in table is
// verbs.yaml beside this file; operators add words with the verbs,
// lead_verbs and nouns sections of a catalog file (docs/catalog.md).
//
// Kinds are spelled as strings here ("read", "send", …) so that this
// package depends on nothing; package action defines them as its Kind.
package vocab

import (
	_ "embed"
	"maps"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/datafile"
)

//go:embed verbs.yaml
var builtinData []byte

// BuiltinFile is the name errors give the built-in table.
const BuiltinFile = "builtin:verbs.yaml"

// KindNames are the kinds a word may name, least consequential first
// (action.Kind's order, without "unknown", which no word names).
var kindNames = [...]string{"read", "fetch", "write", "execute", "delegate", "credential", "delete", "send", "pay"}

// KindNames returns the kinds a word may name, least consequential first.
func KindNames() []string { return slices.Clone(kindNames[:]) }

func kindRank(k string) int { return slices.Index(kindNames[:], k) }

// Tables are the sections of a vocabulary file, as a catalog file may
// carry them too (embedded with ",inline").
type Tables struct {
	// Verbs name their kinds wherever they stand in a name.
	Verbs Table `yaml:"verbs"`
	// LeadVerbs are verbs only as the first word of a name.
	LeadVerbs Table `yaml:"lead_verbs"`
	// Nouns name a kind unless a read verb leads the name.
	Nouns Table `yaml:"nouns"`
}

// Table maps words to the kinds they name. In YAML it is written kind by
// kind: `send: [send, reply, forward]`.
type Table map[string][]string

// UnmarshalYAML reads a table kind by kind, checking every kind and word.
func (t *Table) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return datafile.At(n, "want a mapping of kinds to lists of words")
	}
	out := Table{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, list := n.Content[i], n.Content[i+1]
		if kindRank(kn.Value) < 0 {
			return datafile.At(kn, "unknown kind %q (want one of %v)", kn.Value, kindNames)
		}
		if list.Kind != yaml.SequenceNode {
			return datafile.At(list, "%s: want a list of words", kn.Value)
		}
		for _, w := range list.Content {
			if w.Kind != yaml.ScalarNode || !validWord(w.Value) {
				return datafile.At(w, "%q is not a word (lower-case letters, digits, _ and -)", w.Value)
			}
			if slices.Contains(out[w.Value], kn.Value) {
				return datafile.At(w, "%q is listed twice under %s", w.Value, kn.Value)
			}
			out[w.Value] = append(out[w.Value], kn.Value)
		}
	}
	for w := range out {
		slices.SortFunc(out[w], func(a, b string) int { return kindRank(a) - kindRank(b) })
	}
	*t = out
	return nil
}

func validWord(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Vocabulary is a verb vocabulary. It is immutable: With returns a new one.
type Vocabulary struct {
	verbs, lead, nouns Table
}

var builtin = sync.OnceValues(func() (*Vocabulary, error) {
	var t Tables
	if err := datafile.Load(BuiltinFile, builtinData, &t); err != nil {
		return nil, err
	}
	return (&Vocabulary{}).With(t), nil
})

// Builtin returns the built-in vocabulary (verbs.yaml). The error is a
// broken built-in table, which tests rule out.
func Builtin() (*Vocabulary, error) { return builtin() }

// With returns a copy of v with the words of t added; a word t lists
// replaces that word's kinds in its table.
func (v *Vocabulary) With(t Tables) *Vocabulary {
	return &Vocabulary{verbs: merge(v.verbs, t.Verbs), lead: merge(v.lead, t.LeadVerbs), nouns: merge(v.nouns, t.Nouns)}
}

func merge(a, b Table) Table {
	out := make(Table, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// Verb returns the kinds the verb w names, least consequential first, or
// nil.
func (v *Vocabulary) Verb(w string) []string { return v.verbs[w] }

// Lead returns the kinds w names as the first word of a name only.
func (v *Vocabulary) Lead(w string) []string { return v.lead[w] }

// Noun returns the kinds the noun w names.
func (v *Vocabulary) Noun(w string) []string { return v.nouns[w] }

// Verbs returns a copy of the verb table.
func (v *Vocabulary) Verbs() Table { return clone(v.verbs) }

// LeadVerbs returns a copy of the lead-verb table.
func (v *Vocabulary) LeadVerbs() Table { return clone(v.lead) }

// Nouns returns a copy of the noun table.
func (v *Vocabulary) Nouns() Table { return clone(v.nouns) }

func clone(t Table) Table {
	out := make(Table, len(t))
	for k, v := range t {
		out[k] = slices.Clone(v)
	}
	return out
}
