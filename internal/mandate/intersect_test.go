package mandate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

func TestIntersectKindsAndProhibitions(t *testing.T) {
	parent := &Mandate{
		Instructions: []Instruction{{Text: "research and buy a laptop", Source: "user"}},
		Allow:        []action.Kind{action.Read, action.Fetch, action.Pay},
		Deny:         []action.Kind{action.Delete},
		Prohibitions: []Prohibition{{Kind: action.Delete, Text: "never delete"}},
	}
	child := &Mandate{
		Instructions: []Instruction{{Text: "compare prices, send a summary", Source: "admin"}},
		Allow:        []action.Kind{action.Read, action.Fetch, action.Send, action.Pay},
		Deny:         []action.Kind{action.Pay},
		Prohibitions: []Prohibition{{Kind: action.Pay, Text: "do not buy"}},
	}
	got := Intersect(parent, child)
	sameKinds(t, "allow", got.Allow, []action.Kind{action.Read, action.Fetch}) // send not granted by parent, pay denied by child
	sameKinds(t, "deny", got.Deny, []action.Kind{action.Delete, action.Pay})
	if len(got.Prohibitions) != 2 {
		t.Errorf("prohibitions = %+v, want both", got.Prohibitions)
	}
	if len(got.Instructions) != 1 || got.Instructions[0].Text != "compare prices, send a summary" || got.Instructions[0].Source != "admin" {
		t.Errorf("instructions = %+v, want the child's own", got.Instructions)
	}
	if got.Version != 0 || got.Parent != "" {
		t.Errorf("version/parent set: %d %q", got.Version, got.Parent)
	}
	// What either side leaves to a person is left to a person, and so no
	// longer allowed.
	got = Intersect(&Mandate{Allow: []action.Kind{action.Read, action.Write, action.Delete}, Ask: []action.Kind{action.Send}},
		&Mandate{Allow: []action.Kind{action.Read, action.Write, action.Send}, Ask: []action.Kind{action.Write}})
	sameKinds(t, "allow", got.Allow, []action.Kind{action.Read})
	sameKinds(t, "ask", got.Ask, []action.Kind{action.Write, action.Send})
	// A child that states no kinds gets the parent's.
	got = Intersect(parent, &Mandate{})
	sameKinds(t, "allow", got.Allow, parent.Allow)
	// The inputs are not modified.
	if len(parent.Allow) != 3 || len(child.Deny) != 1 {
		t.Error("Intersect modified its inputs")
	}
}

func TestIntersectScope(t *testing.T) {
	tests := []struct {
		name          string
		parent, child Scope
		want          Scope
	}{
		{"parent names none", Scope{}, Scope{Paths: []string{"src/**"}}, Scope{Paths: []string{"src/**"}}},
		{"child names none", Scope{Hosts: []string{"example.com"}}, Scope{}, Scope{Hosts: []string{"example.com"}}},
		{"paths narrowed", Scope{Paths: []string{"/w/**"}}, Scope{Paths: []string{"/w/src/**", "/etc/**", "/w/a.go"}},
			Scope{Paths: []string{"/w/src/**", "/w/a.go"}}},
		{"glob segments", Scope{Paths: []string{"src/*/x.go", "docs/**"}}, Scope{Paths: []string{"src/a/x.go", "src/*/y.go", "docs/*.md", "docs"}},
			Scope{Paths: []string{"src/a/x.go", "docs/*.md", "docs"}}},
		{"nothing survives", Scope{Paths: []string{"/w/**"}}, Scope{Paths: []string{"/etc/**"}}, Scope{None: []string{DimPaths}}},
		{"hosts", Scope{Hosts: []string{"*.example.com", "shop.test"}}, Scope{Hosts: []string{"api.example.com", "*.eu.example.com", "example.com", "www.shop.test", "shop.test"}},
			Scope{Hosts: []string{"api.example.com", "*.eu.example.com", "shop.test"}}},
		{"recipients", Scope{Recipients: []string{"*@corp.example", "#general", "Bob"}}, Scope{Recipients: []string{"ann@corp.example", "@corp.example", "eve@evil.example", "general", "#general", "bob"}},
			Scope{Recipients: []string{"ann@corp.example", "@corp.example", "#general", "bob"}}},
		{"names admit plain names only", Scope{Names: []string{"Stadtwerke München"}}, Scope{Recipients: []string{"stadtwerke  münchen", "x@y.example"}, Accounts: []string{"Stadtwerke München", "DE89370400440532013000"}},
			Scope{Recipients: []string{"stadtwerke  münchen"}, Accounts: []string{"Stadtwerke München"}, Names: []string{"Stadtwerke München"}}},
		{"child names under parent recipients", Scope{Recipients: []string{"bob@example.com"}}, Scope{Names: []string{"Eve"}},
			Scope{Recipients: []string{"bob@example.com"}, None: []string{DimNames}}},
		{"accounts", Scope{Accounts: []string{"DE89 3704 0044 0532 0130 00"}}, Scope{Accounts: []string{"de89370400440532013000", "GB82WEST12345698765432"}},
			Scope{Accounts: []string{"de89370400440532013000"}}},
		{"parent none stays none", Scope{None: []string{DimHosts}}, Scope{Hosts: []string{"example.com"}}, Scope{None: []string{DimHosts}}},
		{"child none stays none", Scope{Hosts: []string{"example.com"}}, Scope{None: []string{DimHosts}}, Scope{None: []string{DimHosts}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Intersect(&Mandate{Scope: tt.parent}, &Mandate{Scope: tt.child}).Scope
			for _, dim := range []struct {
				name      string
				got, want []string
			}{
				{"paths", got.Paths, tt.want.Paths}, {"hosts", got.Hosts, tt.want.Hosts},
				{"recipients", got.Recipients, tt.want.Recipients}, {"accounts", got.Accounts, tt.want.Accounts},
				{"names", got.Names, tt.want.Names}, {"none", got.None, tt.want.None},
			} {
				if !slices.Equal(dim.got, dim.want) && !(len(dim.got) == 0 && len(dim.want) == 0) {
					t.Errorf("%s = %q, want %q", dim.name, dim.got, dim.want)
				}
			}
			m := &Mandate{Scope: got}
			if err := m.Validate(); err != nil {
				t.Errorf("result does not validate: %v", err)
			}
		})
	}
}

func TestIntersectLimitsAndExpiry(t *testing.T) {
	early, late := testNow.Add(time.Hour), testNow.Add(2*time.Hour)
	tests := []struct {
		name          string
		parent, child *Mandate
		spend         string
		counts        map[action.Kind]int
		expires       *time.Time
		note          bool
	}{
		{"smaller cap wins", &Mandate{Limits: Limits{Spend: &Money{100, "EUR"}}}, &Mandate{Limits: Limits{Spend: &Money{250, "EUR"}}}, "100 EUR", nil, nil, false},
		{"child's smaller cap", &Mandate{Limits: Limits{Spend: &Money{100, "EUR"}}}, &Mandate{Limits: Limits{Spend: &Money{20, "EUR"}}}, "20 EUR", nil, nil, false},
		{"other currency keeps the parent's", &Mandate{Limits: Limits{Spend: &Money{100, "EUR"}}}, &Mandate{Limits: Limits{Spend: &Money{20, "USD"}}}, "100 EUR", nil, nil, true},
		{"only the child caps", &Mandate{}, &Mandate{Limits: Limits{Spend: &Money{5, "GBP"}}}, "5 GBP", nil, nil, false},
		{"counts", &Mandate{Limits: Limits{Counts: map[action.Kind]int{action.Send: 3, action.Pay: 1}}}, &Mandate{Limits: Limits{Counts: map[action.Kind]int{action.Send: 5, action.Delete: 0}}},
			"", map[action.Kind]int{action.Send: 3, action.Pay: 1, action.Delete: 0}, nil, false},
		{"earliest expiry", &Mandate{ExpiresAt: &late}, &Mandate{ExpiresAt: &early}, "", nil, &early, false},
		{"parent's expiry", &Mandate{ExpiresAt: &early}, &Mandate{}, "", nil, &early, false},
		{"parent's earlier expiry", &Mandate{ExpiresAt: &early}, &Mandate{ExpiresAt: &late}, "", nil, &early, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Intersect(tt.parent, tt.child)
			sameLimits(t, got.Limits, tt.spend, tt.counts)
			if (got.ExpiresAt == nil) != (tt.expires == nil) || (got.ExpiresAt != nil && !got.ExpiresAt.Equal(*tt.expires)) {
				t.Errorf("expires = %v, want %v", got.ExpiresAt, tt.expires)
			}
			if tt.note != (len(got.Notes) > 0) {
				t.Errorf("notes = %q", got.Notes)
			}
		})
	}
}

func TestIntersectNil(t *testing.T) {
	m := &Mandate{Allow: []action.Kind{action.Read}, Version: 3, Parent: "p"}
	if got := Intersect(nil, m); !slices.Equal(got.Allow, m.Allow) || got.Version != 0 || got.Parent != "" {
		t.Errorf("Intersect(nil, m) = %+v", got)
	}
	if got := Intersect(m, nil); !slices.Equal(got.Allow, m.Allow) {
		t.Errorf("Intersect(m, nil) = %+v", got)
	}
	if got := Intersect(nil, nil); got == nil || len(got.Allow) != 0 {
		t.Errorf("Intersect(nil, nil) = %+v", got)
	}
}

func TestResolvePaths(t *testing.T) {
	m := &Mandate{Scope: Scope{Paths: []string{"src/**", "/etc/hosts", "~/x/**"}}, Prohibitions: []Prohibition{{Target: "prod/**", Text: "no"}, {Target: "bob@x.example", Text: "no"}}}
	got := m.ResolvePaths("/w")
	if want := []string{"/w/src/**", "/etc/hosts", "~/x/**"}; !slices.Equal(got.Scope.Paths, want) {
		t.Errorf("paths = %q, want %q", got.Scope.Paths, want)
	}
	if got.Prohibitions[0].Target != "/w/prod/**" || got.Prohibitions[1].Target != "bob@x.example" {
		t.Errorf("targets = %+v", got.Prohibitions)
	}
	if m.Scope.Paths[0] != "src/**" {
		t.Error("ResolvePaths modified its receiver")
	}
}

// Pools for the property test: entries that overlap in many ways.
var (
	poolKinds      = []action.Kind{action.Read, action.Fetch, action.Write, action.Execute, action.Delete, action.Send, action.Pay, action.Credential}
	poolPaths      = []string{"/w/**", "/w/src/**", "/w/src/a.go", "src/**", "src/*.go", "/etc/**", "**/*.go", "/w/src/*/x", "docs/**", "*", "/w/*/x", "src"}
	poolHosts      = []string{"example.com", "*.example.com", "api.example.com", "www.example.com", "*.api.example.com", "other.org", "*.org"}
	poolRecipients = []string{"bob@example.com", "*@example.com", "@example.com", "#chan", "chan", "Claire", "alice@other.org", "+49 170 1234567", "claire"}
	poolAccounts   = []string{"DE89 3704 0044 0532 0130 00", "DE89370400440532013000", "acct-1", "Stadtwerke", "stadtwerke"}
	poolNames      = []string{"Claire", "Stadtwerke", "bob@example.com", "chan", "#chan"}
	poolTargets    = []string{"", "", "prod/**", "bob@example.com", "*.example.com", "Stadtwerke", "/w/src/a.go"}

	actPaths      = []string{"/w/src/a.go", "/w/src/x/x", "/etc/passwd", "src/b.go", "/w/docs/r.md", "/w/main.go", "~/x", "/w/src", "/w/prod/db", "/w"}
	actHosts      = []string{"example.com", "www.example.com", "api.example.com", "a.api.example.com", "other.org", "EXAMPLE.com:443", "x.other.org"}
	actRecipients = []string{"bob@example.com", "BOB@example.com", "eve@example.com", "#chan", "chan", "Claire <c@x.org>", "claire", "alice@other.org", "+491701234567", "Stadtwerke <s@x.org>", "Mallory <bob@example.com>"}
	actAccounts   = []string{"DE89370400440532013000", "de89 3704 0044 0532 0130 00", "acct-1", "Stadtwerke", "stadtwerke", "Claire"}
)

func pick[T any](rng *rand.Rand, pool []T, max int) []T {
	n := rng.IntN(max + 1)
	var out []T
	for range n {
		v := pool[rng.IntN(len(pool))]
		out = append(out, v)
	}
	return out
}

func randomMandate(rng *rand.Rand) *Mandate {
	m := &Mandate{
		Allow: pick(rng, poolKinds, 5),
		Deny:  pick(rng, poolKinds, 2),
		Ask:   []action.Kind{},
		Scope: Scope{
			Paths:      pick(rng, poolPaths, 3),
			Hosts:      pick(rng, poolHosts, 3),
			Recipients: pick(rng, poolRecipients, 3),
			Accounts:   pick(rng, poolAccounts, 2),
			Names:      pick(rng, poolNames, 2),
		},
	}
	for _, k := range pick(rng, poolKinds, 2) {
		if !slices.Contains(m.Allow, k) && !slices.Contains(m.Deny, k) && !slices.Contains(m.Ask, k) {
			m.Ask = append(m.Ask, k)
		}
	}
	for _, dim := range dimensions {
		if rng.IntN(8) != 0 {
			continue
		}
		switch dim {
		case DimPaths:
			m.Scope.Paths = nil
		case DimHosts:
			m.Scope.Hosts = nil
		case DimRecipients:
			m.Scope.Recipients = nil
		case DimAccounts:
			m.Scope.Accounts = nil
		case DimNames:
			m.Scope.Names = nil
		}
		m.Scope.None = append(m.Scope.None, dim)
	}
	for range rng.IntN(3) {
		m.Prohibitions = append(m.Prohibitions, Prohibition{
			Kind:   []action.Kind{"", action.Pay, action.Send, action.Delete}[rng.IntN(4)],
			Target: poolTargets[rng.IntN(len(poolTargets))],
			Text:   fmt.Sprintf("rule %d", rng.IntN(5)),
		})
		if p := &m.Prohibitions[len(m.Prohibitions)-1]; p.Kind == "" && p.Target == "" {
			p.Kind = action.Write
		}
	}
	if rng.IntN(2) == 0 {
		m.Limits.Spend = &Money{Amount: float64(rng.IntN(100)), Currency: []string{"EUR", "USD"}[rng.IntN(2)]}
	}
	if rng.IntN(2) == 0 {
		m.Limits.Counts = map[action.Kind]int{poolKinds[rng.IntN(len(poolKinds))]: rng.IntN(5)}
	}
	if rng.IntN(2) == 0 {
		e := testNow.Add(time.Duration(rng.IntN(120)-30) * time.Minute)
		m.ExpiresAt = &e
	}
	return m
}

// TestIntersectNeverWidens is the delegation property: whatever a child
// mandate says, what the intersection lets in, the parent lets in too.
func TestIntersectNeverWidens(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const workDir = "/w"
	for iter := range 3000 {
		parent, child := randomMandate(rng), randomMandate(rng)
		if err := parent.Validate(); err != nil {
			t.Fatalf("generator made an invalid mandate: %v", err)
		}
		got := Intersect(parent, child)
		if err := got.Validate(); err != nil {
			t.Fatalf("#%d: intersection does not validate: %v\nparent %+v\nchild %+v", iter, err, parent, child)
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("#%d: %s\nparent %+v\nchild  %+v\nresult %+v", iter, fmt.Sprintf(format, args...), parent, child, got)
		}
		ps, none := &parent.Scope, parent.Scope.matchesNothing
		constrainsPaths := len(ps.Paths) > 0 || none(DimPaths)
		constrainsHosts := len(ps.Hosts) > 0 || none(DimHosts)
		constrainsRecipients := len(ps.Recipients) > 0 || len(ps.Names) > 0 || none(DimRecipients) || none(DimNames)
		constrainsAccounts := len(ps.Accounts) > 0 || len(ps.Names) > 0 || none(DimAccounts) || none(DimNames)

		for _, p := range actPaths {
			a := &action.Action{Kind: action.Read, Paths: paths(p)}
			in, pin := len(got.Check(a, workDir, testNow).PathsOutside) == 0, len(parent.Check(a, workDir, testNow).PathsOutside) == 0
			if constrainsPaths && in && !pin {
				fail("path %s inside the child, outside the parent", p)
			}
		}
		for _, h := range actHosts {
			a := &action.Action{Kind: action.Fetch, Hosts: []string{h}}
			in, pin := len(got.Check(a, workDir, testNow).HostsOutside) == 0, len(parent.Check(a, workDir, testNow).HostsOutside) == 0
			if constrainsHosts && in && !pin {
				fail("host %s inside the child, outside the parent", h)
			}
		}
		for _, rc := range actRecipients {
			a := &action.Action{Kind: action.Send, Recipients: recipients(rc)}
			in, pin := len(got.Check(a, workDir, testNow).RecipientsOutside) == 0, len(parent.Check(a, workDir, testNow).RecipientsOutside) == 0
			if constrainsRecipients && in && !pin {
				fail("recipient %s inside the child, outside the parent", rc)
			}
		}
		for _, ac := range actAccounts {
			a := &action.Action{Kind: action.Pay, Accounts: []string{ac}}
			in, pin := len(got.Check(a, workDir, testNow).AccountsOutside) == 0, len(parent.Check(a, workDir, testNow).AccountsOutside) == 0
			if constrainsAccounts && in && !pin {
				fail("account %s inside the child, outside the parent", ac)
			}
		}
		for range 5 {
			kinds := pick(rng, poolKinds, 3)
			a := &action.Action{Kind: action.MostConsequential(kinds...), Kinds: kinds,
				Paths: paths(pick(rng, actPaths, 1)...), Hosts: pick(rng, actHosts, 1),
				Recipients: recipients(pick(rng, actRecipients, 1)...), Accounts: pick(rng, actAccounts, 1)}
			rc, rp := got.Check(a, workDir, testNow), parent.Check(a, workDir, testNow)
			if rc.KindAllowed && !rp.KindAllowed {
				fail("kinds %v allowed by the child, not the parent", kinds)
			}
			if rp.KindDenied && !rc.KindDenied {
				fail("kinds %v denied by the parent, not the child", kinds)
			}
			if rp.KindAsk && !rc.KindAsk && !rc.KindDenied {
				fail("kinds %v left to a person by the parent, not the child", kinds)
			}
			for _, text := range rp.Prohibited {
				if !slices.Contains(rc.Prohibited, text) {
					fail("prohibition %q of the parent lost", text)
				}
			}
		}
		for _, at := range []time.Time{testNow, testNow.Add(30 * time.Minute), testNow.Add(2 * time.Hour)} {
			a := &action.Action{Kind: action.Read}
			if parent.Check(a, workDir, at).Expired && !got.Check(a, workDir, at).Expired {
				fail("expired for the parent at %v, not for the child", at)
			}
		}
		if ps := parent.Limits.Spend; ps != nil {
			cs := got.Limits.Spend
			if cs == nil || cs.Currency != ps.Currency || cs.Amount > ps.Amount {
				fail("spend cap %v wider than the parent's %v", cs, ps)
			}
		}
		for k, n := range parent.Limits.Counts {
			if cn, ok := got.Limits.Counts[k]; !ok || cn > n {
				fail("count %s = %d (set %v), parent's is %d", k, cn, ok, n)
			}
		}
		for _, k := range got.Allow {
			if slices.Contains(got.Deny, k) {
				fail("%s both allowed and denied", k)
			}
		}
	}
}

func TestIntersectCompiledDelegation(t *testing.T) {
	parent, err := Compile("Research laptops on amazon.de and idealo.de, email the shortlist to me@example.com. Do not buy.", WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	child, err := Compile("Buy the cheapest laptop on amazon.de and ebay.de, up to 900 EUR, and mail eve@evil.example", WithNow(testNow))
	if err != nil {
		t.Fatal(err)
	}
	got := Intersect(parent.Mandate, child.Mandate)
	if slices.Contains(got.Allow, action.Pay) || !slices.Contains(got.Deny, action.Pay) {
		t.Errorf("delegation granted pay: allow=%v deny=%v", got.Allow, got.Deny)
	}
	if !slices.Equal(got.Scope.Hosts, []string{"amazon.de"}) {
		t.Errorf("hosts = %v, want only amazon.de", got.Scope.Hosts)
	}
	if len(got.Scope.Recipients) != 0 || !slices.Contains(got.Scope.None, DimRecipients) {
		t.Errorf("recipients = %v none=%v, want none at all", got.Scope.Recipients, got.Scope.None)
	}
	if strings.Contains(got.Instructions[0].Text, "Research") {
		t.Error("the parent's words leaked into the child's instructions")
	}
}
