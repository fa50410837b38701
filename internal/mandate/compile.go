package mandate

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
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
		Mandate    *Mandate      `yaml:"mandate"`
		Languages  []string      `yaml:"languages"`
		Recognised []Recognition `yaml:"recognised"`
	}{d.Mandate, d.Languages, d.Recognised})
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
	c, err := sharedCompiler()
	if err != nil {
		return nil, fmt.Errorf("mandate: compile: loading lexicons: %w", err)
	}
	return c.compile(text, o.now), nil
}

// ---- analysis ----

// anchor is a verb, or a negated noun ("no purchases"), that entities in
// its clause attach to.
type anchor struct {
	pos, end int // token indices in the segment
	kinds    []action.Kind
	anyKind  bool
	web      bool
	noun     bool
	negated  bool
	// negStart and negEnd are the negation marker's token span.
	negStart, negEnd int
	negAfter         bool   // the marker follows the word ("lösch nichts")
	word, neg        string // the words as written, for explanations
	typoOf           string // the lexicon form, when matched as a likely typo
	// noGrant marks a verb that asks for nothing: in a question ("how
	// much did I spend?"), an embedded question ("tell me if there is an
	// invoice to pay") or the user's own plan ("I'll send it myself").
	// Negated, it still denies.
	noGrant  bool
	noGrantW string // why
	// money is set for a verb that moves an amount ("send Lukas 50 €").
	money bool
	// self marks a verb whose subject is the user ("I never read them",
	// "I'll send it myself"): it neither grants nor, negated, forbids.
	self bool
	// light marks a verb that takes its kind from its object ("open a
	// PR", "do the shopping"); object is that object as written.
	light  bool
	object string
	// narrow marks a noun, or a light verb's object, that names one thing
	// a kind acts on ("no PR", "don't give him access"), not the act.
	narrow bool
	// needless marks "no need to reply": nothing asked, nothing ruled out.
	needless bool
	// askFirst marks a verb the user wants to be asked about first ("ask
	// me before deleting anything"): treated as ruled out for something
	// the draft cannot name, so a person decides those calls.
	askFirst bool
}

type segment struct {
	toks []token
}

// sentence is a run of segments up to a stop; question is set when it ends
// with "?".
type sentence struct {
	segs     []segment
	question bool
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
	// impliedBy holds kinds granted only because another was ("buy"
	// implies filling a cart: write), with the kind that implied them.
	impliedBy map[action.Kind]action.Kind
	denials   []denial
	// undecided are kinds both asked for and ruled out where the draft
	// cannot tell which applies: neither granted nor denied.
	undecided []action.Kind
}

// Ways a denial is narrower than its kind.
const (
	narrowElsewhere = "elsewhere" // "don't post it anywhere else": all but what was named
	narrowObject    = "object"    // "don't modify the staging database", "no PR": one thing the draft cannot name
	narrowOperation = "operation" // "no apply", "don't merge": one operation of the kind
	narrowCondition = "condition" // "if there's an error, don't change anything": only then
	narrowAsk       = "ask"       // "ask me before deleting anything": a person decides
)

// roPhrase is the reason recorded for a read-only phrase ("read only").
const roPhrase = "read-only phrase"

// denial is one "don't" that denied a kind.
type denial struct {
	kind   action.Kind
	clause string // the prohibition's text
	phrase string
	narrow string
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
		allowBy:   map[action.Kind]string{},
		denyBy:    map[action.Kind]string{},
		impliedBy: map[action.Kind]action.Kind{},
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
	return &Draft{Mandate: b.m, Languages: codes, Recognised: b.rec}
}

// detect scores each language by the words its lexicon knows; a word
// several languages know counts for each in part. Languages with at least
// one word of their own, scoring at least one word and a third of the
// best, are returned, best first; failing that, those tied for best.
func (lx *lexicon) detect(toks []token) []*language {
	scores := make([]float64, len(lx.langs))
	unique := make([]int, len(lx.langs))
	for _, t := range toks {
		if t.kind != tokWord {
			continue
		}
		n, last := 0, 0
		for i, l := range lx.langs {
			if l.vocab[t.text] {
				n++
				last = i
			}
		}
		if n == 0 {
			continue
		}
		if n == 1 {
			unique[last]++
		}
		for i, l := range lx.langs {
			if l.vocab[t.text] {
				scores[i] += 1 / float64(n)
			}
		}
	}
	best := slices.Max(append([]float64{0}, scores...))
	var out []*language
	for i, l := range lx.langs {
		if unique[i] > 0 && scores[i] >= 1 && scores[i] >= best/3 {
			out = append(out, l)
		}
	}
	if len(out) == 0 && best >= 1 {
		// Only words several languages share ("fix … in"): take every
		// language that scores best rather than none.
		for i, l := range lx.langs {
			if scores[i] == best {
				out = append(out, l)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *language) int {
		sa, sb := scores[slices.Index(lx.langs, a)], scores[slices.Index(lx.langs, b)]
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	return out
}

// at returns the longest phrase of role r starting at toks[i] in any active
// language, and its length in tokens.
func (b *build) at(toks []token, i int, r role) (*entry, int) {
	if i >= len(toks) || (toks[i].kind != tokWord && toks[i].kind != tokNumber) {
		return nil, 0
	}
	var best *entry
	for _, l := range b.langs {
		for _, e := range l.index[toks[i].text] {
			if e.role != r || e.tail != nil || (best != nil && len(e.words) <= len(best.words)) {
				continue
			}
			if wordsAt(toks, i, e.words) {
				best = e
				break
			}
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, len(best.words)
}

func wordsAt(toks []token, i int, words []string) bool {
	if i+len(words) > len(toks) {
		return false
	}
	for k, w := range words {
		t := toks[i+k]
		if (t.kind != tokWord && t.kind != tokNumber) || t.text != w {
			return false
		}
	}
	return true
}

func (b *build) is(t token, r role) bool {
	e, n := b.at([]token{t}, 0, r)
	return e != nil && n == 1
}

// sentences splits tokens into sentences and those into segments: commas
// and clause breaks ("but", "aber", "mais", "pero") end a segment, stops
// and line breaks a sentence. Break words are dropped.
func (b *build) sentences(toks []token) []sentence {
	var out []sentence
	var sent []segment
	var cur []token
	question := false
	flushSeg := func() {
		if len(cur) > 0 {
			sent = append(sent, segment{toks: cur})
			cur = nil
		}
	}
	flushSent := func() {
		flushSeg()
		if len(sent) > 0 {
			out = append(out, sentence{segs: sent, question: question})
			sent = nil
		}
		question = false
	}
	for i := 0; i < len(toks); i++ {
		switch t := toks[i]; t.kind {
		case tokStop:
			question = t.text == "?"
			flushSent()
		case tokPunct:
			flushSeg()
		default:
			if e, n := b.at(toks, i, roleBreak); e != nil {
				flushSeg()
				i += n - 1
				continue
			}
			cur = append(cur, t)
		}
	}
	flushSent()
	return out
}

func (b *build) span(toks []token, from, to int) string {
	if from >= to || from < 0 || to > len(toks) {
		return ""
	}
	return b.text[toks[from].start:toks[to-1].end]
}

// segState is what one segment's analysis found.
type segState struct {
	toks       []token
	consumed   []bool
	negBef     [][2]int // negation markers before what they negate
	negAft     [][2]int // after
	restrict   []int
	limits     [][3]int // start, end, 1 if a negated limit ("more than")
	anchors    []*anchor
	nouns      []*anchor // every noun, negated or not, for counts
	readOnly   string    // the phrase that made the segment read-only
	roWhy      string
	roPos      int      // where that phrase is
	nothing    string   // a "nothing else" phrase
	nothingPos int      // where it is; -1 when there is none
	embedded   []int    // embedded-question markers ("whether", "ob")
	self       [][2]int // the user speaking of themself ("I'll", "ich")
	needless   [][2]int // "no need to", "pas besoin de"
	askFirst   [][2]int // "ask me before", "frag mich, bevor"
	exceptions [][2]int // "outside", "except", "außer"
	today      [][2]int // "today" phrases, settled once anchors are known
	// cuts are conjunctions that start a new clause within the segment
	// ("don't touch prod/ and fix src/foo.go"): a negation does not reach
	// past them.
	cuts []int
}

// clauseOf returns the token range of the clause within the segment that
// holds token i.
func (st *segState) clauseOf(i int) (from, to int) {
	from, to = 0, len(st.toks)
	for _, c := range st.cuts {
		if c <= i {
			from = c + 1
		} else {
			to = c
			break
		}
	}
	return from, to
}

func (b *build) sentence(sent sentence) {
	segs := sent.segs
	webCue := b.webCue(segs)
	question := ""
	if first := segs[0].toks; sent.question {
		if e, n := b.at(first, 0, roleQuestion); e != nil {
			question = b.span(first, 0, n)
		}
	}
	b.conditional = false
	if e, _ := b.at(segs[0].toks, 0, roleConditional); e != nil {
		b.conditional = true
	}
	var inherited *anchor
	for _, seg := range segs {
		st := b.analyse(seg.toks)
		if question != "" {
			for _, a := range st.anchors {
				if !a.noGrant {
					a.noGrant, a.noGrantW = true, fmt.Sprintf("a question (%q … ?) asks for nothing", question)
				}
			}
		}
		b.today(st)
		b.apply(st, webCue, inherited)
		for _, a := range st.anchors {
			inherited = a
		}
	}
}

// webCue returns the word or entity that makes the sentence about the web
// ("prices", "online", a URL), or "".
func (b *build) webCue(segs []segment) string {
	for _, seg := range segs {
		for i, t := range seg.toks {
			if t.kind == tokEntity {
				if k := b.ents[t.ent].kind; k == entURL || k == entDomain {
					return b.ents[t.ent].raw
				}
				continue
			}
			if e, n := b.at(seg.toks, i, roleWeb); e != nil {
				return b.span(seg.toks, i, i+n)
			}
		}
	}
	return ""
}

func (b *build) analyse(toks []token) *segState {
	st := &segState{toks: toks, consumed: make([]bool, len(toks)), nothingPos: -1}
	mark := func(i, n int) {
		for k := i; k < i+n && k < len(toks); k++ {
			st.consumed[k] = true
		}
	}
	free := func(i, n int) bool {
		for k := i; k < i+n; k++ {
			if k >= len(toks) || st.consumed[k] {
				return false
			}
		}
		return true
	}
	// scan finds every phrase of role r on unconsumed tokens, left to right.
	scan := func(r role, fn func(e *entry, i, n int)) {
		for i := 0; i < len(toks); i++ {
			if st.consumed[i] {
				continue
			}
			if e, n := b.at(toks, i, r); e != nil && free(i, n) {
				mark(i, n)
				fn(e, i, n)
				i += n - 1
			}
		}
	}
	scan(roleAskFirst, func(_ *entry, i, n int) { st.askFirst = append(st.askFirst, [2]int{i, i + n}) })
	scan(roleIgnore, func(*entry, int, int) {})
	scan(roleNeedless, func(_ *entry, i, n int) { st.needless = append(st.needless, [2]int{i, i + n}) })
	scan(roleReadOnly, func(_ *entry, i, n int) {
		if st.readOnly == "" {
			st.readOnly, st.roWhy, st.roPos = b.span(toks, i, i+n), roPhrase, i
		}
	})
	scan(roleNothingElse, func(_ *entry, i, n int) { st.nothing, st.nothingPos = b.span(toks, i, i+n), i })
	scan(roleEmbedded, func(_ *entry, i, _ int) { st.embedded = append(st.embedded, i) })
	scan(roleLimit, func(_ *entry, i, n int) { st.limits = append(st.limits, [3]int{i, i + n, 0}) })
	scan(roleNegLimit, func(_ *entry, i, n int) { st.limits = append(st.limits, [3]int{i, i + n, 1}) })
	scan(roleException, func(_ *entry, i, n int) { st.exceptions = append(st.exceptions, [2]int{i, i + n}) })
	b.expiry(st, mark)
	for i := 0; i < len(toks); i++ {
		if st.consumed[i] {
			continue
		}
		eb, nb := b.at(toks, i, roleNegBefore)
		ea, na := b.at(toks, i, roleNegAfter)
		if eb == nil && ea == nil {
			continue
		}
		n := max(nb, na)
		if !free(i, n) {
			continue
		}
		if eb != nil {
			st.negBef = append(st.negBef, [2]int{i, i + nb})
		}
		if ea != nil {
			st.negAft = append(st.negAft, [2]int{i, i + na})
		}
		mark(i, n)
		i += n - 1
	}
	scan(roleRestrictor, func(_ *entry, i, _ int) { st.restrict = append(st.restrict, i) })
	scan(roleSelf, func(_ *entry, i, n int) { st.self = append(st.self, [2]int{i, i + n}) })
	b.findAnchors(st, free, mark)
	b.resolveLight(st)
	b.findCuts(st)
	b.negate(st)
	b.qualify(st)
	return st
}

// qualify marks verbs that ask for nothing (after an embedded-question
// marker in their clause, or with the user as their subject) and verbs
// that move money.
func (b *build) qualify(st *segState) {
	for _, a := range st.anchors {
		from, _ := st.clauseOf(a.pos)
		for _, e := range st.embedded {
			if e >= from && e < a.pos && !a.noGrant {
				a.noGrant, a.noGrantW = true, fmt.Sprintf("an embedded question (%q) asks for nothing", b.span(st.toks, e, e+1))
			}
		}
		for _, sp := range st.self {
			// Before the verb, or right after it ("Das mache ich selbst") —
			// unless it is an article there ("fai girare i test").
			after := sp[0] >= a.end && sp[0]-a.end <= 0 && !b.is(st.toks[sp[0]], roleDeterminer)
			if (sp[1] <= a.pos && a.pos-sp[1] <= 2) || after {
				if !a.noGrant || !a.self {
					a.noGrant, a.self, a.noGrantW = true, true, fmt.Sprintf("the user speaks of their own action (%q)", b.span(st.toks, sp[0], sp[1]))
				}
			}
		}
		// "I want to look before buying": a verb after "before" has the
		// subject of the verb it follows.
		if !a.self && a.pos > 0 {
			if b.subordinatorBefore(st, a.pos) {
				for _, o := range st.anchors {
					if o.pos < a.pos && o.pos >= from && o.self {
						a.noGrant, a.self, a.noGrantW = true, true, fmt.Sprintf("its subject is the user's, as for %q (%s)", o.word, o.noGrantW)
					}
				}
			}
		}
		for _, nd := range st.needless {
			if nd[1] <= a.pos && a.pos-nd[1] <= 1 {
				a.noGrant, a.needless, a.noGrantW = true, true, fmt.Sprintf("%q asks for nothing", b.span(st.toks, nd[0], nd[1]))
			}
		}
		for _, af := range st.askFirst {
			if af[1] <= a.pos && a.pos-af[1] <= 2 && !a.noun {
				a.askFirst, a.negated, a.negStart, a.negEnd = true, true, af[0], af[1]
				a.neg = b.span(st.toks, af[0], af[1])
			}
		}
		if a.noun || a.anyKind || a.typoOf != "" {
			continue
		}
		// "send Lukas 23.50 EUR", "move 500 euros": a money verb whose
		// object is an amount pays.
		if e, n := b.at(st.toks, a.pos, roleMoneyVerb); e == nil || n != a.end-a.pos {
			continue
		}
		for j := a.end; j < len(st.toks) && j <= a.end+2; j++ {
			t := st.toks[j]
			if t.kind == tokEntity && b.ents[t.ent].kind == entAmount {
				a.money = true
				break
			}
			if t.kind != tokWord || b.is(t, roleDeterminer) {
				break
			}
		}
	}
}

// subordinatorBefore reports whether a subordinator of several words
// ("avant de", "antes de") ends right before token i.
func (b *build) subordinatorBefore(st *segState, i int) bool {
	for j := max(0, i-3); j < i; j++ {
		if e, n := b.at(st.toks, j, roleSubordinator); e != nil && j+n == i {
			return true
		}
	}
	return false
}

// findCuts marks colons, and conjunctions that join two verb phrases
// where the first already has an object: "don't touch prod/ and fix
// src/foo.go" is two clauses, "don't buy or sell" is one.
func (b *build) findCuts(st *segState) {
	for j := range st.toks {
		if st.toks[j].kind == tokColon {
			st.cuts = append(st.cuts, j)
			continue
		}
		if st.consumed[j] {
			continue
		}
		if e, n := b.at(st.toks, j, roleConj); e == nil || n != 1 {
			continue
		}
		before, after := false, false
		for _, a := range st.anchors {
			if a.end < j {
				before = true
			}
			if a.pos > j && a.pos <= j+2 {
				after = true
			}
		}
		if before && after {
			st.cuts = append(st.cuts, j)
		}
	}
}

func (b *build) findAnchors(st *segState, free func(i, n int) bool, mark func(i, n int)) {
	toks := st.toks
	for i := 0; i < len(toks); i++ {
		if st.consumed[i] || toks[i].kind != tokWord {
			continue
		}
		if e, n := b.at(toks, i, roleVerb); e != nil && n > 1 && free(i, n) && b.verbHere(st, i, e) && !b.longerNoun(toks, i, n) {
			// A verb of several words wins over one with a gap or a
			// particle: "let me know" is not "let … know".
			mark(i, n)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + n, kinds: e.kinds, anyKind: e.anyKind, web: e.web, narrow: !e.general, word: b.span(toks, i, i+n)})
			i += n - 1
			continue
		}
		if e, n, j, m := b.gapAt(st, i); e != nil && free(i, n) && free(j, m) && b.verbHere(st, i, e) {
			// "let #general know": the verb's object stands inside it.
			mark(i, n)
			mark(j, m)
			a := &anchor{pos: i, end: i + n, kinds: e.kinds, web: e.web, narrow: !e.general,
				word: b.span(toks, i, i+n) + " … " + b.span(toks, j, j+m)}
			if e.role == roleHandsOff {
				// "leave the open ones alone": "don't touch" without a
				// negation word. Its object stands inside it.
				a.anyKind, a.negated, a.negStart, a.negEnd, a.neg = true, true, i, i+n, a.word
			}
			st.anchors = append(st.anchors, a)
			i += n - 1
			continue
		}
		if e, j := b.separableAt(st, i); e != nil && free(i, 1) && free(j, 1) && b.verbHere(st, i, e) {
			// "Lade Paula zum Fest ein": the verb's particle closes its
			// clause.
			mark(i, 1)
			mark(j, 1)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + 1, kinds: e.kinds, anyKind: e.anyKind, web: e.web, narrow: !e.general,
				word: b.span(toks, i, i+1) + " … " + b.span(toks, j, j+1)})
			continue
		}
		if e, n := b.at(toks, i, roleVerb); e != nil && free(i, n) && b.verbHere(st, i, e) && !b.longerNoun(toks, i, n) {
			mark(i, n)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + n, kinds: e.kinds, anyKind: e.anyKind, web: e.web, narrow: !e.general, word: b.span(toks, i, i+n)})
			i += n - 1
			continue
		}
		if e, n := b.at(toks, i, roleLight); e != nil && free(i, n) && b.verbHere(st, i, e) {
			mark(i, n)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + n, kinds: e.kinds, light: true, word: b.span(toks, i, i+n)})
			i += n - 1
			continue
		}
		if e, n := b.at(toks, i, roleNoun); e != nil && free(i, n) {
			mark(i, n)
			st.nouns = append(st.nouns, &anchor{pos: i, end: i + n, kinds: e.kinds, noun: true, narrow: e.narrow, word: b.span(toks, i, i+n)})
			i += n - 1
			continue
		}
		if e := b.enclitic(toks[i].text); e != nil && b.verbHere(st, i, e) {
			// "guárdala", "envíaselo": a verb form with its pronoun attached.
			mark(i, 1)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + 1, kinds: e.kinds, anyKind: e.anyKind, web: e.web, narrow: e.role == roleVerb && !e.general, light: e.role == roleLight, word: b.span(toks, i, i+1)})
			continue
		}
		if e := b.typo(toks[i].text); e != nil && b.verbHere(st, i, e) {
			mark(i, 1)
			st.anchors = append(st.anchors, &anchor{pos: i, end: i + 1, kinds: e.kinds, anyKind: e.anyKind, web: e.web, narrow: !e.general, word: b.span(toks, i, i+1), typoOf: e.words[0]})
		}
	}
}

// gapAt finds a verb written with a gap ("let … know", "gib … Bescheid")
// whose head starts at token i and whose tail follows within four words.
// It returns the entry, the head's length, and the tail's index and length.
func (b *build) gapAt(st *segState, i int) (*entry, int, int, int) {
	toks := st.toks
	if toks[i].kind != tokWord {
		return nil, 0, 0, 0
	}
	for _, l := range b.langs {
		for _, e := range l.index[toks[i].text] {
			if e.tail == nil || (e.role != roleVerb && e.role != roleHandsOff) || !wordsAt(toks, i, e.words) {
				continue
			}
			n := len(e.words)
			for j := i + n + 1; j < len(toks) && j <= i+n+4; j++ {
				if wordsAt(toks, j, e.tail) {
					return e, n, j, len(e.tail)
				}
			}
		}
	}
	return nil, 0, 0, 0
}

// separableReach is how many words after its stem a separable particle
// is looked for.
const separableReach = 16

// separableAt finds a verb of two words whose second is a separable
// particle left at the end of the clause ("lade … ein", "teile … auf"),
// the stem at token i. It returns the entry and the particle's index.
// The particle must end the segment or stand before a conjunction or a
// clause break, as German puts it.
func (b *build) separableAt(st *segState, i int) (*entry, int) {
	toks := st.toks
	if toks[i].kind != tokWord {
		return nil, 0
	}
	for _, l := range b.langs {
		if len(l.separable) == 0 {
			continue
		}
		for _, e := range l.index[toks[i].text] {
			if e.role != roleVerb || len(e.words) != 2 || !l.separable[e.words[1]] {
				continue
			}
			// A clause rarely runs past a dozen words; looking no further
			// keeps a long run of stems from costing quadratic time.
			for j := i + 2; j < len(toks) && j <= i+separableReach; j++ {
				if toks[j].kind != tokWord || toks[j].text != e.words[1] {
					continue
				}
				last := j+1 == len(toks)
				if !last {
					c, _ := b.at(toks, j+1, roleConj)
					cue, _ := b.at(toks, j+1, roleCue)
					last = c != nil || cue != nil
				}
				if last {
					return e, j
				}
			}
		}
	}
	return nil, 0
}

// enclitic returns the verb (or light verb) a word is with a pronoun
// attached, in a language whose table lists such endings: "guárdala" is
// "guarda" + "la". The stem must be a one-word verb form of that language.
func (b *build) enclitic(w string) *entry {
	for _, l := range b.langs {
		if l.vocab[w] {
			continue // a word of its own ("informe", "vela")
		}
		for _, suf := range l.enclitics {
			stem, ok := strings.CutSuffix(w, suf)
			if !ok || utf8.RuneCountInString(stem) < 2 {
				continue
			}
			for f := -1; f < len(l.encliticFill); f++ {
				form := stem
				if f >= 0 {
					form += l.encliticFill[f]
				}
				for _, e := range l.index[form] {
					if (e.role == roleVerb || e.role == roleLight) && len(e.words) == 1 && e.tail == nil {
						return e
					}
				}
			}
		}
	}
	return nil
}

// resolveLight gives each light verb the kind of its object: the first
// noun of a kind within a few words ("open a small PR", "make a
// payment"), else the first verb form used as a noun ("do the rename",
// "fais un rollback"), else the verb's own default ("make a chart" is
// write), if it has one.
func (b *build) resolveLight(st *segState) {
	for _, a := range st.anchors {
		if !a.light {
			continue
		}
		end := min(len(st.toks), a.end+6)
		for _, o := range st.anchors {
			if o.pos >= a.end && o.pos < end {
				end = o.pos
			}
		}
		// With no kind of its own, the verb needs its object introduced
		// ("open a PR", "give him access"): "open issues" is a state.
		first := a.end
		if a.kinds == nil {
			if a.end >= end || !b.introduces(st.toks[a.end]) {
				continue
			}
			first++
		}
		var kinds []action.Kind
		for k, nn := range st.nouns {
			if nn.pos < first || nn.pos >= end {
				continue
			}
			// In a compound the last noun is the head: "edit access".
			for k+1 < len(st.nouns) && st.nouns[k+1].pos == nn.end && nn.end < end {
				k++
				nn = st.nouns[k]
			}
			if !b.headNoun(st, nn) {
				continue // "a ✅ on every deploy request": the head is "request"
			}
			kinds, a.object, a.narrow = nn.kinds, nn.word, nn.narrow
			break
		}
		// Only a verb that has no kind of its own takes one from a verb
		// form: "do the rename", but not "put a ✅ on every deploy request".
		for j := first; kinds == nil && a.kinds == nil && j < end; j++ {
			if e, n := b.at(st.toks, j, roleVerb); e != nil && !e.anyKind {
				kinds, a.object, a.narrow = e.kinds, b.span(st.toks, j, j+n), !e.general
			}
		}
		if kinds != nil {
			a.kinds = kinds
		}
	}
}

// longerNoun reports whether a noun phrase longer than n words starts at
// token i: "read access" is a noun, not the verb "read".
func (b *build) longerNoun(toks []token, i, n int) bool {
	_, nn := b.at(toks, i, roleNoun)
	return nn > n
}

// headNoun reports whether a noun heads its phrase rather than modifying
// the word after it: it ends the segment or is followed by a function
// word, a verb, an entity, a number or punctuation — not by a plain word
// ("deploy request", "build job").
func (b *build) headNoun(st *segState, nn *anchor) bool {
	if nn.end >= len(st.toks) {
		return true
	}
	t := st.toks[nn.end]
	if t.kind != tokWord {
		return true
	}
	if e, _ := b.at(st.toks, nn.end, roleVerb); e != nil {
		return true
	}
	return b.is(t, roleMarker) || b.is(t, roleDeterminer) || b.is(t, roleCue) || b.is(t, roleConj)
}

// introduces reports whether a word can introduce a light verb's object:
// a determiner, a pronoun or other function word, or a number ("open a
// PR", "give him access", "do 3 transfers").
func (b *build) introduces(t token) bool {
	return t.kind == tokNumber || (t.kind == tokWord && (b.is(t, roleDeterminer) || b.is(t, roleMarker) || b.is(t, roleCue)))
}

// verbHere reports whether a verb form at i is used as a verb: not right
// after a determiner ("the order"), and, for forms that are also common
// nouns, only where a verb can stand (start of a clause, after "to",
// "please", a negation, a restrictor…).
func (b *build) verbHere(st *segState, i int, e *entry) bool {
	if e.ambiguous {
		// "checkout is erroring", "deploy job fails": a form followed by
		// its predicate, at most one word apart, is the subject, a noun.
		for j := i + len(e.words); j < len(st.toks) && j <= i+len(e.words)+1; j++ {
			if m, _ := b.at(st.toks, j, roleSubjectMark); m != nil {
				return false
			}
			if st.toks[j].kind != tokWord || b.is(st.toks[j], roleDeterminer) || b.is(st.toks[j], roleMarker) {
				break
			}
		}
	}
	if i == 0 {
		return true
	}
	prev := st.toks[i-1]
	if prev.kind == tokWord && b.is(prev, roleDeterminer) {
		return false
	}
	if !e.ambiguous {
		return true
	}
	if prev.kind != tokWord {
		return false
	}
	for _, n := range st.negBef {
		if n[1] <= i && i-n[1] <= 1 {
			return true // "never push", "never force push"
		}
	}
	return slices.Contains(st.restrict, i-1) || b.is(prev, roleCue)
}

// typo returns the verb a word most likely misspells: one edit (or one
// swap of neighbours) away from a verb form of five letters or more, with
// the same first letter, and not itself a word any active lexicon knows.
// Typos only ever count when negated: a misspelt "delte" in "don't delte"
// is denied, but a misspelt verb never grants anything.
func (b *build) typo(w string) *entry {
	if utf8.RuneCountInString(w) < 5 {
		return nil
	}
	for _, l := range b.langs {
		if l.vocab[w] {
			return nil
		}
	}
	for _, e := range b.c.lx.verbForms {
		f := e.words[0]
		if len(f) < 5 || f[0] != w[0] || !slices.ContainsFunc(b.langs, func(l *language) bool { return l.code == e.lang }) {
			continue
		}
		if editDistance1(w, f) {
			return e
		}
	}
	return nil
}

// editDistance1 reports whether a and b differ by exactly one insertion,
// deletion, substitution or swap of adjacent letters.
func editDistance1(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) < len(rb) {
		ra, rb = rb, ra
	}
	switch len(ra) - len(rb) {
	case 0:
		var diff []int
		for i := range ra {
			if ra[i] != rb[i] {
				diff = append(diff, i)
				if len(diff) > 2 {
					return false
				}
			}
		}
		switch len(diff) {
		case 1:
			return true
		case 2:
			i, j := diff[0], diff[1]
			return j == i+1 && ra[i] == rb[j] && ra[j] == rb[i]
		}
		return false
	case 1:
		for i := range rb {
			if ra[i] != rb[i] {
				return string(ra[i+1:]) == string(rb[i:])
			}
		}
		return true
	}
	return false
}

// negate decides which anchors are negated and which nouns are negated
// ("no purchases"), which then become anchors too.
func (b *build) negate(st *segState) {
	for _, a := range st.anchors {
		from, to := st.clauseOf(a.pos)
		for _, n := range st.negBef {
			if n[0] >= from && n[1] <= a.pos && a.pos-n[1] <= 8 {
				a.negated, a.negStart, a.negEnd = true, n[0], n[1]
			}
		}
		if !a.negated {
			for _, n := range st.negAft {
				if n[1] <= to && n[0] >= a.end && n[0]-a.end <= 3 && !b.anchorBetween(st, a.end, n[0]) && !b.negatesForward(st, n) {
					a.negated, a.negStart, a.negEnd, a.negAfter = true, n[0], n[1], true
					break
				}
			}
		}
		if a.negated {
			a.neg = b.span(st.toks, a.negStart, a.negEnd)
		}
		if a.negated && b.unneeded(st, a) {
			// "no message needed": no need for it, which rules nothing out
			// and asks for nothing.
			a.negated, a.noGrant, a.needless = false, true, true
			a.noGrantW = fmt.Sprintf("%q + %q says it is not needed, which neither asks for it nor forbids it", a.neg, a.word)
		}
	}
	for _, nn := range st.nouns {
		for _, n := range st.negBef {
			if n[1] <= nn.pos && nn.pos-n[1] <= 3 && !b.anchorBetween(st, n[1], nn.pos) {
				nn.negated, nn.negStart, nn.negEnd = true, n[0], n[1]
				nn.neg = b.span(st.toks, n[0], n[1])
			}
		}
		if nn.negated && b.unneeded(st, nn) {
			// "no message needed": no need for it, which rules nothing out.
			b.recognise(b.span(st.toks, nn.negStart, nn.end+1), "nothing ruled out", fmt.Sprintf("noun %q is not needed, which does not forbid it", nn.word))
			nn.negated = false
		}
		if nn.negated && !slices.ContainsFunc(nn.kinds, func(k action.Kind) bool { return k != action.Read }) {
			nn.negated = false // "no summary": a missing report forbids no reading
		}
		if nn.negated {
			st.anchors = append(st.anchors, nn)
		}
	}
	slices.SortFunc(st.anchors, func(x, y *anchor) int { return x.pos - y.pos })
	// A typo that is not negated grants nothing.
	st.anchors = slices.DeleteFunc(st.anchors, func(a *anchor) bool { return a.typoOf != "" && !a.negated })
}

// unneeded reports whether a "not needed" word follows a noun: "no
// message needed", "keine Nachricht nötig".
func (b *build) unneeded(st *segState, nn *anchor) bool {
	for j := nn.end; j < len(st.toks) && j <= nn.end+1; j++ {
		if e, _ := b.at(st.toks, j, roleUnneeded); e != nil {
			return true
		}
	}
	return false
}

// negatesForward reports whether a marker that can negate either way
// ("nicht") has a verb right after it, which it then negates instead.
func (b *build) negatesForward(st *segState, n [2]int) bool {
	if !slices.Contains(st.negBef, n) {
		return false
	}
	_, to := st.clauseOf(n[0])
	for _, a := range st.anchors {
		if a.pos >= n[1] && a.pos <= n[1]+2 && a.pos < to {
			return true
		}
	}
	// "…e niente pagamenti": a noun right after it, which it negates.
	for _, nn := range st.nouns {
		if nn.pos == n[1] {
			return true
		}
	}
	return false
}

func (b *build) anchorBetween(st *segState, from, to int) bool {
	for _, a := range st.anchors {
		if a.pos >= from && a.pos < to {
			return true
		}
	}
	return false
}

// expiry finds durations ("for the next 2 hours", "für die nächste
// Stunde") and "today" phrases.
func (b *build) expiry(st *segState, mark func(i, n int)) {
	toks := st.toks
	for i := 0; i < len(toks); i++ {
		if st.consumed[i] {
			continue
		}
		if e, n := b.at(toks, i, roleToday); e != nil {
			st.today = append(st.today, [2]int{i, i + n})
			mark(i, n)
			i += n - 1
			continue
		}
		u, n := b.at(toks, i, roleUnit)
		if u == nil {
			continue
		}
		// markerEnding finds an expiry marker ending right at token end.
		markerEnding := func(end int) (int, bool) {
			for j := max(0, end-4); j < end; j++ {
				if st.consumed[j] {
					continue
				}
				if e, n := b.at(toks, j, roleExpiry); e != nil && j+n == end {
					return j, true
				}
			}
			return 0, false
		}
		number := func(j int) (int, bool) {
			if j < 0 || st.consumed[j] {
				return 0, false
			}
			if toks[j].kind == tokNumber {
				return toks[j].n, true
			}
			if e, n := b.at(toks, j, roleNumber); e != nil && n == 1 {
				return e.n, true
			}
			return 0, false
		}
		from, count := -1, 0
		if c, ok := number(i - 1); ok {
			// "for 2 hours", "in den nächsten 2 Stunden"
			if ms, ok := markerEnding(i - 1); ok {
				from, count = ms, c
			}
		} else if ms, ok := markerEnding(i); ok {
			if c, ok := number(ms - 1); ok {
				// "les 2 prochaines heures"
				from, count = ms-1, c
				if ms2, ok := markerEnding(ms - 1); ok {
					from = ms2
				}
			} else if u.singular && u.dur < 24*time.Hour {
				// "for the next hour"; "next week" is a date, not a span.
				from, count = ms, 1
			}
		}
		if from < 0 || count <= 0 || count > 100_000 {
			continue
		}
		d := time.Duration(count) * u.dur
		b.setExpiry(b.now.Add(d), b.span(toks, from, i+n), "duration "+d.String()+" from now")
		mark(from, i+n-from)
		i += n - 1
	}
}

// today settles "today" phrases: a phrase of several words ("for today",
// "bis heute abend") always sets the expiry; a lone "today" only at the end
// of its clause, in a clause with a verb that asks for something or
// forbids it ("pay the bill today"), not in "the invites I got today and
// …" or "he started today".
func (b *build) today(st *segState) {
	for _, sp := range st.today {
		single := sp[1]-sp[0] == 1
		if single {
			_, to := st.clauseOf(sp[0])
			if sp[1] != to {
				continue
			}
			from, _ := st.clauseOf(sp[0])
			if !slices.ContainsFunc(st.anchors, func(a *anchor) bool {
				return a.pos >= from && a.pos < to && (!a.noGrant || a.negated) && !a.noun
			}) {
				continue
			}
		}
		y, mo, d := b.now.Date()
		end := time.Date(y, mo, d+1, 0, 0, 0, 0, b.now.Location())
		b.setExpiry(end, b.span(st.toks, sp[0], sp[1]), "\"today\": until the end of the day")
	}
}

func (b *build) setExpiry(t time.Time, phrase, why string) {
	if b.m.ExpiresAt != nil && !t.Before(*b.m.ExpiresAt) {
		b.recognise(phrase, "expires "+t.Format(time.RFC3339)+" (not applied: an earlier expiry was stated)", why)
		return
	}
	b.m.ExpiresAt = &t
	b.recognise(phrase, "expires "+t.Format(time.RFC3339), why)
}

func (b *build) recognise(phrase, meaning, why string) {
	b.rec = append(b.rec, Recognition{Phrase: phrase, Meaning: meaning, Why: why})
}

// ---- applying a segment ----

func (b *build) apply(st *segState, webCue string, inherited *anchor) {
	toks := st.toks

	// Restrictor + read verb: "only read", "just look", "nur lesen".
	for _, a := range st.anchors {
		if !a.negated && !a.noGrant && slices.Contains(a.kinds, action.Read) && slices.Contains(st.restrict, a.pos-1) && st.readOnly == "" {
			st.readOnly, st.roPos = b.span(toks, a.pos-1, a.end), a.pos-1
			st.roWhy = fmt.Sprintf("restrictor %q + verb %q", b.span(toks, a.pos-1, a.pos), b.span(toks, a.pos, a.end))
		}
	}

	// Limits first: a negated verb inside a limit ("don't spend more than
	// 50 EUR") states the cap, not a prohibition.
	limited := b.limits(st, inherited)

	// Which anchor each entity belongs to, and whether it is negated.
	type use struct {
		ent     *entity
		tok     int // its token index
		a       *anchor
		negated bool
		negFrom int    // token where the negated phrase starts
		why     string // why it is negated
		// exception explains an entity kept in scope by an exception.
		exception string
	}
	var uses []use
	segNegated := len(st.negBef)+len(st.negAft) > 0
	for i, t := range toks {
		if t.kind != tokEntity {
			continue
		}
		e := &b.ents[t.ent]
		if e.kind == entAmount || (e.kind == entQuote && b.notAName(toks, i)) {
			continue
		}
		u := use{ent: e, tok: i, a: nearestAnchor(st.anchors, i), negFrom: i}
		switch {
		case u.a != nil:
			if u.a.negated {
				u.negated, u.negFrom, u.why = true, min(u.a.pos, u.a.negStart), b.negWhy(u.a)
			}
			// "email bob@x.com and not alice@y.com": a negation between
			// the verb and the entity negates the entity only.
			for _, n := range st.negBef {
				if u.a.pos < n[0] && n[1] <= i {
					u.negated, u.negFrom = true, n[0]
					u.why = fmt.Sprintf("negation %q before the target, verb %q (%s)", b.span(toks, n[0], n[1]), u.a.word, kindsString(b.negKinds(u.a)))
				}
			}
		case segNegated:
			// "…, nicht an max@example.com": the clause continues the
			// sentence's last verb, negated.
			u.a, u.negated, u.negFrom = inherited, true, 0
			u.why = "negation in a clause without a verb"
			if inherited != nil {
				u.why = fmt.Sprintf("negation in a clause continuing verb %q (%s)", inherited.word, kindsString(b.negKinds(inherited)))
			}
		default:
			u.a = inherited
			if inherited != nil && inherited.negated && !inherited.self {
				// "Don't email alice@x.com, bob@y.com": the clause
				// continues a negated verb.
				u.negated, u.negFrom = true, 0
				u.why = fmt.Sprintf("a clause continuing negated verb %q (%s)", inherited.word, kindsString(b.negKinds(inherited)))
			}
		}
		// "don't email anyone outside orbit-saas.com": the entity after
		// an exception is what stays allowed; "delete everything except
		// invoices/": what is spared.
		// An inherited verb stands in an earlier clause: "archive the old
		// channels, except #general" spares #general.
		local := u.a != nil && slices.Contains(st.anchors, u.a)
		for _, x := range st.exceptions {
			if x[1] <= i && i-x[1] <= 3 && (u.a == nil || !local || u.a.pos < x[0] || u.a.pos > i) {
				ex := b.span(toks, x[0], x[1])
				if u.negated {
					u.negated = false
					u.exception = fmt.Sprintf("exception %q in a negated clause: the one allowed", ex)
				} else if u.a != nil {
					u.negated, u.negFrom = true, x[0]
					u.why = fmt.Sprintf("exception %q to verb %q (%s)", ex, u.a.word, kindsString(b.negKinds(u.a)))
				}
				break
			}
		}
		uses = append(uses, u)
	}

	withEntities := map[*anchor]bool{}
	for _, u := range uses {
		if !u.negated {
			if u.exception != "" {
				u.ent.why += "; " + u.exception
			}
			b.scopeEntity(u.ent, u.a)
			// Buying on a named shop means reaching it.
			if k := u.ent.kind; (k == entURL || k == entDomain) && u.a != nil && !u.a.noun && !u.a.anyKind && !u.a.noGrant &&
				!slices.Contains(u.a.kinds, action.Read) && !slices.Contains(u.a.kinds, action.Send) {
				b.allow(action.Fetch, u.ent.raw, fmt.Sprintf("host named for verb %q: reaching it is a fetch", u.a.word))
			}
			continue
		}
		if u.a != nil {
			withEntities[u.a] = true
		}
		from, to := st.clauseOf(u.tok)
		b.prohibitTarget(u.ent, u.a, b.span(toks, max(u.negFrom, from), u.tok+1), b.span(toks, from, to), u.why)
	}

	// "don't push to main": a negated send verb aimed at a branch
	// prohibits pushing that branch, not every send.
	for _, a := range st.anchors {
		if !a.negated || a.noun || a.self || withEntities[a] || !slices.Contains(a.kinds, action.Send) {
			continue
		}
		if j, name := b.branchAfter(st, a); name != "" {
			from, to := st.clauseOf(a.pos)
			target := BranchTarget + name
			p := Prohibition{Kind: action.Send, Target: target, Text: b.span(toks, from, to)}
			if !slices.Contains(b.m.Prohibitions, p) {
				b.m.Prohibitions = append(b.m.Prohibitions, p)
			}
			b.recognise(b.span(toks, min(a.pos, a.negStart), j+1), "prohibit send on "+target,
				fmt.Sprintf("%s; target branch %q: pushing it is ruled out, other pushes are not", b.negWhy(a), name))
			withEntities[a] = true
		}
	}

	// Negated verbs and nouns without entities deny their kinds.
	for _, a := range st.anchors {
		if !a.negated || withEntities[a] {
			continue
		}
		phrase := b.span(toks, min(a.pos, a.negStart), max(a.end, a.negEnd))
		why := b.negWhy(a)
		if a.self {
			// "I never read them": the user tells of their own habit.
			b.recognise(phrase, "nothing ruled out", fmt.Sprintf("%s, but %s", why, a.noGrantW))
			continue
		}
		if a.anyKind {
			// "don't touch anything" is read-only. "Without touching the
			// logic" names something no scope entry can hold: changing it
			// is ruled out, which leaves writing to a person wherever it
			// is also asked for. (Deleting is an act users name; a delete
			// left undecided would be refused outright as destructive.)
			if !b.hasObject(st, a) {
				if st.readOnly == "" {
					st.readOnly, st.roWhy, st.roPos = phrase, why+": touch nothing", a.pos
				}
				continue
			}
			from, to := st.clauseOf(a.pos)
			b.denyNarrow(action.Write, phrase, b.span(toks, from, to), why+": changing that one thing", narrowObject)
			continue
		}
		from, to := st.clauseOf(a.pos)
		narrow := ""
		switch {
		case a.askFirst:
			narrow = narrowAsk // "ask me before deleting anything big"
			why = fmt.Sprintf("%q: the user wants to be asked before %q (%s)", a.neg, a.word, kindsString(a.kinds))
		case st.nothingPos > a.pos && st.nothingPos < to:
			narrow = narrowElsewhere // "don't post it anywhere else"
		case b.hasObject(st, a) || (a.narrow && (a.noun || a.light)):
			narrow = narrowObject // "don't modify the staging database", "no PR"
		case a.narrow:
			narrow = narrowOperation // "no apply", "don't push"
		}
		for _, k := range b.negKinds(a) {
			if limited[k] {
				continue
			}
			b.denyNarrow(k, phrase, b.span(toks, from, to), why, narrow)
		}
	}

	if st.readOnly != "" && b.accessLevel(st, inherited) {
		// "share the sheet with marco@x.it, read only": the access the
		// share grants, not a limit on the task.
		b.recognise(st.readOnly, "nothing ruled out", st.roWhy+" describing the access a share grants, not the task")
		st.readOnly = ""
	}
	if st.readOnly != "" {
		b.allow(action.Read, st.readOnly, st.roWhy)
		if webCue != "" {
			b.allow(action.Fetch, st.readOnly, fmt.Sprintf("%s; web-ish: %q", st.roWhy, webCue))
		}
		from, to := st.clauseOf(st.roPos)
		for _, k := range []action.Kind{action.Write, action.Delete, action.Send, action.Pay, action.Execute} {
			b.deny(k, st.readOnly, b.span(toks, from, to), st.roWhy+": read only")
		}
	}

	for _, a := range st.anchors {
		if a.negated || a.noun || a.anyKind {
			continue
		}
		phrase := a.word // "let … know" as written
		if a.noGrant {
			b.recognise(phrase, "nothing granted", fmt.Sprintf("verb %q (%s), but %s", phrase, kindsString(a.kinds), a.noGrantW))
			continue
		}
		why := fmt.Sprintf("verb %q", phrase)
		if a.light && a.object != "" {
			why = fmt.Sprintf("verb %q with object %q", phrase, a.object)
		}
		for _, k := range a.kinds {
			b.allow(k, phrase, fmt.Sprintf("%s (%s)", why, k))
		}
		if a.money {
			b.allow(action.Pay, phrase, fmt.Sprintf("%s with an amount as its object: moving money is pay", why))
		}
		if a.money || slices.Contains(a.kinds, action.Pay) {
			b.allowImplied(action.Write, action.Pay, phrase, fmt.Sprintf("%s (pay): a purchase or transfer is prepared first, in a cart, a form or a quote", why))
		}
		if !a.web && webCue != "" && slices.Contains(a.kinds, action.Read) {
			b.allow(action.Fetch, phrase, fmt.Sprintf("%s (read); web-ish: %q", why, webCue))
		}
		if to := b.addressee(st, a); to != "" {
			b.allow(action.Send, phrase, fmt.Sprintf("%s with %s as its addressee: writing to someone is sending", why, to))
		}
	}
	b.deliveredAs(st, inherited)
	if st.nothing != "" {
		b.recognise(st.nothing, "nothing beyond what was named", "restrictor: the scope holds only the resources named")
	}
}

// addressee returns the recipient (an address or a channel) that a verb
// of writing is addressed to in its clause — "Schreib in #marketing, …",
// "write to ops@example.com" — or "". Drafting verbs are not in that
// list: a draft to someone is not sent.
func (b *build) addressee(st *segState, a *anchor) string {
	if e, n := b.at(st.toks, a.pos, roleSay); e == nil || n != a.end-a.pos {
		return ""
	}
	from, to := st.clauseOf(a.pos)
	for j := max(from, a.end); j < to; j++ {
		if t := st.toks[j]; t.kind == tokEntity {
			if e := b.ents[t.ent]; e.kind == entEmail || e.kind == entChannel {
				return e.raw
			}
		}
	}
	return ""
}

// deliveredAs reads "as a PR", "als PR", "comme commentaire": the work
// asked for in the clause (or the sentence's last verb, for a clause
// without one) is to be handed over as that thing, which asks for the
// thing's kind too ("fix the workflow, but as a PR": send).
func (b *build) deliveredAs(st *segState, inherited *anchor) {
	if len(st.negBef)+len(st.negAft) > 0 {
		return
	}
	for i := range st.toks {
		e, n := b.at(st.toks, i, roleAs)
		if e == nil {
			continue
		}
		var verb *anchor
		for _, a := range st.anchors {
			if a.pos < i && !a.noun {
				verb = a
			}
		}
		if verb == nil && len(st.anchors) == 0 {
			verb = inherited
		}
		if verb == nil || verb.negated || verb.noGrant || verb.noun {
			continue
		}
		for _, nn := range st.nouns {
			if nn.pos < i+n || nn.pos > i+n+2 {
				continue
			}
			phrase := b.span(st.toks, i, nn.end)
			for _, k := range nn.kinds {
				if k != action.Read {
					b.allow(k, phrase, fmt.Sprintf("the work asked for by %q is to be delivered as %q (%s)", verb.word, nn.word, k))
				}
			}
			break
		}
	}
}

// branchAfter finds a branch a verb is aimed at: "push to main", "force
// push main", "merge into master" — a branch word right after the verb or
// after a preposition ("to", "origin"), within a few words of it. It
// returns the token index and the branch name, or "".
func (b *build) branchAfter(st *segState, a *anchor) (int, string) {
	_, to := st.clauseOf(a.pos)
	for j := a.end; j < to && j <= a.end+3; j++ {
		if st.toks[j].kind != tokWord {
			return 0, ""
		}
		e, _ := b.at(st.toks, j, roleBranch)
		if e == nil {
			continue
		}
		if j == a.end || b.is(st.toks[j-1], roleBranchPrep) {
			return j, st.toks[j].text
		}
	}
	return 0, ""
}

// accessLevel reports whether the segment's read-only phrase describes
// the access a send grants ("share it with marco@x.it in read-only",
// "comparte la carpeta … en solo lectura") rather than the task: the
// phrase follows a granting send verb in its clause.
func (b *build) accessLevel(st *segState, inherited *anchor) bool {
	if st.roWhy != roPhrase {
		return false
	}
	grantsSend := func(a *anchor) bool {
		return a != nil && !a.negated && !a.noGrant && !a.noun && slices.Contains(a.kinds, action.Send)
	}
	if len(st.anchors) == 0 {
		// "Teile den Ordner mit jan@x.de, nur lesen": a clause without a
		// verb continues the sentence's last one.
		return grantsSend(inherited)
	}
	from, _ := st.clauseOf(st.roPos)
	for _, a := range st.anchors {
		if a.pos >= from && a.pos < st.roPos && grantsSend(a) {
			return true
		}
	}
	return false
}

// notAName reports whether a quote at toks[i] is a text rather than a
// name: after a title marker ("subject", "Betreff") or before one ("the
// 'dupes' folder"), or a message after a colon.
func (b *build) notAName(toks []token, i int) bool {
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		if e, _ := b.at(toks, j, roleTitle); e != nil {
			return true
		}
	}
	if e, _ := b.at(toks, i+1, roleTitle); e != nil {
		return true
	}
	return i > 0 && toks[i-1].kind == tokColon
}

// hasObject reports whether an anchor's clause holds words beyond the verb,
// its negation and function words: "without touching the logic" has one,
// "don't touch anything" has none.
func (b *build) hasObject(st *segState, a *anchor) bool {
	_, to := st.clauseOf(a.pos)
	// The object follows the verb ("don't modify the schema"), or, where
	// a language puts it first, stands between the negation and the verb
	// ("keine neuen Pakete installieren"); what precedes the negation is
	// another part of the clause.
	from := a.end
	if a.negStart < a.pos && !a.noun {
		from = a.negEnd
	}
	for j := from; j < to; j++ {
		t := st.toks[j]
		if (j >= a.pos && j < a.end) || (j >= a.negStart && j < a.negEnd) || st.consumed[j] {
			continue
		}
		// Entities are not counted: a negated verb with one is a targeted
		// prohibition, and one after an exception ("anyone outside
		// orbit-saas.com") is what stays allowed.
		if t.kind == tokWord && !b.is(t, roleMarker) && !b.is(t, roleDeterminer) && !b.is(t, roleCue) {
			return true
		}
	}
	return false
}

// negKinds is what a negated anchor denies: a negated web verb ("don't
// browse") denies fetch, not all reading.
func (b *build) negKinds(a *anchor) []action.Kind {
	if a.web {
		return []action.Kind{action.Fetch}
	}
	return a.kinds
}

func (b *build) negWhy(a *anchor) string {
	what := "verb"
	if a.noun {
		what = "noun"
	}
	kinds := kindsString(b.negKinds(a))
	if a.anyKind {
		kinds = "any kind"
	}
	if a.typoOf != "" {
		kinds = fmt.Sprintf("%s; a likely typo of %q", kinds, a.typoOf)
	}
	if a.negAfter {
		return fmt.Sprintf("%s %q + negation %q (%s)", what, a.word, a.neg, kinds)
	}
	return fmt.Sprintf("negation %q + %s %q (%s)", a.neg, what, a.word, kinds)
}

// nearestAnchor is the anchor an entity at token i belongs to: the last
// one before it, else the first after it.
func nearestAnchor(anchors []*anchor, i int) *anchor {
	var a *anchor
	for _, x := range anchors {
		if x.pos < i {
			a = x
		}
	}
	if a == nil {
		for _, x := range anchors {
			if x.pos > i {
				return x
			}
		}
	}
	return a
}

func kindsString(ks []action.Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func (b *build) allow(k action.Kind, phrase, why string) {
	delete(b.impliedBy, k)
	b.grant(k, phrase, why)
}

// allowImplied grants k because from was granted; finish takes it back if
// from is not granted in the end and nothing else asked for k.
func (b *build) allowImplied(k, from action.Kind, phrase, why string) {
	if _, ok := b.impliedBy[k]; ok || !slices.Contains(b.m.Allow, k) {
		b.impliedBy[k] = from
	}
	b.grant(k, phrase, why)
}

func (b *build) grant(k action.Kind, phrase, why string) {
	if !slices.Contains(b.m.Allow, k) {
		b.m.Allow = append(b.m.Allow, k)
		b.allowBy[k] = phrase
	}
	b.recognise(phrase, "allow "+string(k), why)
}

func (b *build) deny(k action.Kind, phrase, clause, why string) {
	b.denyNarrow(k, phrase, clause, why, "")
}

// denyNarrow denies k and records how narrow the denial was, for finish
// to weigh against grants of the same kind.
func (b *build) denyNarrow(k action.Kind, phrase, clause, why, narrow string) {
	if narrow == "" && b.conditional {
		narrow = narrowCondition
	}
	b.denials = append(b.denials, denial{kind: k, clause: clause, phrase: phrase, narrow: narrow})
	if !slices.Contains(b.m.Deny, k) {
		b.m.Deny = append(b.m.Deny, k)
		b.denyBy[k] = phrase
	}
	p := Prohibition{Kind: k, Text: clause}
	if !slices.Contains(b.m.Prohibitions, p) {
		b.m.Prohibitions = append(b.m.Prohibitions, p)
	}
	b.recognise(phrase, "deny "+string(k), why)
}

// prohibitTarget records "don't email bob@x.com": a prohibition of the
// anchor's kinds on that resource only; the resource stays out of scope.
func (b *build) prohibitTarget(e *entity, a *anchor, phrase, clause, why string) {
	kinds := []action.Kind{""}
	desc := "any action"
	if a != nil && !a.anyKind {
		kinds = b.negKinds(a)
		desc = kindsString(kinds)
	}
	target := e.value
	if e.kind == entDomain && slices.Contains(kinds, action.Send) {
		target = "*@" + target // "don't email anyone at evil.example"
	}
	for _, k := range kinds {
		p := Prohibition{Kind: k, Target: target, Text: clause}
		if !slices.Contains(b.m.Prohibitions, p) {
			b.m.Prohibitions = append(b.m.Prohibitions, p)
		}
	}
	if phrase == "" {
		phrase = e.raw
	}
	b.recognise(phrase, fmt.Sprintf("prohibit %s on %s", desc, target), fmt.Sprintf("%s; target %s (%s), kept out of scope", why, e.raw, e.why))
}

// scopeEntity puts a named resource into scope. A quoted name goes to
// accounts in a pay clause, recipients in a send clause, names otherwise.
func (b *build) scopeEntity(e *entity, a *anchor) {
	s := &b.m.Scope
	add := func(list *[]string, dim string) {
		if !slices.Contains(*list, e.value) {
			*list = append(*list, e.value)
		}
		b.recognise(e.raw, "scope "+dim+" "+e.value, e.why)
	}
	switch e.kind {
	case entEmail, entChannel:
		add(&s.Recipients, "recipient")
	case entDomain:
		if a != nil && !a.noun && slices.Contains(a.kinds, action.Send) {
			// "email everyone at orbit-saas.com"
			e.value, e.why = "*@"+e.value, e.why+" in a send clause: everyone at it"
			add(&s.Recipients, "recipient")
			return
		}
		add(&s.Hosts, "host")
	case entURL:
		add(&s.Hosts, "host")
	case entIBAN:
		add(&s.Accounts, "account")
	case entPath:
		add(&s.Paths, "path")
	case entQuote:
		switch {
		case a != nil && slices.Contains(a.kinds, action.Pay):
			e.why = "quoted name in a pay clause: the payee"
			add(&s.Accounts, "account")
		case a != nil && slices.Contains(a.kinds, action.Send):
			e.why = "quoted name in a send clause: a recipient"
			add(&s.Recipients, "recipient")
		case nameLike(e.value):
			e.why = "quoted name, neither payee nor recipient stated"
			add(&s.Names, "name")
		}
	}
}

// nameLike reports whether a quoted text reads like the name of a person
// or organisation ("Stadtwerke München", "Comunidad de Propietarios"),
// not an error message or a title: a few words, each capitalised or a
// short connector.
func nameLike(s string) bool {
	words := strings.Fields(s)
	if len(words) == 0 || len(words) > 6 {
		return false
	}
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) && !unicode.IsDigit(r) && (utf8.RuneCountInString(w) > 3 || !unicode.IsLower(r)) {
			return false
		}
	}
	r, _ := utf8.DecodeRuneInString(words[0])
	return unicode.IsUpper(r)
}

// limits reads spend caps and counts in a segment and returns the kinds a
// limit covers there.
func (b *build) limits(st *segState, inherited *anchor) map[action.Kind]bool {
	toks := st.toks
	covered := map[action.Kind]bool{}
	used := map[int]bool{}
	negated := len(st.negBef) > 0
	for _, l := range st.limits {
		if l[2] == 1 && !negated {
			continue // "more than 3" only limits after a negation
		}
		phrase := b.span(toks, l[0], l[1])
		for j := l[1]; j < len(toks) && j <= l[1]+4; j++ {
			t := toks[j]
			if t.kind == tokEntity && b.ents[t.ent].kind == entAmount {
				e := b.ents[t.ent]
				b.spend = append(b.spend, spendCandidate{money: e.money, phrase: b.span(toks, l[0], j+1), why: fmt.Sprintf("limit phrase %q + amount", phrase)})
				covered[action.Pay] = true
				used[j] = true
				break
			}
			n, isNum := 0, false
			if t.kind == tokNumber {
				n, isNum = t.n, true
			} else if e, _ := b.at(toks, j, roleNumber); e != nil {
				n, isNum = e.n, true
			}
			if !isNum {
				continue
			}
			var kinds []action.Kind
			var what string
			for _, nn := range st.nouns {
				if nn.pos > j && nn.pos <= j+2 {
					kinds, what = nn.kinds, fmt.Sprintf("noun %q", b.span(toks, nn.pos, nn.end))
					break
				}
			}
			if kinds == nil {
				var a *anchor
				for _, x := range st.anchors {
					if x.pos < l[0] {
						a = x
					}
				}
				if a == nil {
					a = inherited
				}
				if a != nil && !a.anyKind {
					for _, k := range a.kinds {
						if k != action.Read && k != action.Fetch {
							kinds = append(kinds, k)
						}
					}
					what = fmt.Sprintf("verb's kind (%s)", kindsString(kinds))
				}
			}
			for _, k := range kinds {
				b.count(k, n, b.span(toks, l[0], j+1), fmt.Sprintf("limit phrase %q + number %d + %s", phrase, n, what))
				covered[k] = true
			}
			break
		}
	}
	// Amounts in a pay clause are the cap: "pay 84.20 EUR to …".
	for i, t := range toks {
		if t.kind != tokEntity || b.ents[t.ent].kind != entAmount || used[i] {
			continue
		}
		a := nearestAnchor(st.anchors, i)
		if a == nil {
			a = inherited
			// "…, tip 3 €": in a clause of its own, an amount after a
			// noun prices that thing, not the whole payment.
			if i > 0 && toks[i-1].kind == tokWord && !b.is(toks[i-1], roleMarker) && !b.is(toks[i-1], roleDeterminer) && !b.is(toks[i-1], roleCue) {
				continue
			}
		}
		if a != nil && !a.negated && !a.noun && !a.noGrant && (a.money || slices.Contains(a.kinds, action.Pay)) {
			e := b.ents[t.ent]
			b.payAmts = append(b.payAmts, spendCandidate{money: e.money, phrase: e.raw, why: "amount in a pay clause: the amount named is the cap"})
		}
	}
	return covered
}

func (b *build) count(k action.Kind, n int, phrase, why string) {
	if b.m.Limits.Counts == nil {
		b.m.Limits.Counts = map[action.Kind]int{}
	}
	if old, ok := b.m.Limits.Counts[k]; !ok || n < old {
		b.m.Limits.Counts[k] = n
	}
	b.recognise(phrase, fmt.Sprintf("limit %s count %d", k, n), why)
}

// finish settles spend caps, conflicts between granted and denied kinds,
// and the implicit read.
func (b *build) finish() {
	switch {
	case len(b.spend) > 0:
		cur := b.spend[0].money.Currency
		best := b.spend[0]
		for _, c := range b.spend {
			if c.money.Currency == cur && c.money.Amount < best.money.Amount {
				best = c
			}
		}
		b.m.Limits.Spend = &Money{Amount: best.money.Amount, Currency: cur}
		for _, c := range b.spend {
			if c.money.Currency != cur {
				b.recognise(c.phrase, "not applied: "+c.money.String(), "a cap in "+cur+" was stated first; one cap, one currency")
				continue
			}
			meaning := "limit spend " + best.money.String()
			if c != best {
				meaning = "not applied: " + c.money.String() + " (a smaller cap was stated)"
			}
			b.recognise(c.phrase, meaning, c.why)
		}
	case len(b.payAmts) > 0:
		cur := b.payAmts[0].money.Currency
		total := 0.0
		for _, c := range b.payAmts {
			if c.money.Currency == cur {
				total += c.money.Amount
			}
		}
		total = roundCents(total)
		b.m.Limits.Spend = &Money{Amount: total, Currency: cur}
		for _, c := range b.payAmts {
			if c.money.Currency != cur {
				b.recognise(c.phrase, "not applied: "+c.money.String(), "the cap is in "+cur+", named first; one cap, one currency")
				continue
			}
			why := c.why
			if len(b.payAmts) > 1 {
				why += "; amounts in " + cur + " add up"
			}
			b.recognise(c.phrase, "limit spend "+b.m.Limits.Spend.String(), why)
		}
	}

	for _, k := range slices.Clone(b.m.Allow) {
		if slices.Contains(b.m.Deny, k) {
			b.settleConflict(k)
		}
	}
	for _, k := range slices.Clone(b.m.Deny) {
		if !slices.Contains(b.m.Allow, k) {
			b.settleObjectDenial(k)
		}
	}
	for _, k := range slices.Clone(b.m.Allow) {
		if from, ok := b.impliedBy[k]; ok && (!slices.Contains(b.m.Allow, from) || slices.Contains(b.m.Deny, from)) {
			b.m.Allow = slices.DeleteFunc(b.m.Allow, func(x action.Kind) bool { return x == k })
			b.recognise(b.allowBy[k], "drop allow "+string(k), fmt.Sprintf("%s was only implied by %s, which is not granted", k, from))
		}
	}
	for _, k := range slices.Clone(b.m.Allow) {
		if slices.Contains(b.m.Deny, k) {
			b.m.Allow = slices.DeleteFunc(b.m.Allow, func(x action.Kind) bool { return x == k })
			b.recognise(b.denyBy[k], "drop allow "+string(k),
				fmt.Sprintf("%s is both granted (by %q) and denied (by %q): denied wins", k, b.allowBy[k], b.denyBy[k]))
		}
	}
	for _, k := range b.undecided {
		if !slices.Contains(b.m.Allow, k) && !slices.Contains(b.m.Deny, k) && !slices.Contains(b.m.Ask, k) {
			b.m.Ask = append(b.m.Ask, k)
		}
	}
	if !slices.Contains(b.m.Deny, action.Read) && !slices.Contains(b.m.Allow, action.Read) {
		b.m.Allow = append(b.m.Allow, action.Read)
		b.recognise("(implicit)", "allow read", "implicit: an agent must look before it acts")
	}
	byRank := func(x, y action.Kind) int { return x.Rank() - y.Rank() }
	slices.SortFunc(b.m.Allow, byRank)
	slices.SortFunc(b.m.Deny, byRank)
	slices.SortFunc(b.m.Ask, byRank)
}

// settleConflict weighs the denials of a kind that was also granted.
// When every denial only says "nowhere else" ("DM it to me, don't post it
// anywhere else"), the grant stands: the scope keeps what was named. When
// every denial is narrower than the kind — one thing the draft cannot name
// ("don't modify the staging database", "no PR"), one operation of it ("no
// apply"), or only under a condition ("if there's an error, don't change
// anything") — the draft cannot tell which applies to a call: the kind is
// neither granted nor denied, so each such call is put to a person.
// Otherwise the denial wins (in finish).
func (b *build) settleConflict(k action.Kind) {
	if k == action.Read {
		return // reading is never undecided: a prohibition on it holds
	}
	var ds []denial
	for _, d := range b.denials {
		if d.kind == k {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return // denied by a limit or the like: the general rule applies
	}
	elsewhere, narrow := true, true
	for _, d := range ds {
		elsewhere = elsewhere && d.narrow == narrowElsewhere
		narrow = narrow && d.narrow != ""
	}
	if !narrow {
		return // "Buy it. Actually, don't buy anything": the denial wins
	}
	b.m.Deny = slices.DeleteFunc(b.m.Deny, func(x action.Kind) bool { return x == k })
	for _, d := range ds {
		b.m.Prohibitions = slices.DeleteFunc(b.m.Prohibitions, func(p Prohibition) bool {
			return p.Kind == k && p.Target == "" && p.Text == d.clause
		})
	}
	if elsewhere {
		b.recognise(b.denyBy[k], "keep allow "+string(k),
			fmt.Sprintf("%q rules out %s beyond what was named, and %q asks for it: the scope holds what was named", b.denyBy[k], k, b.allowBy[k]))
		return
	}
	b.m.Allow = slices.DeleteFunc(b.m.Allow, func(x action.Kind) bool { return x == k })
	b.undecided = append(b.undecided, k)
	b.recognise(b.denyBy[k], "ask "+string(k),
		fmt.Sprintf("%s is asked for (by %q) and ruled out (by %q) for something the draft cannot tell apart: each such call is for a person to decide", k, b.allowBy[k], b.denyBy[k]))
}

// settleObjectDenial takes back the denial of a kind nothing asked for
// when every denial of it concerns one thing the draft cannot name
// ("check why, but don't modify the staging database"): denying the kind
// would forbid what the words did not (editing a local file), so the kind
// stays merely ungranted and each such call is put to a person.
func (b *build) settleObjectDenial(k action.Kind) {
	if k == action.Read {
		return
	}
	var ds []denial
	for _, d := range b.denials {
		if d.kind == k {
			if d.narrow != narrowObject && d.narrow != narrowAsk {
				return
			}
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return
	}
	b.m.Deny = slices.DeleteFunc(b.m.Deny, func(x action.Kind) bool { return x == k })
	for _, d := range ds {
		b.m.Prohibitions = slices.DeleteFunc(b.m.Prohibitions, func(p Prohibition) bool {
			return p.Kind == k && p.Target == "" && p.Text == d.clause
		})
	}
	b.undecided = append(b.undecided, k)
	b.recognise(b.denyBy[k], "ask "+string(k),
		fmt.Sprintf("%q rules out %s for one thing the draft cannot name: %s is not granted, and each such call is for a person to decide", b.denyBy[k], k, k))
}

func roundCents(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	if err != nil {
		return v
	}
	return r
}
