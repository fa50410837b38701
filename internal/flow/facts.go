package flow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/fold"
)

// Facts are what policy sees of a call's flow, as the variable `flow`.
// Field names are the JSON names; docs/policy.md lists them.
type Facts struct {
	// Values are the call's consequential values — recipients, hosts and
	// URLs, accounts, amounts, paths written, deleted or run (and paths
	// read, with role "path" and field "read") — each with its first
	// source.
	Values []ValueFacts `json:"values"`
	// Injected: some value of the call came from an injected span and
	// never from the user's words or the mandate.
	Injected bool `json:"injected"`
	// FollowsInjection names what in the call came from an injected
	// request: a value, a word of a query or pattern, or the tool's own
	// object ("contacts"). Empty when nothing did.
	FollowsInjection []string `json:"follows_injection"`
	// Carries are the decisions whose outputs' data (values, lines) the
	// call's arguments carry; CarriesSensitive and CarriesPrivate say
	// whether any of it came from a sensitive read or the user's own data.
	Carries          []string `json:"carries"`
	CarriesSensitive bool     `json:"carries_sensitive"`
	CarriesPrivate   bool     `json:"carries_private"`
	// SeenInjection: an output of this session carried an instruction to
	// the model; Injections are the latest of them.
	SeenInjection bool              `json:"seen_injection"`
	Injections    []InjectionRecord `json:"injections"`
	// OpenContentSeen: the session read open content (received mail, web
	// pages, third-party files). PrivateDataRead: it read the user's own
	// data or secrets. SensitiveRead lists the secret or sensitive reads.
	OpenContentSeen bool            `json:"open_content_seen"`
	PrivateDataRead bool            `json:"private_data_read"`
	SensitiveRead   []SensitiveRead `json:"sensitive_read"`
	// LethalTrifecta: private data read, open content seen, and this call
	// sends something out (a send, a payment, a fetch that carries data).
	LethalTrifecta bool `json:"lethal_trifecta"`
	// Related says the call's tool fits the task: its family was in use
	// before the first injection, or it names what the user's words name,
	// or every kind it has the mandate grants explicitly, or its values
	// are the user's own words.
	Related bool `json:"related"`
	// UnnamedObjects are the concepts the tool's name names ("contacts"
	// for list_contacts) that the user's words do not: a call that reads
	// the whole address book when the user named two guests.
	UnnamedObjects []string `json:"unnamed_objects"`
	// OpenBody are the call's recipients, accounts and destination hosts
	// first seen in the body of open content — not its sender, organiser
	// or participants — and never in the user's words or the mandate.
	OpenBody []string `json:"open_body"`
	// Retries are earlier denied calls whose targets this call reaches
	// again (circumvention after a deny).
	Retries []Retry `json:"retries"`
	// Items are the listed items the call names by id, with the name
	// their listing gave them (items.go).
	Items []ItemFacts `json:"items"`
	// Containers are the ids the call names that a listing gave only as
	// the parent folder of a listed item (items.go): sharing, moving or
	// deleting the folder that holds the report the user named.
	Containers []ContainerFacts `json:"containers"`
	// Truncated: an output of the session was not examined in full.
	// Evicted: values the table dropped for room.
	Truncated bool `json:"truncated"`
	Evicted   int  `json:"evicted"`
	// AmountDiffers says why a payment's amount is not the one the user
	// named by what it is ("the minimum": 35 in minimum_due of the output
	// of get_accounts, and the call pays 2340.18); "" when it is, or when
	// the user named none (amountref.go).
	AmountDiffers string `json:"amount_differs"`
	// WindowWidened says why the call's time window is not the task's:
	// after an injected text, the tool reads a window at least seven
	// times the widest it read before ("list_events reads 31 days, 31
	// times the 1 day it read (decision 01a2…) before the text injected
	// into the output of list_events (decision 01a3…)"); "" otherwise.
	WindowWidened string `json:"window_widened"`
	// PreparedSpend is what the session's allowed cart additions (writes
	// and payments naming listed items by id) committed at the listings'
	// prices, by currency ("" when the listing named none): a basket the
	// payment will pay, before any payment states an amount (items.go).
	PreparedSpend map[string]float64 `json:"prepared_spend"`
	// UserCounts are the counts the user's words state ("buy 2 packs",
	// "book one room", "delete the two drafts"; mandate.WordCounts).
	UserCounts []UserCount `json:"user_counts"`
	// Quantity is the largest number of items the call's arguments say
	// it acts on (a quantity, a number of rooms, the length of a list of
	// messages or recipients; values.yaml `quantities`), 0 when none;
	// Quantities are each of them with the count the words state for it.
	Quantity   int             `json:"quantity"`
	Quantities []QuantityFacts `json:"quantities"`

	table   *Table
	secrets []CarriedSecret
}

// CarriedSecret is a secret the session read that a call's arguments carry
// in clear, with the redaction marker it was kept as.
type CarriedSecret struct{ Clear, Marker string }

// CarriedSecrets are the secrets the call carries in clear, so the caller
// can redact them before the call is stored: a bare key has none of the
// context the redactor's detectors look for.
func (f *Facts) CarriedSecrets() []CarriedSecret {
	if f == nil {
		return nil
	}
	return f.secrets
}

// ValueFacts is one of a call's values with its provenance.
type ValueFacts struct {
	// Value as shown (secrets as their redaction marker).
	Value string `json:"value"`
	// Role is recipient, host, url, account, amount or path.
	Role string `json:"role"`
	// Field is where in the call: to, cc, bcc, channel, url, write, read …
	Field  string `json:"field"`
	Class  Class  `json:"class"`
	Origin Origin `json:"origin"`
	Trust  Trust  `json:"trust"`
	// Injected: it came from an injected span, and never from the user.
	Injected bool `json:"injected"`
	// Part of the item it was first seen in (header, participants, body).
	Part Part `json:"part,omitempty"`
	// Named: it came from an item the user pointed to (a file in the
	// mandate's scope, a mail from someone the user named), not injected.
	Named bool `json:"named"`
	// NamedFile: it came from a file of the user's own whose path the
	// user's words have ("invite everyone in ~/Documenti/classe.csv"),
	// not injected: what the user pointed to by its very path, not a
	// search for a name that may find someone else.
	NamedFile bool `json:"named_file"`
	// InUserWords: the user's words or the mandate have it (and the
	// words not only where they rule it out).
	InUserWords bool `json:"in_user_words"`
	// Excluded: the user's words have it only in a clause that rules it
	// out ("refund 30 €, not the 45 they asked for", "everyone except
	// bob@corp.example"), and the mandate does not name it.
	Excluded bool `json:"excluded"`
	// InHeader: some output has it as a sender, author, organiser or
	// participant.
	InHeader bool `json:"in_header"`
	// SeenOwn: some output of the user's own data has it.
	SeenOwn bool `json:"seen_own"`
	// OpenBodyOnly: every output that has it is open content, in the body.
	OpenBodyOnly bool `json:"open_body_only"`
	// ListedAs is the channel or user the user's words name ("#general")
	// that a listing gave this id as its name ({"id":"C01GEN","name":
	// "general"}): the id is the one the user named, spelled as the tool
	// needs it. Empty when no listing did, or the name is injected.
	ListedAs string `json:"listed_as"`
	// SenderOf is the id of an item the call names (the thread a reply
	// is in, the message forwarded) whose listing shows this recipient as
	// the item's own sender, author or organiser: a reply to whoever wrote
	// the item the task is about. Empty for other values and recipients.
	SenderOf string `json:"sender_of"`
	// ThreadOf is the id of an item the call names (the thread a reply
	// is in, "thread_ts") that was listed by reading this very channel
	// (its history, by the channel's id): a reply in a thread that stays
	// in the thread's own channel. Empty for other values, and when the
	// thread was listed in another channel.
	ThreadOf string `json:"thread_of"`
	// UnsubscribeLink: an output gave it as an unsubscribe link (a mail's
	// List-Unsubscribe header), and the user's words neither have it nor
	// ask to unsubscribe. Fetching such a link changes the user's
	// subscriptions; it does not read anything.
	UnsubscribeLink bool `json:"unsubscribe_link"`
	// Sensitive: it came from a sensitive read.
	Sensitive     bool   `json:"sensitive"`
	Tool          string `json:"tool,omitempty"`
	DecisionID    string `json:"decision_id,omitempty"`
	ObservationID string `json:"observation_id,omitempty"`
	// Provenance says it for a reason: "came from an instruction injected
	// into the output of read_email (decision 01a2…)".
	Provenance string `json:"provenance"`
}

// CallInput is a call to build facts for.
type CallInput struct {
	Action *action.Action
	// Args is the call's argument scan (Scanner.Args).
	Args *Scan
	// Granted are the kinds the mandate grants explicitly.
	Granted []string
	// ToolConcepts are the concepts the tool's name names
	// (Detector.Concepts), precomputed by the caller.
	ToolConcepts []string
}

// maxFactValues bounds the values reported for one call.
const maxFactValues = 64

// Facts builds the flow facts of a call: a map lookup per value.
func (t *Table) Facts(in CallInput) *Facts {
	f := &Facts{
		table: t, SeenInjection: len(t.injections) > 0, OpenContentSeen: t.openSeen,
		PrivateDataRead: t.privateSeen, Truncated: t.truncated > 0, Evicted: t.evicted,
		SensitiveRead: t.sensitive, Values: []ValueFacts{}, FollowsInjection: []string{}, UnnamedObjects: []string{}, Carries: []string{},
		OpenBody: []string{}, Injections: []InjectionRecord{}, Items: []ItemFacts{}, Containers: []ContainerFacts{},
		PreparedSpend: map[string]float64{}, Quantities: []QuantityFacts{},
	}
	for c, v := range t.prepared {
		f.PreparedSpend[c] = v
	}
	f.Retries = t.retries(in.Action)
	if in.Action != nil {
		f.AmountDiffers = t.amountDiffers(in.Action)
	}
	if n := len(t.injections); n > 0 {
		f.Injections = t.injections[max(0, n-8):]
		if in.Action != nil {
			f.WindowWidened = t.windowWidened(in.Action.Tool, in.Args)
		}
	}
	a := in.Action
	if a == nil {
		a = &action.Action{}
	}
	add := func(role, field string, c Class, v string, keys []key) {
		if len(f.Values) >= maxFactValues || len(keys) == 0 || keys[0] == "" {
			return
		}
		vf := t.valueFacts(v, c, keys)
		vf.Role, vf.Field = role, field
		f.Values = append(f.Values, vf)
	}
	for _, r := range a.Recipients {
		c := recipientClass(r.Address)
		add("recipient", r.Field, c, r.Address, []key{keyOf(c, r.Address)})
	}
	for _, h := range a.Hosts {
		add("host", "host", Host, h, []key{keyOf(Host, h)})
	}
	for _, u := range a.URLs {
		add("url", "url", URL, u, urlKeys(u))
	}
	for _, acc := range a.Accounts {
		add("account", "account", Account, acc, []key{keyOf(Account, acc)})
	}
	for _, am := range a.Amounts {
		add("amount", "amount", Amount, formatAmount(am), amountKeys(am.Value, am.Currency))
	}
	for _, p := range a.Paths {
		add("path", string(p.Access), Path, p.Path, pathKeys(p.Path))
	}
	consequential := func(v *ValueFacts) bool {
		switch v.Role {
		case "recipient", "account", "amount", "host":
			return true
		case "path":
			return v.Field != "read"
		}
		return false
	}
	for i := range f.Values {
		v := &f.Values[i]
		if v.Injected {
			if consequential(v) {
				f.Injected = true
			}
			f.FollowsInjection = appendNew(f.FollowsInjection, v.Value)
		}
		if v.OpenBodyOnly && !v.InUserWords && v.ListedAs == "" && (v.Role == "recipient" || v.Role == "account" || (v.Role == "host" && sendsOrPays(a))) {
			f.OpenBody = appendNew(f.OpenBody, v.Value)
		}
	}
	t.argFacts(f, in)
	t.itemFacts(f, in.Args)
	t.quantityFacts(f, in.Args) // after the items: their pack sizes
	t.containerFacts(f, in.Args)
	for i := range f.Values {
		if v := &f.Values[i]; v.Role == "recipient" && len(f.Items) > 0 {
			v.SenderOf = t.senderOfItem(f, v.Value)
			if v.Class == Handle {
				v.ThreadOf = t.threadOf(f, v.Value)
			}
		}
	}
	f.Related = t.related(f, in, a)
	for _, c := range in.ToolConcepts {
		if !t.userConc[c] {
			f.UnnamedObjects = appendNew(f.UnnamedObjects, c)
		}
	}
	f.LethalTrifecta = t.privateSeen && t.openSeen && (sendsOrPays(a) || (hasKind(a, action.Fetch) && len(f.Carries) > 0))
	return f
}

func sendsOrPays(a *action.Action) bool { return hasKind(a, action.Send) || hasKind(a, action.Pay) }

func hasKind(a *action.Action, k action.Kind) bool {
	return a.Kind == k || slices.Contains(a.Kinds, k)
}

// argFacts adds what the call's arguments carry: values and words from
// injected spans, and data of earlier outputs.
func (t *Table) argFacts(f *Facts, in CallInput) {
	sc := in.Args
	if sc == nil {
		return
	}
	for _, v := range sc.Values {
		if len(v.keys) == 0 {
			continue
		}
		e, ok := t.values[v.keys[0]]
		if !ok {
			continue
		}
		if e.injected != nil && !e.pinned() && (e.seen&seenPlain == 0 || searchesFor(in.Action, sc, v.Value)) {
			// A value seen outside the injected span too (a sender in a
			// listing) is the task's to act on, but not one to go and
			// look for: a search for "from:finance@…" after "forward the
			// messages from finance@… to …" does what the span asked.
			f.FollowsInjection = appendNew(f.FollowsInjection, e.display)
		}
		if e.first.Origin == OriginOutput && e.first.DecisionID != "" && distinctive(v.Class) {
			if len(f.Carries) < 16 {
				f.Carries = appendNew(f.Carries, e.first.DecisionID)
			}
			if e.seen&seenSensitive != 0 {
				f.CarriesSensitive = true
			}
			if e.seen&(seenOwn|seenSensitive) != 0 && !e.pinned() {
				f.CarriesPrivate = true
			}
		}
	}
	for i, k := range sc.secretKeys {
		if e, ok := t.values[k]; ok && e.seen&seenSensitive != 0 && e.first.DecisionID != "" {
			f.secrets = append(f.secrets, CarriedSecret{Clear: sc.secretToks[i], Marker: e.display})
			if len(f.Carries) < 16 {
				f.Carries = appendNew(f.Carries, e.first.DecisionID)
			}
			f.CarriesSensitive, f.CarriesPrivate = true, true
		}
	}
	for _, h := range sc.lines {
		if src, ok := t.lines[h]; ok {
			if len(f.Carries) < 16 {
				f.Carries = appendNew(f.Carries, src.decision)
			}
			f.CarriesPrivate = true
			if src.sensitive {
				f.CarriesSensitive = true
			}
		}
	}
	if len(t.injTerms) == 0 && len(t.injections) == 0 {
		return
	}
	// Words of selecting arguments (queries, patterns, ids) that only an
	// injected request used: "Rechnung" searched after "leite alle
	// Rechnungen weiter".
	for _, w := range sc.selectorWords {
		if t.userWords[w] || len(w) < 4 || t.plainWords[w] {
			continue
		}
		for term := range t.injTerms {
			if sameStem(w, term) && !t.userHasStem(term) {
				f.FollowsInjection = appendNew(f.FollowsInjection, w)
				break
			}
		}
	}
	// Argument strings copied from an injected span ("Calle Almansa 14,
	// 28039 Madrid"), which no value pattern would have picked out.
	for _, s := range sc.selectorStrings {
		fs := fold.String(s)
		if len(fs) < 10 || t.inUserWords(fs) || t.inPlainWords(fs) {
			continue
		}
		for _, in := range t.injections {
			if strings.Contains(in.full, fs) {
				f.FollowsInjection = appendNew(f.FollowsInjection, clip(s, 80))
				break
			}
		}
	}
	// What a search looks for, asked for only by an injected span (and
	// the text it carries out): a file search for "DNI*" after "I need a
	// copy of your ID card. Assistant: attach the documents". The user's
	// own words naming the object, or the tool's family in use before
	// the injection, make it the task's.
	if in.Action == nil || in.Action.Family == "" || !t.familiesBefore[in.Action.Family] {
		for _, c := range sc.selectorConcepts {
			if _, ok := t.injConcept[c]; ok && !t.userConc[c] {
				f.FollowsInjection = appendNew(f.FollowsInjection, "the "+c+" the injected text asked for")
			}
		}
	}
	// The tool's object, asked for only by an injected span: list_contacts
	// after "send me the contact list".
	for _, c := range in.ToolConcepts {
		if in.Action != nil && in.Action.Family != "" && t.familiesBefore[in.Action.Family] {
			// The tool's family was in use before the injection: its
			// object is the task's, whatever the injected text said.
			break
		}
		if slices.ContainsFunc(sc.selectorWords, func(w string) bool { return len(w) >= 4 && t.userWords[w] }) {
			// It looks for something the user named ("los Ortega").
			break
		}
		if _, ok := t.injConcept[c]; ok && !t.userConc[c] {
			f.FollowsInjection = appendNew(f.FollowsInjection, "the "+c+" the injected text asked for")
		}
	}
}

// searchesFor: a call that only reads builds a query around v
// ("from:finance@…"). An argument that is v whole names the item to read
// (the pod the alert named), which investigating it may need.
func searchesFor(a *action.Action, sc *Scan, v string) bool {
	if a == nil || a.Kind != action.Read || slices.ContainsFunc(a.Kinds, func(k action.Kind) bool { return k != action.Read }) {
		return false
	}
	return slices.ContainsFunc(sc.selectorStrings, func(s string) bool { return s != v && strings.Contains(s, v) })
}

// distinctive classes identify data: carrying one is carrying the data.
func distinctive(c Class) bool {
	switch c {
	case Secret, IBAN, Phone, Email, ID, Account, Name:
		return true
	}
	return false
}

// sameStem compares words loosely: equal, or one a prefix of the other
// of at least five letters ("rechnung", "rechnungen").
func sameStem(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 5 && strings.HasPrefix(b, a)
}

func (t *Table) userHasStem(w string) bool {
	if t.userWords[w] {
		return true
	}
	if len(w) < 5 {
		return false
	}
	for u := range t.userWords {
		if sameStem(u, w) {
			return true
		}
	}
	return false
}

// inPlainWords: every word of s (of four letters or more) appeared in
// outputs outside injected spans.
func (t *Table) inPlainWords(s string) bool {
	n := 0
	for _, tk := range tokenize(s, 0, len(s), nil) {
		if len(tk.text) < 4 {
			continue
		}
		if !t.plainWords[tk.text] && !t.userWords[tk.text] {
			return false
		}
		n++
	}
	return n > 0
}

func (t *Table) inUserWords(s string) bool {
	for _, tk := range tokenize(s, 0, len(s), nil) {
		if !t.userWords[tk.text] {
			return false
		}
	}
	return true
}

// related reports whether the call fits the task (see Facts.Related).
func (t *Table) related(f *Facts, in CallInput, a *action.Action) bool {
	if len(t.injections) == 0 {
		return true
	}
	if a.Family != "" && t.familiesBefore[a.Family] {
		return true
	}
	for _, c := range in.ToolConcepts {
		if t.userConc[c] {
			return true
		}
	}
	granted := 0
	for _, k := range a.Kinds {
		if slices.Contains(in.Granted, string(k)) {
			granted++
		}
	}
	if len(a.Kinds) > 0 && granted == len(a.Kinds) && !slices.ContainsFunc(a.Kinds, func(k action.Kind) bool { return k == action.Read || k == action.Fetch }) {
		return true
	}
	if len(f.Values) > 0 && !slices.ContainsFunc(f.Values, func(v ValueFacts) bool { return !v.InUserWords }) {
		return true
	}
	// A command whose program or arguments name what the user's words
	// name ("pip install pydantic" for "upgrade to pydantic v2").
	for _, c := range a.Commands {
		for _, arg := range c.Argv {
			for _, tk := range tokenize(arg, 0, min(len(arg), 256), nil) {
				if len(tk.text) >= 5 && t.userWords[tk.text] {
					return true
				}
			}
		}
	}
	return false
}

func recipientClass(addr string) Class {
	switch {
	case action.IsConversationID(addr):
		return Handle
	case strings.Contains(addr, "@") && strings.Contains(addr, "."):
		return Email
	case len(phoneDigits(addr)) >= 7 && strings.TrimLeft(addr, "+0123456789 ()-./") == "":
		return Phone
	}
	return Handle
}

func formatAmount(a action.Amount) string {
	s := strconv.FormatFloat(a.Value, 'f', -1, 64)
	if a.Currency != "" {
		s += " " + a.Currency
	}
	return s
}

// valueFacts looks a value up.
func (t *Table) valueFacts(display string, c Class, keys []key) ValueFacts {
	vf := ValueFacts{Value: clip(display, maxValueLen), Class: c, Origin: OriginCall, Trust: TrustOpen}
	var e *entry
	for _, k := range keys {
		if e = t.values[k]; e != nil {
			break
		}
	}
	if e == nil && c == Handle {
		// A channel or user may be an id in an output.
		e = t.values[tokenKey(display)]
	}
	if e == nil {
		if t.evicted > 0 || t.truncated > 0 {
			vf.Origin = OriginUnknown
			vf.Provenance = "was not found in what the session saw, which was not examined in full"
		} else {
			vf.Provenance = "first appears in this call"
		}
		return vf
	}
	if c == Secret || e.class == Secret {
		vf.Value = e.display
	}
	src := e.first
	vf.Origin, vf.Trust, vf.Part = src.Origin, src.Trust, src.Part
	vf.Tool, vf.DecisionID, vf.ObservationID = src.Tool, src.DecisionID, src.ObservationID
	// A value the user's words have only where they rule it out is not
	// one they asked for (exclude.go).
	vf.Excluded = e.excluded && e.seen&seenMandate == 0
	vf.InUserWords = e.seen&seenMandate != 0 || (e.seen&seenUser != 0 && !vf.Excluded)
	vf.InHeader = e.seen&(seenOpenHeader|seenOpenParticipants) != 0
	vf.SeenOwn = e.seen&seenOwn != 0
	vf.Sensitive = e.seen&seenSensitive != 0
	vf.UnsubscribeLink = e.seen&seenUnsubscribe != 0 && !vf.InUserWords && !t.userConc["unsubscribe"]
	vf.OpenBodyOnly = e.seen&seenOpenBody != 0 && e.seen&(seenOwn|seenOpenHeader|seenOpenParticipants|seenUser|seenMandate) == 0
	vf.Injected = e.injected != nil && !vf.InUserWords
	vf.Named = e.named != nil && !vf.Injected
	vf.NamedFile = e.seen&seenNamedFile != 0 && !vf.Injected
	if c == Handle && !vf.InUserWords && !vf.Injected {
		vf.ListedAs = t.listedAs(display)
	}
	switch {
	case vf.Excluded && !vf.Injected:
		vf.Provenance = "is one the user's words rule out"
	case vf.Injected:
		in := e.injected
		vf.Tool, vf.DecisionID, vf.ObservationID, vf.Trust = in.Tool, in.DecisionID, in.ObservationID, in.Trust
		vf.Provenance = "came from an instruction injected into the output of " + in.Tool + decisionRef(in.DecisionID)
	case vf.InUserWords:
		if src.Origin == OriginMandate {
			vf.Provenance = "is named in the mandate"
		} else {
			vf.Provenance = "is in the user's words"
		}
	case vf.Named:
		n := e.named
		vf.Tool, vf.DecisionID, vf.ObservationID, vf.Trust = n.Tool, n.DecisionID, n.ObservationID, n.Trust
		vf.Provenance = "comes from the output of " + n.Tool + decisionRef(n.DecisionID) + ", which the user pointed to"
	case vf.ListedAs != "":
		li := t.items[display]
		vf.Provenance = "is " + vf.ListedAs + ", which the user named, as listed by " + li.tool + decisionRef(li.decisionID)
	case src.Origin == OriginOutput && vf.OpenBodyOnly:
		vf.Provenance = "first appeared in the body of the output of " + src.Tool + decisionRef(src.DecisionID) + ", not in the user's words"
	case src.Origin == OriginOutput:
		vf.Provenance = "first appeared in the output of " + src.Tool + decisionRef(src.DecisionID)
	case src.Origin == OriginCall:
		vf.Provenance = "first appeared in the agent's own call " + src.Tool + decisionRef(src.DecisionID)
	}
	return vf
}

func decisionRef(id string) string {
	if id == "" {
		return ""
	}
	return " (decision " + id + ")"
}

// Lookup returns the provenance of any value, for the policy functions
// flow.origin(v) and its kin: the value's class is guessed from its shape.
func (f *Facts) Lookup(v string) ValueFacts {
	if f == nil || f.table == nil {
		return ValueFacts{Value: v, Origin: OriginUnknown, Trust: TrustOpen}
	}
	if m := markerRE.FindStringSubmatch(v); m != nil {
		return f.table.valueFacts(v, Secret, []key{key(kSecret + m[1])})
	}
	for _, c := range guessClasses(v) {
		k := keyOf(c, v)
		if k == "" {
			continue
		}
		if _, ok := f.table.values[k]; ok {
			return f.table.valueFacts(v, c, []key{k})
		}
	}
	cs := guessClasses(v)
	return f.table.valueFacts(v, cs[0], []key{keyOf(cs[0], v)})
}

func guessClasses(v string) []Class {
	v = strings.TrimSpace(v)
	switch {
	case strings.HasPrefix(v, "[REDACTED:"):
		return []Class{Handle}
	case strings.Contains(v, "://"):
		return []Class{URL, Host}
	case strings.Contains(v, "@") && strings.Contains(v, "."):
		return []Class{Email, Handle}
	case strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/"):
		return []Class{Path}
	case isIBANShape(v):
		return []Class{IBAN, Handle}
	case len(phoneDigits(v)) >= 7 && strings.TrimLeft(v, "+0123456789 ()-./") == "":
		return []Class{Phone, Handle}
	case strings.Contains(v, ".") && !strings.Contains(v, " "):
		return []Class{Host, Handle}
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return []Class{Amount, Handle}
	}
	return []Class{Handle}
}

// windowWidened: the tool read a window before any injection, and this
// call reads one widenFactor times as wide or more. What the injected
// text asked for is not compared: a wider read right after one is what an
// injected "send the whole month" needs, and what the user's "tomorrow"
// did not.
func (t *Table) windowWidened(tool string, args *Scan) string {
	prev, ok := t.windows[tool]
	w := args.window()
	if !ok || w == 0 || w < widenFactor*prev.width {
		return ""
	}
	last := t.injections[len(t.injections)-1]
	return fmt.Sprintf("%s reads %s, %d times the %s it read%s before the text injected into the output of %s%s",
		tool, days(w), int(w/prev.width), days(prev.width), decisionRef(prev.decision), last.Tool, decisionRef(last.DecisionID))
}

// days says a duration in days (or hours, under a day).
func days(d time.Duration) string {
	if d < 24*time.Hour {
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
	if n := int(d.Hours()+12) / 24; n != 1 {
		return fmt.Sprintf("%d days", n)
	}
	return "1 day"
}
