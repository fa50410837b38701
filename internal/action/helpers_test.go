package action

import (
	"slices"
	"strings"
	"testing"
)

const (
	testWD   = "/home/u/proj"
	testHome = "/home/u"
)

func newTestClassifier(t testing.TB) *Classifier {
	t.Helper()
	c, err := NewClassifier()
	if err != nil {
		t.Fatalf("NewClassifier: %v", err)
	}
	return c
}

// expect describes what a classified action must show. Zero fields are not
// checked.
type expect struct {
	kind        Kind
	kinds       []Kind // must all be among Kinds
	notKinds    []Kind // must not be among Kinds
	destructive *bool
	sensitive   *bool
	external    *bool
	financial   *bool
	public      *bool
	recurring   *bool
	adminGrant  *bool
	readOnly    *bool // every command read-only (shell)
	known       *bool
	source      string
	family      string
	commands    []string // command names that must appear
	via         []string // Via entries that must appear on some command
	paths       []string // "path:access" or "path:access:sensitive"
	noPaths     []string // paths that must not appear
	hosts       []string
	urls        []string
	recipients  []string // "address:field"
	accounts    []string
	amounts     []Amount
	notes       []string // substrings that must appear in some note
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func (e expect) check(t *testing.T, a Action) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
	}
	if e.kind != "" && a.Kind != e.kind {
		fail("Kind = %s, want %s", a.Kind, e.kind)
	}
	for _, k := range e.kinds {
		if !slices.Contains(a.Kinds, k) {
			fail("Kinds = %v, want to contain %s", a.Kinds, k)
		}
	}
	for _, k := range e.notKinds {
		if slices.Contains(a.Kinds, k) {
			fail("Kinds = %v, must not contain %s", a.Kinds, k)
		}
	}
	if a.Kind != MostConsequential(a.Kinds...) {
		fail("Kind %s is not the most consequential of %v", a.Kind, a.Kinds)
	}
	checkBool(t, "Destructive", e.destructive, a.Destructive)
	checkBool(t, "Sensitive", e.sensitive, a.Sensitive)
	checkBool(t, "Effects.External", e.external, a.Effects.External)
	checkBool(t, "Effects.Financial", e.financial, a.Effects.Financial)
	checkBool(t, "Effects.Public", e.public, a.Effects.Public)
	checkBool(t, "Effects.Recurring", e.recurring, a.Effects.Recurring)
	checkBool(t, "Effects.AdminGrant", e.adminGrant, a.Effects.AdminGrant)
	checkBool(t, "Known", e.known, a.Known)
	if e.readOnly != nil {
		ro := len(a.Commands) > 0
		for _, c := range a.Commands {
			ro = ro && c.ReadOnly
		}
		if ro != *e.readOnly {
			fail("all commands read-only = %v, want %v (%+v)", ro, *e.readOnly, a.Commands)
		}
		if *e.readOnly && a.Kind != Read {
			fail("read-only line has Kind %s", a.Kind)
		}
	}
	if e.source != "" && a.Source != e.source {
		fail("Source = %q, want %q", a.Source, e.source)
	}
	if e.family != "" && a.Family != e.family {
		fail("Family = %q, want %q", a.Family, e.family)
	}
	for _, n := range e.commands {
		if !slices.ContainsFunc(a.Commands, func(c Command) bool { return c.Name == n }) {
			fail("no command %q in %+v", n, a.Commands)
		}
	}
	for _, v := range e.via {
		if !slices.ContainsFunc(a.Commands, func(c Command) bool { return slices.Contains(c.Via, v) }) {
			fail("no command found via %q in %+v", v, a.Commands)
		}
	}
	for _, p := range e.paths {
		parts := strings.Split(p, ":")
		found := slices.ContainsFunc(a.Paths, func(r PathRef) bool {
			if r.Path != parts[0] || string(r.Access) != parts[1] {
				return false
			}
			return len(parts) < 3 || (parts[2] == "sensitive") == r.Sensitive
		})
		if !found {
			fail("no path %s in %+v", p, a.Paths)
		}
	}
	for _, p := range e.noPaths {
		if slices.ContainsFunc(a.Paths, func(r PathRef) bool { return r.Path == p }) {
			fail("path %s must not be recorded: %+v", p, a.Paths)
		}
	}
	for _, h := range e.hosts {
		if !slices.Contains(a.Hosts, h) {
			fail("Hosts = %v, want %s", a.Hosts, h)
		}
	}
	for _, u := range e.urls {
		if !slices.Contains(a.URLs, u) {
			fail("URLs = %v, want %s", a.URLs, u)
		}
	}
	for _, r := range e.recipients {
		addr, field, _ := strings.Cut(r, ":")
		if !slices.Contains(a.Recipients, Recipient{Address: addr, Field: field}) {
			fail("Recipients = %+v, want %s", a.Recipients, r)
		}
	}
	for _, acct := range e.accounts {
		if !slices.Contains(a.Accounts, acct) {
			fail("Accounts = %v, want %s", a.Accounts, acct)
		}
	}
	for _, am := range e.amounts {
		if !slices.Contains(a.Amounts, am) {
			fail("Amounts = %+v, want %+v", a.Amounts, am)
		}
	}
	for _, n := range e.notes {
		if !slices.ContainsFunc(a.Notes, func(s string) bool { return strings.Contains(s, n) }) {
			fail("no note containing %q in %q", n, a.Notes)
		}
	}
}

func checkBool(t *testing.T, name string, want *bool, got bool) {
	t.Helper()
	if want != nil && *want != got {
		t.Errorf("%s = %v, want %v", name, got, *want)
	}
}
