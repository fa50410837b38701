// Package act is what a tool call does, in the words the classifier
// (package action) and the shell analysis (package shell) both speak: the
// kinds of action, sets of kinds, the records a classification lists
// (paths, recipients, shell commands), and the path and host helpers both
// normalise them with. It depends on nothing of Mandate's, so both can
// import it; package action names its types by alias.
package act

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is what a call does, as far as consequences go.
type Kind string

// The kinds of action. Their order in kindRank is how consequential they are;
// an Action's Kind is the most consequential of everything it does.
const (
	Read       Kind = "read"
	Fetch      Kind = "fetch"
	Write      Kind = "write"
	Execute    Kind = "execute"
	Delegate   Kind = "delegate"
	Credential Kind = "credential"
	Delete     Kind = "delete"
	Send       Kind = "send"
	Pay        Kind = "pay"
	Unknown    Kind = "unknown"
)

// Kinds lists every kind, least consequential first.
var allKinds = [...]Kind{Read, Fetch, Write, Execute, Delegate, Credential, Delete, Send, Pay, Unknown}

// AllKinds returns every kind, least consequential first.
func AllKinds() []Kind { return allKinds[:] }

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool { return slices.Contains(allKinds[:], k) }

// Rank orders kinds by how consequential they are; higher is more. Unknown
// ranks highest: what we cannot classify is treated as the worst case.
func (k Kind) Rank() int {
	if i := slices.Index(allKinds[:], k); i >= 0 {
		return i
	}
	return len(allKinds)
}

// MostConsequential returns the highest-ranked kind of ks, or Unknown if ks is
// empty.
func MostConsequential(ks ...Kind) Kind {
	if len(ks) == 0 {
		return Unknown
	}
	best := ks[0]
	for _, k := range ks[1:] {
		if k.Rank() > best.Rank() {
			best = k
		}
	}
	return best
}

// ByName maps every kind's name to the kind.
var ByName = func() map[string]Kind {
	m := map[string]Kind{}
	for _, k := range allKinds {
		m[string(k)] = k
	}
	return m
}()

// Names is every kind's name, comma-separated, for error messages.
func Names() string {
	var b strings.Builder
	for i, k := range allKinds {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(k))
	}
	return b.String()
}

// Access reads the access of an operand or path rule: read, write, delete
// or execute.
func Access(s string) (Kind, error) {
	switch Kind(s) {
	case Read, Write, Delete, Execute:
		return Kind(s), nil
	}
	return "", fmt.Errorf("unknown access %q (want read, write, delete or execute)", s)
}

// Set is a set of kinds as a bit mask indexed by Kind.Rank.
type Set uint16

// AppendNew appends v to s unless s holds it already.
func AppendNew[T comparable](s []T, v T) []T {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// ParseSet is the set of the named kinds (empty names are passed over), or
// an error naming the first unknown one.
func ParseSet(names ...string) (Set, error) {
	var s Set
	for _, n := range names {
		if n == "" {
			continue
		}
		k, ok := ByName[n]
		if !ok {
			return 0, fmt.Errorf("unknown kind %q (want one of %s)", n, Names())
		}
		s.Add(k)
	}
	return s, nil
}

// Has reports whether k is in s.
func (s Set) Has(k Kind) bool { return s&Bit(k) != 0 }

// Add puts ks in s.
func (s *Set) Add(ks ...Kind) {
	for _, k := range ks {
		*s |= Bit(k)
	}
}

// Bit is the set of k alone.
func Bit(k Kind) Set { return 1 << uint(k.Rank()) }

// List returns the kinds in s, least consequential first.
func (s Set) List() []Kind {
	out := make([]Kind, 0, 3)
	for _, k := range allKinds {
		if s.Has(k) {
			out = append(out, k)
		}
	}
	return out
}

// Top returns the most consequential kind in s, or Unknown if s is empty.
func (s Set) Top() Kind {
	for i := len(allKinds) - 1; i >= 0; i-- {
		if s.Has(allKinds[i]) {
			return allKinds[i]
		}
	}
	return Unknown
}

// Text lists the kinds in s, comma-separated.
func (s Set) Text() string {
	l := s.List()
	parts := make([]string, len(l))
	for i, k := range l {
		parts[i] = string(k)
	}
	return strings.Join(parts, ", ")
}

// PathRef is a file system path a call touches, normalised to an absolute,
// clean path where the working directory is known.
type PathRef struct {
	Path string `json:"path"`
	// Access is read, write, delete or execute.
	Access    Kind   `json:"access"`
	Sensitive bool   `json:"sensitive"`
	Why       string `json:"why,omitempty"` // why it is sensitive
}

// Recipient is a destination of a send: an e-mail address, a chat channel or
// user, a phone number.
type Recipient struct {
	Address string `json:"address"`
	// Field is where it came from: to, cc, bcc, channel, user, phone.
	Field string `json:"field"`
	// Name is the display name the call wrote beside the address ("Dana
	// Reyes" of "Dana Reyes <dana@corp.example>", or the "name" of a
	// recipient object {"email": …, "name": …}), as written; "" when it
	// wrote none. Whoever writes the call writes the name, so it is a
	// claim about whose the address is, never proof of it: the mandate
	// matches a person the user named against it only as a hint that
	// the address's provenance must confirm ("Dana <eve@evil.example>"
	// is not Dana on its own).
	Name string `json:"name,omitempty"`
}

// Command is one simple command from a parsed shell line.
type Command struct {
	Argv []string `json:"argv"`
	// Name is the program, without directory (argv[0] after wrappers).
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// ReadOnly is true only when the command is known to change nothing.
	ReadOnly    bool `json:"read_only"`
	Destructive bool `json:"destructive"`
	// Via names the wrappers or constructs it was found inside, e.g.
	// "sudo", "sh -c", "$(…)", "find -exec".
	Via  []string `json:"via,omitempty"`
	Note string   `json:"note,omitempty"`
	// RunsFetched is true when the program text this command runs (its
	// standard input, a -c string, eval's arguments, a script file) was
	// fetched from the network earlier in the same command line:
	// curl … | sh, bash -c "$(curl …)", source <(curl …),
	// curl -o x.sh … && sh x.sh. Code nobody has seen runs.
	RunsFetched bool `json:"runs_fetched"`
	// Hazard says why the command does more than its program's usual
	// work, or is "": it runs or loads code named on its command line
	// (go test -exec, LD_PRELOAD=…, git -c core.pager=…), changes the
	// user's global configuration (git config --global) or runs a
	// consequential target (make deploy). Such a command is never one of
	// the project's own build and test commands (builtin.dev-hazard).
	Hazard string `json:"hazard,omitempty"`
}
