package flow

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/fold"
)

// Class is what kind of value a string is.
type Class string

// The value classes.
const (
	Email   Class = "email"
	Phone   Class = "phone"
	URL     Class = "url"
	Host    Class = "host"
	IBAN    Class = "iban"
	Account Class = "account"
	Amount  Class = "amount"
	Path    Class = "path"
	Name    Class = "name"
	ID      Class = "id"
	Secret  Class = "secret"
	// Handle is a chat channel or user, or another destination that is
	// neither an address nor a number.
	Handle Class = "handle"
)

// Origin is where a value was first seen in a session.
type Origin string

// The origins, as the API and policy name them.
const (
	OriginUser    Origin = "user"    // the user's words (mandate instructions)
	OriginMandate Origin = "mandate" // a structured mandate's scope
	OriginOutput  Origin = "output"  // a tool's output
	OriginCall    Origin = "call"    // an agent's own arguments, with no earlier source
	OriginUnknown Origin = "unknown" // the session's table cannot say (it evicted values or an output was not scanned in full)
)

// Trust is how far a source can be taken at its word.
type Trust string

// The trust labels.
const (
	TrustUser Trust = "user" // the user's words
	TrustOwn  Trust = "own"  // the user's own data: their files, calendar, contacts, accounts
	TrustOpen Trust = "open" // anything others can write: received mail, web pages, third-party files
)

// Part is where in an item a value sat.
type Part string

// The parts.
const (
	PartHeader       Part = "header"       // who the item is from: sender, author, organiser
	PartParticipants Part = "participants" // the others on it: to, cc, attendees
	PartBody         Part = "body"         // what the item says
)

// key is a value's identity in a table: a class prefix and a normal form,
// so that "Eve@Corp.Example" and "eve@corp.example" are one value.
type key string

// The key prefixes. Ids, handles and names share one space ("t:"): a
// Slack channel id in a message and the same id as a call's channel are
// one value whatever each side calls it.
const (
	kEmail  = "e:"
	kPhone  = "p:"
	kURL    = "u:"
	kHost   = "h:"
	kIBAN   = "i:"
	kAmount = "a:"
	kPath   = "f:"
	kSecret = "s:"
	kToken  = "t:"
)

// keyOf normalises a value of a class into its key; "" when it is not one.
func keyOf(c Class, v string) key {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxValueLen {
		return ""
	}
	switch c {
	case Email:
		return key(kEmail + strings.ToLower(strings.Trim(v, "<>'\".,;")))
	case Phone:
		d := phoneDigits(v)
		if len(d) < 7 {
			return ""
		}
		return key(kPhone + d)
	case URL:
		return key(kURL + normURL(v))
	case Host:
		h := normHost(v)
		if h == "" {
			return ""
		}
		return key(kHost + h)
	case IBAN:
		return key(kIBAN + strings.ToUpper(strings.ReplaceAll(v, " ", "")))
	case Path:
		return key(kPath + path.Clean(v))
	case Secret:
		return key(kSecret + v) // v is the marker's hash
	case Amount:
		return key(kAmount + v) // v is formatted by amountKeys
	case Account:
		if isIBANShape(v) {
			return key(kIBAN + strings.ToUpper(strings.ReplaceAll(v, " ", "")))
		}
		return tokenKey(v)
	case Name, ID, Handle:
		return tokenKey(v)
	}
	return ""
}

// tokenKey is the shared key of ids, handles and names: folded, spaces
// squashed, a leading # or @ dropped.
func tokenKey(v string) key {
	v = strings.TrimLeft(strings.TrimSpace(v), "#@")
	if v == "" {
		return ""
	}
	return key(kToken + squash(fold.String(v)))
}

// maxValueLen bounds one value; longer strings are content, not values.
const maxValueLen = 256

func normHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), "."))
	if i := strings.LastIndexByte(h, ':'); i > 0 && !strings.Contains(h[i:], "]") {
		if _, err := strconv.Atoi(h[i+1:]); err == nil {
			h = h[:i]
		}
	}
	h = strings.TrimPrefix(h, "www.")
	if h == "" || strings.ContainsAny(h, " /@") {
		return ""
	}
	return h
}

// normURL lower-cases scheme and host and drops the fragment, so the same
// page written two ways is one value.
func normURL(u string) string {
	u = strings.TrimRight(u, ".,;:!?)'\"")
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "://"); i > 0 {
		rest := u[i+3:]
		j := strings.IndexAny(rest, "/?")
		if j < 0 {
			j = len(rest)
		}
		u = strings.ToLower(u[:i+3]) + strings.ToLower(strings.TrimPrefix(rest[:j], "www.")) + rest[j:]
	}
	return strings.TrimSuffix(u, "/")
}

func phoneDigits(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == '+' && b.Len() == 0:
			b.WriteByte(c)
		}
	}
	d := b.String()
	if strings.HasPrefix(d, "00") {
		d = "+" + d[2:]
	}
	return d
}

// amountKeys are the keys of an amount: with its currency when known, and
// the bare number, so that a call's "tip": 25 meets "25 €" in a page.
func amountKeys(v float64, currency string) []key {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	n := strconv.FormatFloat(v, 'f', -1, 64)
	if currency == "" {
		return []key{key(kAmount + n)}
	}
	return []key{key(kAmount + n + "|" + currency), key(kAmount + n)}
}

// knowledge is values.yaml, decoded.
type knowledge struct {
	HeaderKeys      []string         `yaml:"header_keys"`
	ParticipantKeys []string         `yaml:"participant_keys"`
	BodyKeys        []string         `yaml:"body_keys"`
	NameKeys        []string         `yaml:"name_keys"`
	IDKeys          []string         `yaml:"id_keys"`
	AmountKeys      []string         `yaml:"amount_keys"`
	CurrencyKeys    []string         `yaml:"currency_keys"`
	QuantityKeys    []string         `yaml:"quantity_keys"`
	AccountKeys     []string         `yaml:"account_keys"`
	PhoneKeys       []string         `yaml:"phone_keys"`
	PathKeys        []string         `yaml:"path_keys"`
	SelectorKeys    []string         `yaml:"selector_keys"`
	ContentKeys     []string         `yaml:"content_keys"`
	ItemNameKeys    []string         `yaml:"item_name_keys"`
	ContainerKeys   []string         `yaml:"container_keys"`
	WindowStartKeys []string         `yaml:"window_start_keys"`
	WindowEndKeys   []string         `yaml:"window_end_keys"`
	PrivateFlagKeys []string         `yaml:"private_flag_keys"`
	ParentKeys      []string         `yaml:"parent_keys"`
	LabelKeys       []string         `yaml:"item_label_keys"`
	SnapshotRefKeys []string         `yaml:"snapshot_ref_keys"`
	DateKeys        []string         `yaml:"item_date_keys"`
	PrivateWords    []string         `yaml:"private_words"`
	TLDs            []string         `yaml:"tlds"`
	FamilyTrust     map[string]Trust `yaml:"family_trust"`
	AmountRefs      []amountRefSpec  `yaml:"amount_refs"`
	Quantities      []quantitySpec   `yaml:"quantities"`
	PackUnits       []string         `yaml:"pack_units"`
	PackWords       []string         `yaml:"pack_words"`
	exclusionSpec   `yaml:",inline"`
}

// amountRefSpec is one entry of amount_refs in values.yaml.
type amountRefSpec struct {
	Name   string     `yaml:"name"`
	Cues   [][]string `yaml:"cues"`
	Fields []string   `yaml:"fields"`
}

//go:embed values.yaml
var valuesYAML []byte

// keyRole is what a field name says about its value.
type keyRole uint32

const (
	roleHeader keyRole = 1 << iota
	roleParticipant
	roleBody
	roleName
	roleID
	roleAmount
	roleCurrency
	roleAccount
	rolePhone
	rolePath
	roleSelector
	roleContent
	roleItemName
	rolePrivateFlag
	roleContainer
	roleQuantity
	roleParent
	roleWindowStart
	roleWindowEnd
	roleLabel
	roleDate
)

// vocabulary is the compiled knowledge.
type vocabulary struct {
	roles   map[string]keyRole
	private map[string]bool // private_words, folded
	// snapshotRefs are the keys a page snapshot's controls carry their
	// reference under (snapshot_ref_keys: `[ref=e14]`).
	snapshotRefs []string
	tlds         map[string]bool
	familyTrust  map[string]Trust
	// refs are the amounts a user names by what they are; refField maps
	// an output field (normKey) to the index of its ref.
	refs     []amountRef
	refField map[string]int
	// excl is what rules a clause of the user's words out (exclude.go).
	excl exclusionVocab
	// qty are the arguments that say how many items a call acts on
	// (quantity.go).
	qty quantityVocab
}

// amountRef is a compiled amount_refs entry: cues as folded words.
type amountRef struct {
	name string
	cues [][]string
}

func loadVocabulary() (*vocabulary, error) {
	var k knowledge
	dec := yaml.NewDecoder(bytes.NewReader(valuesYAML))
	dec.KnownFields(true)
	if err := dec.Decode(&k); err != nil {
		return nil, fmt.Errorf("flow/values.yaml: %w", err)
	}
	v := &vocabulary{roles: map[string]keyRole{}, tlds: map[string]bool{}, familyTrust: map[string]Trust{}}
	for _, l := range []struct {
		keys []string
		r    keyRole
	}{
		{k.HeaderKeys, roleHeader}, {k.ParticipantKeys, roleParticipant}, {k.BodyKeys, roleBody},
		{k.NameKeys, roleName}, {k.IDKeys, roleID}, {k.AmountKeys, roleAmount}, {k.CurrencyKeys, roleCurrency},
		{k.AccountKeys, roleAccount}, {k.PhoneKeys, rolePhone}, {k.PathKeys, rolePath},
		{k.SelectorKeys, roleSelector}, {k.ContentKeys, roleContent},
		{k.ItemNameKeys, roleItemName}, {k.PrivateFlagKeys, rolePrivateFlag}, {k.ContainerKeys, roleContainer},
		{k.ParentKeys, roleParent}, {k.WindowStartKeys, roleWindowStart}, {k.WindowEndKeys, roleWindowEnd},
		{k.QuantityKeys, roleQuantity}, {k.LabelKeys, roleLabel}, {k.DateKeys, roleDate},
	} {
		for _, key := range l.keys {
			v.roles[normKey(key)] |= l.r
		}
	}
	for _, t := range k.TLDs {
		v.tlds[strings.ToLower(t)] = true
	}
	v.snapshotRefs = k.SnapshotRefKeys
	v.private = map[string]bool{}
	for _, w := range k.PrivateWords {
		v.private[fold.String(w)] = true
	}
	for f, t := range k.FamilyTrust {
		if t != TrustOwn && t != TrustOpen && t != TrustUser {
			return nil, fmt.Errorf("flow/values.yaml: family_trust %s: %q is not own, open or user", f, t)
		}
		v.familyTrust[f] = t
	}
	v.refField = map[string]int{}
	for i, r := range k.AmountRefs {
		if r.Name == "" || len(r.Cues) == 0 || len(r.Fields) == 0 {
			return nil, fmt.Errorf("flow/values.yaml: amount_refs[%d]: name, cues and fields are required", i)
		}
		ref := amountRef{name: r.Name}
		for j, c := range r.Cues {
			if len(c) == 0 {
				return nil, fmt.Errorf("flow/values.yaml: amount_refs %q: cue %d is empty", r.Name, j)
			}
			words := make([]string, len(c))
			for n, w := range c {
				words[n] = fold.String(w)
			}
			ref.cues = append(ref.cues, words)
		}
		for _, f := range r.Fields {
			nk := normKey(f)
			if prev, dup := v.refField[nk]; dup && prev != i {
				return nil, fmt.Errorf("flow/values.yaml: amount_refs: field %q is in %q and %q", f, k.AmountRefs[prev].Name, r.Name)
			}
			v.refField[nk] = i
			// A field that gives a named amount is money.
			v.roles[nk] |= roleAmount
		}
		v.refs = append(v.refs, ref)
	}
	var err error
	if v.qty, err = compileQuantities(k.Quantities); err != nil {
		return nil, err
	}
	v.qty.packUnits, v.qty.packWords = foldSet(k.PackUnits), foldSet(k.PackWords)
	if v.excl, err = compileExclusions(k.exclusionSpec); err != nil {
		return nil, err
	}
	return v, nil
}

// normKey is a field name's lookup form: lower case without "_", "-" and
// spaces.
func normKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c == '_' || c == '-' || c == ' ' || c == '.':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (v *vocabulary) role(field string) keyRole { return v.roles[normKey(field)] }

// homePrefixes are the shapes of a user's home directory in an absolute
// path: /home/<user>/, /Users/<user>/ (macOS), /root/.
var homePrefixes = []string{"/home/", "/Users/"}

// homeAlias is the key a path under a home directory also answers to: the
// same path written from "~". A session whose home directory is unknown
// keeps "~/notes/todo.md" in an output as it is written (nothing to expand
// it to), and a call then names /home/dana/notes/todo.md: the alias lets
// the two meet. With the home known every "~/" is expanded when scanned,
// so no "~/" value is left for the alias to meet. "" when p is not under a
// home directory.
func homeAlias(p string) key {
	p = path.Clean(p)
	rest, ok := strings.CutPrefix(p, "/root/")
	if !ok {
		for _, pre := range homePrefixes {
			if r, found := strings.CutPrefix(p, pre); found {
				if _, after, cut := strings.Cut(r, "/"); cut && after != "" {
					rest, ok = after, true
				}
				break
			}
		}
	}
	if !ok || rest == "" {
		return ""
	}
	return keyOf(Path, "~/"+rest)
}

// urlKeys are the keys a call's URL is looked up by: itself, then the
// form with its query's values left empty. A text that gives a link to
// fill in ("subscribe at https://shop.example/newsletter?email= with their
// address") is where the filled-in link came from: the agent supplied the
// values, the text the place they go to.
func urlKeys(u string) []key {
	k := keyOf(URL, u)
	q := strings.IndexByte(u, '?')
	if k == "" || q < 0 {
		return []key{k}
	}
	query := u[q+1:]
	if i := strings.IndexByte(query, '#'); i >= 0 {
		query = query[:i]
	}
	var b strings.Builder
	b.WriteString(u[:q+1])
	for i, p := range strings.Split(query, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		name, _, _ := strings.Cut(p, "=")
		b.WriteString(name)
		b.WriteByte('=')
	}
	// A link's trailing "=" is punctuation to the text's scan (token).
	if t := keyOf(URL, strings.TrimRight(b.String(), ".,:;?=")); t != k {
		return []key{k, t}
	}
	return []key{k}
}

// pathKeys are the keys a call's path is looked up by: itself, then its
// form from "~".
func pathKeys(p string) []key {
	if a := homeAlias(p); a != "" {
		return []key{keyOf(Path, p), a}
	}
	return []key{keyOf(Path, p)}
}
