// Compile: the draft, its options, and the pipeline of stages that turns
// the user's words into a mandate. Each stage has a file of its own:
//
//   - entities.go, lexicon.go: entities, tokens and the language tables;
//   - segment.go: languages detected, sentences, segments and clauses;
//   - analyse.go: what each word does (verbs, nouns, light verbs, typos);
//   - negation.go: what each negation reaches;
//   - conditions.go: what a verb is qualified by (questions, the user's
//     own plans, asking first, money moved, expiry);
//   - apply.go: a segment's findings into grants, denials, scope;
//   - limits.go: spend caps and counts;
//   - settle.go: conflicts between grants and denials, the implicit read.

package mandate

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/action"
)

// maxInstructions bounds the text Compile reads.
const maxInstructions = 64 << 10

// Draft is a mandate compiled from plain instructions, with what was
// recognised in them. It is shown to the user, who must be able to see why
// each line of the mandate is there.
type Draft struct {
	Mandate *Mandate `json:"mandate" yaml:"mandate"`
	// Languages are the detected languages (ISO 639-1), most likely first.
	Languages []string `json:"languages" yaml:"languages"`
	// Recognised explains every item of the mandate, in text order; spend
	// caps and conflicts between granted and denied kinds come last.
	Recognised []Recognition `json:"recognised" yaml:"recognised"`
	// NotUnderstood lists, in text order, the phrases no stage of the
	// compiler used, with their clause and what the draft did without
	// them. Nothing in it is granted.
	NotUnderstood []Unrecognised `json:"not_understood" yaml:"not_understood"`
}

// Recognition is one thing Compile understood: the user's phrase, what it
// became, and why.
type Recognition struct {
	Phrase  string `json:"phrase" yaml:"phrase"`
	Meaning string `json:"meaning" yaml:"meaning"`
	Why     string `json:"why" yaml:"why"`
}

// YAML renders the draft as `mandate intent compile` prints it: the
// mandate, the detected languages and what was recognised.
func (d *Draft) YAML() ([]byte, error) {
	if d == nil {
		return nil, errors.New("mandate: nil draft")
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	err := enc.Encode(struct {
		Mandate       *Mandate       `yaml:"mandate"`
		Languages     []string       `yaml:"languages"`
		Recognised    []Recognition  `yaml:"recognised"`
		NotUnderstood []Unrecognised `yaml:"not_understood"`
	}{d.Mandate, d.Languages, d.Recognised, d.NotUnderstood})
	if err == nil {
		err = enc.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("mandate: render draft: %w", err)
	}
	return buf.Bytes(), nil
}

// CompileOption configures Compile.
type CompileOption func(*compileOptions)

type compileOptions struct {
	now time.Time
}

// WithNow sets the time relative expiries ("for the next 2 hours",
// "today") are counted from; the default is time.Now().
func WithNow(t time.Time) CompileOption {
	return func(o *compileOptions) { o.now = t }
}

// compiler is the lexicon and entity patterns, built once on first use and
// never changed after.
type compiler struct {
	lx *lexicon
	re *entityRegexps
}

var sharedCompiler = sync.OnceValues(newCompiler)

func newCompiler() (*compiler, error) {
	lx, err := loadLexicon()
	if err != nil {
		return nil, err
	}
	return newCompilerFor(lx), nil
}

func newCompilerFor(lx *lexicon) *compiler {
	words := make([]string, 0, len(lx.currencies))
	for _, l := range lx.langs {
		for _, es := range l.index {
			for _, e := range es {
				if e.role == roleCurrency {
					words = append(words, strings.Join(e.words, " "))
				}
			}
		}
	}
	// Entity patterns run on the raw text, so they need the spellings as
	// written ("dólares") besides the folded ones ("dolares").
	words = append(words, lx.rawCurrencies...)
	slices.Sort(words)
	words = slices.Compact(words)
	return &compiler{lx: lx, re: newEntityRegexps(words)}
}

// Compile drafts a mandate from the user's plain instructions, without any
// model: verbs become allowed kinds, negations and prohibitions become
// denied kinds and prohibitions, named resources become scope, amounts and
// counts become limits, durations an expiry. Languages are data tables
// (lang/*.yaml); the text may mix them. Nothing is invented: what is not
// recognised stays out, and read is granted implicitly unless prohibited.
// The text goes verbatim into Instructions with source "user".
func Compile(text string, opts ...CompileOption) (*Draft, error) {
	o := compileOptions{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.now.IsZero() {
		o.now = time.Now()
	}
	switch {
	case strings.TrimSpace(text) == "":
		return nil, errors.New("mandate: compile: empty instructions")
	case !utf8.ValidString(text):
		return nil, errors.New("mandate: compile: instructions are not valid UTF-8")
	case len(text) > maxInstructions:
		return nil, fmt.Errorf("mandate: compile: instructions are %d bytes, more than the %d allowed", len(text), maxInstructions)
	}
	// A control character is not part of anything a person writes; left in,
	// it would end up inside a name or an address the draft then cannot
	// validate ("Pa\x00St"). Line breaks and tabs are ordinary whitespace.
	if i := strings.IndexFunc(text, func(r rune) bool {
		return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t'
	}); i >= 0 {
		r, _ := utf8.DecodeRuneInString(text[i:])
		return nil, fmt.Errorf("mandate: compile: instructions contain the control character %U at byte %d", r, i)
	}
	c, err := sharedCompiler()
	if err != nil {
		return nil, fmt.Errorf("mandate: compile: loading lexicons: %w", err)
	}
	return c.compile(text, o.now), nil
}

type build struct {
	c     *compiler
	text  string
	now   time.Time
	ents  []entity
	langs []*language
	m     *Mandate
	rec   []Recognition

	allowBy map[action.Kind]string // the phrase that first granted each kind
	denyBy  map[action.Kind]string
	spend   []spendCandidate
	payAmts []spendCandidate

	// conditional is set while a sentence that starts with a condition
	// ("if there's an error, …") is read: its denials hold only then.
	conditional bool
	denials     []denial
	// payPhrase is the first verb that granted pay: a purchase or
	// transfer is prepared in a cart, a form or a quote (settlePreparation).
	payPhrase string
	// nothingElse is the first "nothing else" of the words: with paths
	// named, the working directory is not in scope (Scope.PathsOnly).
	nothingElse string
	// undecided are kinds both asked for and ruled out where the draft
	// cannot tell which applies: neither granted nor denied.
	undecided []action.Kind
	// qualified are kinds a verb was asked for with an item condition
	// the draft cannot check ("only files older than a year").
	qualified map[action.Kind]qualification
	// askedAbout are the kinds verbs inside an indirect question name
	// ("dimmi cosa cambia"), with the verb: asked, never granted
	// (settleAskedAbout).
	askedAbout map[action.Kind]string
	// spared: the words spare some items in words the draft cannot hold
	// ("leave the ISOs alone"): no item condition is all they say.
	spared bool
	// folderHeld are kinds asked only because a "don't" ruled them out
	// for the folder of a file the words ask to change (settleFolderHeld).
	folderHeld []action.Kind
	// pendingAct are the conditional clauses of the sentence being read
	// that stand in a segment of their own ("if the tests pass, …"):
	// they qualify the next segment's verb.
	pendingAct []string
	// pendingItems are the item conditions of the sentence being read
	// that stand in a segment of their own before its verb ("alles, was
	// älter als 30 Tage ist, kann gelöscht werden"): a passive verb in a
	// later segment is the one they restrict (see passiveAfter).
	pendingItems []string
	// unknown are the phrases no stage used; unknownMore counts those
	// beyond maxUnrecognised.
	unknown     []Unrecognised
	unknownMore int
	// roleSends are sends addressed to a person by a role ("my manager"):
	// settleRoles puts send to a person unless an address bounds it.
	roleSends []roleSend
	// fileObjects are the files named as what a write or delete acts on
	// ("update notes.txt"); otherPaths is set when the words name any
	// other path (a directory, a pattern, a file only read): see
	// settleFileObjects.
	fileObjects []string
	// deleteDirs are the folders a verb that only deletes acts in
	// ("delete everything in ./tmp"), see settleFileObjects.
	deleteDirs []string
	otherPaths bool
	// sentenceVerbs is set once a segment of the sentence being read had
	// a verb (noItemsCond).
	sentenceVerbs bool
	// prev is the sentence read last: a "nothing else" standing in a
	// sentence of its own restricts its last granting verb.
	prev struct {
		anchors []*anchor
		before  []action.Kind
		last    *anchor
	}
}

type spendCandidate struct {
	money  Money
	phrase string
	why    string
}

func (c *compiler) compile(text string, now time.Time) *Draft {
	b := &build{
		c: c, text: text, now: now,
		m: &Mandate{
			Instructions: []Instruction{{Text: text, Source: "user", At: now}},
			Allow:        []action.Kind{},
			Deny:         []action.Kind{},
		},
		allowBy:    map[action.Kind]string{},
		denyBy:     map[action.Kind]string{},
		qualified:  map[action.Kind]qualification{},
		askedAbout: map[action.Kind]string{},
	}
	b.ents = c.lx.extractEntities(text, c.re)
	toks := c.lx.tokenize(text, b.ents)
	b.langs = c.lx.detect(toks)
	for _, sent := range b.sentences(toks) {
		b.sentence(sent)
	}
	b.finish()
	codes := make([]string, len(b.langs))
	for i, l := range b.langs {
		codes[i] = l.code
	}
	unknown := b.unknown
	if unknown == nil {
		unknown = []Unrecognised{}
	}
	if b.unknownMore > 0 {
		unknown = append(unknown, Unrecognised{Phrase: fmt.Sprintf("(%d more)", b.unknownMore),
			Effect: fmt.Sprintf("ignored: %d more phrases were not understood; the list stops at %d", b.unknownMore, maxUnrecognised)})
	}
	return &Draft{Mandate: b.m, Languages: codes, Recognised: b.rec, NotUnderstood: unknown}
}

func (b *build) recognise(phrase, meaning, why string) {
	b.rec = append(b.rec, Recognition{Phrase: phrase, Meaning: meaning, Why: why})
}

func kindsString(ks []action.Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
