package flow

import (
	"regexp"
	"slices"
	"strings"
	"time"
)

// TableLimits bound a session's table. Defaults apply to zero fields.
type TableLimits struct {
	// MaxValues bounds the values kept. Past it, the oldest values seen
	// only in outputs or calls are evicted first (an eighth at a time);
	// the user's words and the mandate are never evicted; injected values
	// go last. Facts report how many were evicted, and a value that is
	// not found in a table that evicted counts as origin "unknown".
	MaxValues int
	// MaxInjections bounds the injected spans kept (oldest dropped).
	MaxInjections int
	// MaxTerms bounds the words of injected spans kept.
	MaxTerms int
	// MaxLines bounds the fingerprints of private and sensitive outputs.
	MaxLines int
	// MaxDecisions bounds the decisions remembered for their outputs'
	// sources (older ones are looked up by the caller again).
	MaxDecisions int
}

// DefaultTableLimits keep a busy session's table under about 2 MB.
var DefaultTableLimits = TableLimits{MaxValues: 4096, MaxInjections: 128, MaxTerms: 1024, MaxLines: 8192, MaxDecisions: 2048}

// Source is where a value was seen.
type Source struct {
	Origin        Origin    `json:"origin"`
	Trust         Trust     `json:"trust"`
	Tool          string    `json:"tool,omitempty"`
	DecisionID    string    `json:"decision_id,omitempty"`
	ObservationID string    `json:"observation_id,omitempty"`
	Reported      bool      `json:"reported,omitempty"`
	Field         string    `json:"field,omitempty"`
	Part          Part      `json:"part,omitempty"`
	Injected      bool      `json:"injected,omitempty"`
	Named         bool      `json:"named,omitempty"`
	Sensitive     bool      `json:"sensitive,omitempty"`
	Seq           int       `json:"seq,omitempty"`
	At            time.Time `json:"at"`
}

// seen records every kind of place a value turned up.
type seen uint16

const (
	seenUser seen = 1 << iota
	seenMandate
	seenOwn
	seenOpenHeader
	seenOpenParticipants
	seenOpenBody
	seenInjected
	seenCall
	seenNamed
	seenSensitive
	// seenPlain: some output had it outside an injected span.
	seenPlain
	// seenUnsubscribe: an output gave it as an unsubscribe link (a
	// List-Unsubscribe header, an unsubscribe_url field).
	seenUnsubscribe
	// seenNamedFile: the output of a read of the user's own file whose
	// path the user's words have (DecisionInfo.NamedFile) had it.
	seenNamedFile
)

// unsubscribeField reports whether a field path names an unsubscribe link
// ("headers.List-Unsubscribe", "unsubscribe_url").
func unsubscribeField(field string) bool {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		field = field[i+1:]
	}
	return strings.Contains(strings.ToLower(field), "unsubscribe")
}

type entry struct {
	class    Class
	display  string
	first    Source
	injected *Source // first injected sighting, if any
	named    *Source // first sighting in an item the user pointed to
	seen     seen
	order    int // insertion order, for eviction
	// excluded: the user's words have it only in clauses that rule it
	// out (exclude.go).
	excluded, userPlain bool
}

func (e *entry) pinned() bool { return e.seen&(seenUser|seenMandate) != 0 }

// DecisionInfo is what the table keeps of a decision, so that its output
// can be attributed when it is observed.
type DecisionInfo struct {
	ID     string
	Seq    int
	Tool   string
	Family string
	Kinds  []string
	Effect string
	// Trust is the trust of the call's output (see Trust).
	Trust Trust
	// Sensitive says the call read secrets or credentials (a sensitive
	// path, a credential command): its output is sensitive data.
	Sensitive bool
	// What names what was read, for reasons ("~/.aws/credentials").
	What string
	// Named says the call's target is something the user named (a path
	// in the mandate's scope, a value of the user's words): its output
	// is the user's pointed-to data.
	Named bool
	// NamedFile says the call reads a file whose path the user's words
	// have: its output is the file the user pointed to by its path.
	NamedFile bool
	// Targets are what the call changes or sends to (Targets); a denied
	// call's targets are remembered, so that reaching them again by
	// another tool or command shows as a retry.
	Targets []Target
	// Within are the places the call's arguments name it reads or acts
	// in (a channel history's channel_id): the items its output lists
	// are in them (container_keys in values.yaml).
	Within []string
	At     time.Time
}

// InjectionRecord is an injected span a session saw.
type InjectionRecord struct {
	Injection
	DecisionID    string    `json:"decision_id,omitempty"`
	ObservationID string    `json:"observation_id,omitempty"`
	Tool          string    `json:"tool,omitempty"`
	Seq           int       `json:"seq,omitempty"`
	At            time.Time `json:"at"`
}

// SensitiveRead is a read of secret or sensitive data.
type SensitiveRead struct {
	What       string `json:"what"`
	Tool       string `json:"tool"`
	DecisionID string `json:"decision_id"`
}

// Table is one session's flow state. It is not safe for concurrent use:
// the engine guards it with the session's lock.
type Table struct {
	limits TableLimits
	values map[key]*entry
	order  int
	// evicted counts values dropped for room; truncated counts outputs
	// not examined in full.
	evicted, truncated int

	injections []InjectionRecord
	injTerms   map[string]string // term → decision id
	injConcept map[string]string // concept → decision id
	userWords  map[string]bool
	userConc   map[string]bool
	// counts are the counts the user's words state (AddCounts).
	counts []UserCount
	// userExcl are words the user's words have only in clauses that
	// rule something out (exclude.go).
	userExcl map[string]bool
	// plainWords are words outputs had outside injected spans.
	plainWords map[string]bool

	// lines are fingerprints of private and sensitive outputs.
	lines map[uint64]lineSource
	// items are the names listings gave ids (items.go).
	items map[string]*listedItem
	// containers are ids listings gave only as a listed item's parent,
	// with the first item they hold.
	containers map[string]*listedItem

	decisions map[string]*DecisionInfo
	decOrder  []string

	// families used up to and including the first injected output.
	familiesBefore map[string]bool
	sensitive      []SensitiveRead
	refusals       []refusal
	openSeen       bool
	privateSeen    bool
	// namedRefs are the kinds of amount the user's words name by what
	// they are (index → name), refAmounts what outputs gave for them
	// (amountref.go).
	namedRefs  map[int]string
	refAmounts map[int][]refAmount
	// prepared is what allowed writes and payments that named listed,
	// priced items (cart additions) committed, by currency; preparedIDs
	// the items counted (items.go).
	prepared    map[string]float64
	preparedIDs map[string]bool
	// windows is, per tool, the widest time window its calls read before
	// any injected output (at most maxWindowTools tools).
	windows map[string]windowRead
}

// windowRead is a time window a tool's call read, and the call.
type windowRead struct {
	width    time.Duration
	decision string
}

// maxWindowTools bounds Table.windows.
const maxWindowTools = 64

// widenFactor: a read after an injection over a window this many times
// the tool's widest before it is flow.window_widened ("tomorrow's
// meetings" read for a day, then the month an injected text asked for).
const widenFactor = 7

type lineSource struct {
	decision  string
	sensitive bool
}

// NewTable returns an empty table; zero limits take their defaults.
func NewTable(l TableLimits) *Table {
	d := DefaultTableLimits
	for _, p := range []struct{ dst, src *int }{
		{&d.MaxValues, &l.MaxValues}, {&d.MaxInjections, &l.MaxInjections}, {&d.MaxTerms, &l.MaxTerms},
		{&d.MaxLines, &l.MaxLines}, {&d.MaxDecisions, &l.MaxDecisions},
	} {
		if *p.src > 0 {
			*p.dst = *p.src
		}
	}
	return &Table{
		limits: d, values: map[key]*entry{}, injTerms: map[string]string{}, injConcept: map[string]string{},
		userWords: map[string]bool{}, userConc: map[string]bool{}, lines: map[uint64]lineSource{}, plainWords: map[string]bool{},
		decisions: map[string]*DecisionInfo{}, familiesBefore: map[string]bool{},
	}
}

// AddWords records the user's words: their values (origin user, never
// evicted), their words and the concepts they name.
func (t *Table) AddWords(sc *Scan, concepts []string, at time.Time) {
	for _, v := range sc.Values {
		t.add(v, Source{Origin: OriginUser, Trust: TrustUser, Field: "instructions", At: at}, seenUser)
		if e := t.values[v.keys[0]]; e != nil {
			// Ruled out while no instruction asks for it.
			e.userPlain = e.userPlain || !v.Excluded
			e.excluded = !e.userPlain

		}
	}
	for _, w := range sc.words {
		if len(t.userWords) < 8192 {
			t.userWords[w] = true
		}
	}
	for _, w := range sc.excludedWords {
		if t.userExcl == nil {
			t.userExcl = map[string]bool{}
		}
		if len(t.userExcl) < 1024 {
			t.userExcl[w] = true
		}
	}
	for _, c := range concepts {
		t.userConc[c] = true
	}
	t.userRefs(sc)
}

// MandateValue is a resource a structured mandate names.
type MandateValue struct {
	Class Class
	Value string
	Field string // recipients, hosts, accounts, paths
}

// AddMandate records a structured mandate's scope (origin mandate, never
// evicted). Patterns ("*@corp.example") are not values and are skipped.
func (t *Table) AddMandate(vals []MandateValue, at time.Time) {
	for _, mv := range vals {
		if strings.ContainsAny(mv.Value, "*?[") {
			continue
		}
		k := keyOf(mv.Class, mv.Value)
		if k == "" {
			continue
		}
		t.add(Found{Class: mv.Class, Value: mv.Value, keys: []key{k}}, Source{Origin: OriginMandate, Trust: TrustUser, Field: mv.Field, At: at}, seenMandate)
	}
}

// Decided records a decision and the values of its arguments that the
// session had not seen: their origin is the call itself.
func (t *Table) Decided(info DecisionInfo, args *Scan) {
	if args != nil && len(t.injections) == 0 {
		// Words the agent chose before any injection are its own.
		for _, w := range args.selectorWords {
			if len(t.plainWords) < t.limits.MaxTerms*16 {
				t.plainWords[w] = true
			}
		}
	}
	if args != nil && info.Within == nil && len(args.within) > 0 {
		info.Within = slices.Clone(args.within)
	}
	if w := args.window(); w > 0 && len(t.injections) == 0 && info.Tool != "" {
		if t.windows == nil {
			t.windows = map[string]windowRead{}
		}
		if prev, ok := t.windows[info.Tool]; (ok && w > prev.width) || (!ok && len(t.windows) < maxWindowTools) {
			t.windows[info.Tool] = windowRead{width: w, decision: info.ID}
		}
	}
	t.remember(info)
	if info.Effect == "deny" {
		t.refused(info)
	}
	if args == nil {
		return
	}
	t.prepare(info, args)
	for _, v := range args.Values {
		t.add(v, Source{Origin: OriginCall, Trust: TrustOpen, Tool: info.Tool, DecisionID: info.ID, Field: v.Field, Seq: info.Seq, At: info.At}, seenCall)
	}
}

func (t *Table) remember(info DecisionInfo) {
	if info.ID == "" {
		return
	}
	if _, ok := t.decisions[info.ID]; !ok {
		t.decOrder = append(t.decOrder, info.ID)
	}
	cp := info
	t.decisions[info.ID] = &cp
	if len(t.decOrder) > t.limits.MaxDecisions {
		drop := t.decOrder[:len(t.decOrder)-t.limits.MaxDecisions]
		for _, id := range drop {
			delete(t.decisions, id)
		}
		t.decOrder = append(t.decOrder[:0], t.decOrder[len(drop):]...)
	}
	if len(t.injections) == 0 && info.Family != "" {
		t.familiesBefore[info.Family] = true
	}
}

// Decision returns what the table remembers of a decision.
func (t *Table) Decision(id string) (DecisionInfo, bool) {
	d, ok := t.decisions[id]
	if !ok {
		return DecisionInfo{}, false
	}
	return *d, true
}

// Observation is an observed output to merge.
type Observation struct {
	ID         string
	DecisionID string
	Reported   bool
	At         time.Time
	Scan       *Scan
	// Info is the decision the output belongs to; the caller fills it
	// from Decision, or from its store when the table no longer has it.
	Info DecisionInfo
}

// withoutWeak returns the scan as it reads in content that is not open:
// spans marked by their shape alone (Span.Weak) address the user there,
// so they and what they marked are not injected.
func (sc *Scan) withoutWeak() *Scan {
	if !slices.ContainsFunc(sc.Injections, func(in Injection) bool { return in.weak }) {
		return sc
	}
	cp := *sc
	cp.Injections = nil
	for _, in := range sc.Injections {
		if !in.weak {
			cp.Injections = append(cp.Injections, in)
		}
	}
	cp.Values = slices.Clone(sc.Values)
	for i := range cp.Values {
		if v := &cp.Values[i]; v.Injected && v.weak {
			v.Injected, v.weak, v.plain = false, false, true
		}
	}
	cp.weakTerms, cp.weakConcepts = nil, nil
	return &cp
}

// Observed merges an output's scan: its values with their first source,
// its injected spans, its lines when the output is private or sensitive.
func (t *Table) Observed(o Observation) {
	sc, info := o.Scan, o.Info
	if sc == nil {
		return
	}
	if info.ID == "" {
		info.ID = o.DecisionID
	}
	if info.Trust == "" {
		info.Trust = TrustOpen
	}
	if info.Trust != TrustOpen {
		sc = sc.withoutWeak()
	}
	if d, ok := t.decisions[info.ID]; ok && info.Within == nil {
		// The places the call read come from its arguments, which the
		// table saw when it was decided (a replay hands the info over
		// as built from the stored decision, without them).
		info.Within = d.Within
	}
	if sc.Truncated != "" {
		t.truncated++
	}
	t.addItems(sc, info)
	t.observedRefs(sc, info)
	hasSecret := false
	for _, v := range sc.Values {
		if v.Class == Secret {
			hasSecret = true
			break
		}
	}
	sensitive := info.Sensitive || hasSecret
	if sensitive {
		what := info.What
		if what == "" {
			what = "the output of " + info.Tool
		}
		if len(t.sensitive) < 64 && !slices.ContainsFunc(t.sensitive, func(s SensitiveRead) bool { return s.DecisionID == info.ID }) {
			t.sensitive = append(t.sensitive, SensitiveRead{What: what, Tool: info.Tool, DecisionID: info.ID})
		}
	}
	switch info.Trust {
	case TrustOpen:
		t.openSeen = true
	case TrustOwn:
		t.privateSeen = true
	}
	if sensitive {
		t.privateSeen = true
	}
	// Injections first, so that the family bookkeeping sees the output
	// that carried the first one.
	for _, in := range sc.Injections {
		if len(t.injections) == 0 && info.Family != "" {
			t.familiesBefore[info.Family] = true
		}
		t.injections = append(t.injections, InjectionRecord{Injection: in, DecisionID: info.ID, ObservationID: o.ID, Tool: info.Tool, Seq: info.Seq, At: o.At})
	}
	if n := len(t.injections) - t.limits.MaxInjections; n > 0 {
		t.injections = append(t.injections[:0], t.injections[n:]...)
	}
	for _, w := range slices.Concat(sc.terms, sc.weakTerms) {
		if _, ok := t.injTerms[w]; !ok && len(t.injTerms) < t.limits.MaxTerms {
			t.injTerms[w] = info.ID
		}
	}
	for _, c := range slices.Concat(sc.concepts, sc.weakConcepts) {
		if _, ok := t.injConcept[c]; !ok {
			t.injConcept[c] = info.ID
		}
	}
	for _, w := range sc.plainWords {
		if len(t.plainWords) >= t.limits.MaxTerms*16 {
			break
		}
		t.plainWords[w] = true
	}
	namedItems := t.namedItems(sc)
	for _, v := range sc.Values {
		named := info.Named || namedItems[0] || (v.item != 0 && namedItems[v.item])
		bits := seen(0)
		switch {
		case info.Trust == TrustOwn:
			bits |= seenOwn
		case v.Part == PartHeader:
			bits |= seenOpenHeader
		case v.Part == PartParticipants:
			bits |= seenOpenParticipants
		default:
			bits |= seenOpenBody
		}
		if v.Injected {
			bits |= seenInjected
		}
		if v.plain {
			bits |= seenPlain
		}
		if named && !v.Injected {
			bits |= seenNamed
		}
		if sensitive {
			bits |= seenSensitive
		}
		if info.NamedFile && info.Trust == TrustOwn && !v.Injected {
			bits |= seenNamedFile
		}
		if v.Class == URL && unsubscribeField(v.Field) {
			bits |= seenUnsubscribe
		}
		t.add(v, Source{
			Origin: OriginOutput, Trust: info.Trust, Tool: info.Tool, DecisionID: info.ID, ObservationID: o.ID,
			Reported: o.Reported, Field: v.Field, Part: v.Part, Injected: v.Injected, Named: named && !v.Injected,
			Sensitive: sensitive, Seq: info.Seq, At: o.At,
		}, bits)
	}
	if sensitive {
		// The secret-shaped tokens of a sensitive read are its secrets,
		// whether or not a detector knows their shape.
		src := Source{Origin: OriginOutput, Trust: info.Trust, Tool: info.Tool, DecisionID: info.ID, ObservationID: o.ID,
			Reported: o.Reported, Sensitive: true, Seq: info.Seq, At: o.At}
		for _, k := range sc.tokenKeys {
			hash := strings.TrimPrefix(string(k), kSecret)
			t.add(Found{Class: Secret, Value: "[REDACTED:sensitive_token:" + hash + "]", keys: []key{k}}, src, seenOwn|seenSensitive)
		}
	}
	if sensitive || info.Trust == TrustOwn {
		for _, h := range sc.lines {
			if len(t.lines) >= t.limits.MaxLines {
				break
			}
			if prev, ok := t.lines[h]; !ok || (!prev.sensitive && sensitive) {
				t.lines[h] = lineSource{decision: info.ID, sensitive: sensitive}
			}
		}
	}
}

// namedItems are the items of an output (the mails of a search result,
// or 0 for the whole output) whose sender, author or organiser is someone
// the user named: a word of their name or address is among the user's
// words ("Dana" for "Dana Smith <dana@corp.example>"). Only the values
// of a named item come from what the user pointed to; the other mails of
// the same search result do not.
func (t *Table) namedItems(sc *Scan) map[int]bool {
	out := map[int]bool{}
	if len(t.userWords) == 0 {
		return out
	}
	for _, v := range sc.Values {
		if v.Part != PartHeader || v.Injected || out[v.item] {
			continue
		}
		if t.headerValueNamed(v) {
			out[v.item] = true
		}
	}
	return out
}

// headerValueNamed: the user's words name this header value.
func (t *Table) headerValueNamed(v Found) bool {
	if k := v.keys; len(k) > 0 {
		if e, ok := t.values[k[0]]; ok && e.seen&(seenUser|seenMandate) != 0 {
			return true
		}
	}
	text := v.Value
	if v.Class == Email {
		text, _, _ = strings.Cut(text, "@")
	}
	return t.headerNamed(text, false)
}

// headerNamed: a word of a sender, author or organiser (three letters at
// least, not one of genericWord) is among the user's words — with stems,
// by stem when it has five letters or more ("den Stadtwerken" names
// "Stadtwerke Leipzig GmbH").
func (t *Table) headerNamed(text string, stems bool) bool {
	if strings.Contains(text, "@") {
		// An address names its owner by its local part, not by its
		// domain ("lena.hoffmann@kanso-design.de" is Lena's).
		text = addressDomainRE.ReplaceAllString(text, "")
	}
	for _, tk := range tokenize(text, 0, len(text), nil) {
		if len(tk.text) < 3 || genericWord[tk.text] {
			continue
		}
		if t.userWords[tk.text] || (stems && len(tk.text) >= 5 && t.userHasStem(tk.text)) {
			return true
		}
	}
	return false
}

// genericWord are address and company-name parts too common to name
// anyone.
var genericWord = map[string]bool{
	"info": true, "noreply": true, "no": true, "reply": true, "mail": true, "team": true, "support": true,
	"hello": true, "contact": true, "admin": true, "billing": true, "service": true, "news": true, "the": true,
	"gmbh": true, "ltd": true, "inc": true, "llc": true, "plc": true, "sarl": true, "srl": true, "spa": true,
}

// addressDomainRE is the domain of an e-mail address in a header field.
var addressDomainRE = regexp.MustCompile(`@[^\s>,;]+`)

// add merges one sighting of a value.
func (t *Table) add(v Found, src Source, bits seen) {
	if len(v.keys) == 0 || v.keys[0] == "" {
		return
	}
	k := v.keys[0]
	e, ok := t.values[k]
	if !ok {
		if len(t.values) >= t.limits.MaxValues {
			t.evict()
		}
		t.order++
		e = &entry{class: v.Class, display: v.Value, first: src, order: t.order}
		t.values[k] = e
		// Other keys (an amount's bare number) point at the same entry.
		for _, k2 := range v.keys[1:] {
			if _, ok := t.values[k2]; !ok && k2 != "" {
				t.values[k2] = e
			}
		}
	}
	e.seen |= bits
	if src.Injected && e.injected == nil {
		cp := src
		e.injected = &cp
	}
	if src.Named && e.named == nil {
		cp := src
		e.named = &cp
	}
}

// evict drops an eighth of the table: the oldest plain values first, then
// the oldest injected ones; never the user's words or the mandate.
func (t *Table) evict() {
	type cand struct {
		k     key
		order int
		inj   bool
	}
	var cs []cand
	for k, e := range t.values {
		if !e.pinned() {
			cs = append(cs, cand{k, e.order, e.seen&seenInjected != 0})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.inj != b.inj {
			if a.inj {
				return 1
			}
			return -1
		}
		return a.order - b.order
	})
	n := max(1, t.limits.MaxValues/8)
	for i := 0; i < n && i < len(cs); i++ {
		delete(t.values, cs[i].k)
		t.evicted++
	}
}

// Len is the number of keys in the table.
func (t *Table) Len() int { return len(t.values) }

// Snapshot is a session's flow table as a reader sees it (GET
// /v1/sessions/{id}/flow): its values with their first source, oldest
// first, and what the session saw.
type Snapshot struct {
	Values        []SnapshotValue   `json:"values"`
	SeenInjection bool              `json:"seen_injection"`
	Injections    []InjectionRecord `json:"injections"`
	SensitiveRead []SensitiveRead   `json:"sensitive_read"`
	OpenSeen      bool              `json:"open_content_seen"`
	PrivateRead   bool              `json:"private_data_read"`
	// Truncated counts outputs not examined in full; Evicted the values
	// dropped for room; More the values past the snapshot's limit.
	Truncated int `json:"truncated"`
	Evicted   int `json:"evicted"`
	More      int `json:"more"`
}

// SnapshotValue is one value with where it first appeared. Secrets show
// as their redaction marker only.
type SnapshotValue struct {
	Value       string `json:"value"`
	Class       Class  `json:"class"`
	First       Source `json:"first"`
	Injected    bool   `json:"injected"`
	InUserWords bool   `json:"in_user_words"`
	Sensitive   bool   `json:"sensitive"`
}

// Snapshot lists at most limit values (oldest first) and the session
// facts. Keys that alias one value (an amount's bare number) are listed
// once.
func (t *Table) Snapshot(limit int) *Snapshot {
	s := &Snapshot{
		Values: []SnapshotValue{}, SeenInjection: len(t.injections) > 0, Injections: append([]InjectionRecord{}, t.injections...),
		SensitiveRead: append([]SensitiveRead{}, t.sensitive...), OpenSeen: t.openSeen, PrivateRead: t.privateSeen,
		Truncated: t.truncated, Evicted: t.evicted,
	}
	seen := map[*entry]bool{}
	es := make([]*entry, 0, len(t.values))
	for _, e := range t.values {
		if !seen[e] {
			seen[e] = true
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b *entry) int { return a.order - b.order })
	for _, e := range es {
		if len(s.Values) >= limit {
			s.More++
			continue
		}
		s.Values = append(s.Values, SnapshotValue{
			Value: e.display, Class: e.class, First: e.first, Injected: e.injected != nil && !e.pinned(),
			InUserWords: e.pinned(), Sensitive: e.seen&seenSensitive != 0,
		})
	}
	return s
}
