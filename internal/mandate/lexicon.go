package mandate

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/fold"
)

// langFS holds one lexicon per language. Compile reads every file in it,
// so supporting another language means adding a file, not code.
//
//go:embed lang/*.yaml lang/*.words
var langFS embed.FS

// langTable is the on-disk form of a language's lexicon; see lang/en.yaml
// for what each list means.
type langTable struct {
	Code          string              `yaml:"code"`
	Name          string              `yaml:"name"`
	Markers       []string            `yaml:"markers"`
	Determiners   []string            `yaml:"determiners"`
	Elisions      []string            `yaml:"elisions"`
	Abbreviations []string            `yaml:"abbreviations"`
	Verbs         map[string][]string `yaml:"verbs"`
	Ambiguous     []string            `yaml:"ambiguous"`
	VerbCues      []string            `yaml:"verb_cues"`
	WebMarkers    []string            `yaml:"web_markers"`
	Negations     struct {
		Before []string `yaml:"before"`
		After  []string `yaml:"after"`
		// Nobody are pronouns after the verb that negate it for every
		// recipient ("reply to no one"): the kind as a whole is ruled out.
		Nobody []string `yaml:"nobody"`
	} `yaml:"negations"`
	Nouns       map[string][]string `yaml:"nouns"`
	ObjectNouns map[string][]string `yaml:"object_nouns"`
	Restrictors []string            `yaml:"restrictors"`
	ReadOnly    []string            `yaml:"read_only"`
	NothingElse []string            `yaml:"nothing_else"`
	// Elsewhere are the "nothing else"s about places and people ("nowhere
	// else", "no one else"): the recipients and paths named hold them.
	Elsewhere    []string `yaml:"elsewhere"`
	ClauseBreaks []string `yaml:"clause_breaks"`
	// ExceptBreaks are the clause breaks that can mean "except" before a
	// noun phrase ("everything but the config files").
	ExceptBreaks  []string       `yaml:"except_breaks"`
	Conjunctions  []string       `yaml:"conjunctions"`
	Limits        []string       `yaml:"limits"`
	NegatedLimits []string       `yaml:"negated_limits"`
	Numbers       map[string]int `yaml:"numbers"`
	Expiry        struct {
		Markers []string `yaml:"markers"`
		Units   []struct {
			Duration string   `yaml:"duration"`
			Singular []string `yaml:"singular"`
			Plural   []string `yaml:"plural"`
		} `yaml:"units"`
		Today []string `yaml:"today"`
	} `yaml:"expiry"`
	Currencies        map[string]string `yaml:"currencies"`
	TitleMarkers      []string          `yaml:"title_markers"`
	Ignore            []string          `yaml:"ignore"`
	QuestionWords     []string          `yaml:"question_words"`
	EmbeddedQuestions []string          `yaml:"embedded_questions"`
	SelfSubjects      []string          `yaml:"self_subjects"`
	Exceptions        []string          `yaml:"exceptions"`
	MoneyVerbs        []string          `yaml:"money_verbs"`
	// LightVerbs take their kind from their object ("open a PR", "do the
	// shopping", "fais un rollback"); the key is the kind they ask for
	// when the object names none, or "object" for none at all.
	LightVerbs map[string][]string `yaml:"light_verbs"`
	NoNeed     struct {
		Before []string `yaml:"before"`
		After  []string `yaml:"after"`
	} `yaml:"no_need"`
	SubjectMarkers []string `yaml:"subject_markers"`
	// Copulas are the finite forms of "to be" before a participle that
	// describes a state ("le build est réparé", "the build is fixed"): a
	// verb form right after one is not a request.
	Copulas []string `yaml:"copulas"`
	// Relatives open a relative clause on the items a verb acts on ("the
	// files that …", "les mails qui …"): when the draft cannot read what
	// it says, the verb's kinds are put to a person.
	Relatives     []string `yaml:"relatives"`
	Subordinators []string `yaml:"subordinators"`
	Branches      []string `yaml:"branches"`
	BranchPreps   []string `yaml:"branch_prepositions"`
	Enclitics     []string `yaml:"enclitics"`
	// Passive reads a reflexive or passive form as its verb ("se borran
	// los borradores", "wird verschoben"): see passiveTable.
	Passive      passiveTable `yaml:"passive"`
	EncliticFill []string     `yaml:"enclitic_restore"`
	GeneralVerbs []string     `yaml:"general_verbs"`
	// UmbrellaVerbs name a task in general ("tidy up", "aufräumen") whose
	// acts a later "only" clause spells out: "tidy up the repo: remove only
	// the build artefacts" asks the removing and nothing more of the tidying.
	UmbrellaVerbs []string `yaml:"umbrella_verbs"`
	// Separable are the particles a verb may leave at the end of its
	// clause ("Lade Paula zum Fest ein" is "lade ein").
	Separable    []string `yaml:"separable_particles"`
	Conditionals []string `yaml:"conditionals"`
	AsWords      []string `yaml:"as_words"`
	SayVerbs     []string `yaml:"say_verbs"`
	// RecipientPreps introduce the person a verb of writing is written
	// to ("write to", "écris à", "scrivi a"); Persons are words for such
	// a person ("anyone", "the team", "Kunden"). A verb of writing aimed
	// at a person, or at a name, sends.
	RecipientPreps []string `yaml:"recipient_prepositions"`
	Persons        []string `yaml:"persons"`
	// Limiting are the prepositions that restrict the items a delete acts
	// on ("the emails from LinkedIn", "die Mails von …", "les mails de
	// …"): followed by words the draft cannot read, deleting is asked.
	Limiting []string `yaml:"limiting"`
	// ItemPlaces are the places items are kept ("my inbox", "dalla
	// posta", "aus dem Posteingang"): after a limiting preposition they
	// say where the items are, not which.
	ItemPlaces []string `yaml:"item_places"`
	// ChannelWords name a chat channel beside its "#name" ("the channel",
	// "im Kanal", "nel canale"): "only post in the channel #general"
	// restricts posting to the channel named.
	ChannelWords []string `yaml:"channel_words"`
	// Purposes are the prepositions of what a change is for ("write tests
	// for src/loader.ts", "Tests für …"): a file after one is not the
	// file changed.
	Purposes []string `yaml:"purpose_prepositions"`
	// Bookings are the verbs of booking ("book", "reserviere", "réserve")
	// and the things booked without paying ("a table", "einen Termin"):
	// booking one writes an entry, it pays nothing.
	Bookings struct {
		Verbs   []string `yaml:"verbs"`
		Objects []string `yaml:"objects"`
	} `yaml:"bookings"`
	// HomeFolders are the folders of a user's home directory, named in
	// words: "my Downloads folder", "le dossier Téléchargements".
	HomeFolders struct {
		Names   []string `yaml:"names"`
		Mine    []string `yaml:"mine"`
		Folders []string `yaml:"folders"`
	} `yaml:"home_folders"`
	// AskFirst are phrases after which a verb needs the user's say-so
	// ("ask me before deleting", "frag mich, bevor du …").
	AskFirst []string `yaml:"ask_first"`
	// AskAfter are phrases after the verb they qualify that need the
	// user's say-so for it ("don't send it without asking me first",
	// "…, aber nicht ohne mich zu fragen"): the verb is asked, whether
	// a negation stands before it or not.
	AskAfter []string `yaml:"ask_after"`
	// HandsOff are phrases that say "don't touch" with no negation word,
	// their object inside them ("leave … alone", "lass … in Ruhe").
	HandsOff []string `yaml:"hands_off"`
	// ItemConditions are phrases that restrict a verb to some of the items
	// it acts on ("only", "older than", "unless"): a condition no scope
	// entry holds, so the kinds of the verb they qualify are put to a
	// person rather than granted.
	ItemConditions []string `yaml:"item_conditions"`
	// DateConditions restrict the items by a date the draft does not
	// read ("since March", "de antes de octubre", "antérieurs à 2024"):
	// an item condition like the others, listed apart to be reviewed.
	DateConditions []string `yaml:"date_conditions"`
	// ActConditions put a condition on the act itself ("push to main if
	// the tests pass", "wenn alles grün ist, pushe"): Mandate cannot check
	// it on a call, so the verb they qualify is weighed like an item
	// condition's and its kinds are put to a person. Temporal words
	// ("when", "once") order the steps and are not among them.
	ActConditions []string `yaml:"act_conditions"`
	// Hedges leave the act to the agent's judgement ("if possible", "if
	// needed", "wenn nötig", "si hay"): no condition, nothing to ask.
	Hedges []string `yaml:"hedges"`
	// WhetherVerbs make a conditional word after them "whether" ("ask
	// Diego if the numbers are final", "demande-lui si …"): a question,
	// not a condition on the verb.
	WhetherVerbs []string `yaml:"whether_verbs"`
	// OperationVerbs name one operation of their kind (operations.yaml):
	// "don't push" prohibits pushing, not every send.
	OperationVerbs map[string][]string `yaml:"operation_verbs"`
	// OlderThan are item conditions on the items' age ("older than",
	// "älter als"); followed by an age ("a year", "30 Tage") they become a
	// condition a call can be shown to meet (Mandate.Conditions).
	OlderThan []string `yaml:"older_than"`
	// OlderByAge are phrases that are an age condition only when an age
	// follows them ("de más de un año", "de plus d'un an"): before
	// anything else ("de más de 100 EUR") they are no condition at all.
	OlderByAge []string `yaml:"older_than_with_age"`
	// AgeUnits are the words of an age, by their length in days.
	AgeUnits map[int][]string `yaml:"age_units"`
	// LargerThan, SmallerThan and NewerThan are item conditions on the
	// items' size and age from the other side ("larger than", "kleiner
	// als", "plus récents que"); followed by a size (a number and a
	// size unit) or an age they become a condition a call can be shown
	// to meet, like OlderThan.
	LargerThan  []string `yaml:"larger_than"`
	SmallerThan []string `yaml:"smaller_than"`
	NewerThan   []string `yaml:"newer_than"`
	// SizeUnits are the words of a size, by their length in bytes.
	SizeUnits map[int][]string `yaml:"size_units"`
	// NameMarkers say that a file-name pattern after them names the items
	// ("named", "called", "matching"): "only delete files named *.tmp".
	NameMarkers []string `yaml:"name_markers"`
	// LabelWords name where messages are filed ("label", "folder",
	// "Ordner", "dossier"): with a name beside them ("the Promotions
	// folder", "im Ordner Werbung") they say which messages.
	LabelWords []string `yaml:"label_words"`
	// AnyMessages are words for messages of any sort ("emails", "Mails"):
	// "delete my emails, but keep everything from my bank" restricts the
	// messages by their sender alone; "the newsletters" says more.
	AnyMessages []string `yaml:"any_messages"`
	// AnyItems are words for items of any sort ("files", "everything"):
	// "only delete files older than a year" restricts by age alone.
	AnyItems []string `yaml:"any_items"`
	// Keep are verbs that spare some items from the verb before them
	// ("but keep everything from my bank"): deleting and changing are put
	// to a person.
	Keep []string `yaml:"keep"`
	// OnlyPairs are negation words that mean "only" with the word after
	// the verb ("ne supprime que les vieux fichiers"): not a negation, an
	// item condition on the verb.
	OnlyPairs []string `yaml:"only_pairs"`
}

// role is what a lexicon phrase does.
type role uint8

const (
	roleMarker role = iota
	roleDeterminer
	roleVerb
	roleCue
	roleWeb
	roleNegBefore
	roleNegAfter
	roleNoun
	roleRestrictor
	roleReadOnly
	roleNothingElse
	roleBreak
	roleConj
	roleLimit
	roleNegLimit
	roleNumber
	roleExpiry
	roleUnit
	roleToday
	roleTitle
	roleIgnore
	roleQuestion
	roleEmbedded
	roleSelf
	roleException
	roleMoneyVerb
	roleCurrency
	roleLight
	roleNeedless    // "no need to" before a verb
	roleUnneeded    // "needed" after a negated noun: "no message needed"
	roleSubjectMark // "is" after a form that is then a noun: "checkout is failing"
	roleSubordinator
	roleBranch
	roleBranchPrep
	roleConditional
	roleAs
	roleSay
	roleHandsOff
	roleAskFirst
	roleAskAfter
	roleItemCondition // "only", "older than": the verb acts on some items only
	roleWhether       // "ask", "check": a conditional word after them is "whether"
	roleKeep          // "but keep …": some items are spared
	roleAgeUnit       // "year", "Tage": the unit of an age, n days
	roleAnyItems      // "files", "alles": items of any sort
	roleSizeUnit      // "MB", "Go": the unit of a size, n bytes
	roleNameMarker    // "named", "genannt": a file-name pattern follows
	roleAnyMessages   // "emails", "Mails": messages of any sort
	roleLabelWord     // "label", "Ordner": where messages are filed
	roleOnlyPair      // "ne … que": a negation word that, with its tail, means "only"
	roleCopula        // "est", "is": a verb form right after it is a state
	roleRelative      // "that", "qui": a relative clause restricting the items
	roleRecipientPrep // "to", "à": before the person written to
	rolePerson        // "anyone", "the team": a person written to
	roleLimiting      // "from", "von": a preposition restricting the items deleted
	rolePurpose       // "for", "für": what a change is for
	roleBookingVerb   // "book", "réserve": pays, unless what is booked costs nothing
	roleFreeBooking   // "table", "Termin": booked without paying
	roleExceptBreak   // "but": a clause break that can mean "except"
	roleItemPlace     // "inbox", "posta": where items are kept
	roleChannelWord   // "channel", "Kanal": a word for the channel named beside it
)

// entry is one phrase of a lexicon, folded and split into words.
type entry struct {
	words []string
	// tail, for a verb written with a gap ("let … know"), are the words
	// after the gap; words are those before it.
	tail []string
	role role
	// kinds for verbs and nouns; a verb of the "fetch" list grants read and
	// fetch; "any" verbs have none and concern every kind, "touch" verbs
	// every kind but reading (sparesRead).
	kinds      []action.Kind
	anyKind    bool
	sparesRead bool
	web        bool
	ambiguous  bool
	// narrow marks a noun that names one thing a kind acts on ("PR",
	// "access"), not the act itself ("purchases"): ruling it out is
	// narrower than ruling out the kind.
	narrow bool
	// general marks a verb that names its kind as a whole ("delete",
	// "send", "buy"): ruling it out rules out the kind. Ruling out any
	// other verb ("no apply", "don't merge") rules out one operation.
	general bool
	// umbrella marks a verb of umbrella_verbs: a later "only" verb narrows
	// it to its own kinds even when they share none.
	umbrella bool
	// op is the operation a verb names ("push"), see operations.yaml.
	op string
	// cond is the attribute an item condition compares ("older").
	cond     string
	n        int           // numbers
	dur      time.Duration // units
	singular bool          // units
	currency string
	lang     string
}

// language is a lexicon ready for matching.
type language struct {
	code  string
	index map[string][]*entry // by first word
	vocab map[string]bool     // every word the lexicon knows, for detection
	// enclitics are pronoun endings a verb form may carry ("guárdala",
	// "envíalo"), folded, longest first.
	enclitics []string
	// encliticFill are endings a verb drops before an enclitic and that
	// are put back to find it ("mandar" + "gli" is "mandare").
	encliticFill []string
	// passive is the language's reflexive and passive forms, folded.
	passive passiveForms
	// separable are particles a verb leaves at its clause's end.
	separable map[string]bool
	// words are real words of the language one edit away from a verb
	// form (lang/CODE.words): never read as a typo of it.
	words map[string]bool
}

// lexicon is every language plus what tokenising needs before the
// language is known.
type lexicon struct {
	langs      []*language
	elisions   map[string]bool
	abbrevs    map[string]bool
	currencies map[string]string // folded word → ISO code, all languages
	// rawCurrencies are the currency words as the tables spell them.
	rawCurrencies []string
	// homeFolders maps a folded home-folder name to its spelling on disk;
	// mine and folderWords are the words that make a name one ("my",
	// "folder"), folded. All languages.
	homeFolders map[string]string
	mine        map[string]bool
	folderWords map[string]bool
	// folderMin and folderMax bound the byte length of the names as
	// written, so most words need not be folded to be ruled out.
	folderMin, folderMax int
	verbForms            []*entry // single-word verb entries, for typo matching
}

func loadLexicon() (*lexicon, error) { return loadLexiconFS(langFS) }

// loadLexiconFS reads every lang/*.yaml in fsys.
func loadLexiconFS(fsys fs.FS) (*lexicon, error) {
	files, err := fs.Glob(fsys, "lang/*.yaml")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("no lang/*.yaml lexicons")
	}
	lx := &lexicon{elisions: map[string]bool{}, abbrevs: map[string]bool{}, currencies: map[string]string{},
		homeFolders: map[string]string{}, mine: map[string]bool{}, folderWords: map[string]bool{}}
	tables := make([]langTable, 0, len(files))
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		var t langTable
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		dec.KnownFields(true)
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if t.Code == "" || t.Code != strings.TrimSuffix(path.Base(f), ".yaml") {
			return nil, fmt.Errorf("%s: code %q does not match the file name", f, t.Code)
		}
		tables = append(tables, t)
		for _, e := range t.Elisions {
			lx.elisions[fold.String(e)] = true
		}
		for _, a := range t.Abbreviations {
			lx.abbrevs[fold.String(a)] = true
		}
		for _, n := range t.HomeFolders.Names {
			if n == "" || strings.ContainsAny(n, "/ ") {
				return nil, fmt.Errorf("%s: home_folders: %q is not a folder name", f, n)
			}
			lx.homeFolders[fold.String(n)] = n
			// A name written without its accents is shorter, with other
			// case mappings longer: leave room both ways.
			if lx.folderMin == 0 || len(n)-4 < lx.folderMin {
				lx.folderMin = max(1, len(n)-4)
			}
			lx.folderMax = max(lx.folderMax, len(n)+4)
		}
		for _, w := range t.HomeFolders.Mine {
			lx.mine[fold.String(w)] = true
		}
		for _, w := range t.HomeFolders.Folders {
			lx.folderWords[fold.String(w)] = true
		}
	}
	for _, t := range tables {
		l, err := lx.build(t)
		if err != nil {
			return nil, fmt.Errorf("lang/%s.yaml: %w", t.Code, err)
		}
		if l.words, err = readWords(fsys, "lang/"+t.Code+".words"); err != nil {
			return nil, err
		}
		lx.langs = append(lx.langs, l)
	}
	return lx, nil
}

// readWords reads a word list, one word a line (folded as it is read), "#" comments and
// blank lines skipped. A language without one has none.
func readWords(fsys fs.FS, name string) (map[string]bool, error) {
	words := map[string]bool{}
	data, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return words, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for n, line := range strings.Split(string(data), "\n") {
		w := strings.TrimSpace(line)
		if w == "" || strings.HasPrefix(w, "#") {
			continue
		}
		if strings.ContainsAny(w, " \t") {
			return nil, fmt.Errorf("%s:%d: %q is not one word", name, n+1, w)
		}
		words[fold.String(w)] = true
	}
	return words, nil
}

func (lx *lexicon) build(t langTable) (*language, error) {
	l := &language{code: t.Code, index: map[string][]*entry{}, vocab: map[string]bool{}, separable: map[string]bool{}}
	for _, p := range t.Separable {
		w := lx.phraseWords(p)
		if len(w) != 1 {
			return nil, fmt.Errorf("separable_particles: %q is not one word", p)
		}
		l.separable[w[0]] = true
	}
	add := func(phrase string, e entry) error {
		head, tail, gap := strings.Cut(phrase, "…")
		words := lx.phraseWords(head)
		if len(words) == 0 {
			return fmt.Errorf("empty phrase in %v list", e.role)
		}
		if e.role == roleHandsOff && !gap {
			return fmt.Errorf("hands_off: %q needs a gap (…) where its object stands", phrase)
		}
		if gap {
			// "let … know": a verb whose object stands inside it.
			e.tail = lx.phraseWords(tail)
			if (e.role != roleVerb && e.role != roleHandsOff && e.role != roleOnlyPair) || len(e.tail) == 0 || strings.Contains(tail, "…") {
				return fmt.Errorf("%q: a gap (…) needs a verb with words on both sides", phrase)
			}
			for _, w := range e.tail {
				l.vocab[w] = true
			}
		}
		e.words, e.lang = words, t.Code
		if e.role == roleVerb || e.role == roleNoun || e.role == roleLight {
			// A phrase listed under several kinds asks for all of them
			// ("install" writes files and runs code): one entry, the union.
			for _, old := range l.index[words[0]] {
				if old.role != e.role || !slices.Equal(old.words, words) || !slices.Equal(old.tail, e.tail) {
					continue
				}
				if old.anyKind || e.anyKind {
					return fmt.Errorf("%q is listed under \"any\" or \"touch\" and another kind", phrase)
				}
				kinds := slices.Clone(old.kinds)
				for _, k := range e.kinds {
					if !slices.Contains(kinds, k) {
						kinds = append(kinds, k)
					}
				}
				old.kinds = kinds
				old.web = old.web || e.web
				old.narrow = old.narrow && e.narrow
				old.ambiguous = old.ambiguous || e.ambiguous
				return nil
			}
		}
		l.index[words[0]] = append(l.index[words[0]], &e)
		for _, w := range words {
			l.vocab[w] = true
		}
		if e.role == roleVerb && len(words) == 1 && e.tail == nil {
			lx.verbForms = append(lx.verbForms, &e)
		}
		return nil
	}
	addAll := func(list []string, e entry) error {
		for _, p := range list {
			if err := add(p, e); err != nil {
				return err
			}
		}
		return nil
	}
	ambiguous := map[string]bool{}
	for _, a := range t.Ambiguous {
		ambiguous[strings.Join(lx.phraseWords(a), " ")] = true
	}
	for _, group := range []struct {
		list []string
		e    entry
	}{
		{t.Markers, entry{role: roleMarker}},
		{t.Determiners, entry{role: roleDeterminer}},
		{t.VerbCues, entry{role: roleCue}},
		{t.WebMarkers, entry{role: roleWeb}},
		{t.Negations.Before, entry{role: roleNegBefore}},
		{t.Negations.After, entry{role: roleNegAfter}},
		{t.Negations.Nobody, entry{role: roleNegAfter, general: true}},
		{t.Restrictors, entry{role: roleRestrictor}},
		{t.ReadOnly, entry{role: roleReadOnly}},
		{t.NothingElse, entry{role: roleNothingElse}},
		{t.Elsewhere, entry{role: roleNothingElse, cond: condElsewhere}},
		{t.ClauseBreaks, entry{role: roleBreak}},
		{t.ExceptBreaks, entry{role: roleExceptBreak}},
		{t.Conjunctions, entry{role: roleConj}},
		{t.Limits, entry{role: roleLimit}},
		{t.NegatedLimits, entry{role: roleNegLimit}},
		{t.Expiry.Markers, entry{role: roleExpiry}},
		{t.Expiry.Today, entry{role: roleToday}},
		{t.TitleMarkers, entry{role: roleTitle}},
		{t.Ignore, entry{role: roleIgnore}},
		{t.QuestionWords, entry{role: roleQuestion}},
		{t.EmbeddedQuestions, entry{role: roleEmbedded}},
		{t.SelfSubjects, entry{role: roleSelf}},
		{t.Exceptions, entry{role: roleException}},
		{t.MoneyVerbs, entry{role: roleMoneyVerb}},
		{t.NoNeed.Before, entry{role: roleNeedless}},
		{t.NoNeed.After, entry{role: roleUnneeded}},
		{t.SubjectMarkers, entry{role: roleSubjectMark}},
		{t.Copulas, entry{role: roleCopula}},
		{t.Relatives, entry{role: roleRelative}},
		{t.Subordinators, entry{role: roleSubordinator}},
		{t.Branches, entry{role: roleBranch}},
		{t.BranchPreps, entry{role: roleBranchPrep}},
		{t.Conditionals, entry{role: roleConditional}},
		{t.AsWords, entry{role: roleAs}},
		{t.SayVerbs, entry{role: roleSay}},
		{t.RecipientPreps, entry{role: roleRecipientPrep}},
		{t.Persons, entry{role: rolePerson}},
		{t.Limiting, entry{role: roleLimiting}},
		{t.ItemPlaces, entry{role: roleItemPlace}},
		{t.ChannelWords, entry{role: roleChannelWord}},
		{t.Purposes, entry{role: rolePurpose}},
		{t.Bookings.Verbs, entry{role: roleBookingVerb}},
		{t.Bookings.Objects, entry{role: roleFreeBooking}},
		{t.HandsOff, entry{role: roleHandsOff}},
		{t.AskFirst, entry{role: roleAskFirst}},
		{t.AskAfter, entry{role: roleAskAfter}},
		{t.ItemConditions, entry{role: roleItemCondition}},
		{t.DateConditions, entry{role: roleItemCondition}},
		{t.ActConditions, entry{role: roleItemCondition, cond: condAct}},
		{t.Hedges, entry{role: roleIgnore}},
		{t.WhetherVerbs, entry{role: roleWhether}},
		{t.Keep, entry{role: roleKeep}},
		{t.OnlyPairs, entry{role: roleOnlyPair}},
		{t.OlderThan, entry{role: roleItemCondition, cond: condOlder}},
		{t.OlderByAge, entry{role: roleItemCondition, cond: condOlderByAge}},
		{t.AnyItems, entry{role: roleAnyItems}},
		{t.LargerThan, entry{role: roleItemCondition, cond: condLarger}},
		{t.SmallerThan, entry{role: roleItemCondition, cond: condSmaller}},
		{t.NewerThan, entry{role: roleItemCondition, cond: condNewer}},
		{t.NameMarkers, entry{role: roleNameMarker}},
		{t.AnyMessages, entry{role: roleAnyMessages}},
		{t.LabelWords, entry{role: roleLabelWord}},
	} {
		if err := addAll(group.list, group.e); err != nil {
			return nil, err
		}
	}
	for _, kindName := range slices.Sorted(mapKeysOf(t.Verbs)) {
		e := entry{role: roleVerb}
		switch kindName {
		case "any":
			e.anyKind = true
		case "touch":
			e.anyKind, e.sparesRead = true, true
		case "fetch":
			e.kinds, e.web = []action.Kind{action.Read, action.Fetch}, true
		default:
			k := action.Kind(kindName)
			if !k.Valid() || k == action.Unknown {
				return nil, fmt.Errorf("verbs: unknown kind %q", kindName)
			}
			e.kinds = []action.Kind{k}
		}
		for _, p := range t.Verbs[kindName] {
			ve := e
			ve.ambiguous = ambiguous[strings.Join(lx.phraseWords(p), " ")]
			if err := add(p, ve); err != nil {
				return nil, err
			}
		}
	}
	for _, g := range t.GeneralVerbs {
		words := lx.phraseWords(g)
		found := false
		for _, e := range l.index[words[0]] {
			if e.role == roleVerb && slices.Equal(e.words, words) {
				e.general, found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("general_verbs: %q is not in verbs", g)
		}
	}
	for _, u := range t.UmbrellaVerbs {
		words := lx.phraseWords(u)
		found := false
		for _, e := range l.index[words[0]] {
			if e.role == roleVerb && slices.Equal(e.words, words) {
				e.umbrella, found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("umbrella_verbs: %q is not in verbs", u)
		}
	}
	for _, bytes := range slices.Sorted(maps.Keys(t.SizeUnits)) {
		if bytes <= 0 {
			return nil, fmt.Errorf("size_units: %d is not a number of bytes", bytes)
		}
		if err := addAll(t.SizeUnits[bytes], entry{role: roleSizeUnit, n: bytes}); err != nil {
			return nil, err
		}
	}
	for _, days := range slices.Sorted(maps.Keys(t.AgeUnits)) {
		if days <= 0 {
			return nil, fmt.Errorf("age_units: %d is not a number of days", days)
		}
		if err := addAll(t.AgeUnits[days], entry{role: roleAgeUnit, n: days}); err != nil {
			return nil, err
		}
	}
	ops, err := loadOperations()
	if err != nil {
		return nil, err
	}
	for _, op := range slices.Sorted(mapKeysOf(t.OperationVerbs)) {
		if _, ok := ops[op]; !ok {
			return nil, fmt.Errorf("operation_verbs: %q is not an operation of %s", op, operationsFile)
		}
		for _, g := range t.OperationVerbs[op] {
			words := lx.phraseWords(g)
			found := false
			for _, e := range l.index[words[0]] {
				if e.role == roleVerb && slices.Equal(e.words, words) && e.tail == nil {
					e.op, found = op, true
				}
			}
			if !found {
				return nil, fmt.Errorf("operation_verbs: %q is not in verbs", g)
			}
		}
	}
	for _, kindName := range slices.Sorted(mapKeysOf(t.LightVerbs)) {
		e := entry{role: roleLight}
		if kindName != "object" {
			k := action.Kind(kindName)
			if !k.Valid() || k == action.Unknown {
				return nil, fmt.Errorf("light_verbs: unknown kind %q (want a kind or \"object\")", kindName)
			}
			e.kinds = []action.Kind{k}
		}
		for _, p := range t.LightVerbs[kindName] {
			ve := e
			ve.ambiguous = ambiguous[strings.Join(lx.phraseWords(p), " ")]
			if err := add(p, ve); err != nil {
				return nil, err
			}
		}
	}
	for _, en := range t.Enclitics {
		w := lx.phraseWords(en)
		if len(w) != 1 {
			return nil, fmt.Errorf("enclitics: %q is not one word", en)
		}
		l.enclitics = append(l.enclitics, w[0])
	}
	slices.SortStableFunc(l.enclitics, func(a, b string) int { return len(b) - len(a) })
	for _, f := range t.EncliticFill {
		w := lx.phraseWords(f)
		if len(w) != 1 {
			return nil, fmt.Errorf("enclitic_restore: %q is not one word", f)
		}
		l.encliticFill = append(l.encliticFill, w[0])
	}
	if l.passive, err = lx.passiveOf(t.Passive); err != nil {
		return nil, err
	}
	for _, nouns := range []struct {
		list   map[string][]string
		name   string
		narrow bool
	}{{t.Nouns, "nouns", false}, {t.ObjectNouns, "object_nouns", true}} {
		for _, kindName := range slices.Sorted(mapKeysOf(nouns.list)) {
			k := action.Kind(kindName)
			if !k.Valid() || k == action.Unknown {
				return nil, fmt.Errorf("%s: unknown kind %q", nouns.name, kindName)
			}
			if err := addAll(nouns.list[kindName], entry{role: roleNoun, kinds: []action.Kind{k}, narrow: nouns.narrow}); err != nil {
				return nil, err
			}
		}
	}
	for _, w := range slices.Sorted(mapKeysOf(t.Numbers)) {
		if err := add(w, entry{role: roleNumber, n: t.Numbers[w]}); err != nil {
			return nil, err
		}
	}
	for _, u := range t.Expiry.Units {
		d, err := time.ParseDuration(u.Duration)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("expiry unit duration %q: want a positive Go duration", u.Duration)
		}
		if err := addAll(u.Singular, entry{role: roleUnit, dur: d, singular: true}); err != nil {
			return nil, err
		}
		if err := addAll(u.Plural, entry{role: roleUnit, dur: d}); err != nil {
			return nil, err
		}
	}
	for _, w := range slices.Sorted(mapKeysOf(t.Currencies)) {
		code := t.Currencies[w]
		if !validCurrency(code) {
			return nil, fmt.Errorf("currencies: %q for %q is not an ISO 4217 code", code, w)
		}
		if err := add(w, entry{role: roleCurrency, currency: code}); err != nil {
			return nil, err
		}
		lx.currencies[fold.String(w)] = code
		lx.rawCurrencies = append(lx.rawCurrencies, w)
	}
	// Longest phrases first, so the first match found is the longest.
	for _, es := range l.index {
		slices.SortStableFunc(es, func(a, b *entry) int { return len(b.words) - len(a.words) })
	}
	return l, nil
}

func mapKeysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// phraseWords tokenises a lexicon phrase the way input text is tokenised.
func (lx *lexicon) phraseWords(p string) []string {
	var words []string
	for _, t := range lx.tokenize(p, nil) {
		if t.kind == tokWord || t.kind == tokNumber {
			words = append(words, t.text)
		}
	}
	return words
}

// ---- tokens ----

type tokKind uint8

const (
	tokWord tokKind = iota
	tokNumber
	tokPunct  // , ; : ( ) and the like: ends a segment
	tokStop   // . ! ? and line breaks: ends a sentence
	tokEntity // a recognised entity, opaque
	tokColon  // ends a clause for negation, not for limits ("Budget: 50 €")
)

type token struct {
	kind       tokKind
	text       string // folded word, digits, or the punctuation
	start, end int    // byte offsets in the original text
	ent        int    // index into the entity list for tokEntity
	n          int    // value of a number
	// inName marks a word glued to another by "/" ("acme/web"): part of
	// a name such as a repository slug, not a word of the sentence.
	inName bool
}

// slashJoined reports whether the word text[i:j] is joined to another word
// by a "/" with no space ("web" in "acme/web"). Only cues consult it: a
// word inside a name does not make a sentence about the web.
func slashJoined(text string, i, j int) bool {
	if i > 1 && text[i-1] == '/' {
		if r, _ := utf8.DecodeLastRuneInString(text[:i-1]); isWordRune(r) {
			return true
		}
	}
	if j < len(text)-1 && text[j] == '/' {
		if r, _ := utf8.DecodeRuneInString(text[j+1:]); isWordRune(r) {
			return true
		}
	}
	return false
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r)
}

// tokenize splits text into words, numbers, punctuation and the given
// entity spans (sorted, non-overlapping), which become single tokens.
// Words are folded; apostrophes stay inside words ("don't") except after
// an elision prefix ("n'achète" → "n'" "achete"); hyphens split words
// ("read-only" → "read" "only").
func (lx *lexicon) tokenize(text string, ents []entity) []token {
	var toks []token
	next := 0 // next entity
	for i := 0; i < len(text); {
		if next < len(ents) && i >= ents[next].start {
			e := ents[next]
			if i == e.start {
				toks = append(toks, token{kind: tokEntity, start: e.start, end: e.end, ent: next})
				i = e.end
			}
			next++
			continue
		}
		limit := len(text)
		if next < len(ents) {
			limit = ents[next].start
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isWordRune(r):
			j := i
			for j < limit {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if isWordRune(r2) {
					j += s2
					continue
				}
				if isApostrophe(r2) {
					if lx.elisions[fold.String(text[i:j])] {
						j += s2
						break // "n'" ends here; the word after it is its own token
					}
					if j+s2 < limit {
						if r3, _ := utf8.DecodeRuneInString(text[j+s2:]); unicode.IsLetter(r3) {
							j += s2
							continue // "don't"
						}
					}
				}
				break
			}
			w := fold.String(text[i:j])
			t := token{kind: tokWord, text: w, start: i, end: j, inName: slashJoined(text, i, j)}
			if isDigits(w) {
				t.kind = tokNumber
				t.n = atoiCapped(w)
			}
			toks = append(toks, t)
			i = j
		case r == '.' || r == '!' || r == '?' || r == '\n' || r == '\r' || r == '…' || r == '。':
			// "max. 3" and "z.B." are not sentence ends.
			if r == '.' && len(toks) > 0 && toks[len(toks)-1].kind == tokWord && toks[len(toks)-1].end == i && lx.abbrevs[toks[len(toks)-1].text] {
				i += size
				continue
			}
			toks = append(toks, token{kind: tokStop, text: string(r), start: i, end: i + size})
			i += size
		case r == ',' || r == ';' || r == '(' || r == ')' || r == '[' || r == ']' || r == '–' || r == '—' || r == '•':
			toks = append(toks, token{kind: tokPunct, text: string(r), start: i, end: i + size})
			i += size
		case r == ':':
			toks = append(toks, token{kind: tokColon, text: ":", start: i, end: i + size})
			i += size
		case r == '-' && i > 0 && i+1 < len(text) && text[i-1] == ' ' && text[i+1] == ' ':
			toks = append(toks, token{kind: tokPunct, text: "-", start: i, end: i + 1})
			i++
		default:
			i += size
		}
	}
	return toks
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' || r == 'ʼ' || r == '‘' }

// atoiCapped parses a digit string, saturating at a million: counts and
// durations beyond that are not meaningful limits.
func atoiCapped(s string) int {
	n := 0
	for i := range len(s) {
		n = n*10 + int(s[i]-'0')
		if n > 1_000_000 {
			return 1_000_001
		}
	}
	return n
}
