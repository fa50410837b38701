// Addressees: who a send is written to. A name the user gives ("reply to
// Dana", "Antworte Frau Weber", "contesta a Lucía") bounds the send to
// that name in the scope; a word for a person the draft cannot resolve to
// an address ("tell my manager", "send it to the team", "écris à mon
// chef") cannot bound it, so the send is put to a person, call by call,
// and the draft says so — granting it would let it go to anyone. The
// words are data: `persons` in each lang/*.yaml, honorifics and services
// in addressees.yaml.

package mandate

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/datafile"
	"github.com/mandate-dev/mandate/internal/fold"
)

const addresseesFile = "builtin:addressees.yaml"

//go:embed addressees.yaml
var addresseesData []byte

type addresseeWords struct {
	Honorifics []string `yaml:"honorifics"`
	Services   []string `yaml:"services"`
	// Complementizers are relative words that also open what is said.
	Complementizers []string `yaml:"complementizers"`
	// Commands are the words that open a reported request after a verb
	// of sending and its addressee ("tell him to …", "dis-lui de …").
	Commands []string `yaml:"commands"`
	// Telling are the verbs a command word may follow ("tell", "dis").
	Telling []string `yaml:"telling_verbs"`
	// Quantifiers are words for people that pick no one by themselves.
	Quantifiers []string `yaml:"quantifiers"`
}

// addresseeSets are the folded words of addressees.yaml; a service of
// several words is kept whole and matched word by word.
type addresseeSets struct {
	honorifics      map[string]bool
	complementizers map[string]bool
	commands        map[string]bool
	telling         map[string]bool
	services        [][]string
	quantifiers     [][]string
}

var loadAddressees = sync.OnceValues(func() (*addresseeSets, error) {
	var w addresseeWords
	if err := datafile.Load(addresseesFile, addresseesData, &w); err != nil {
		return nil, err
	}
	s := &addresseeSets{honorifics: map[string]bool{}, complementizers: map[string]bool{}, commands: map[string]bool{}, telling: map[string]bool{}}
	for _, v := range w.Telling {
		s.telling[fold.String(v)] = true
	}
	for _, c := range w.Complementizers {
		s.complementizers[fold.String(c)] = true
	}
	for _, c := range w.Commands {
		if strings.TrimSpace(c) == "" || strings.Contains(c, " ") {
			return nil, fmt.Errorf("%s: command word %q: want one word", addresseesFile, c)
		}
		s.commands[fold.String(c)] = true
	}
	for _, h := range w.Honorifics {
		if strings.TrimSpace(h) == "" || strings.Contains(h, " ") {
			return nil, fmt.Errorf("%s: honorific %q: want one word", addresseesFile, h)
		}
		s.honorifics[fold.String(h)] = true
	}
	for _, q := range w.Quantifiers {
		f := strings.Fields(fold.String(q))
		if len(f) == 0 {
			return nil, fmt.Errorf("%s: empty quantifier", addresseesFile)
		}
		s.quantifiers = append(s.quantifiers, f)
	}
	for _, sv := range w.Services {
		f := strings.Fields(fold.String(sv))
		if len(f) == 0 {
			return nil, fmt.Errorf("%s: empty service", addresseesFile)
		}
		s.services = append(s.services, f)
	}
	return s, nil
})

// roleSend is a send addressed to a person named by a role.
type roleSend struct {
	phrase, clause, verb string
}

// addressees reads, for each verb that sends in the segment, who it is
// addressed to: a name goes to the scope's recipients, a role is kept
// for settleRoles. A clause that names an address or a channel is bounded
// by the scope already and is left alone.
func (b *build) addressees(st *segState) {
	words, err := loadAddressees()
	if err != nil {
		return // no names read: roles and names stay as before, never wider
	}
	for _, a := range st.anchors {
		if !granting(a) || !slices.Contains(a.kinds, action.Send) {
			continue
		}
		from, to := st.clauseOf(a.pos)
		if b.clauseHasRecipient(st, from, to) {
			continue
		}
		for j := a.pos + 1; j < to; j++ {
			if j >= a.end && b.anchorBetween(st, j, j+1) {
				break // the next verb's words are its own
			}
			if st.toks[j].kind != tokWord {
				continue
			}
			if end, ok := b.nameAt(st, j, a, words); ok {
				name := strings.TrimRight(strings.TrimSuffix(strings.TrimSuffix(b.span(st.toks, j, end), "'s"), "’s"), " ")
				// Money sent to a person ("send Lukas 23,50 €") names a
				// payee or a recipient: names holds both.
				list, dim := &b.m.Scope.Recipients, "recipient"
				if a.money || slices.Contains(a.kinds, action.Pay) {
					list, dim = &b.m.Scope.Names, "name"
				}
				if !slices.Contains(*list, name) {
					*list = append(*list, name)
				}
				for k := j; k < end; k++ {
					st.consumed[k] = true // the person written to, used
				}
				b.recognise(name, "scope "+dim+" "+name,
					fmt.Sprintf("a name after verb %q: the person it is written to; a send to anyone else is put to you", a.word))
				break
			}
			if e, n := b.at(st.toks, j, rolePerson); e != nil {
				if b.pickedByItems(st, a, j, j+n, words) {
					break // "the customer tickets", "the clients who haven't paid"
				}
				start := j
				if j > 0 && b.is(st.toks[j-1], roleDeterminer) {
					start = j - 1
				}
				b.roleSends = append(b.roleSends, roleSend{phrase: b.span(st.toks, start, j+n),
					clause: b.span(st.toks, from, to), verb: a.word})
				break
			}
		}
	}
}

// pickedByItems reports whether the person word from token from to j is
// picked out by the items the task reads rather than named by the user:
// it modifies a noun after it ("answer the customer tickets": the tickets'
// senders), it follows a preposition of owning ("de", "von"), it is a
// quantifier with words after it ("everyone on the Kickoff mail"), or a
// relative clause follows it ("remind the clients who
// haven't paid"). Who those are comes from what the agent reads, which the
// recipients' provenance checks call by call.
func (b *build) pickedByItems(st *segState, a *anchor, from, j int, words *addresseeSets) bool {
	owning := func(k int) bool {
		return k > a.pos && b.is(st.toks[k], roleLimiting) && !b.is(st.toks[k], roleRecipientPrep)
	}
	// "los tickets de los clientes", "ai ticket dei clienti": whose, not
	// to whom.
	if k := from - 1; owning(k) || (k > a.pos && b.is(st.toks[k], roleDeterminer) && owning(k-1)) {
		return true
	}
	_, to := st.clauseOf(from)
	if j < to && slices.ContainsFunc(words.quantifiers, func(q []string) bool {
		return len(q) == j-from && wordsAt(st.toks, from, q)
	}) {
		return true // "everyone on the Kickoff mail": what follows picks them
	}
	if j >= len(st.toks) {
		return false
	}
	t := st.toks[j]
	if t.kind != tokWord {
		return false
	}
	if b.is(t, roleRelative) {
		return !words.complementizers[t.text]
	}
	for _, l := range b.langs {
		if l.vocab[t.text] {
			return false // a function word, a verb, a known noun: not a modifier
		}
	}
	raw := b.text[t.start:t.end]
	r, _ := utf8.DecodeRuneInString(raw)
	return unicode.IsLower(r)
}

// clauseHasRecipient reports whether the clause names an address, a
// channel or a domain: the scope holds those, and bounds the send.
func (b *build) clauseHasRecipient(st *segState, from, to int) bool {
	for j := from; j < to; j++ {
		if t := st.toks[j]; t.kind == tokEntity {
			if k := b.ents[t.ent].kind; k == entEmail || k == entChannel || k == entDomain {
				return true
			}
		}
	}
	return false
}

// nameAt reports whether a person's name starts at token j and where it
// ends: an honorific and a capitalised word ("Frau Weber", "la signora
// Rossi"), or a capitalised word right after the verb ("Email Priya") or
// after a recipient preposition ("reply to Dana") — with a capitalised
// word after it as the surname. A word of an active lexicon, a word all
// in capitals ("README") and a service ("to Slack") is no name.
func (b *build) nameAt(st *segState, j int, a *anchor, words *addresseeSets) (int, bool) {
	toks := st.toks
	if words.honorifics[toks[j].text] && j+1 < len(toks) && b.capitalised(toks[j+1], words) {
		end := j + 2
		if end < len(toks) && b.capitalised(toks[end], words) {
			end++
		}
		return end, true
	}
	afterPrep := j > 0 && b.is(toks[j-1], roleRecipientPrep)
	if (j != a.end && !afterPrep) || !b.capitalised(toks[j], words) || b.serviceAt(toks, j, words) {
		return 0, false
	}
	end := j + 1
	if end < len(toks) && b.capitalised(toks[end], words) && !b.serviceAt(toks, end, words) {
		end++
	}
	return end, true
}

// capitalised reports whether a word reads as a name: capitalised, not all
// capitals, no word of an active lexicon, no honorific.
func (b *build) capitalised(t token, words *addresseeSets) bool {
	if t.kind != tokWord || t.inName || words.honorifics[t.text] {
		return false
	}
	raw := b.text[t.start:t.end]
	r, size := utf8.DecodeRuneInString(raw)
	if !unicode.IsUpper(r) || !strings.ContainsFunc(raw[size:], unicode.IsLower) {
		return false
	}
	for _, l := range b.langs {
		if l.vocab[t.text] {
			return false
		}
	}
	return true
}

func (b *build) serviceAt(toks []token, j int, words *addresseeSets) bool {
	for _, s := range words.services {
		if j+len(s) <= len(toks) && wordsAt(toks, j, s) {
			return true
		}
	}
	return false
}

// settleRoles puts send to a person when a send is addressed to a role
// the draft cannot resolve ("tell my manager") and no address, channel or
// domain the user named bounds who it may go to: granted, it would go to
// anyone. The role is listed under not_understood with what the draft did.
func (b *build) settleRoles() {
	s := action.Send
	if len(b.roleSends) == 0 || !slices.Contains(b.m.Allow, s) || slices.Contains(b.m.Deny, s) {
		return
	}
	if slices.ContainsFunc(b.m.Scope.Recipients, func(r string) bool { return strings.ContainsAny(r, "@#") || isPhone(r) }) {
		return
	}
	b.m.Allow = slices.DeleteFunc(b.m.Allow, func(x action.Kind) bool { return x == s })
	if !slices.Contains(b.m.Ask, s) {
		b.m.Ask = append(b.m.Ask, s)
	}
	for _, r := range b.roleSends {
		why := fmt.Sprintf("%q names someone Mandate cannot resolve to an address: verb %q may not send to anyone, so each send is put to you", r.phrase, r.verb)
		b.recognise(r.phrase, "ask send", why)
		if len(b.unknown) < maxUnrecognised {
			b.unknown = append(b.unknown, Unrecognised{Phrase: r.phrase, Clause: r.clause,
				Effect: fmt.Sprintf("not resolved to an address; %q is put to a person call by call (send)", r.verb)})
		} else {
			b.unknownMore++
		}
	}
}

// nameThenMessage reports whether the word at j, right after a verb of
// writing with no preposition, is followed by what is written: a
// complementizer, after a comma or not ("Schreib Tobias, dass …", "write
// Dana that …"). Only then is a capitalised word there a person written
// to: "Schreib Notizen zum Meeting", "Schreib Notizen, dann …" write notes.
func (b *build) nameThenMessage(st *segState, j int) bool {
	words, err := loadAddressees()
	if err != nil {
		return false
	}
	rest := strings.TrimLeft(b.text[st.toks[j].end:], " \t")
	rest = strings.TrimLeft(strings.TrimPrefix(rest, ","), " \t")
	end := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '’' })
	if end < 0 {
		end = len(rest)
	}
	next := fold.String(rest[:end])
	// An elided complementizer is the word before its apostrophe
	// ("Écris Julie qu'on se voit demain": qu).
	if i := strings.IndexAny(next, "'’"); i >= 0 {
		next = next[:i]
	}
	return next != "" && words.complementizers[next]
}
