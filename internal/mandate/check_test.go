package mandate

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

func paths(ps ...string) []action.PathRef {
	var out []action.PathRef
	for _, p := range ps {
		out = append(out, action.PathRef{Path: p, Access: action.Read})
	}
	return out
}

func recipients(rs ...string) []action.Recipient {
	var out []action.Recipient
	for _, r := range rs {
		out = append(out, action.Recipient{Address: r, Field: "to"})
	}
	return out
}

func TestCheckPaths(t *testing.T) {
	m := &Mandate{Scope: Scope{Paths: []string{"docs/**", "/etc/hosts", "/srv/*/config.yaml", "~/notes/**", "**/*.md"}}}
	tests := []struct {
		path    string
		workDir string
		outside bool
	}{
		{"/w/src/main.go", "/w", false},       // the working directory is in scope
		{"src/main.go", "/w", false},          // relative to it
		{"/w", "/w", false},                   // the directory itself
		{"/w/../etc/passwd", "/w", true},      // cleaned before matching
		{"/wx/file", "/w", true},              // a sibling with a common prefix
		{"/w/docs/a/b.txt", "/w", false},      // relative glob taken against workDir
		{"/other/docs/a.txt", "/w", true},     // but not elsewhere
		{"/etc/hosts", "/w", false},           // absolute entry
		{"/etc/hosts.allow", "/w", true},      // literal, not a prefix
		{"/srv/app/config.yaml", "/w", false}, // * matches one segment
		{"/srv/a/b/config.yaml", "/w", true},  // but not two
		{"/w/x/y/README.md", "/w", false},     // ** across directories
		{"/x/y/README.md", "/w", true},        // relative globs stay under workDir
		{"~/notes/today.txt", "/w", false},    // home paths stay symbolic
		{"~/other.txt", "/w", true},
		{"/tmp/x", "", true}, // no working directory: nothing implicit
		{"docs/x", "", false},
	}
	for _, tt := range tests {
		r := m.Check(&action.Action{Kind: action.Read, Paths: paths(tt.path)}, tt.workDir, testNow)
		if got := len(r.PathsOutside) > 0; got != tt.outside {
			t.Errorf("%s in %q: outside = %v (%v), want %v", tt.path, tt.workDir, got, r.PathsOutside, tt.outside)
		}
	}
}

func TestCheckSensitivePaths(t *testing.T) {
	m := &Mandate{Scope: Scope{Paths: []string{"config/.env.test"}}}
	a := &action.Action{Kind: action.Read, Paths: []action.PathRef{
		{Path: "/w/.env", Sensitive: true},
		{Path: "/w/config/.env.test", Sensitive: true},
		{Path: "/home/u/.ssh/id_ed25519", Sensitive: true},
		{Path: "/w/README.md"},
	}}
	r := m.Check(a, "/w", testNow)
	if want := []string{"/w/.env", "/home/u/.ssh/id_ed25519"}; !slices.Equal(r.SensitivePathsOutside, want) {
		t.Errorf("SensitivePathsOutside = %v, want %v", r.SensitivePathsOutside, want)
	}
	if want := []string{"/home/u/.ssh/id_ed25519"}; !slices.Equal(r.PathsOutside, want) {
		t.Errorf("PathsOutside = %v, want %v", r.PathsOutside, want)
	}
}

func TestCheckHosts(t *testing.T) {
	m := &Mandate{Scope: Scope{Hosts: []string{"example.com", "*.shop.example", "API.Partner.io"}}}
	tests := []struct {
		host    string
		outside bool
	}{
		{"example.com", false},
		{"EXAMPLE.COM", false},
		{"example.com:443", false},
		{"example.com.", false},
		{"www.example.com", false},
		{"api.example.com", true},
		{"evil-example.com", true},
		{"a.shop.example", false},
		{"a.b.shop.example", false},
		{"shop.example", true},
		{"api.partner.io", false},
		{"partner.io", true},
		{"[::1]:8080", true},
	}
	for _, tt := range tests {
		r := m.Check(&action.Action{Kind: action.Fetch, Hosts: []string{tt.host}}, "", testNow)
		if got := len(r.HostsOutside) > 0; got != tt.outside {
			t.Errorf("%s: outside = %v, want %v", tt.host, got, tt.outside)
		}
	}
	// Hosts come from URLs too.
	r := m.Check(&action.Action{Kind: action.Fetch, URLs: []string{"https://user@www.example.com:8443/x?y", "http://evil.test/"}}, "", testNow)
	if want := []string{"evil.test"}; !slices.Equal(r.HostsOutside, want) {
		t.Errorf("HostsOutside = %v, want %v", r.HostsOutside, want)
	}
}

func TestCheckRecipients(t *testing.T) {
	m := &Mandate{Scope: Scope{
		Recipients: []string{"Bob@Example.com", "*@corp.example", "@team.example", "#general", "+49 170 1234567", "Claire Dupont"},
		Names:      []string{"Stadtwerke München"},
	}}
	tests := []struct {
		addr    string
		outside bool
	}{
		{"bob@example.com", false},
		{"BOB@EXAMPLE.COM", false},
		{"Bob <bob@example.com>", false},
		{"mailto:bob@example.com", false},
		{"eve@example.com", true},
		{"anyone@corp.example", false},
		{"x@sub.corp.example", true},
		{"y@team.example", false},
		{"#general", false},
		{"general", false},
		{"#random", true},
		{"+491701234567", false},
		{"+49 170 7654321", true},
		{"claire dupont", false},
		// A display name puts no address in scope on its own: the call
		// writes it (RecipientsByName reports these for policy to hold
		// against the address's provenance; TestCheckRecipientsByName).
		{"Claire Dupont <claire@dupont.example>", true},
		{"Stadtwerke München <billing@swm.example>", true},
		{"stadtwerke münchen", false},
		{"Eve <bob@evil.example>", true},
	}
	for _, tt := range tests {
		r := m.Check(&action.Action{Kind: action.Send, Recipients: recipients(tt.addr)}, "", testNow)
		if got := len(r.RecipientsOutside) > 0; got != tt.outside {
			t.Errorf("%q: outside = %v, want %v", tt.addr, got, tt.outside)
		}
	}
}

func TestCheckAccounts(t *testing.T) {
	m := &Mandate{Scope: Scope{Accounts: []string{"DE89 3704 0044 0532 0130 00", "acct-7"}, Names: []string{"Stadtwerke München"}}}
	tests := []struct {
		acct    string
		outside bool
	}{
		{"DE89370400440532013000", false},
		{"de89 3704 0044 0532 0130 00", false},
		{"GB82WEST12345698765432", true},
		{"acct-7", false},
		{"ACCT-7", true}, // account ids compare exactly
		{"stadtwerke münchen", false},
	}
	for _, tt := range tests {
		r := m.Check(&action.Action{Kind: action.Pay, Accounts: []string{tt.acct}}, "", testNow)
		if got := len(r.AccountsOutside) > 0; got != tt.outside {
			t.Errorf("%q: outside = %v, want %v", tt.acct, got, tt.outside)
		}
	}
}

func TestCheckNone(t *testing.T) {
	m := &Mandate{Scope: Scope{
		Hosts: []string{"example.com"},
		Names: []string{"Bob"},
		None:  []string{DimPaths, DimRecipients, DimAccounts},
	}}
	a := &action.Action{Kind: action.Send, Paths: paths("/w/a.txt"), Hosts: []string{"example.com"},
		Recipients: recipients("Bob <bob@example.com>"), Accounts: []string{"Bob"}}
	r := m.Check(a, "/w", testNow)
	if len(r.PathsOutside) != 1 || len(r.RecipientsOutside) != 1 || len(r.AccountsOutside) != 1 {
		t.Errorf("a dimension that matches nothing let something in: %+v", r)
	}
	if len(r.HostsOutside) != 0 {
		t.Errorf("hosts = %v, want in scope", r.HostsOutside)
	}
}

func TestCheckProhibitions(t *testing.T) {
	m := &Mandate{Prohibitions: []Prohibition{
		{Kind: action.Pay, Text: "do not buy"},
		{Kind: action.Send, Target: "bob@x.com", Text: "don't email bob"},
		{Target: "prod/**", Text: "don't touch prod/"},
		{Kind: action.Fetch, Target: "*.evil.example", Text: "stay off evil"},
		{Kind: action.Pay, Target: "Acme Corp", Text: "never pay Acme"},
		{Kind: action.Delete, Target: "DE89370400440532013000", Text: "keep that account"},
	}}
	tests := []struct {
		name string
		a    action.Action
		want []string
	}{
		{"untargeted kind", action.Action{Kind: action.Pay}, []string{"do not buy"}},
		{"kind among several", action.Action{Kind: action.Pay, Kinds: []action.Kind{action.Read, action.Pay}}, []string{"do not buy"}},
		{"targeted recipient", action.Action{Kind: action.Send, Recipients: recipients("BOB@x.com")}, []string{"don't email bob"}},
		{"other recipient", action.Action{Kind: action.Send, Recipients: recipients("alice@x.com")}, nil},
		{"any kind on a path", action.Action{Kind: action.Read, Paths: paths("/w/prod/db.yaml")}, []string{"don't touch prod/"}},
		{"ancestor of the path", action.Action{Kind: action.Delete, Paths: paths("/w")}, []string{"don't touch prod/"}},
		{"not the path", action.Action{Kind: action.Write, Paths: paths("/w/production/x")}, nil},
		{"host pattern", action.Action{Kind: action.Fetch, URLs: []string{"https://a.evil.example/x"}}, []string{"stay off evil"}},
		{"payee name", action.Action{Kind: action.Pay, Accounts: []string{"acme corp"}}, []string{"do not buy", "never pay Acme"}},
		{"iban", action.Action{Kind: action.Delete, Accounts: []string{"de89 3704 0044 0532 0130 00"}}, []string{"keep that account"}},
		{"unrelated", action.Action{Kind: action.Read, Paths: paths("/w/src/a.go")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := m.Check(&tt.a, "/w", testNow)
			if !slices.Equal(r.Prohibited, tt.want) && !(len(r.Prohibited) == 0 && len(tt.want) == 0) {
				t.Errorf("Prohibited = %q, want %q", r.Prohibited, tt.want)
			}
		})
	}
}

func TestCheckBranchProhibition(t *testing.T) {
	m := &Mandate{
		Allow:        []action.Kind{action.Read, action.Send},
		Prohibitions: []Prohibition{{Kind: action.Send, Target: BranchTarget + "main", Text: "don't push to main"}},
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("a branch target does not validate: %v", err)
	}
	push := func(argv ...string) action.Action {
		return action.Action{Kind: action.Send, Commands: []action.Command{{Argv: argv, Name: argv[0], Kind: action.Send}}}
	}
	tests := []struct {
		name string
		a    action.Action
		want bool
	}{
		{"push to main", push("git", "push", "origin", "main"), true},
		{"force push to main", push("git", "push", "--force", "origin", "+main"), true},
		{"push a local branch to main", push("git", "push", "origin", "fix:refs/heads/main"), true},
		{"push HEAD", push("git", "push", "origin", "HEAD"), true},
		{"push with no refspec: the branch is unknown", push("git", "push"), true},
		{"push every branch", push("git", "push", "--all", "origin"), true},
		{"push a feature branch", push("git", "push", "-u", "origin", "feat/x"), false},
		{"push a tag", push("git", "push", "origin", "v1.2.0"), false},
		{"push main to another name", push("git", "push", "origin", "main:backup"), false},
		{"global options before push", push("git", "-C", "/w", "push", "origin", "main"), true},
		{"push as a commit message", push("git", "commit", "-m", "push main"), false},
		{"a send with no command", action.Action{Kind: action.Send, Recipients: recipients("a@b.example")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := m.Check(&tt.a, "/w", testNow)
			if got := len(r.Prohibited) > 0; got != tt.want {
				t.Errorf("prohibited = %v (%q), want %v", got, r.Prohibited, tt.want)
			}
		})
	}
	// A branch target stays a branch when paths are resolved.
	m.Prohibitions[0].Target = BranchTarget + "release/1.0"
	if got := m.ResolvePaths("/w").Prohibitions[0].Target; got != BranchTarget+"release/1.0" {
		t.Errorf("ResolvePaths changed the branch target to %q", got)
	}
}

func TestCheckHome(t *testing.T) {
	m := &Mandate{
		Scope:        Scope{Paths: []string{"~/Documents/invoices/**"}},
		Prohibitions: []Prohibition{{Target: "~/Private/**", Text: "don't touch ~/Private"}},
	}
	tests := []struct {
		name     string
		env      Env
		path     string
		outside  bool
		prohibit bool
	}{
		{"symbolic path", Env{}, "~/Documents/invoices/a.pdf", false, false},
		{"known home", Env{HomeDir: "/home/nora"}, "/home/nora/Documents/invoices/a.pdf", false, false},
		{"known home, another user's folder", Env{HomeDir: "/home/nora"}, "/home/bob/Documents/invoices/a.pdf", true, false},
		{"unknown home, Linux layout", Env{}, "/home/nora/Documents/invoices/a.pdf", false, false},
		{"unknown home, macOS layout", Env{}, "/Users/nora/Documents/invoices/a.pdf", false, false},
		{"unknown home, root", Env{}, "/root/Documents/invoices/a.pdf", false, false},
		{"not under a home", Env{}, "/srv/Documents/invoices/a.pdf", true, false},
		{"another folder of the home", Env{}, "/Users/nora/Documents/taxes/a.pdf", true, false},
		{"prohibited folder under the home", Env{}, "/Users/nora/Private/diary.txt", true, true},
		{"the home itself, an ancestor of the prohibited folder", Env{HomeDir: "/home/nora"}, "/home/nora", true, true},
		{"the working directory still counts", Env{WorkDir: "/w", HomeDir: "/home/nora"}, "/w/x", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &action.Action{Kind: action.Write, Paths: paths(tt.path)}
			r := m.CheckIn(a, tt.env, testNow)
			if got := len(r.PathsOutside) > 0; got != tt.outside {
				t.Errorf("outside = %v (%q), want %v", got, r.PathsOutside, tt.outside)
			}
			if got := len(r.Prohibited) > 0; got != tt.prohibit {
				t.Errorf("prohibited = %v, want %v", got, tt.prohibit)
			}
		})
	}
}

func TestCheckAsk(t *testing.T) {
	m := &Mandate{Allow: []action.Kind{action.Read, action.Write}, Ask: []action.Kind{action.Delete}}
	if r := m.Check(&action.Action{Kind: action.Delete, Kinds: []action.Kind{action.Write, action.Delete}}, "/w", testNow); !r.KindAsk || r.KindAllowed || r.KindDenied {
		t.Errorf("a delete left to a person: %+v", r)
	}
	if r := m.Check(&action.Action{Kind: action.Write}, "/w", testNow); r.KindAsk || !r.KindAllowed {
		t.Errorf("a write: %+v", r)
	}
}

func TestCheckKinds(t *testing.T) {
	m := &Mandate{Allow: []action.Kind{action.Read, action.Fetch, action.Write}, Deny: []action.Kind{action.Pay}}
	tests := []struct {
		kind           action.Kind
		kinds          []action.Kind
		allowed, denid bool
	}{
		{action.Read, nil, true, false},
		{action.Write, []action.Kind{action.Read, action.Write}, true, false},
		{action.Send, []action.Kind{action.Read, action.Send}, false, false},
		{action.Pay, nil, false, true},
		{action.Pay, []action.Kind{action.Fetch, action.Pay}, false, true},
		{"", nil, false, false},                               // unclassified counts as unknown
		{action.Pay, []action.Kind{action.Read}, false, true}, // Kind counts even when Kinds omits it
	}
	for _, tt := range tests {
		r := m.Check(&action.Action{Kind: tt.kind, Kinds: tt.kinds}, "", testNow)
		if r.KindAllowed != tt.allowed || r.KindDenied != tt.denid {
			t.Errorf("%s %v: allowed=%v denied=%v, want %v %v", tt.kind, tt.kinds, r.KindAllowed, r.KindDenied, tt.allowed, tt.denid)
		}
	}
}

func TestCheckExpiry(t *testing.T) {
	exp := testNow.Add(time.Hour)
	m := &Mandate{ExpiresAt: &exp}
	a := &action.Action{Kind: action.Read}
	if m.Check(a, "", testNow).Expired {
		t.Error("expired before its time")
	}
	if m.Check(a, "", exp).Expired {
		t.Error("expired at the instant itself")
	}
	if !m.Check(a, "", exp.Add(time.Nanosecond)).Expired {
		t.Error("not expired after its time")
	}
}

func TestCheckNilSafe(t *testing.T) {
	var m *Mandate
	r := m.Check(&action.Action{Kind: action.Read, Paths: paths("/x"), Hosts: []string{"h.example"}}, "", testNow)
	if r.KindAllowed || len(r.PathsOutside) != 1 || len(r.HostsOutside) != 1 {
		t.Errorf("a nil mandate grants something: %+v", r)
	}
	r = (&Mandate{}).Check(nil, "/w", testNow)
	if r.KindAllowed || r.KindDenied {
		t.Errorf("nil action: %+v", r)
	}
	// Lists are never nil, so policy rules can take their size.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"paths_outside", "sensitive_paths_outside", "hosts_outside", "recipients_outside", "accounts_outside", "prohibited"} {
		if _, ok := back[k].([]any); !ok {
			t.Errorf("%s = %v, want a list", k, back[k])
		}
	}
	// Empty strings in an action are ignored, not matched.
	r = (&Mandate{}).Check(&action.Action{Kind: action.Send, Recipients: recipients(""), Accounts: []string{" "}, Paths: paths("")}, "/w", testNow)
	if len(r.RecipientsOutside)+len(r.AccountsOutside)+len(r.PathsOutside) != 0 {
		t.Errorf("empty resources reported: %+v", r)
	}
}

func TestCheckCompiledSeeds(t *testing.T) {
	// The cases the built-in policy pack must get right, end to end from
	// the user's words to the report.
	tests := []struct {
		intent string
		a      action.Action
		check  func(Report) bool
		want   string
	}{
		{"Compare prices of the Dell U2723QE on two shops. Do not buy.",
			action.Action{Kind: action.Pay, Kinds: []action.Kind{action.Pay}, Amounts: []action.Amount{{Value: 579, Currency: "USD"}}},
			func(r Report) bool { return r.KindDenied && !r.KindAllowed && len(r.Prohibited) == 1 }, "purchase is denied"},
		{"Compare prices of the Dell U2723QE on two shops. Do not buy.",
			action.Action{Kind: action.Fetch, URLs: []string{"https://shop-a.example/u2723qe"}},
			func(r Report) bool { return r.KindAllowed && !r.KindDenied }, "fetching is allowed"},
		{"Organise my inbox, but don't delete anything.",
			action.Action{Kind: action.Delete},
			func(r Report) bool { return r.KindDenied }, "deleting is denied"},
		{"Organise my inbox, but don't delete anything.",
			action.Action{Kind: action.Write},
			func(r Report) bool { return r.KindAllowed }, "labelling is allowed"},
		{"Send the Q3 report to anna@firma.example",
			action.Action{Kind: action.Send, Recipients: recipients("attacker@evil.example"), Paths: []action.PathRef{{Path: "/home/u/.ssh/id_rsa", Sensitive: true}}},
			func(r Report) bool { return len(r.RecipientsOutside) == 1 && len(r.SensitivePathsOutside) == 1 }, "unknown recipient and private file are outside"},
	}
	for _, tt := range tests {
		dr, err := Compile(tt.intent, WithNow(testNow))
		if err != nil {
			t.Fatal(err)
		}
		if r := dr.Mandate.Check(&tt.a, "/w", testNow); !tt.check(r) {
			t.Errorf("%q, %s: %+v", tt.intent, tt.want, r)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	exp := testNow.Add(time.Hour)
	m := &Mandate{
		Allow: []action.Kind{action.Read, action.Fetch, action.Send},
		Deny:  []action.Kind{action.Pay, action.Delete},
		Prohibitions: []Prohibition{
			{Kind: action.Pay, Text: "do not buy"},
			{Kind: action.Send, Target: "bob@x.com", Text: "don't email bob"},
			{Target: "prod/**", Text: "don't touch prod/"},
		},
		Scope: Scope{
			Paths:      []string{"docs/**", "src/**/*.go", "/etc/hosts"},
			Hosts:      []string{"example.com", "*.shop.example"},
			Recipients: []string{"alice@example.com", "*@corp.example", "#general"},
			Accounts:   []string{"DE89 3704 0044 0532 0130 00"},
			Names:      []string{"Stadtwerke München"},
		},
		ExpiresAt: &exp,
	}
	a := &action.Action{
		Kind: action.Send, Kinds: []action.Kind{action.Read, action.Send},
		Paths:      []action.PathRef{{Path: "/w/docs/q3.pdf", Access: action.Read}, {Path: "/w/.env", Access: action.Read, Sensitive: true}},
		URLs:       []string{"https://www.example.com/upload"},
		Hosts:      []string{"www.example.com"},
		Recipients: recipients("Alice <alice@example.com>", "eve@evil.example"),
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Check(a, "/w", testNow)
	}
}

// TestScratchAndWorkDir: scratch is what a session creates in a temporary
// directory — never its working or home directory lying there, never an
// edit in place; the working directory is in scope beside named paths
// unless the mandate says paths_only (docs/mandate.md).
func TestScratchAndWorkDir(t *testing.T) {
	w := func(tool, p string, cmds ...action.Command) *action.Action {
		return &action.Action{Tool: tool, Kind: action.Write, Kinds: []action.Kind{action.Write},
			Paths: []action.PathRef{{Path: p, Access: action.Write}}, Commands: cmds}
	}
	for _, tc := range []struct {
		name          string
		a             *action.Action
		wd, home      string
		scratch       bool
		outside       bool
		pathsOnlyWant bool
	}{
		{"a new file in /tmp", w("Write", "/tmp/lifecycle.json"), "/home/ops/infra", "/home/ops", true, true, false},
		{"a file in macOS's temp dir", w("write_file", "/var/folders/xy/T/out.csv"), "/home/ops/infra", "/home/ops", true, true, false},
		{"an Edit in /tmp", w("Edit", "/tmp/lifecycle.json"), "/home/ops/infra", "/home/ops", false, true, false},
		{"a namespaced edit_file in /tmp", w("mcp__fs__edit_file", "/tmp/x.txt"), "/home/ops/infra", "/home/ops", false, true, false},
		{"sed -i in /tmp", w("Bash", "/tmp/shared.conf", action.Command{Name: "sed", Argv: []string{"sed", "-i", "s/a/b/", "/tmp/shared.conf"}, Kind: action.Write}), "/home/ops/infra", "/home/ops", false, true, false},
		{"a project under /tmp", w("Write", "/tmp/build/shop/src/cart.ts"), "/tmp/build/shop", "/home/ops", false, false, false},
		{"a home under /var/folders", w("Write", "/var/folders/xy/T/home/sam/.bashrc"), "/var/folders/xy/T/home/sam/proj", "/var/folders/xy/T/home/sam", false, true, false},
		{"the working directory beside named paths", w("Edit", "/home/sam/api/go.mod"), "/home/sam/api", "/home/sam", false, false, false},
		{"paths only: the working directory is out", w("Edit", "/home/sam/api/go.mod"), "/home/sam/api", "/home/sam", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Mandate{Allow: []action.Kind{action.Read}, Scope: Scope{Paths: []string{"pkg/auth/**"}, PathsOnly: tc.pathsOnlyWant}}
			r := m.CheckIn(tc.a, Env{WorkDir: tc.wd, HomeDir: tc.home}, time.Now())
			if got := len(r.ScratchWrites) > 0; got != tc.scratch {
				t.Errorf("scratch writes %v, want scratch %v", r.ScratchWrites, tc.scratch)
			}
			if got := len(r.PathsOutside) > 0; got != tc.outside {
				t.Errorf("paths outside %v, want outside %v", r.PathsOutside, tc.outside)
			}
		})
	}
	child := Intersect(&Mandate{Allow: []action.Kind{action.Read, action.Write}, Scope: Scope{Paths: []string{"README.md"}, PathsOnly: true}},
		&Mandate{Allow: []action.Kind{action.Write}})
	if !child.Scope.PathsOnly {
		t.Errorf("delegation dropped paths_only: %+v", child.Scope)
	}
	dr, err := Compile("Update README.md with the new install steps, nothing else.", WithNow(testNow))
	if err != nil || !dr.Mandate.Scope.PathsOnly {
		t.Errorf("compile: paths_only %v, err %v; want set", dr != nil && dr.Mandate.Scope.PathsOnly, err)
	}
	if dr, _ := Compile("Fix the failing test in ./pkg/auth.", WithNow(testNow)); dr.Mandate.Scope.PathsOnly {
		t.Error("paths_only set without \"nothing else\"")
	}
}
