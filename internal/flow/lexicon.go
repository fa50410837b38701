package flow

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/fold"
)

// The injection detector's knowledge is data: one table per language in
// lang/*.yaml (English, German, French, Spanish, Italian) and one of
// language-independent carriers (lang/common.yaml). Operators add tables or
// extend these with files of the same format (WithLexiconFiles). The format
// is documented at the head of lang/en.yaml.

//go:embed lang/*.yaml
var langFS embed.FS

// categories a sentence's phrases fall into. The detector's combining rule
// (detect.go) reads them; the tables only say which phrases belong where.
type category uint8

const (
	catAddressee  category = iota // a vocative or note aimed at the model: "Note to the AI:"
	catOverride                   // "ignore previous instructions"
	catAuthority                  // a claim to speak as the system, the user, an administrator
	catSecrecy                    // "do not tell the user"
	catDirective                  // an imperative of an agent action: forward, transfer, run …
	catModal                      // "you must", "make sure to", "please"
	catSequencing                 // "before summarizing", "instead of answering"
	catUserRef                    // a third-person reference to the user: "tell the user"
	catOutbound                   // a verb sending data out: forward, upload, share …
	catRequest                    // a request marker that lets the verb stand anywhere: "please", "bitte"
	catQuantity                   // a quantity of data: all, every, entire …
	catAnchor                     // the sender's or the reader's own: "to us", "your", "unsubscribe"
	catTurn                       // a chat turn's label opening a sentence: "User:", "Human:"
	catTaskLabel                  // a label that hands over a task: "New task:"
	catUserThird                  // the user named in the third person: "the user's", "des Nutzers"
	catContrary                   // "instead", "rather": do something else than asked
	catSoftSeq                    // a step before the reader's own answer: "before answering"
	catAgent                      // a noun that names a machine reader alone: "the AI assistant", "el asistente virtual" (addressees less shared_nouns)
	catObligation                 // a third-person or impersonal obligation: "must", "se requiere que", "es obliegt"
	catOwnTurn                    // the model's own turn opening a sentence: "Assistant:", "Asistente:"
	catSpeaker                    // a machine speaker's label opening a sentence, counted in hidden text only: "Model:", "System:"
	catShared                     // a shared noun, as often a person or a thing as a machine: "the assistant", "der Assistent"
	catGreeting                   // a greeting opening a sentence: "Hi", "Sehr geehrte", "Bonjour"
	numCategories
)

var categoryKeys = map[string]category{
	"addressed":       catAddressee,
	"overrides":       catOverride,
	"authority":       catAuthority,
	"secrecy":         catSecrecy,
	"directives":      catDirective,
	"modals":          catModal,
	"sequencing":      catSequencing,
	"user_refs":       catUserRef,
	"outbound":        catOutbound,
	"requests":        catRequest,
	"quantities":      catQuantity,
	"anchors":         catAnchor,
	"turns":           catTurn,
	"task_labels":     catTaskLabel,
	"user_third":      catUserThird,
	"contrary":        catContrary,
	"soft_sequencing": catSoftSeq,
	"agents":          catAgent,
	"obligations":     catObligation,
	"own_turns":       catOwnTurn,
	"speakers":        catSpeaker,
	"shared":          catShared,
	"greetings":       catGreeting,
}

func (c category) String() string {
	for k, v := range categoryKeys {
		if v == c {
			return k
		}
	}
	return "?"
}

// pword is one word of a phrase: matched exactly, as a prefix ("word*"),
// as a suffix ("*ing") or as a part ("*assistent*", for compounds such as
// "Zahlungsassistenten").
type pword struct {
	text   string
	prefix bool
	suffix bool
}

func (p pword) matches(w string) bool {
	switch {
	case p.prefix && p.suffix:
		return strings.Contains(w, p.text)
	case p.prefix:
		return strings.HasPrefix(w, p.text)
	case p.suffix:
		return strings.HasSuffix(w, p.text) && len(w) > len(p.text)+1
	}
	return w == p.text
}

// atom is one position of a phrase pattern: a choice among word sequences
// (one word, most often), or a gap.
type atom struct {
	alts [][]pword
	gap  bool // "*": up to maxGap tokens
	opt  bool // "?": the position may be empty
}

const maxGap = 3

// objectPhrase is a phrase naming a concept.
type objectPhrase struct {
	words   []string
	concept string
}

// conceptsAt returns the concepts named by phrases starting at toks[i].
func (lx *lexicon) conceptsAt(toks []tok, i int, out []string) []string {
	for _, ph := range lx.objects[toks[i].text] {
		if i+len(ph.words) > len(toks) {
			continue
		}
		ok := true
		for k, w := range ph.words {
			if toks[i+k].text != w {
				ok = false
				break
			}
		}
		if ok && !slices.Contains(out, ph.concept) {
			out = append(out, ph.concept)
		}
	}
	return out
}

// pattern is a compiled phrase.
type pattern struct {
	atoms []atom
	cat   category
	lang  string
	// start: the phrase matches only at a sentence's first token ("^"
	// in the table; every phrase of `turns`).
	start bool
	// bit is the language's bit (langBit): the outbound rule weighs an
	// anchor only against a verb of its own language, so that Italian
	// "su" (on) is not Spanish "su" (your).
	bit uint32
	src string
}

// lexicon is every language's phrases, indexed for one pass over a
// sentence's tokens.
type lexicon struct {
	patterns []*pattern
	// byWord indexes patterns by the words their first atom accepts;
	// byPrefix by the first three bytes of a prefix first atom.
	byWord   map[string][]*pattern
	byPrefix map[string][]*pattern
	// anywhere are the patterns whose first word is a suffix or a part:
	// tried at every token (there are few).
	anywhere []*pattern
	// tags are language-independent carriers matched on raw text: fake
	// role and tool tags ("<system>", "[INST]", "<|im_start|>").
	tags   *regexp.Regexp
	tagSrc []string
	// calls are language-independent shapes of a tool call written into
	// an output ({"tool": "send_email", "arguments": {…}}), matched
	// anywhere in a text that has a '{'.
	calls   *regexp.Regexp
	callSrc []string
	// stop are words that never make a term of an injected span.
	stop map[string]bool
	// leads are the words that may stand before an imperative at the
	// start of a clause ("also", "please", "bitte", "por favor").
	leads map[string]bool
	// passive are the auxiliaries of a passive ("be", "ser", "essere",
	// "être", "sein", "werden"): after an obligation they make its
	// subject the one acted on (passiveAfter).
	passive map[string]bool
	// pronouns are the subject pronouns that can stand for a machine
	// named in the sentence before ("it", "er", "il").
	pronouns map[string]bool
	// machineWords are the one-word addressees ("claude", "ki"): a
	// greeting to one of them ("Hi Claude,") greets no person.
	machineWords map[string]bool
	// zuAux maps an auxiliary of a zu-infinitive obligation ("hat",
	// "haben") to its language; zuParticles and zuClauseEnds are the
	// particles a zu stands after ("weiter-zu-leiten") and the words
	// after which a clause's infinitive may stand (zuObligation).
	zuAux        map[string]string
	zuParticles  []string
	zuClauseEnds map[string]bool
	// zuPassive are the auxiliaries of a deontic passive ("ist … zu
	// überweisen"), zuAgentPreps the words that make the machine its
	// agent ("vom Zahlungsassistenten"): the subject is acted on, so the
	// machine counts only as the agent.
	zuPassive    map[string]bool
	zuAgentPreps map[string]bool
	// objects maps a folded word to the phrases starting with it that
	// name a concept ("kontakte", "carnet d adresses" → contacts), for
	// relating tool names to injected requests.
	objects map[string][]objectPhrase
	langs   []string
	bits    map[string]uint32
}

// langBit returns the bit of a language code; past 31 languages the last
// bit is shared.
func (lx *lexicon) langBit(code string) uint32 {
	if b, ok := lx.bits[code]; ok {
		return b
	}
	b := uint32(1) << min(len(lx.bits), 31)
	lx.bits[code] = b
	return b
}

// langTable is one lexicon file as written.
type langTable struct {
	Code       string              `yaml:"code"`
	Name       string              `yaml:"name"`
	Addressees []string            `yaml:"addressees"`
	Addressed  []string            `yaml:"addressed"`
	Overrides  []string            `yaml:"overrides"`
	Authority  []string            `yaml:"authority"`
	Secrecy    []string            `yaml:"secrecy"`
	Directives []string            `yaml:"directives"`
	Modals     []string            `yaml:"modals"`
	Sequencing []string            `yaml:"sequencing"`
	UserRefs   []string            `yaml:"user_refs"`
	Outbound   []string            `yaml:"outbound"`
	Requests   []string            `yaml:"requests"`
	Quantities []string            `yaml:"quantities"`
	Anchors    []string            `yaml:"anchors"`
	Turns      []string            `yaml:"turns"`
	TaskLabels []string            `yaml:"task_labels"`
	UserThird  []string            `yaml:"user_third"`
	Contrary   []string            `yaml:"contrary"`
	SoftSeq    []string            `yaml:"soft_sequencing"`
	Shared     []string            `yaml:"shared_nouns"`
	Readers    []string            `yaml:"machine_readers"`
	Agents     []string            `yaml:"-"` // built from addressees less shared_nouns
	SharedPat  []string            `yaml:"-"` // built from shared_nouns
	Obligation []string            `yaml:"obligations"`
	OwnTurns   []string            `yaml:"own_turns"`
	Speakers   []string            `yaml:"speakers"`
	Greetings  []string            `yaml:"greetings"`
	Passive    []string            `yaml:"passive_aux"`
	Pronouns   []string            `yaml:"pronouns"`
	ZuAux      []string            `yaml:"zu_obligations"`
	ZuParticle []string            `yaml:"zu_particles"`
	ZuEnds     []string            `yaml:"zu_clause_ends"`
	ZuPassive  []string            `yaml:"zu_passive"`
	ZuAgent    []string            `yaml:"zu_agent_preps"`
	Calls      []string            `yaml:"calls"`
	Leads      []string            `yaml:"leads"`
	Tags       []string            `yaml:"tags"`
	Stopwords  []string            `yaml:"stopwords"`
	Objects    map[string][]string `yaml:"objects"`
}

var tableKeys = []string{"code", "name", "addressees", "addressed", "overrides", "authority", "secrecy",
	"directives", "modals", "sequencing", "user_refs", "outbound", "requests", "quantities", "anchors", "leads",
	"turns", "task_labels", "user_third", "contrary", "soft_sequencing", "shared_nouns", "machine_readers", "obligations", "own_turns", "speakers", "greetings", "passive_aux", "pronouns",
	"zu_obligations", "zu_particles", "zu_clause_ends", "zu_passive", "zu_agent_preps", "tags", "calls", "stopwords", "objects"}

// LexiconError is a problem in a lexicon file, with its position.
type LexiconError struct {
	File string
	Line int
	Msg  string
}

func (e *LexiconError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// maxLexiconFile bounds one lexicon file.
const maxLexiconFile = 1 << 20

// loadLexicon reads the embedded tables and then each operator file.
func loadLexicon(extra map[string][]byte) (*lexicon, error) {
	lx := &lexicon{byWord: map[string][]*pattern{}, byPrefix: map[string][]*pattern{}, stop: map[string]bool{}, leads: map[string]bool{}, passive: map[string]bool{}, pronouns: map[string]bool{}, machineWords: map[string]bool{}, zuAux: map[string]string{}, zuClauseEnds: map[string]bool{}, zuPassive: map[string]bool{}, zuAgentPreps: map[string]bool{}, bits: map[string]uint32{}, objects: map[string][]objectPhrase{}}
	ents, err := fs.ReadDir(langFS, "lang")
	if err != nil {
		return nil, fmt.Errorf("flow: reading the built-in lexicons: %w", err)
	}
	var errs []error
	for _, e := range ents {
		name := path.Join("lang", e.Name())
		b, err := fs.ReadFile(langFS, name)
		if err != nil {
			return nil, fmt.Errorf("flow: %w", err)
		}
		errs = append(errs, lx.addFile("flow/"+name, b)...)
	}
	names := make([]string, 0, len(extra))
	for n := range extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		errs = append(errs, lx.addFile(n, extra[n])...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return lx, nil
}

// addFile parses one table strictly: unknown keys, wrong shapes, bad
// patterns and bad regular expressions are errors with their line.
func (lx *lexicon) addFile(name string, src []byte) []error {
	var errs []error
	fail := func(line int, format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, &LexiconError{File: name, Line: line, Msg: fmt.Sprintf(format, args...)})
		}
	}
	if len(src) > maxLexiconFile {
		fail(0, "file is %d bytes, more than %d", len(src), maxLexiconFile)
		return errs
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		fail(0, "YAML: %v", err)
		return errs
	}
	if len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		fail(top.Line, "a lexicon is a mapping (code, name, addressees, …)")
		return errs
	}
	lines := map[string]int{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k := top.Content[i]
		if !slices.Contains(tableKeys, k.Value) {
			fail(k.Line, "unknown key %q (want one of %s)", k.Value, strings.Join(tableKeys, ", "))
			continue
		}
		if _, dup := lines[k.Value]; dup {
			fail(k.Line, "key %q appears twice", k.Value)
		}
		lines[k.Value] = k.Line
	}
	if len(errs) > 0 {
		return errs
	}
	var t langTable
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&t); err != nil {
		fail(0, "%v", err)
		return errs
	}
	if t.Code == "" {
		fail(0, "code is required (en, de, fr, es, it, … or common)")
		return errs
	}
	lx.langs = append(lx.langs, t.Code)
	// Each phrase's line: the node of the list item.
	itemLine := func(key string, i int) int {
		for j := 0; j+1 < len(top.Content); j += 2 {
			if top.Content[j].Value == key {
				v := top.Content[j+1]
				if v.Kind == yaml.SequenceNode && i < len(v.Content) {
					return v.Content[i].Line
				}
				return v.Line
			}
		}
		return 0
	}
	addressees := make([]string, 0, len(t.Addressees))
	for i, a := range t.Addressees {
		f := strings.TrimSpace(fold.String(a))
		if f == "" || strings.ContainsAny(f, "{}") {
			fail(itemLine("addressees", i), "addressee %q: a word or words, without braces", a)
			continue
		}
		addressees = append(addressees, f)
	}
	// The addressees that name a machine reader alone: a bare "assistant"
	// or "model" is as often a person or a data model ("the assistant
	// manager must approve", "the model should validate the field"), so
	// shared_nouns lists what counts only inside a phrase that says more.
	shared := map[string]bool{}
	var sharedWords []string
	for _, w := range t.Shared {
		f := strings.TrimSpace(fold.String(w))
		shared[f] = true
		sharedWords = append(sharedWords, f)
	}
	if len(sharedWords) > 0 {
		t.SharedPat = []string{"(" + strings.Join(sharedWords, "|") + ")"}
	}
	var agents []string
	for _, a := range addressees {
		if !shared[a] {
			agents = append(agents, a)
		}
	}
	if len(t.Shared) > 0 && len(agents) > 0 {
		t.Agents = []string{"(" + strings.Join(agents, "|") + ")"}
	}
	lists := []struct {
		key string
		cat category
		src []string
	}{
		{"addressed", catAddressee, t.Addressed}, {"overrides", catOverride, t.Overrides},
		{"authority", catAuthority, t.Authority}, {"secrecy", catSecrecy, t.Secrecy},
		{"directives", catDirective, t.Directives}, {"modals", catModal, t.Modals},
		{"sequencing", catSequencing, t.Sequencing}, {"user_refs", catUserRef, t.UserRefs},
		{"outbound", catOutbound, t.Outbound}, {"requests", catRequest, t.Requests},
		{"quantities", catQuantity, t.Quantities}, {"anchors", catAnchor, t.Anchors},
		{"turns", catTurn, t.Turns}, {"task_labels", catTaskLabel, t.TaskLabels},
		{"user_third", catUserThird, t.UserThird}, {"contrary", catContrary, t.Contrary},
		{"soft_sequencing", catSoftSeq, t.SoftSeq},
		{"addressees", catAgent, t.Agents}, {"machine_readers", catAgent, t.Readers}, {"obligations", catObligation, t.Obligation},
		{"own_turns", catOwnTurn, t.OwnTurns}, {"speakers", catSpeaker, t.Speakers},
		{"shared_nouns", catShared, t.SharedPat}, {"greetings", catGreeting, t.Greetings},
	}
	for _, l := range lists {
		for i, src := range l.src {
			if strings.Contains(src, "{addressee}") && len(addressees) == 0 {
				fail(itemLine(l.key, i), "%q uses {addressee}, but this table lists no addressees", src)
				continue
			}
			e := strings.ReplaceAll(src, "{addressee}", "("+strings.Join(addressees, "|")+")")
			p, err := compilePattern(e)
			if err != nil {
				fail(itemLine(l.key, i), "%s: %q: %v", l.key, src, err)
				continue
			}
			p.cat, p.lang, p.src, p.bit = l.cat, t.Code, src, lx.langBit(t.Code)
			p.start = p.start || l.cat == catTurn || l.cat == catOwnTurn || l.cat == catSpeaker || l.cat == catGreeting
			lx.add(p)
		}
	}
	for i, re := range t.Tags {
		if _, err := regexp.Compile(re); err != nil {
			fail(itemLine("tags", i), "tags: %q: %v", re, err)
			continue
		}
		lx.tagSrc = append(lx.tagSrc, re)
	}
	if len(lx.tagSrc) > 0 {
		// One expression for all: each its own group, so its flags stay
		// its own; one pass over the text instead of one per tag.
		// Anchored: it is tried only where a tag can start (tagStarts).
		lx.tags = regexp.MustCompile("^(?:(?:" + strings.Join(lx.tagSrc, ")|(?:") + "))")
	}
	for i, re := range t.Calls {
		if _, err := regexp.Compile(re); err != nil {
			fail(itemLine("calls", i), "calls: %q: %v", re, err)
			continue
		}
		lx.callSrc = append(lx.callSrc, re)
	}
	if len(lx.callSrc) > 0 {
		lx.calls = regexp.MustCompile("(?:" + strings.Join(lx.callSrc, ")|(?:") + ")")
	}
	for _, w := range t.Stopwords {
		lx.stop[fold.String(w)] = true
	}
	for _, a := range addressees {
		if !strings.ContainsAny(a, " *|()") {
			lx.machineWords[a] = true
		}
	}
	for _, w := range t.Pronouns {
		lx.pronouns[fold.String(strings.TrimSpace(w))] = true
	}
	for _, w := range t.Passive {
		lx.passive[fold.String(strings.TrimSpace(w))] = true
	}
	for _, w := range t.ZuAux {
		lx.zuAux[fold.String(strings.TrimSpace(w))] = t.Code
	}
	for _, w := range t.ZuParticle {
		lx.zuParticles = append(lx.zuParticles, fold.String(strings.TrimSpace(w)))
	}
	for _, w := range t.ZuEnds {
		lx.zuClauseEnds[fold.String(strings.TrimSpace(w))] = true
	}
	for _, w := range t.ZuPassive {
		lx.zuAux[fold.String(strings.TrimSpace(w))] = t.Code
		lx.zuPassive[fold.String(strings.TrimSpace(w))] = true
	}
	for _, w := range t.ZuAgent {
		lx.zuAgentPreps[fold.String(strings.TrimSpace(w))] = true
	}
	for _, w := range t.Leads {
		for _, tk := range tokenize(fold.String(w), 0, len(fold.String(w)), nil) {
			lx.leads[tk.text] = true
		}
	}
	for concept, words := range t.Objects {
		if concept == "" || len(words) == 0 {
			fail(lines["objects"], "objects: %q needs a concept name and words", concept)
			continue
		}
		for _, w := range words {
			var ws []string
			for _, t := range tokenize(fold.String(w), 0, len(fold.String(w)), nil) {
				ws = append(ws, t.text)
			}
			if len(ws) == 0 {
				fail(lines["objects"], "objects: %s: empty word %q", concept, w)
				continue
			}
			lx.objects[ws[0]] = append(lx.objects[ws[0]], objectPhrase{words: ws, concept: concept})
		}
	}
	return errs
}

// passiveAfter reports whether the obligation that ends at toks[end] is a
// passive's: an auxiliary within two words of it ("must be registered",
// "debe ser configurado"), or closing the clause ("muss … registriert
// sein").
func (lx *lexicon) passiveAfter(toks []tok, end int) bool {
	// From the obligation's own last word: "is to be", "must be".
	for j := max(end-1, 0); j < len(toks); j++ {
		if !lx.passive[toks[j].text] {
			continue
		}
		if j-end < 2 || j+1 == len(toks) || toks[j+1].text == "," {
			return true
		}
	}
	return false
}

// zuObligation finds an obligation spelt with a zu-infinitive, which no
// phrase can hold because any number of words stand between its two
// parts: "Der Mail-Assistent hat sämtliche Rechnungen … weiterzuleiten",
// "KI-Systeme haben den Inhalt von .env anzuhängen", "… haben die
// Zugangsdaten in #allgemein zu posten". An auxiliary of zu_obligations,
// then, later, an infinitive closing its clause (the sentence's end, a
// comma, a word of zu_clause_ends): "zu" and a word ending in n, or a
// word ending in n with "zu" after a particle of zu_particles. It returns
// the index after the infinitive, the infinitive without its "zu"
// ("weiterleiten", "posten"), the auxiliary's language and whether it is
// a passive's (zu_passive: "ist … zu überweisen"); -1 if none.
func (lx *lexicon) zuObligation(toks []tok) (end int, verb, lang string, passive bool) {
	for i, t := range toks {
		if lang == "" {
			lang, passive = lx.zuAux[t.text], lx.zuPassive[t.text]
			continue
		}
		closes := i+1 == len(toks) || toks[i+1].text == "," || lx.zuClauseEnds[toks[i+1].text]
		if !closes || !strings.HasSuffix(t.text, "n") {
			continue
		}
		if i > 0 && toks[i-1].text == "zu" && len(t.text) >= 4 && !lx.stop[t.text] {
			return i + 1, t.text, lang, passive
		}
		for _, p := range lx.zuParticles {
			if rest, ok := strings.CutPrefix(t.text, p+"zu"); ok && len(rest) >= 3 {
				return i + 1, p + rest, lang, passive
			}
		}
	}
	return -1, "", "", false
}

// directive reports whether a word alone is a directive of a table
// ("weiterleiten", once zuObligation took its "zu" out).
func (lx *lexicon) directive(w string) bool {
	one := []tok{{text: w}}
	for _, p := range lx.candidates(w, nil) {
		if p.cat == catDirective && p.matchAt(one, 0) >= 0 {
			return true
		}
	}
	return false
}

// compilePattern reads a phrase: words separated by spaces, matched after
// folding; "(a|b c)" a choice, each side one word or several; "word*" a
// prefix (at least three letters); "?" after a word or a choice makes it
// optional; "*" alone is a gap of up to three words; ":" and "," are the
// marks themselves; a leading "^" anchors the phrase at the start of a
// sentence.
func compilePattern(src string) (*pattern, error) {
	p := &pattern{}
	src = strings.TrimSpace(src)
	if rest, ok := strings.CutPrefix(src, "^"); ok {
		p.start, src = true, rest
	}
	toks, err := lexPattern(fold.String(src))
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		var a atom
		switch t {
		case "*":
			if len(p.atoms) == 0 {
				return nil, errors.New("a phrase cannot start with a gap")
			}
			p.atoms = append(p.atoms, atom{gap: true})
			continue
		case "?", "|", ")":
			return nil, fmt.Errorf("unexpected %q", t)
		case "(":
			var seq []pword
			closed := false
			for i++; i < len(toks); i++ {
				switch w := toks[i]; w {
				case "|", ")":
					if len(seq) == 0 {
						return nil, errors.New("empty choice in ( … )")
					}
					a.alts = append(a.alts, seq)
					seq = nil
					if w == ")" {
						closed = true
					}
				case "(", "*", "?":
					return nil, fmt.Errorf("%q inside ( … ): a choice holds words only", w)
				default:
					pw, err := parseWord(w)
					if err != nil {
						return nil, err
					}
					seq = append(seq, pw)
				}
				if closed {
					break
				}
			}
			if !closed {
				return nil, errors.New("unclosed (")
			}
		default:
			// word, or word|word|…: a choice of single words
			for {
				pw, err := parseWord(toks[i])
				if err != nil {
					return nil, err
				}
				a.alts = append(a.alts, []pword{pw})
				if i+2 < len(toks) && toks[i+1] == "|" && !strings.ContainsAny(toks[i+2], "()|?") && toks[i+2] != "*" {
					i += 2
					continue
				}
				break
			}
		}
		if i+1 < len(toks) && toks[i+1] == "?" {
			a.opt = true
			i++
		}
		p.atoms = append(p.atoms, a)
	}
	if len(p.atoms) == 0 {
		return nil, errors.New("empty phrase")
	}
	if p.atoms[len(p.atoms)-1].gap {
		return nil, errors.New("a phrase cannot end with a gap")
	}
	if p.atoms[0].opt {
		return nil, errors.New("a phrase cannot start with an optional word")
	}
	return p, nil
}

// lexPattern splits a folded phrase into words and the marks ( ) | ? *.
func lexPattern(s string) ([]string, error) {
	var out []string
	var w strings.Builder
	flush := func() {
		if w.Len() > 0 {
			out = append(out, w.String())
			w.Reset()
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '*' && w.Len() == 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]):
			w.WriteRune(r) // "*ing": a suffix
		case r == '(' || r == ')' || r == '|':
			flush()
			out = append(out, string(r))
		case r == '?':
			flush()
			out = append(out, "?")
		case r == '*':
			if w.Len() > 0 {
				w.WriteRune(r) // a prefix
				flush()
			} else {
				out = append(out, "*")
			}
		case r == ' ' || r == '\t' || r == '\n':
			flush()
		case r == ':' || r == ',':
			flush()
			out = append(out, string(r))
		case r == '\'' || r == '-' || r == '_':
			flush() // split like the text's tokens
		case r == '@':
			flush()
			w.WriteRune(r) // a mention: "@copilot"
		default:
			w.WriteRune(r)
		}
	}
	flush()
	if len(out) > 1024 {
		return nil, errors.New("more than 1024 words and marks")
	}
	return out, nil
}

func parseWord(w string) (pword, error) {
	var p pword
	if t, ok := strings.CutPrefix(w, "*"); ok {
		p.suffix, w = true, t
	}
	if t, ok := strings.CutSuffix(w, "*"); ok {
		p.prefix, w = true, t
	}
	switch {
	case strings.Contains(w, "*"):
		return pword{}, fmt.Errorf("%q: * only at the start or the end of a word", w)
	case p.prefix && p.suffix && len(w) < 5:
		return pword{}, fmt.Errorf("*%s*: at least five letters inside", w)
	case (p.prefix || p.suffix) && len(w) < 3:
		return pword{}, fmt.Errorf("%q: at least three letters beside *", w)
	}
	p.text = w
	return p, nil
}

func (lx *lexicon) add(p *pattern) {
	lx.patterns = append(lx.patterns, p)
	for _, alt := range p.atoms[0].alts {
		switch first := alt[0]; {
		case first.suffix:
			// Cannot be indexed by the word's start.
			lx.anywhere = appendOnce(lx.anywhere, p)
		case first.prefix:
			lx.byPrefix[first.text[:3]] = appendOnce(lx.byPrefix[first.text[:3]], p)
		default:
			lx.byWord[first.text] = appendOnce(lx.byWord[first.text], p)
		}
	}
}

func appendOnce(list []*pattern, p *pattern) []*pattern {
	if n := len(list); n > 0 && list[n-1] == p {
		return list
	}
	return append(list, p)
}

// matchAt reports the end (exclusive token index) of p matched at toks[i],
// or -1.
func (p *pattern) matchAt(toks []tok, i int) int {
	return matchAtoms(p.atoms, toks, i)
}

func matchAtoms(atoms []atom, toks []tok, i int) int {
	if len(atoms) == 0 {
		return i
	}
	a := &atoms[0]
	if a.gap {
		for skip := 0; skip <= maxGap && i+skip <= len(toks); skip++ {
			if end := matchAtoms(atoms[1:], toks, i+skip); end >= 0 {
				return end
			}
		}
		return -1
	}
	for _, alt := range a.alts {
		if j := matchSeq(alt, toks, i); j >= 0 {
			if end := matchAtoms(atoms[1:], toks, j); end >= 0 {
				return end
			}
		}
	}
	if a.opt {
		return matchAtoms(atoms[1:], toks, i)
	}
	return -1
}

func matchSeq(seq []pword, toks []tok, i int) int {
	if i+len(seq) > len(toks) {
		return -1
	}
	for k, w := range seq {
		if !w.matches(toks[i+k].text) {
			return -1
		}
	}
	return i + len(seq)
}

// candidates returns the patterns that may start at a word.
func (lx *lexicon) candidates(w string, out []*pattern) []*pattern {
	out = append(out[:0], lx.byWord[w]...)
	if len(w) >= 3 {
		out = append(out, lx.byPrefix[w[:3]]...)
	}
	return append(out, lx.anywhere...)
}
