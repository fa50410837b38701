package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/fold"
	"github.com/mandate-dev/mandate/internal/secret"
)

// Limits bound what one scan examines and what it keeps.
type Limits struct {
	// MaxBytes is how much string content one output contributes; the
	// rest is not examined and the scan says "truncated".
	MaxBytes int
	// MaxNodes and MaxDepth bound the JSON walk.
	MaxNodes int
	MaxDepth int
	// MaxValues, MaxSpans and MaxLines bound what one scan keeps.
	MaxValues int
	MaxSpans  int
	MaxLines  int
}

// DefaultLimits are the limits NewScanner uses: a 1 MiB output (the
// engine's cap) is scanned in full, in a few milliseconds.
var DefaultLimits = Limits{MaxBytes: 1 << 20, MaxNodes: 200_000, MaxDepth: 64, MaxValues: 2048, MaxSpans: 64, MaxLines: 1024}

// Scanner turns tool outputs and call arguments into values and injected
// spans. It is immutable and safe for concurrent use.
type Scanner struct {
	det    *Detector
	voc    *vocabulary
	x      extractor
	limits Limits
}

// ScannerOption configures a Scanner.
type ScannerOption func(*scannerOptions)

type scannerOptions struct {
	hasher   Hasher
	lexicons map[string][]byte
	limits   *Limits
}

// WithHasher sets the secret hasher (the redactor), so secrets are kept as
// their redaction markers. Without one, secrets found in clear are not
// kept at all; markers already in the text still are.
func WithHasher(h Hasher) ScannerOption { return func(o *scannerOptions) { o.hasher = h } }

// WithLexiconFiles adds operator injection lexicons (name → YAML).
func WithLexiconFiles(files map[string][]byte) ScannerOption {
	return func(o *scannerOptions) { o.lexicons = files }
}

// WithLimits replaces DefaultLimits; zero fields keep their default.
func WithLimits(l Limits) ScannerOption { return func(o *scannerOptions) { o.limits = &l } }

// NewScanner builds a scanner over the built-in tables.
func NewScanner(opts ...ScannerOption) (*Scanner, error) {
	var o scannerOptions
	for _, f := range opts {
		f(&o)
	}
	det, err := NewDetector(o.lexicons)
	if err != nil {
		return nil, err
	}
	voc, err := loadVocabulary()
	if err != nil {
		return nil, err
	}
	l := DefaultLimits
	if o.limits != nil {
		for _, p := range []struct{ dst, src *int }{
			{&l.MaxBytes, &o.limits.MaxBytes}, {&l.MaxNodes, &o.limits.MaxNodes}, {&l.MaxDepth, &o.limits.MaxDepth},
			{&l.MaxValues, &o.limits.MaxValues}, {&l.MaxSpans, &o.limits.MaxSpans}, {&l.MaxLines, &o.limits.MaxLines},
		} {
			if *p.src > 0 {
				*p.dst = *p.src
			}
		}
	}
	return &Scanner{det: det, voc: voc, x: extractor{voc: voc, hasher: o.hasher}, limits: l}, nil
}

// Detector returns the scanner's injection detector.
func (s *Scanner) Detector() *Detector { return s.det }

// Found is a value found by a scan.
type Found struct {
	Class    Class  `json:"class"`
	Value    string `json:"value"` // as shown; secrets as their redaction marker
	Field    string `json:"field"` // JSON path, or the header line's name
	Part     Part   `json:"part"`
	Injected bool   `json:"injected,omitempty"`
	// Excluded: the user's words have it only in a clause that rules it
	// out ("except …", "not …"; exclude.go). Only user words set it.
	Excluded bool `json:"excluded,omitempty"`
	keys     []key
	// excluded, affirmed: some sighting in the user's words was inside,
	// outside a clause that rules it out.
	excluded, affirmed bool
	// plain: some sighting in the output was outside injected spans.
	plain bool
	// item is the list item of the output it was found in (0: none).
	item int
	// weak: every injected sighting was inside a weak span (Span.Weak).
	weak bool
}

// Injection is an injected span as kept: its text (cut at 300 bytes), where
// it was, and why it was marked.
type Injection struct {
	Text   string `json:"text"`
	Field  string `json:"field"`
	Why    string `json:"why"`
	Lang   string `json:"lang,omitempty"`
	Hidden string `json:"hidden,omitempty"`
	// full is the span's folded text (up to 2 KiB), kept to recognise
	// argument strings copied from it.
	full string
	// weak: marked by its shape alone (Span.Weak); it counts only in
	// open content.
	weak bool
}

// Scan is what one output (or one call's arguments) holds.
type Scan struct {
	Values     []Found     `json:"values"`
	Injections []Injection `json:"injections"`
	// Truncated says the output was not examined in full, and why.
	Truncated string `json:"truncated,omitempty"`
	// Bytes is how much string content was examined.
	Bytes int `json:"bytes"`
	// terms and concepts are what the injected spans ask about.
	terms, concepts []string
	// weakTerms and weakConcepts are those of weak spans alone.
	weakTerms, weakConcepts []string
	// lines are fingerprints of the output's lines, to recognise its
	// data when a later call carries it.
	lines []uint64
	// words are the folded words of the user's words; plainWords those of
	// an output outside its injected spans (a word a benign part of an
	// output has is not one only an injected request used).
	words, plainWords []string
	// selectorWords and selectorStrings are a call's selecting arguments
	// (queries, patterns, ids, addresses), as words and as whole strings.
	selectorWords   []string
	selectorStrings []string
	// items are the listed items of an output that have an id and a
	// name ({"id":"C01GEN","name":"general"}) or a sender, author or
	// biller ({"bill_id":"eb-7711","biller":"Stadtwerke Leipzig GmbH"}).
	items []Item
	// within are a call's arguments that name the place it reads or
	// acts in (container_keys: a channel history's channel_id).
	within []string
	// winFrom, winTo bound the time window the call's arguments read
	// (window_start_keys, window_end_keys); zero where none is given.
	winFrom, winTo time.Time
	// selectorConcepts are the concepts the selecting arguments name
	// (a search for "DNI*": id_documents).
	selectorConcepts []string
	// secretKeys are the hashes of a call's secret-shaped tokens, and
	// secretToks the tokens (kept in memory only, to redact those that
	// turn out to be secrets the session read).
	secretKeys []key
	secretToks []string
	// tokenKeys are the hashes of an output's secret-shaped tokens (no
	// clear text kept): when the output turns out to be a sensitive read
	// (a token file, a credentials file), they become its secrets, so a
	// key no detector knows the shape of is still matched where it goes.
	tokenKeys []key
	// quantity is a call's quantity argument (quantity_keys), 0 when it
	// names none.
	quantity float64
	// quantities are how many items the call's arguments say it acts on
	// (values.yaml `quantities`, quantity.go).
	quantities []argQuantity
	// refAmounts are the amounts of an output given by a field that
	// names what they are (minimum_due: the minimum payment; amountref.go).
	refAmounts []refAmount
	// namedRefs are the amount_refs the user's words name, and refNames
	// their names (amountref.go).
	namedRefs []int
	refNames  []string
	// excludedWords are the folded words the user's words have only in
	// clauses that rule something out (exclude.go).
	excludedWords []string
}

// Hint is what the caller knows about the text being scanned.
type Hint struct {
	// WorkingDir resolves relative paths; HomeDir, when set, expands "~/"
	// the way the classifier does, so a path in the user's words and the
	// same path in a call are one value.
	WorkingDir string
	HomeDir    string
	// Family is the tool's family (email output is read for headers).
	Family string
}

// scanMode says what is being scanned.
type scanMode uint8

const (
	modeOutput scanMode = iota // a tool's output: values, injections, lines
	modeArgs                   // a call's arguments: values and lines
	modeUser                   // the user's words: values and words
)

// scanState is one scan in progress.
type scanState struct {
	s      *Scanner
	mode   scanMode
	hint   Hint
	out    *Scan
	budget int
	nodes  int
	seen   map[key]int // key → index into out.Values
	hits   []hit
	hidden []hiddenText
	dsc    detectScratch
	words  map[string]bool
	lineOK map[uint64]bool
	plain  map[string]bool
	toks   []tok
	// item is the list item being walked (0: none), items how many were
	// started, itemDepth the stack depth of the current one.
	item, items, itemDepth int
	// listed are the id and name fields of the listed items walked so
	// far, by number; nListed how many were started.
	listed  map[int]*Item
	nListed int
	// exWords are the user's words met inside clauses that rule
	// something out (exclude.go).
	exWords map[string]bool
	// key is the JSON key of the string leaf scans (stringValue), and
	// keyLabels what keys addressing the model read as (keyaddress.go).
	key       string
	keyLabels map[string]string
}

// Item is one item of a listing: its id, its name, and whether the
// listing marks it private.
type Item struct {
	ID      string
	Name    string
	Private bool
	// words are the name's folded words without its private marks: what
	// the user would call it.
	words string
	// senders are the item's own sender, author or organiser fields,
	// folded (a mail's "from"): whom a reply to the item goes to.
	senders []string
	// labels are the labels, folders or tags the item is filed under
	// (item_label_keys), folded.
	labels []string
	// price and currency are the item's first money field, anywhere in
	// it ({"price":{"amount":329,"currency":"EUR"}}, "price": "21,95 €"),
	// and the currency beside it or in it ("" when none says).
	price    float64
	currency string
	// parents are the ids the item gives as its parent folder or
	// container (parent_keys).
	parents []string
	// date is the item's first date field (item_date_keys) that reads
	// as a time; zero when none does.
	date time.Time
}

// maxSenders bounds the sender fields one listed item keeps.
const maxSenders = 4

// maxWithin bounds the places one call's arguments name.
const maxWithin = 4

// maxItems bounds the items one output records.
const maxItems = 1024

func (s *Scanner) newState(h Hint, mode scanMode) *scanState {
	return &scanState{s: s, hint: h, mode: mode, out: &Scan{}, budget: s.limits.MaxBytes, seen: map[key]int{}, words: map[string]bool{}, lineOK: map[uint64]bool{}}
}

// Output scans a tool's output: JSON (any shape; strings that hold JSON
// are read as JSON too), or text when raw is not valid JSON. Binary and
// invalid UTF-8 are read as far as they are text; nothing in raw can make
// the scan fail, run past its limits or panic.
func (s *Scanner) Output(raw []byte, h Hint) (sc *Scan) {
	return s.scan(raw, h, modeOutput)
}

func (s *Scanner) scan(raw []byte, h Hint, mode scanMode) (sc *Scan) {
	st := s.newState(h, mode)
	defer func() {
		if r := recover(); r != nil {
			// A scan is evidence for policy, never a reason to fail
			// an observation: keep what was found, and say the rest
			// was not examined.
			st.out.Truncated = fmt.Sprintf("scan failed: %v", r)
			sc = st.out
		}
	}()
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && (raw[0] == '{' || raw[0] == '[' || raw[0] == '"') && json.Valid(raw) {
		st.walkJSON(raw, "", 0, "")
	} else {
		st.leaf(string(raw), "", "")
	}
	st.finish()
	return st.out
}

// Words scans the user's words: their values, and the words themselves
// (to tell an injected request from what the user asked for).
func (s *Scanner) Words(text string, h Hint) *Scan {
	b, _ := json.Marshal(text)
	return s.scan(b, h, modeUser)
}

// Args scans a call's arguments for the values they carry. Injection is
// not looked for: arguments are the agent's, and what matters is where
// their values came from.
func (s *Scanner) Args(args map[string]any, h Hint) *Scan {
	st := s.newState(h, modeArgs)
	defer func() {
		if r := recover(); r != nil {
			st.out.Truncated = fmt.Sprintf("scan failed: %v", r)
		}
	}()
	st.walkAny(args, "", 0, "")
	st.finish()
	st.out.quantities = s.voc.quantities(args)
	return st.out
}

func (st *scanState) finish() {
	if st.mode == modeUser {
		st.finishExclusions()
	}
	for w := range st.words {
		st.out.words = append(st.out.words, w)
	}
	st.namedRefs()
	for n := 1; n <= st.nListed && len(st.listed) > 0; n++ {
		it := st.listed[n]
		if it == nil || it.ID == "" || (it.Name == "" && len(it.senders) == 0 && it.price == 0) {
			continue
		}
		var words []string
		for _, tk := range tokenize(it.Name, 0, len(it.Name), nil) {
			if st.s.voc.private[tk.text] {
				it.Private = true
				continue
			}
			words = append(words, tk.text)
		}
		it.words = strings.Join(words, " ")
		st.out.items = append(st.out.items, *it)
	}
}

// walkJSON streams raw, so a huge or deeply nested output costs what it is
// allowed to and no more.
func (st *scanState) walkJSON(raw []byte, field string, depth int, part Part) {
	if st.mode == modeOutput {
		st.toolCalls(string(raw), field, part)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	stack := []jsonFrame{{field: field, part: part}}
	expectKey := false
	for {
		if st.nodes >= st.s.limits.MaxNodes {
			st.truncate(fmt.Sprintf("more than %d JSON nodes", st.s.limits.MaxNodes))
			return
		}
		if st.budget <= 0 {
			st.truncate(fmt.Sprintf("more than %d bytes of text", st.s.limits.MaxBytes))
			return
		}
		t, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			// Valid was checked; a failure here is a depth limit of
			// the decoder, or a bug: stop with what was found.
			st.truncate("JSON could not be read further: " + err.Error())
			return
		}
		st.nodes++
		top := &stack[len(stack)-1]
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				if len(stack) > st.s.limits.MaxDepth {
					st.truncate(fmt.Sprintf("JSON nested deeper than %d", st.s.limits.MaxDepth))
					return
				}
				f, p := st.childField(top)
				if d == '{' && !top.obj && st.itemDepth == 0 {
					// An object in a list is one item (a mail of a
					// search result): values keep which one.
					st.items++
					st.item, st.itemDepth = st.items, len(stack)+1
				}
				fr := jsonFrame{obj: d == '{', field: f, part: p}
				if d == '[' && top.obj && top.listed != 0 && st.s.voc.role(top.key)&roleParent != 0 {
					fr.parentOf = top.listed
				}
				if d == '[' && top.obj && top.listed != 0 && st.s.voc.role(top.key)&roleLabel != 0 {
					fr.labelsOf = top.listed
				}
				if d == '{' && !top.obj && len(stack) > 1 && st.mode == modeOutput && st.nListed < maxItems {
					// An object right in a list is a listed item
					// (a folder's file, a workspace's channel).
					st.nListed++
					fr.listed = st.nListed
				}
				stack = append(stack, fr)
				expectKey = d == '{'
			case '}', ']':
				if len(stack) == st.itemDepth {
					st.item, st.itemDepth = 0, 0
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return
				}
				top = &stack[len(stack)-1]
				expectKey = top.obj
				top.idx++
			}
			continue
		}
		if top.obj && expectKey {
			top.key, _ = t.(string)
			expectKey = false
			continue
		}
		f, p := st.childField(top)
		key := top.key
		if top.obj && top.listed != 0 {
			st.itemField(top.listed, key, t)
		}
		if !top.obj && top.parentOf != 0 {
			st.itemField(top.parentOf, stack[len(stack)-2].key, t)
		}
		if !top.obj && top.labelsOf != 0 {
			st.itemLabel(top.labelsOf, t)
		}
		if top.obj && st.nListed > 0 {
			st.itemMoney(stack, key, t)
		}
		switch v := t.(type) {
		case string:
			st.stringValue(v, key, f, p, depth)
		case json.Number:
			st.number(string(v), key, f, p)
		}
		if top.obj {
			expectKey = true
		}
		top.idx++
	}
}

// maxLabels bounds the labels kept of one item.
const maxLabels = 16

// listedItem is listed item n, made on first use.
func (st *scanState) listedItem(n int) *Item {
	it := st.listed[n]
	if it == nil {
		if st.listed == nil {
			st.listed = map[int]*Item{}
		}
		it = &Item{}
		st.listed[n] = it
	}
	return it
}

// tokenText is a JSON string token's text, trimmed, or a number's digits;
// other tokens have none.
func tokenText(t json.Token) (string, bool) {
	switch x := t.(type) {
	case string:
		return strings.TrimSpace(x), true
	case json.Number:
		return string(x), true
	}
	return "", false
}

// itemLabel notes one label of a listed item's label list.
func (st *scanState) itemLabel(n int, t json.Token) {
	v, ok := t.(string)
	if !ok || strings.TrimSpace(v) == "" {
		return
	}
	it := st.listedItem(n)
	if len(it.labels) >= maxLabels {
		return
	}
	it.labels = append(it.labels, fold.String(clip(strings.TrimSpace(v), 200)))
}

// itemField notes a field of the listed item being walked, when it is the
// item's id, its name or a private flag.
func (st *scanState) itemField(n int, key string, t json.Token) {
	r := st.s.voc.role(key)
	if r&(roleID|roleItemName|rolePrivateFlag|roleHeader|roleParent|roleLabel|roleDate) == 0 {
		return
	}
	it := st.listedItem(n)
	if x, ok := t.(bool); ok {
		if x && r&rolePrivateFlag != 0 {
			it.Private = true
		}
		return
	}
	v, ok := tokenText(t)
	if !ok {
		return
	}
	switch {
	case r&roleID != 0 && it.ID == "" && v != "" && len(v) <= 128 && !strings.ContainsAny(v, " \n"):
		it.ID = v
	case r&roleParent != 0 && v != "" && len(v) <= 128 && !strings.ContainsAny(v, " \n"):
		if len(it.parents) < 8 {
			it.parents = append(it.parents, v)
		}
	case r&roleItemName != 0 && it.Name == "" && v != "":
		it.Name = clip(v, 200)
	case r&roleHeader != 0 && v != "" && len(it.senders) < maxSenders:
		it.senders = append(it.senders, fold.String(clip(v, 200)))
	}
	if r&roleDate != 0 && it.date.IsZero() {
		it.date = itemDate(v) // "ts" is a message's id and its date
	}
	if r&roleLabel != 0 && r&roleID == 0 && v != "" && len(it.labels) < maxLabels {
		// A label field is the item's label even where it also names it
		// ("label": "Promotions" of a mail; a folder's own "label").
		it.labels = append(it.labels, fold.String(clip(v, 200)))
	}
}

// jsonFrame is an object or array being walked.
type jsonFrame struct {
	obj bool
	// listed is the number of the listed item this object is (0: none);
	// parentOf, of an array, the listed item whose parents it lists.
	listed, parentOf int
	// labelsOf, of an array, is the listed item whose labels it lists.
	labelsOf int
	key      string
	field    string
	part     Part
	idx      int
}

// childField is the field path and part of the value at the top frame's
// current position.
func (st *scanState) childField(top *jsonFrame) (string, Part) {
	if !top.obj {
		return top.field, top.part
	}
	f := top.key
	if top.field != "" {
		f = top.field + "." + top.key
	}
	if len(f) > 160 {
		f = f[len(f)-160:]
	}
	p := top.part
	switch r := st.s.voc.role(top.key); {
	case r&roleHeader != 0:
		p = PartHeader
	case r&roleParticipant != 0:
		p = PartParticipants
	case r&roleBody != 0:
		p = PartBody
	}
	return f, p
}

// walkAny walks decoded JSON (call arguments).
func (st *scanState) walkAny(v any, field string, depth int, part Part) {
	if depth > st.s.limits.MaxDepth {
		st.truncate(fmt.Sprintf("arguments nested deeper than %d", st.s.limits.MaxDepth))
		return
	}
	st.nodes++
	if st.nodes > st.s.limits.MaxNodes || st.budget <= 0 {
		st.truncate("arguments larger than the scan limits")
		return
	}
	last := field
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		last = field[i+1:]
	}
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			f := k
			if field != "" {
				f = field + "." + k
			}
			p := part
			switch r := st.s.voc.role(k); {
			case r&roleHeader != 0:
				p = PartHeader
			case r&roleParticipant != 0:
				p = PartParticipants
			}
			st.walkAny(c, f, depth+1, p)
		}
	case []any:
		for _, c := range x {
			st.walkAny(c, field, depth+1, part)
		}
	case string:
		st.stringValue(x, last, field, part, depth)
	case float64:
		st.number(strconv.FormatFloat(x, 'f', -1, 64), last, field, part)
	case json.Number:
		st.number(string(x), last, field, part)
	case int:
		st.number(strconv.Itoa(x), last, field, part)
	case int64:
		st.number(strconv.FormatInt(x, 10), last, field, part)
	}
}

func (st *scanState) truncate(why string) {
	if st.out.Truncated == "" {
		st.out.Truncated = why
	}
}

// stringValue handles one string: JSON inside it is walked as JSON, a
// field's role adds a value of its own, and the text is scanned.
func (st *scanState) stringValue(v, name, field string, part Part, depth int) {
	if v == "" {
		return
	}
	if t := strings.TrimSpace(v); len(t) > 1 && (t[0] == '{' || t[0] == '[') && depth < 3 && len(t) <= st.budget && json.Valid([]byte(t)) {
		st.walkJSON([]byte(t), field, depth+1, part)
		return
	}
	r := st.s.voc.role(name)
	if st.mode == modeArgs && r&roleSelector != 0 && r&roleContent == 0 {
		st.selector(v)
	}
	if st.mode == modeArgs && r&(roleWindowStart|roleWindowEnd) != 0 && len(v) <= 40 {
		if at, ok := parseDate(v); ok {
			if r&roleWindowStart != 0 && st.out.winFrom.IsZero() {
				st.out.winFrom = at
			} else if r&roleWindowEnd != 0 && st.out.winTo.IsZero() {
				st.out.winTo = at
			}
		}
	}
	if st.mode == modeArgs && r&roleContainer != 0 && len(st.out.within) < maxWithin && len(v) <= 128 {
		st.out.within = append(st.out.within, strings.TrimSpace(v))
	}
	if r != 0 && len(v) <= maxValueLen {
		st.fieldValue(v, field, part, r)
	}
	if secret.SensitiveKey(name) && st.s.x.hasher != nil && len(v) >= 6 && !markerRE.MatchString(v) {
		hash := st.s.x.hasher.Hash(v)
		st.add(Found{Class: Secret, Value: "[REDACTED:sensitive_key:" + hash + "]", Field: field, Part: part}, []key{key(kSecret + hash)})
		return
	}
	st.key = name
	st.leaf(v, field, part)
	st.key = ""
}

// selector keeps a selecting argument's words and, when short, the string.
func (st *scanState) selector(v string) {
	if len(st.out.selectorStrings) < 64 && len(v) <= maxValueLen {
		st.out.selectorStrings = append(st.out.selectorStrings, v)
	}
	if strings.Contains(v, "://") {
		// A URL is a value of its own, looked up as one; its words
		// (scheme, host parts, path) say nothing about who asked for it.
		return
	}
	toks := tokenize(v, 0, min(len(v), 4096), nil)
	for i := range toks {
		st.out.selectorConcepts = st.s.det.lx.conceptsAt(toks, i, st.out.selectorConcepts)
	}
	for _, t := range toks {
		if len(st.out.selectorWords) >= 256 {
			return
		}
		if !slices.Contains(st.out.selectorWords, t.text) {
			st.out.selectorWords = append(st.out.selectorWords, t.text)
		}
	}
}

// fieldValue adds the value a field's name says its string is.
func (st *scanState) fieldValue(v, field string, part Part, r keyRole) {
	v = strings.TrimSpace(v)
	switch {
	case r&roleAccount != 0:
		c := Account
		if isIBANShape(v) {
			c = IBAN
		}
		st.add(Found{Class: c, Value: v, Field: field, Part: part}, []key{keyOf(c, v)})
	case r&rolePhone != 0:
		if k := keyOf(Phone, v); k != "" {
			st.add(Found{Class: Phone, Value: v, Field: field, Part: part}, []key{k})
		}
	case r&roleName != 0 && !strings.ContainsAny(v, "@/\n") && len(v) <= 100:
		st.add(Found{Class: Name, Value: v, Field: field, Part: part}, []key{tokenKey(v)})
	case r&roleID != 0 && !strings.ContainsAny(v, " \n") && len(v) <= 128:
		st.add(Found{Class: ID, Value: v, Field: field, Part: part}, []key{tokenKey(v)})
	case r&rolePath != 0 && (strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.Contains(v, "/")) && !strings.Contains(v, "://"):
		p := st.resolve(v)
		st.add(Found{Class: Path, Value: p, Field: field, Part: part}, []key{keyOf(Path, p)})
	case r&roleAmount != 0:
		if n, ok := action.ParseNumber(strings.TrimSpace(strings.Trim(v, "€$£ EURSD"))); ok {
			st.add(Found{Class: Amount, Value: strconv.FormatFloat(n, 'f', -1, 64), Field: field, Part: part}, amountKeys(n, ""))
			st.refAmount(n, field)
		}
	}
}

func (st *scanState) number(n, name, field string, part Part) {
	r := st.s.voc.role(name)
	if st.mode == modeArgs && r&roleQuantity != 0 && st.out.quantity == 0 {
		if q, err := strconv.ParseFloat(n, 64); err == nil && q > 0 && q < 1e6 {
			st.out.quantity = q
		}
	}
	switch {
	case r&roleAmount != 0:
		if v, err := strconv.ParseFloat(n, 64); err == nil {
			st.add(Found{Class: Amount, Value: n, Field: field, Part: part}, amountKeys(v, ""))
			st.refAmount(v, field)
		}
	case r&roleID != 0 && len(n) >= 3:
		st.add(Found{Class: ID, Value: n, Field: field, Part: part}, []key{tokenKey(n)})
	case r&(roleAccount|rolePhone) != 0:
		st.fieldValue(n, field, part, r)
	}
}

func (st *scanState) resolve(p string) string {
	if st.hint.HomeDir != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return path.Join(st.hint.HomeDir, p[1:])
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || st.hint.WorkingDir == "" {
		return path.Clean(p)
	}
	return path.Join(st.hint.WorkingDir, p)
}

// leaf scans text: hidden carriers, injected spans, values, lines.
func (st *scanState) leaf(s, field string, part Part) {
	if len(s) > st.budget {
		st.truncate(fmt.Sprintf("more than %d bytes of text", st.s.limits.MaxBytes))
		s = s[:st.budget]
		for len(s) > 0 && !utf8.RuneStart(s[len(s)-1]) {
			s = s[:len(s)-1]
		}
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	st.budget -= len(s)
	st.out.Bytes += len(s)
	if part == "" {
		part = PartBody
	}
	var spans []Span
	if st.mode == modeOutput {
		if label := st.keyLabel(st.key); label != "" {
			spans = st.s.det.detectKeyed(label, s, &st.dsc)
		} else {
			spans = st.s.det.detect(s, "", &st.dsc)
		}
		st.hidden = findHidden(s, st.hidden)
		for _, h := range st.hidden {
			hs := st.s.det.detect(h.text, h.kind, &detectScratch{})
			if h.base >= 0 {
				for _, sp := range hs {
					sp.Start, sp.End, sp.Tail = sp.Start+h.base, sp.End+h.base, sp.Tail+h.base
					spans = append(spans, sp)
				}
				continue
			}
			// Decoded text: its values are looked for in it alone.
			st.record(h.text, field, hs)
			st.values(h.text, field, part, hs, false)
		}
	}
	st.record(s, field, spans)
	st.values(s, field, part, spans, true)
	if st.mode != modeUser {
		st.fingerprint(s)
	}
	if st.mode == modeArgs && strings.IndexByte(s, '%') >= 0 {
		// Data carried percent-encoded in a URL (?notes=-%20pay%20rent…)
		// is the same data: its lines and values count as carried.
		for _, d := range unescaped(s) {
			st.values(d, field, part, nil, false)
			st.fingerprint(d)
		}
	}
	if st.mode == modeUser {
		st.userExclusions(s)
	}
	if st.mode == modeOutput {
		st.plainWords(s, spans)
		st.snapshotItems(s)
	}
	switch st.mode {
	case modeArgs:
		st.secretCandidates(s)
	case modeOutput:
		st.tokenCandidates(s)
	}
}

// maxPlainWords bounds the distinct plain words one output contributes.
const maxPlainWords = 2048

// plainWords keeps the words of s outside its injected spans.
func (st *scanState) plainWords(s string, spans []Span) {
	if len(st.out.plainWords) >= maxPlainWords {
		return
	}
	if st.plain == nil {
		st.plain = map[string]bool{}
	}
	st.toks = tokenize(s, 0, len(s), st.toks)
	for _, t := range st.toks {
		if len(t.text) < 4 || st.plain[t.text] {
			continue
		}
		inside := false
		for _, sp := range spans {
			if t.start >= sp.Start && t.start < sp.Tail {
				inside = true
				break
			}
		}
		if inside {
			continue
		}
		st.plain[t.text] = true
		st.out.plainWords = append(st.out.plainWords, t.text)
		if len(st.out.plainWords) >= maxPlainWords {
			return
		}
	}
}

// toolCalls marks the tool calls written into a JSON output ({"tool":
// "send_email", "arguments": {…}}, the detector's calls): the walk sees
// only their leaves, which alone ask for nothing. Each call, up to the end
// of its arguments, is an injected span, and its values are injected.
func (st *scanState) toolCalls(s, field string, part Part) {
	var spans []Span
	for _, m := range st.s.det.calls(s) {
		spans = append(spans, Span{Start: m[0], End: m[1], Tail: m[1], Why: "tool-call"})
	}
	if len(spans) == 0 {
		return
	}
	st.record(s, field, spans)
	st.values(s, field, part, spans, false)
}

// record keeps the injected spans of s.
func (st *scanState) record(s, field string, spans []Span) {
	for _, sp := range spans {
		if len(st.out.Injections) >= st.s.limits.MaxSpans {
			st.truncate(fmt.Sprintf("more than %d injected spans", st.s.limits.MaxSpans))
			return
		}
		text := squash(s[sp.Start:sp.End])
		st.out.Injections = append(st.out.Injections, Injection{
			Text: clip(text, 300), Field: field, Why: sp.Why, Lang: sp.Lang, Hidden: sp.Hidden,
			full: fold.String(clip(text, 2048)), weak: sp.Weak,
		})
		seen := map[string]bool{}
		for _, t := range st.out.terms {
			seen[t] = true
		}
		for _, t := range st.out.weakTerms {
			seen[t] = true
		}
		terms, concepts := st.s.det.terms(s, sp.Start, sp.End, &st.dsc, seen)
		if sp.Weak {
			st.out.weakTerms = append(st.out.weakTerms, terms...)
			st.out.weakConcepts = appendNew(st.out.weakConcepts, concepts...)
			continue
		}
		st.out.terms = append(st.out.terms, terms...)
		st.out.concepts = appendNew(st.out.concepts, concepts...)
	}
}

// values adds the values of s; those inside a span (or in the sentence
// right after it) are injected. Values of header lines ("From: …") take
// the header's part.
func (st *scanState) values(s, field string, part Part, spans []Span, headers bool) {
	st.hits = st.s.x.find(s, st.hits)
	var lines []headerLine
	if headers && (st.hint.Family == "email" || strings.Contains(s, ":")) {
		lines = headerLines(s)
	}
	for _, h := range st.hits {
		inj, weak := false, false
		for _, sp := range spans {
			if h.start >= sp.Start && h.start < sp.Tail {
				inj, weak = true, sp.Weak
				if !sp.Weak {
					break
				}
			}
		}
		p, f := part, field
		for _, hl := range lines {
			if h.start >= hl.start && h.start < hl.end {
				p, f = hl.part, joinField(field, hl.name)
				break
			}
		}
		d := h.display
		if h.class == Path {
			d = st.resolve(d)
			h.keys = []key{keyOf(Path, d)}
		}
		st.add(Found{Class: h.class, Value: d, Field: f, Part: p, Injected: inj, weak: weak}, h.keys)
	}
}

func joinField(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// add keeps a value once per scan; a second sighting can only mark it
// injected or move it to a header part.
func (st *scanState) add(f Found, keys []key) {
	if len(keys) == 0 || keys[0] == "" {
		return
	}
	if i, ok := st.seen[keys[0]]; ok {
		v := &st.out.Values[i]
		strong := (v.Injected && !v.weak) || (f.Injected && !f.weak)
		v.Injected = v.Injected || f.Injected
		v.weak = v.Injected && !strong
		v.plain = v.plain || !f.Injected
		if v.Part == PartBody && f.Part != PartBody {
			v.Part, v.Field = f.Part, f.Field
		}
		return
	}
	if len(st.out.Values) >= st.s.limits.MaxValues {
		st.truncate(fmt.Sprintf("more than %d values", st.s.limits.MaxValues))
		return
	}
	f.Value = clip(f.Value, maxValueLen)
	f.keys = keys
	f.plain = !f.Injected
	f.item = st.item
	st.seen[keys[0]] = len(st.out.Values)
	st.out.Values = append(st.out.Values, f)
}

// maxUnescaped bounds the query values of one string looked at decoded.
const maxUnescaped = 32

// unescaped returns the percent-decoded forms of s that differ from it:
// each value of a URL's query (a line of data is a whole value, without
// the URL before it), or s itself decoded.
func unescaped(s string) []string {
	var out []string
	if u, err := url.Parse(s); err == nil && u.RawQuery != "" {
		if q, err := url.ParseQuery(u.RawQuery); err == nil {
			for _, vs := range q {
				for _, v := range vs {
					if len(out) < maxUnescaped && v != "" {
						out = append(out, v)
					}
				}
			}
			return out
		}
	}
	if d, err := url.QueryUnescape(s); err == nil && d != s {
		out = append(out, d)
	}
	return out
}

// fingerprint keeps hashes of s's substantial lines, so a later call that
// carries one of them (a key file's line pasted into a mail) is known to
// carry this output's data.
func (st *scanState) fingerprint(s string) {
	for len(s) > 0 && len(st.out.lines) < st.s.limits.MaxLines {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if h, ok := lineHash(line); ok && !st.lineOK[h] {
			st.lineOK[h] = true
			st.out.lines = append(st.out.lines, h)
		}
	}
}

// lineHash hashes a line's text, white space squashed and folded, when it
// is long enough to be data rather than a common phrase. It allocates
// only for non-ASCII text.
func lineHash(line string) (uint64, bool) {
	const offset, prime = 14695981039346656037, 1099511628211
	h, n, space := uint64(offset), 0, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(line[i:])
			i += size - 1
			var b strings.Builder
			fold.WriteRune(&b, r)
			for _, fc := range []byte(b.String()) {
				if space && n > 0 {
					h = (h ^ ' ') * prime
					n++
				}
				space = false
				h = (h ^ uint64(fc)) * prime
				n++
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			space = true
			continue
		}
		if space && n > 0 {
			h = (h ^ ' ') * prime
			n++
		}
		space = false
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = (h ^ uint64(c)) * prime
		n++
	}
	return h, n >= 20
}

func appendNew(list []string, xs ...string) []string {
	for _, x := range xs {
		found := false
		for _, y := range list {
			if y == x {
				found = true
				break
			}
		}
		if !found {
			list = append(list, x)
		}
	}
	return list
}

// headerLine is a "From: …" line of a text mail.
type headerLine struct {
	start, end int
	name       string
	part       Part
}

var headerNames = map[string]Part{
	"from": PartHeader, "sender": PartHeader, "reply-to": PartHeader, "von": PartHeader, "de": PartHeader,
	"da": PartHeader, "organizer": PartHeader, "organiser": PartHeader, "organisateur": PartHeader,
	"organizador": PartHeader, "organizzatore": PartHeader, "absender": PartHeader, "author": PartHeader,
	"to": PartParticipants, "cc": PartParticipants, "bcc": PartParticipants, "an": PartParticipants,
	"à": PartParticipants, "a": PartParticipants, "para": PartParticipants, "attendees": PartParticipants,
	"teilnehmer": PartParticipants, "participants": PartParticipants, "invités": PartParticipants,
	"asistentes": PartParticipants, "partecipanti": PartParticipants, "kopie": PartParticipants,
}

// headerLines finds mail-style header lines anywhere in s (forwarded and
// quoted mails carry their own).
func headerLines(s string) []headerLine {
	var out []headerLine
	off := 0
	for off < len(s) && len(out) < 64 {
		end := strings.IndexByte(s[off:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += off
		}
		line := s[off:end]
		t := strings.TrimLeft(line, " \t>*")
		if i := strings.IndexByte(t, ':'); i > 0 && i <= 14 {
			name := strings.ToLower(strings.TrimSpace(t[:i]))
			if p, ok := headerNames[name]; ok {
				out = append(out, headerLine{start: off, end: end, name: name, part: p})
			}
		}
		off = end + 1
	}
	return out
}

// parseDate reads a window bound: RFC 3339 or a bare date.
func parseDate(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	// Most values of these fields ("to": an address) are no date: a
	// failed time.Parse allocates its error, so look first.
	if len(v) < 10 || !isDigit(v[0]) || !isDigit(v[3]) || v[4] != '-' {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02"} {
		if at, err := time.Parse(layout, v); err == nil {
			return at, true
		}
	}
	return time.Time{}, false
}

// window returns the time window the call's arguments read, 0 if they
// give no closed window.
func (sc *Scan) window() time.Duration {
	if sc == nil || sc.winFrom.IsZero() || sc.winTo.IsZero() || !sc.winTo.After(sc.winFrom) {
		return 0
	}
	return sc.winTo.Sub(sc.winFrom)
}
