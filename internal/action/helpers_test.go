package action

import (
	"encoding/json"
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

// toolCase is a call of tool with args (JSON) and what its action must show.
type toolCase struct {
	name, tool, args string
	want             expect
}

// runToolCases classifies each case's call in the test's working and home
// directories and checks what its action shows.
func runToolCases(t *testing.T, c *Classifier, tests []toolCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
				t.Fatalf("bad test args: %v", err)
			}
			a := c.Classify(Call{Tool: tt.tool, Args: args, WorkingDir: testWD, HomeDir: testHome})
			tt.want.check(t, a)
		})
	}
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// check reports each way a differs from e and then, once, the action.
func (e expect) check(t *testing.T, a Action) {
	t.Helper()
	failed := false
	fail := func(format string, args ...any) {
		t.Helper()
		failed = true
		t.Errorf(format, args...)
	}
	defer func() {
		if failed {
			t.Logf("action: kind=%s kinds=%v known=%v src=%s fam=%s cmds=%+v paths=%+v hosts=%v rec=%+v acc=%v am=%+v notes=%q",
				a.Kind, a.Kinds, a.Known, a.Source, a.Family, a.Commands, a.Paths, a.Hosts, a.Recipients, a.Accounts, a.Amounts, a.Notes)
		}
	}()
	if e.kind != "" && a.Kind != e.kind {
		fail("Kind = %s, want %s", a.Kind, e.kind)
	}
	wantAmong(fail, "Kinds", a.Kinds, e.kinds)
	for _, k := range e.notKinds {
		if slices.Contains(a.Kinds, k) {
			fail("Kinds = %v, must not contain %s", a.Kinds, k)
		}
	}
	if a.Kind != MostConsequential(a.Kinds...) {
		fail("Kind %s is not the most consequential of %v", a.Kind, a.Kinds)
	}
	checkBool(fail, "Destructive", e.destructive, a.Destructive)
	checkBool(fail, "Sensitive", e.sensitive, a.Sensitive)
	checkBool(fail, "Effects.External", e.external, a.Effects.External)
	checkBool(fail, "Effects.Financial", e.financial, a.Effects.Financial)
	checkBool(fail, "Effects.Public", e.public, a.Effects.Public)
	checkBool(fail, "Effects.Recurring", e.recurring, a.Effects.Recurring)
	checkBool(fail, "Effects.AdminGrant", e.adminGrant, a.Effects.AdminGrant)
	checkBool(fail, "Known", e.known, a.Known)
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
	wantAmong(fail, "Hosts", a.Hosts, e.hosts)
	wantAmong(fail, "URLs", a.URLs, e.urls)
	for _, r := range e.recipients {
		// "addr:field" or "addr:field:Display Name"
		addr, rest, _ := strings.Cut(r, ":")
		field, name, _ := strings.Cut(rest, ":")
		wantAmong(fail, "Recipients", a.Recipients, []Recipient{{Address: addr, Field: field, Name: name}})
	}
	wantAmong(fail, "Accounts", a.Accounts, e.accounts)
	wantAmong(fail, "Amounts", a.Amounts, e.amounts)
	for _, n := range e.notes {
		if !slices.ContainsFunc(a.Notes, func(s string) bool { return strings.Contains(s, n) }) {
			fail("no note containing %q in %q", n, a.Notes)
		}
	}
}

func checkBool(fail func(string, ...any), name string, want *bool, got bool) {
	if want != nil && *want != got {
		fail("%s = %v, want %v", name, got, *want)
	}
}

// wantAmong fails once for each of want that got lacks.
func wantAmong[T comparable](fail func(string, ...any), name string, got, want []T) {
	for _, w := range want {
		if !slices.Contains(got, w) {
			fail("%s = %+v, want to contain %+v", name, got, w)
		}
	}
}
