package action

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// kindSet is a set of kinds (act.Set).
type kindSet = act.Set

// builder accumulates what classification finds about one call and turns it
// into an Action, de-duplicating resources on the way.
type builder struct {
	a     Action
	kinds kindSet

	external    bool
	destructive bool
	public      bool
	recurring   bool
	adminGrant  bool

	// listed is the length of the longest argument that lists the items
	// the call acts on (argNames.itemLists).
	listed int

	seenPath map[string]int // path+access -> index in a.Paths
	seenStr  map[string]struct{}
	dropped  int // notes dropped over act.MaxNotes
}

func newBuilder(tool string) *builder {
	return &builder{a: Action{Tool: tool, Source: "none"}}
}

func (b *builder) kind(ks ...Kind) { b.kinds.Add(ks...) }

func (b *builder) note(s string) {
	if s == "" {
		return
	}
	if slices.Contains(b.a.Notes, s) {
		return
	}
	if len(b.a.Notes) >= act.MaxNotes {
		b.dropped++
		return
	}
	b.a.Notes = append(b.a.Notes, s)
}

// maxUnexamined bounds the reasons kept in Action.Unexamined; one is
// enough to ask, a few tell a person where to look.
const maxUnexamined = 8

// unexamined records something classification did not examine.
func (b *builder) unexamined(why string) {
	if why == "" || slices.Contains(b.a.Unexamined, why) || len(b.a.Unexamined) >= maxUnexamined {
		return
	}
	b.a.Unexamined = append(b.a.Unexamined, why)
}

// once reports whether key is new, recording it.
func (b *builder) once(key string) bool {
	if b.seenStr == nil {
		b.seenStr = make(map[string]struct{}, 8)
	}
	if _, ok := b.seenStr[key]; ok {
		return false
	}
	b.seenStr[key] = struct{}{}
	return true
}

// path records a file path the call touches. Sensitive paths add the
// Credential kind: reading or planting credentials is what policy must see.
func (b *builder) path(p PathRef) {
	if p.Path == "" {
		return
	}
	key := string(p.Access) + "\x00" + p.Path
	if b.seenPath == nil {
		b.seenPath = make(map[string]int, 4)
	}
	if i, ok := b.seenPath[key]; ok {
		if p.Sensitive && !b.a.Paths[i].Sensitive {
			b.a.Paths[i].Sensitive, b.a.Paths[i].Why = true, p.Why
		}
		return
	}
	b.seenPath[key] = len(b.a.Paths)
	b.a.Paths = append(b.a.Paths, p)
	if p.Sensitive {
		b.a.Sensitive = true
		b.kind(Credential)
		b.note(sensitivePathNote(p))
	}
}

func sensitivePathNote(p PathRef) string {
	verb := map[Kind]string{Read: "reads", Write: "writes", Delete: "deletes", Execute: "runs", Send: "sends"}[p.Access]
	if verb == "" {
		verb = "touches"
	}
	return verb + " " + p.Path + ": " + p.Why
}

func (b *builder) url(u string) {
	if u != "" && b.once("u\x00"+u) {
		b.a.URLs = append(b.a.URLs, u)
	}
}

func (b *builder) host(h string) {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h != "" && b.once("h\x00"+h) {
		b.a.Hosts = append(b.a.Hosts, h)
	}
}

// recipient adds a destination; the first display name written for an
// address in a field is the one kept.
func (b *builder) recipient(addr, field, name string) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return
	}
	if b.once("r\x00" + strings.ToLower(addr) + "\x00" + field) {
		b.a.Recipients = append(b.a.Recipients, Recipient{Address: addr, Field: field, Name: name})
		if name != "" {
			b.note("recipient " + addr + " from field " + field + ", written as " + strconv.Quote(name))
		} else {
			b.note("recipient " + addr + " from field " + field)
		}
	}
}

func (b *builder) account(acct string) {
	acct = strings.TrimSpace(acct)
	if acct != "" && b.once("a\x00"+acct) {
		b.a.Accounts = append(b.a.Accounts, acct)
	}
}

func (b *builder) amount(am Amount) { b.a.Amounts = act.AppendNew(b.a.Amounts, am) }

func (b *builder) command(c Command) {
	b.a.Commands = append(b.a.Commands, c)
}

// sensitive marks the action as touching secrets, with a note why.
func (b *builder) sensitive(why string) {
	b.a.Sensitive = true
	b.note(why)
}

// finish fills in the derived fields and returns the action. Slices are never
// nil so that policy expressions can iterate them without null checks.
func (b *builder) finish() Action {
	a := b.a
	if b.destructive {
		a.Destructive = true
		b.kinds.Add(Delete)
	}
	if b.kinds == 0 {
		b.kinds.Add(Unknown)
	}
	a.Kinds = b.kinds.List()
	a.Kind = b.kinds.Top()
	a.Effects.External = b.external || b.kinds.Has(Send) || b.kinds.Has(Pay)
	a.Effects.Irreversible = a.Destructive || b.kinds.Has(Delete) || b.kinds.Has(Send) || b.kinds.Has(Pay)
	a.Effects.Financial = b.kinds.Has(Pay)
	a.Effects.Public = b.public
	a.Effects.Recurring = b.recurring && b.kinds.Has(Pay)
	a.Effects.AdminGrant = b.adminGrant
	if b.dropped > 0 {
		a.Notes = append(a.Notes, "and more facts not listed")
	}
	nonNil(&a.Paths)
	nonNil(&a.URLs)
	nonNil(&a.Hosts)
	nonNil(&a.Recipients)
	nonNil(&a.Accounts)
	nonNil(&a.Amounts)
	nonNil(&a.Commands)
	nonNil(&a.Notes)
	nonNil(&a.Unexamined)
	return a
}

// nonNil makes a nil list an empty one, so that it encodes as [] rather
// than null.
func nonNil[T any](s *[]T) {
	if *s == nil {
		*s = []T{}
	}
}
