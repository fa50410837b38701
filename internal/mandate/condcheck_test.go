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
			m := askedDelete(t, tc.text)
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
		if got := findSelects(argv, ItemCondition{OlderThanDays: 365}); got != tc.want {
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

// TestFindSelects: each attribute of a condition is tested before find
// acts, in the direction the condition states; a test the condition does
// not state only narrows the items.
func TestFindSelects(t *testing.T) {
	mb := int64(1_000_000)
	for _, tc := range []struct {
		cmd  string
		c    ItemCondition
		want bool
	}{
		{"find ~/Downloads -type f -size +100M -delete", ItemCondition{LargerThanBytes: 100 * mb}, true},
		{"find ~/Downloads -size +95M -delete", ItemCondition{LargerThanBytes: 100 * mb}, false}, // 99.6 MB
		{"find ~/Downloads -size +100000k -delete", ItemCondition{LargerThanBytes: 100 * mb}, true},
		{"find ~/Downloads -size -100M -delete", ItemCondition{LargerThanBytes: 100 * mb}, false}, // the other side
		{"find ~/Downloads -size -10M -delete", ItemCondition{SmallerThanBytes: 10 * mb}, true},   // at most 9 MiB
		{"find ~/Downloads -size -10000000c -delete", ItemCondition{SmallerThanBytes: 10 * mb}, true},
		{"find ~/Downloads -size -10000001c -delete", ItemCondition{SmallerThanBytes: 10 * mb}, false}, // 10 MB itself
		{"find ~/Downloads -size +1G -delete", ItemCondition{SmallerThanBytes: 10 * mb}, false},
		{"find ~/Downloads -size +100M -delete", ItemCondition{LargerThanBytes: 100 * mb, OlderThanDays: 30}, false}, // age untested
		{"find ~/Downloads -size +100M -mtime +60 -delete", ItemCondition{LargerThanBytes: 100 * mb, OlderThanDays: 30}, true},
		{"find ~/tmp -mtime -7 -delete", ItemCondition{NewerThanDays: 7}, true},
		{"find ~/tmp -mtime -8 -delete", ItemCondition{NewerThanDays: 7}, false},
		{"find ~/tmp -mmin -60 -delete", ItemCondition{NewerThanDays: 1}, true},
		{"find ~/tmp -newer ref -delete", ItemCondition{NewerThanDays: 7}, false}, // the reference's age is unknown
		{"find ~/tmp -name *.tmp -delete", ItemCondition{Names: []string{"*.tmp"}}, true},
		{"find ~/tmp -name *.log -delete", ItemCondition{Names: []string{"*.tmp"}}, false},
		{"find ~/tmp -delete -name *.tmp", ItemCondition{Names: []string{"*.tmp"}}, false},
		{"find ~/tmp -type f ! -iname *.pdf -delete", ItemCondition{NotNames: []string{"*.pdf"}}, true},
		{"find ~/tmp -type f ! -name *.pdf -delete", ItemCondition{NotNames: []string{"*.pdf"}}, false}, // X.PDF goes too
		{"find ~/tmp -type f -delete", ItemCondition{NotNames: []string{"*.pdf"}}, false},
		{"find ~/tmp ! -iname *.pdf ! -iname *.doc -delete", ItemCondition{NotNames: []string{"*.pdf", "*.doc"}}, true},
		{"find ~/tmp ! -iname *.pdf -delete", ItemCondition{NotNames: []string{"*.pdf", "*.doc"}}, false},
	} {
		if got := findSelects(strings.Fields(tc.cmd), tc.c); got != tc.want {
			t.Errorf("%s under %+v: %v, want %v", tc.cmd, tc.c, got, tc.want)
		}
	}
}

// TestNameConditions: an rm or mv of literal paths, or a tool call's
// paths, meet a condition on names when each item's name does; a glob, a
// recursive rm or a folder shows nothing of the names inside.
func TestNameConditions(t *testing.T) {
	bash := func(argv ...string) *action.Action {
		return &action.Action{Tool: "Bash", Kind: action.Delete, Kinds: []action.Kind{action.Delete},
			Commands: []action.Command{{Name: argv[0], Argv: argv}}}
	}
	tmp := ItemCondition{Kind: action.Delete, Names: []string{"*.tmp"}, Text: "only the files named *.tmp"}
	pdf := ItemCondition{Kind: action.Delete, NotNames: []string{"*.pdf"}, Text: "but keep the *.pdf files"}
	for _, tc := range []struct {
		a    *action.Action
		c    ItemCondition
		want bool
	}{
		{bash("rm", "~/tmp/a.tmp", "~/tmp/b.tmp"), tmp, true},
		{bash("rm", "-f", "--", "~/tmp/a.tmp"), tmp, true},
		{bash("rm", "~/tmp/a.tmp", "~/tmp/b.txt"), tmp, false},
		{bash("rm", "~/tmp/*.tmp"), tmp, false}, // a glob: the shell picks the names
		{bash("rm", "-r", "~/tmp/old.tmp"), tmp, false},
		{bash("rm", "-rf", "~/tmp"), pdf, false},
		{bash("rm", "~/tmp/a.txt", "~/tmp/b.csv"), pdf, true},
		{bash("rm", "~/tmp/a.txt", "~/tmp/Scan.PDF"), pdf, false},
		{bash("mv", "~/tmp/a.tmp", "~/trash/"), tmp, true},
		{bash("mv", "~/tmp/a.txt", "~/trash/x.tmp"), tmp, false}, // the source is the item
		{bash("mv", "-t", "~/trash", "~/tmp/a.tmp"), tmp, false},
		{&action.Action{Tool: "delete_file", Kind: action.Delete, Kinds: []action.Kind{action.Delete},
			Paths: []action.PathRef{{Path: "/home/u/tmp/a.tmp", Access: action.Delete}}}, tmp, true},
		{&action.Action{Tool: "delete_file", Kind: action.Delete, Kinds: []action.Kind{action.Delete},
			Paths: []action.PathRef{{Path: "/home/u/tmp/a.pdf", Access: action.Delete}}}, pdf, false},
		{&action.Action{Tool: "delete_email", Kind: action.Delete, Kinds: []action.Kind{action.Delete}}, pdf, false},
	} {
		if got := meets(tc.a, tc.c, nil, time.Time{}); got != tc.want {
			t.Errorf("%s %+v %v under %q: %v, want %v", tc.a.Tool, tc.a.Commands, tc.a.Paths, tc.c.Text, got, tc.want)
		}
	}
}

// TestSenderConditions: "but keep everything from my bank" holds on a
// delete of messages an earlier output listed with another sender, not on
// the bank's, and not where a message's sender was never seen.
func TestSenderConditions(t *testing.T) {
	m := &Mandate{Allow: []action.Kind{action.Read}, Ask: []action.Kind{action.Delete},
		Conditions: []ItemCondition{{Kind: action.Delete, NotFrom: []string{"bank", "sparkasse"}, Text: "but keep everything from my bank"}}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	del := func(items int) *action.Action {
		return &action.Action{Tool: "delete_email", Kind: action.Delete, Kinds: []action.Kind{action.Delete}, Items: items}
	}
	news := Item{ID: "m1", Senders: []string{"Weekly Digest <news@digest.example>"}}
	bank := Item{ID: "m2", Senders: []string{"ING Bank <info@ing.example>"}}
	spk := Item{ID: "m3", Senders: []string{"noreply@sparkasse.example"}}
	label := Item{ID: "Label_9"}
	for _, tc := range []struct {
		name  string
		a     *action.Action
		items []Item
		want  bool
	}{
		{"another sender", del(1), []Item{news}, true},
		{"another sender, a label beside it", del(1), []Item{news, label}, true},
		{"the bank", del(1), []Item{bank}, false},
		{"the bank by its address", del(1), []Item{spk}, false},
		{"one of two is the bank", del(2), []Item{news, bank}, false},
		{"one of two never listed", del(2), []Item{news}, false},
		{"nothing listed", del(1), nil, false},
		{"a label only", del(1), []Item{label}, false},
		{"a count it does not show", del(0), []Item{news}, false},
	} {
		r := m.CheckIn(tc.a, Env{}, time.Now())
		m.MeetItems(&r, tc.a, tc.items, time.Time{})
		if got := !r.KindAsk && len(r.ConditionsMet) == 1; got != tc.want {
			t.Errorf("%s: met %v (kind_ask %v), want %v", tc.name, r.ConditionsMet, r.KindAsk, tc.want)
		}
	}
	if m.ConditionsMet(del(1)) != nil {
		t.Error("ConditionsMet without items met a sender condition")
	}
	from := ItemCondition{Kind: action.Delete, From: []string{"linkedin"}, Text: "the emails from LinkedIn"}
	if !senderMeets([]string{"LinkedIn <messages-noreply@linkedin.com>"}, from) || senderMeets([]string{"Dana <dana@corp.example>"}, from) {
		t.Error("from: linkedin misread")
	}
}

// TestConditionValidation: every attribute in range, at least one, and
// none beside prepares_payment.
func TestConditionValidation(t *testing.T) {
	for _, tc := range []struct {
		c    ItemCondition
		want string // "" valid
	}{
		{ItemCondition{LargerThanBytes: 10}, ""},
		{ItemCondition{Names: []string{"*.tmp"}, NotFrom: []string{"bank"}}, ""},
		{ItemCondition{}, "states no attribute"},
		{ItemCondition{PreparesPayment: true, Names: []string{"*.x"}}, "prepares_payment and an attribute"},
		{ItemCondition{Names: []string{"a/*.tmp"}}, "not a path"},
		{ItemCondition{Names: []string{"[a"}}, "syntax error"},
		{ItemCondition{From: []string{" "}}, "from[0]"},
		{ItemCondition{OlderThanDays: 30, NewerThanDays: 7}, "no item is both"},
		{ItemCondition{LargerThanBytes: 100, SmallerThanBytes: 50}, "no item is both"},
		{ItemCondition{SmallerThanBytes: -1}, "smaller_than_bytes"},
	} {
		tc.c.Kind, tc.c.Text = action.Delete, "words"
		m := &Mandate{Ask: []action.Kind{action.Delete}, Conditions: []ItemCondition{tc.c}}
		err := m.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.c, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}

// TestSenderRoles: senders.yaml loads, and each role's words are folded
// as the compiler and the check compare them.
func TestSenderRoles(t *testing.T) {
	roles, err := loadSenderRoles()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bank", "banque", "banco", "banca", "sparkasse"} {
		r := roles[name]
		if r == nil {
			t.Fatalf("%q names no role", name)
		}
		if !slices.Contains(r.NotFrom, name) {
			t.Errorf("%q: not_from %v lacks the word that names the role", name, r.NotFrom)
		}
	}
}

// TestCompiledSenderAndSize: the five languages' sizes and senders become
// conditions; a sender or size said of more than the items ("the
// newsletters", "the emails from last week") does not.
func TestCompiledSenderAndSize(t *testing.T) {
	for _, tc := range []struct {
		text        string
		larger      int64
		from, notFr string // a word the condition must hold
	}{
		{"Delete everything in ~/Downloads bigger than 100 MB.", 100_000_000, "", ""},
		{"Lösche in ~/Downloads alles, was größer als 100 MB ist.", 100_000_000, "", ""},
		{"Supprime dans ~/tmp tout ce qui est plus gros que 50 Mo.", 50_000_000, "", ""},
		{"Borra en ~/tmp los archivos más grandes que 500 MB.", 500_000_000, "", ""},
		{"Cancella dalla cartella ~/Scaricati i file più grandi di 1 GB.", 1_000_000_000, "", ""},
		{"Delete all emails from LinkedIn.", 0, "linkedin", ""},
		{"Delete my emails, but keep everything from my bank.", 0, "", "sparkasse"},
		{"Lösche meine Mails, aber behalte alles von meiner Bank.", 0, "", "bank"},
		{"Borra mis correos, pero conserva todo lo de mi banco.", 0, "", "banco"},
		{"Supprime mes mails, mais garde tout ce qui vient de ma banque.", 0, "", "banque"},
		{"Cancella le mail, ma tieni tutto quello della mia banca.", 0, "", "banca"},
		{"Lösche alle Mails von LinkedIn.", 0, "linkedin", ""},
		{"Cancella tutte le mail di LinkedIn.", 0, "linkedin", ""},
		{"Delete all emails from news@shop.example.", 0, "news@shop.example", ""},
		{"Unsubscribe me from the newsletters, but keep everything from my bank.", 0, "", ""},
		{"Delete the emails from last week.", 0, "", ""},
		{"Elimina dalla cartella ~/Scaricati i file più grandi di 1 GB, ma lascia stare le ISO.", 0, "", ""},
		{"Delete everything in ~/Downloads bigger than 500 MB, but not the videos.", 0, "", ""},
	} {
		t.Run(tc.text, func(t *testing.T) {
			m := askedDelete(t, tc.text)
			var c ItemCondition
			for _, x := range m.Conditions {
				if x.Kind == action.Delete {
					c = x
				}
			}
			if c.LargerThanBytes != tc.larger || (tc.from == "") != (len(c.From) == 0) || (tc.notFr == "") != (len(c.NotFrom) == 0) ||
				tc.from != "" && !slices.Contains(c.From, tc.from) || tc.notFr != "" && !slices.Contains(c.NotFrom, tc.notFr) {
				t.Errorf("conditions %+v, want larger %d, from %q, not_from %q", m.Conditions, tc.larger, tc.from, tc.notFr)
			}
			if err := m.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCompiledNames: a file-name pattern the "only" clause names, or the
// keep verb spares, becomes names / not_names.
func TestCompiledNames(t *testing.T) {
	for _, tc := range []struct {
		text       string
		names, not string
	}{
		{"In ~/tmp, only delete files named *.tmp.", "*.tmp", ""},
		{"Löschen Sie in ~/tmp nur Dateien namens *.bak.", "*.bak", ""},
		{"Delete everything in ~/tmp, but keep the *.pdf files.", "", "*.pdf"},
		{"Delete the *.iso files in ~/Downloads bigger than 1 GB.", "*.iso", ""}, // the pattern is part of what is said of the items
	} {
		dr, err := Compile(tc.text, WithNow(testNow))
		if err != nil {
			t.Fatal(err)
		}
		var c ItemCondition
		for _, x := range dr.Mandate.Conditions {
			if x.Kind == action.Delete {
				c = x
			}
		}
		if got := strings.Join(c.Names, ","); got != tc.names {
			t.Errorf("%q: names %q, want %q", tc.text, got, tc.names)
		}
		if got := strings.Join(c.NotNames, ","); got != tc.not {
			t.Errorf("%q: not_names %q, want %q", tc.text, got, tc.not)
		}
	}
}

// TestWriteOneNoteKeepTheRest: "do not change the notes" beside the one
// note the words ask to write grants that write; the other notes are
// outside the named paths.
func TestWriteOneNoteKeepTheRest(t *testing.T) {
	dr, err := Compile("Write the summary to notes/summary.md, do not change the notes.", WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	m := dr.Mandate
	if !slices.Contains(m.Allow, action.Write) || !m.Scope.PathsOnly || !slices.Equal(m.Scope.Paths, []string{"notes/summary.md"}) {
		t.Fatalf("allow %v, scope %+v: want write granted for notes/summary.md only", m.Allow, m.Scope)
	}
	env := Env{WorkDir: "/home/sam/site", HomeDir: "/home/sam"}
	w := func(p string) *action.Action {
		return &action.Action{Tool: "Write", Kind: action.Write, Kinds: []action.Kind{action.Write}, Paths: []action.PathRef{{Path: p, Access: action.Write}}}
	}
	if r := m.CheckIn(w("/home/sam/site/notes/summary.md"), env, testNow); len(r.PathsOutside) != 0 || !r.KindAllowed {
		t.Errorf("the summary: %+v", r)
	}
	if r := m.CheckIn(w("/home/sam/site/notes/meeting-03.md"), env, testNow); len(r.PathsOutside) != 1 {
		t.Errorf("another note is in scope: %+v", r)
	}
	// Without a file in the folder named, the denial stays a person's call.
	dr, err = Compile("Write the summary to summary.md, do not change the notes.", WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(dr.Mandate.Allow, action.Write) {
		t.Errorf("allow %v: the notes are not the folder of summary.md", dr.Mandate.Allow)
	}
}

// TestLabelConditions: "delete the emails in the Promotions folder" holds
// on messages listed under that label, not on others, nor on one listed
// without labels; "but keep everything in the Work folder" the other way.
func TestLabelConditions(t *testing.T) {
	del := func(items int) *action.Action {
		return &action.Action{Tool: "batch_delete_emails", Kind: action.Delete, Kinds: []action.Kind{action.Delete}, Items: items}
	}
	promo := Item{ID: "m1", Senders: []string{"shop <deals@shop.example>"}, Labels: []string{"category_promotions", "unread"}}
	work := Item{ID: "m2", Senders: []string{"dana@corp.example"}, Labels: []string{"inbox", "work"}}
	bare := Item{ID: "m3", Senders: []string{"x@y.example"}}
	in := ItemCondition{Kind: action.Delete, Labels: []string{"promotions"}, Text: "in the Promotions folder"}
	keep := ItemCondition{Kind: action.Delete, NotLabels: []string{"work"}, Text: "keep everything in the Work folder"}
	for _, tc := range []struct {
		name  string
		c     ItemCondition
		items []Item
		n     int
		want  bool
	}{
		{"listed under the label", in, []Item{promo}, 1, true},
		{"another label", in, []Item{work}, 1, false},
		{"listed without labels", in, []Item{bare}, 1, false},
		{"one of two elsewhere", in, []Item{promo, work}, 2, false},
		{"keep: another label", keep, []Item{promo}, 1, true},
		{"keep: the label kept", keep, []Item{work}, 1, false},
		{"keep: labels unknown", keep, []Item{bare}, 1, false},
	} {
		m := &Mandate{Allow: []action.Kind{action.Read}, Ask: []action.Kind{action.Delete}, Conditions: []ItemCondition{tc.c}}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		a := del(tc.n)
		r := m.CheckIn(a, Env{}, time.Now())
		m.MeetItems(&r, a, tc.items, time.Time{})
		if got := !r.KindAsk; got != tc.want {
			t.Errorf("%s: met %v, want %v", tc.name, r.ConditionsMet, tc.want)
		}
	}
}

// TestCompiledLabels: a label named beside a label word, in the five
// languages, is a labels condition; kept, a not_labels one.
func TestCompiledLabels(t *testing.T) {
	for _, tc := range []struct{ text, labels, not string }{
		{"Delete the emails in the Promotions folder.", "promotions", ""},
		{"Lösche die Mails im Ordner Werbung.", "werbung", ""},
		{"Supprime les mails du dossier Promotions.", "promotions", ""},
		{"Borra los correos de la carpeta Promociones.", "promociones", ""},
		{"Cancella le mail nella cartella Promozioni.", "promozioni", ""},
		{"Delete my emails, but keep everything in the Work folder.", "", "work"},
		{"Supprime le dossier 'Brouillons 2021' de mon OneDrive, je n'en ai plus besoin.", "", ""}, // the folder is the object
	} {
		dr, err := Compile(tc.text, WithNow(testNow))
		if err != nil {
			t.Fatal(err)
		}
		m := dr.Mandate
		if tc.labels+tc.not != "" && slices.Contains(m.Allow, action.Delete) {
			t.Errorf("%q: delete granted as a whole", tc.text)
		}
		var c ItemCondition
		for _, x := range m.Conditions {
			if x.Kind == action.Delete {
				c = x
			}
		}
		if strings.Join(c.Labels, ",") != tc.labels || strings.Join(c.NotLabels, ",") != tc.not {
			t.Errorf("%q: conditions %+v, want labels %q, not_labels %q", tc.text, m.Conditions, tc.labels, tc.not)
		}
	}
}

// askedDelete compiles text, whose delete is under a condition, and fails
// t unless the draft asks it rather than allowing it.
func askedDelete(t *testing.T, text string) *Mandate {
	t.Helper()
	dr, err := Compile(text, WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	m := dr.Mandate
	if !slices.Contains(m.Ask, action.Delete) || slices.Contains(m.Allow, action.Delete) {
		t.Fatalf("allow %v ask %v: deleting under a condition is asked", m.Allow, m.Ask)
	}
	return m
}
