package mandate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

// Rule 15, ages: "older than a year", "älter als 30 Tage" become a
// condition a call can meet — when the age is all the words say of the
// items ("files", "alles", a named folder); "the logs older than …" says
// more, and stays asked call by call.
func TestRule15AgeConditions(t *testing.T) {
	for _, tc := range []struct {
		text string
		days int // 0: no condition
	}{
		{"Clean up my Downloads folder, only delete files older than a year.", 365},
		{"Delete everything in ~/tmp older than 2 weeks", 14},
		{"Lösche in ~/tmp alles, was älter als 30 Tage ist, sonst nichts.", 30},
		{"Supprime les fichiers de ~/tmp plus anciens que 2 semaines", 14},
		{"Borra los archivos de ~/tmp más antiguos que un año", 365},
		{"Cancella i file in ~/tmp più vecchi di 3 mesi", 90},
		{"Only delete the logs older than 30 days in ./tmp", 0},
		{"delete uploads older than 7 days", 0},
		{"Delete files older than a year, but keep the photos", 0},
	} {
		t.Run(tc.text, func(t *testing.T) {
			dr, err := Compile(tc.text, WithNow(testNow))
			if err != nil {
				t.Fatal(err)
			}
			m := dr.Mandate
			if !slices.Contains(m.Ask, action.Delete) || slices.Contains(m.Allow, action.Delete) {
				t.Fatalf("allow %v ask %v: deleting under a condition is asked", m.Allow, m.Ask)
			}
			got := 0
			for _, c := range m.Conditions {
				if c.Kind == action.Delete {
					got = c.OlderThanDays
				}
			}
			if got != tc.days {
				t.Errorf("conditions %+v, want delete older than %d days", m.Conditions, tc.days)
			}
			if err := m.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestFindSelectsOlder(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"find ~/Downloads -type f -mtime +365 -delete", true},
		{"find ~/Downloads -mtime +400 -exec rm {} +", true},
		{"find ~/Downloads -mmin +525600 -delete", true},
		{"find ~/Downloads -mtime +30 -delete", false},  // newer than a year
		{"find ~/Downloads -mtime -30 -delete", false},  // newer
		{"find ~/Downloads -mtime 400 -delete", false},  // exactly, not older
		{"find ~/Downloads -mtime +365 -print", false},  // acts on nothing
		{"find ~/Downloads -delete -mtime +365", false}, // find acts left to right: deletes first
		{"find . -mtime +365 -o -name x -delete", false},
		{"find . ! -mtime +365 -delete", false},
		{"find . ( -mtime +365 ) -delete", false},
	} {
		argv := strings.Fields(tc.cmd)
		if got := findSelectsOlder(argv, 365); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// TestConditionsMetReported: the report carries the condition's words and
// no kind_ask when the call meets it; an rm or an MCP delete does not.
func TestConditionsMetReported(t *testing.T) {
	m := &Mandate{Allow: []action.Kind{action.Read}, Ask: []action.Kind{action.Delete},
		Conditions: []ItemCondition{{Kind: action.Delete, OlderThanDays: 30, Text: "older than 30 days"}}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	del := []action.Kind{action.Read, action.Delete}
	find := &action.Action{Tool: "Bash", Kind: action.Delete, Kinds: del, Commands: []action.Command{
		{Name: "find", Argv: strings.Fields("find /t -mtime +60 -delete")}}}
	rm := &action.Action{Tool: "Bash", Kind: action.Delete, Kinds: del, Commands: []action.Command{
		{Name: "find", Argv: strings.Fields("find /t -mtime +60 -delete")}, {Name: "rm", Argv: []string{"rm", "-rf", "/t"}}}}
	mcp := &action.Action{Tool: "delete_email", Kind: action.Delete, Kinds: del}
	if r := m.CheckIn(find, Env{}, time.Now()); r.KindAsk || !slices.Equal(r.ConditionsMet, []string{"older than 30 days"}) {
		t.Errorf("find: kind_ask %v, met %v", r.KindAsk, r.ConditionsMet)
	}
	for _, a := range []*action.Action{rm, mcp} {
		if r := m.CheckIn(a, Env{}, time.Now()); !r.KindAsk || len(r.ConditionsMet) != 0 {
			t.Errorf("%s: kind_ask %v, met %v; want asked", a.Tool, r.KindAsk, r.ConditionsMet)
		}
	}
	bad := *m
	bad.Ask = nil
	bad.Allow = []action.Kind{action.Read}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "not in ask") {
		t.Errorf("a condition on a kind not asked: %v", err)
	}
}

// TestConditionsNarrowOnDelegationAndAmendment: a child keeps a parent's
// condition only where it lets such a call through itself; newer words
// replace the conditions of the kinds they speak of.
func TestConditionsNarrowOnDelegationAndAmendment(t *testing.T) {
	parent := &Mandate{Allow: []action.Kind{action.Read}, Ask: []action.Kind{action.Delete},
		Conditions: []ItemCondition{{Kind: action.Delete, OlderThanDays: 30, Text: "older than 30 days"}}}
	childAllows := &Mandate{Allow: []action.Kind{action.Read, action.Delete}}
	childAsks := &Mandate{Allow: []action.Kind{action.Read}, Ask: []action.Kind{action.Delete}}
	if got := Intersect(parent, childAllows).Conditions; len(got) != 1 {
		t.Errorf("child allows delete: conditions %v, want the parent's", got)
	}
	if got := Intersect(parent, childAsks).Conditions; len(got) != 0 {
		t.Errorf("child asks every delete: conditions %v, want none", got)
	}
	if got := Intersect(parent, &Mandate{Allow: []action.Kind{action.Read}}).Conditions; len(got) != 0 {
		t.Errorf("child grants no delete: conditions %v, want none", got)
	}
	if got := Amend(parent, &Mandate{Allow: []action.Kind{action.Delete}}); len(got.Conditions) != 0 {
		t.Errorf("amended to allow delete: conditions %v, want none", got.Conditions)
	}
}

// Rule 16, preparing a payment: "buy …" names paying, not the cart, form
// or quote it is prepared in. Writing is asked under the condition that
// the call only prepares the payment: a tool call that changes no file and
// runs no command meets it; an Edit or a command line does not.
func TestRule16PreparesPayment(t *testing.T) {
	dr, err := Compile("Buy the book on shop.example, up to 25 EUR.", WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	m := dr.Mandate
	if slices.Contains(m.Allow, action.Write) || !slices.Contains(m.Ask, action.Write) {
		t.Fatalf("allow %v ask %v: write is asked, not granted", m.Allow, m.Ask)
	}
	if len(m.Conditions) != 1 || !m.Conditions[0].PreparesPayment || m.Conditions[0].Kind != action.Write {
		t.Fatalf("conditions %+v, want one write prepares_payment", m.Conditions)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	write := []action.Kind{action.Write}
	for _, tc := range []struct {
		name string
		a    *action.Action
		met  bool
	}{
		{"a cart's add_to_cart", &action.Action{Tool: "add_to_cart", Kind: action.Write, Kinds: write}, true},
		{"a payee added", &action.Action{Tool: "add_payee", Kind: action.Write, Kinds: write, Accounts: []string{"DE89370400440532013000"}}, true},
		{"an Edit of a file", &action.Action{Tool: "Edit", Kind: action.Write, Kinds: write,
			Paths: []action.PathRef{{Path: "/home/sam/notes.md", Access: action.Write}}}, false},
		{"a command line", &action.Action{Tool: "Bash", Kind: action.Write, Kinds: write,
			Commands: []action.Command{{Name: "tee", Argv: []string{"tee", "x"}, Kind: action.Write}}}, false},
		{"a destructive tool call", &action.Action{Tool: "update_cart", Kind: action.Write, Kinds: write, Destructive: true}, false},
		{"a delete beside the write", &action.Action{Tool: "empty_cart", Kind: action.Write, Kinds: []action.Kind{action.Write, action.Delete}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := m.CheckIn(tc.a, Env{WorkDir: "/home/sam"}, testNow)
			if got := len(r.ConditionsMet) > 0; got != tc.met || r.KindAsk == tc.met {
				t.Errorf("conditions met %v, kind ask %v; want met %v", r.ConditionsMet, r.KindAsk, tc.met)
			}
		})
	}
	bad := &Mandate{Allow: []action.Kind{action.Pay}, Ask: write,
		Conditions: []ItemCondition{{Kind: action.Write, PreparesPayment: true, OlderThanDays: 3, Text: "buy"}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "states one") {
		t.Errorf("Validate = %v, want a condition stating both refused", err)
	}
}
