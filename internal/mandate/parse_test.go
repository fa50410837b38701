package mandate

import (
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

const fullYAML = `# A complete mandate.
version: 2
instructions:
  - text: Pay the electricity bill, 84.20 EUR to DE89 3704 0044 0532 0130 00. Do not buy anything else.
    source: user
    at: 2026-03-01T10:00:00Z
allow: [read, pay]
deny: [send]
prohibitions:
  - kind: pay
    target: amazon.de
    text: not on amazon.de
scope:
  paths: ["invoices/**"]
  hosts: [bank.example, "*.bank.example"]
  recipients: ["*@stadtwerke.example"]
  accounts: ["DE89 3704 0044 0532 0130 00"]
  names: [Stadtwerke München]
limits:
  spend: {amount: 84.20, currency: EUR}
  counts: {pay: 1}
expires_at: 2026-03-01T12:00:00Z
parent: sess-parent
notes: [written by hand]
`

const fullJSON = `{
	"version": 2,
	"instructions": [{"text": "Pay the bill", "source": "user", "at": "2026-03-01T10:00:00Z"}],
	"allow": ["read", "pay"],
	"deny": ["send"],
	"prohibitions": [{"kind": "pay", "target": "amazon.de", "text": "not on amazon.de"}],
	"scope": {"paths": ["invoices/**"], "hosts": ["bank.example"], "recipients": [], "accounts": ["DE89370400440532013000"], "names": ["Stadtwerke M\u00fcnchen"], "none": []},
	"limits": {"spend": {"amount": 84.2, "currency": "EUR"}, "counts": {"pay": 1}},
	"expires_at": "2026-03-01T12:00:00Z"
}`

func TestParse(t *testing.T) {
	for name, doc := range map[string]string{"yaml": fullYAML, "json": fullJSON} {
		t.Run(name, func(t *testing.T) {
			m, err := Parse([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if m.Version != 2 || len(m.Instructions) != 1 || m.Instructions[0].Source != "user" {
				t.Errorf("version/instructions: %+v", m)
			}
			if len(m.Allow) != 2 || m.Allow[1] != action.Pay || m.Deny[0] != action.Send {
				t.Errorf("kinds: allow=%v deny=%v", m.Allow, m.Deny)
			}
			if m.Limits.Spend == nil || m.Limits.Spend.String() != "84.2 EUR" || m.Limits.Counts[action.Pay] != 1 {
				t.Errorf("limits: %+v", m.Limits)
			}
			if m.ExpiresAt == nil || !m.ExpiresAt.Equal(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) {
				t.Errorf("expires_at = %v", m.ExpiresAt)
			}
			if m.Scope.Names[0] != "Stadtwerke München" {
				t.Errorf("names = %q", m.Scope.Names)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string // substrings of the error
	}{
		{"empty", "  \n", []string{"empty"}},
		{"unknown top-level field", "allow: [read]\nrecipient: bob@x.com\n", []string{`unknown field "recipient"`, "line 2", "in mandate"}},
		{"unknown scope field", "scope:\n  paths: [a/**]\n  host: [x.example]\n", []string{`unknown field "host"`, "line 3", "mandate.scope"}},
		{"unknown prohibition field", "prohibitions:\n  - kind: pay\n    text: no\n  - kind: send\n    txt: no\n", []string{`unknown field "txt"`, "line 5", "prohibitions[1]"}},
		{"unknown spend field", "limits:\n  spend: {amount: 5, currency: EUR, cur: x}\n", []string{`unknown field "cur"`, "line 2", "limits.spend"}},
		{"unknown json field", `{"allow": ["read"], "scopes": {}}`, []string{`unknown field "scopes"`, "line 1"}},
		{"wrong type", "allow: read\n", []string{"line 1", "cannot unmarshal"}},
		{"not a mapping", "- read\n- pay\n", []string{"line 1", "mapping"}},
		{"two documents", "allow: [read]\n---\nallow: [pay]\n", []string{"second document"}},
		{"alias", "allow: &a [read]\ndeny: *a\n", []string{"aliases", "line 2"}},
		{"duplicate key", "allow: [read]\nallow: [pay]\n", []string{"already defined"}},
		{"bad kind", "allow: [read, shop]\n", []string{"allow[1]", `"shop"`}},
		{"bad syntax", "allow: [read\n", []string{"mandate"}},
		{"bad currency", "limits:\n  spend: {amount: 5, currency: eur}\n", []string{"limits.spend.currency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	valid := func() *Mandate {
		m, err := Parse([]byte(fullYAML))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("the full example does not validate: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(*Mandate)
		want   string // the field the error must name
	}{
		{"negative version", func(m *Mandate) { m.Version = -1 }, "version"},
		{"empty instruction", func(m *Mandate) { m.Instructions[0].Text = " " }, "instructions[0].text"},
		{"agent as source", func(m *Mandate) { m.Instructions[0].Source = "agent" }, "instructions[0].source"},
		{"unknown allow kind", func(m *Mandate) { m.Allow = append(m.Allow, "browse") }, "allow[2]"},
		{"unknown deny kind", func(m *Mandate) { m.Deny = []action.Kind{"BUY"} }, "deny[0]"},
		{"unknown ask kind", func(m *Mandate) { m.Ask = []action.Kind{"maybe"} }, "ask[0]"},
		{"ask and allow", func(m *Mandate) { m.Ask = []action.Kind{m.Allow[0]} }, "ask[0]"},
		{"ask and deny", func(m *Mandate) { m.Ask = []action.Kind{m.Deny[0]} }, "ask[0]"},
		{"prohibition of nothing", func(m *Mandate) { m.Prohibitions = []Prohibition{{Text: "no"}} }, "prohibitions[0]"},
		{"prohibition without text", func(m *Mandate) { m.Prohibitions[0].Text = "" }, "prohibitions[0].text"},
		{"prohibition with bad kind", func(m *Mandate) { m.Prohibitions[0].Kind = "shop" }, "prohibitions[0].kind"},
		{"prohibition with bad glob", func(m *Mandate) { m.Prohibitions[0].Target = "src/[a" }, "prohibitions[0].target"},
		{"branch target without a name", func(m *Mandate) { m.Prohibitions[0].Target = "branch:" }, "prohibitions[0].target"},
		{"branch target with a space", func(m *Mandate) { m.Prohibitions[0].Target = "branch:my branch" }, "prohibitions[0].target"},
		{"bad glob", func(m *Mandate) { m.Scope.Paths = []string{"src/[a-"} }, "scope.paths[0]"},
		{"empty path", func(m *Mandate) { m.Scope.Paths = []string{""} }, "scope.paths[0]"},
		{"url as host", func(m *Mandate) { m.Scope.Hosts = []string{"https://x.example/"} }, "scope.hosts[0]"},
		{"bare star host", func(m *Mandate) { m.Scope.Hosts = []string{"*."} }, "scope.hosts[0]"},
		{"host with space", func(m *Mandate) { m.Scope.Hosts = []string{"a b.example"} }, "scope.hosts[0]"},
		{"empty recipient", func(m *Mandate) { m.Scope.Recipients = []string{"  "} }, "scope.recipients[0]"},
		{"recipient pattern without domain", func(m *Mandate) { m.Scope.Recipients = []string{"*@"} }, "scope.recipients[0]"},
		{"half address", func(m *Mandate) { m.Scope.Recipients = []string{"bob@"} }, "scope.recipients[0]"},
		{"iban with bad checksum", func(m *Mandate) { m.Scope.Accounts = []string{"DE00 3704 0044 0532 0130 00"} }, "scope.accounts[0]"},
		{"control character in name", func(m *Mandate) { m.Scope.Names = []string{"Bob\x00"} }, "scope.names[0]"},
		{"unknown none dimension", func(m *Mandate) { m.Scope.None = []string{"files"} }, "scope.none[0]"},
		{"none with entries", func(m *Mandate) { m.Scope.None = []string{DimHosts} }, "scope.none[0]"},
		{"negative spend", func(m *Mandate) { m.Limits.Spend.Amount = -1 }, "limits.spend.amount"},
		{"lower-case currency", func(m *Mandate) { m.Limits.Spend.Currency = "eur" }, "limits.spend.currency"},
		{"long currency", func(m *Mandate) { m.Limits.Spend.Currency = "EURO" }, "limits.spend.currency"},
		{"negative count", func(m *Mandate) { m.Limits.Counts[action.Send] = -2 }, "limits.counts.send"},
		{"count of unknown kind", func(m *Mandate) { m.Limits.Counts["mail"] = 2 }, "limits.counts.mail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := valid()
			tt.mutate(m)
			err := m.Validate()
			if err == nil {
				t.Fatal("Validate succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %s", err, tt.want)
			}
		})
	}
	var nilM *Mandate
	if nilM.Validate() == nil {
		t.Error("a nil mandate validates")
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	m := &Mandate{Allow: []action.Kind{"x"}, Scope: Scope{Hosts: []string{""}}, Limits: Limits{Spend: &Money{Amount: 1, Currency: "e"}}}
	err := m.Validate()
	if err == nil {
		t.Fatal("Validate succeeded")
	}
	for _, want := range []string{"allow[0]", "scope.hosts[0]", "limits.spend.currency"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %s", err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{fullYAML, fullJSON, "allow: [read]", "{}", "scope: {none: [paths]}", "x: &a [1]\ny: *a", "[", "limits: {counts: {send: -1}}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("Parse returned an invalid mandate: %v", err)
		}
		m.Check(&action.Action{Kind: action.Send, Paths: paths("/w/x"), Hosts: []string{"a.example"}, Recipients: recipients("b@c.example"), Accounts: []string{"x"}}, "/w", testNow)
		Intersect(m, m)
	})
}
