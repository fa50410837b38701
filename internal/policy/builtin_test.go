package policy

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// builtinOnce compiles the built-in pack once for the package's tests.
var builtinOnce = sync.OnceValues(Builtin)

func builtinPolicy(t testing.TB) *Policy {
	t.Helper()
	p, err := builtinOnce()
	if err != nil {
		t.Fatalf("Builtin: %v", err)
	}
	return p
}

// in builds an Input for an action of kind k (plus extra kinds) under a
// mandate granting allow, then applies mods. Scope is left as the test sets
// it: these tests play the part of the classifier and mandate.Check.
func in(k action.Kind, allow []action.Kind, mods ...func(*Input)) *Input {
	a := &action.Action{Tool: "tool", Kind: k, Kinds: []action.Kind{k}, Source: "catalog", Known: true}
	m := &mandate.Mandate{Version: 1, Allow: allow}
	i := &Input{
		Call:    CallFacts{Tool: "tool", Args: map[string]any{}},
		Action:  a,
		Mandate: m,
		Session: SessionFacts{ID: "s1", Status: "active"},
		Agent:   AgentFacts{ID: "agent-1"},
	}
	i.Scope.KindAllowed = true
	for _, kk := range a.Kinds {
		if !slices.Contains(allow, kk) {
			i.Scope.KindAllowed = false
		}
	}
	for _, f := range mods {
		f(i)
	}
	return i
}

func tool(name string) func(*Input) {
	return func(i *Input) { i.Call.Tool = name; i.Action.Tool = name }
}

func kinds(ks ...action.Kind) func(*Input) {
	return func(i *Input) {
		i.Action.Kinds = ks
		i.Scope.KindAllowed = true
		for _, k := range ks {
			if !slices.Contains(i.Mandate.Allow, k) {
				i.Scope.KindAllowed = false
			}
		}
	}
}

func denyKinds(ks ...action.Kind) func(*Input) {
	return func(i *Input) {
		i.Mandate.Deny = ks
		for _, k := range i.Action.Kinds {
			if slices.Contains(ks, k) {
				i.Scope.KindDenied = true
			}
		}
	}
}

func with(f func(*Input)) func(*Input) { return f }

type builtinCase struct {
	name     string
	in       *Input
	want     Effect
	fired    []string // each must be among the fired rules
	notFired []string // none may be
	reason   string   // a substring of one of the reasons
}

var (
	read, fetch, write, execute = action.Read, action.Fetch, action.Write, action.Execute
	del, send, pay, cred, deleg = action.Delete, action.Send, action.Pay, action.Credential, action.Delegate
	unknownKind                 = action.Unknown
	goTest                      = action.Command{Argv: []string{"go", "test", "./..."}, Name: "go", Kind: action.Execute}
	tailCmd                     = action.Command{Argv: []string{"tail", "-20"}, Name: "tail", Kind: action.Read, ReadOnly: true}
	expiry                      = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	salaries                    = "/home/sam/private/salaries.xlsx"
	readWrite                   = []action.Kind{read, write}
	readFetch                   = []action.Kind{read, fetch}
	readSend                    = []action.Kind{read, send}
	readPay                     = []action.Kind{read, pay}
	nothing                     []action.Kind
)

func builtinCases() []builtinCase {
	return []builtinCase{
		// Defaults.
		{name: "read falls to default allow", in: in(read, nothing), want: Allow, fired: []string{"default:read"}, reason: "no rule matched; default for read is allow"},
		{name: "fetch falls to default allow", in: in(fetch, nothing), want: Allow, fired: []string{"default:fetch"}},
		{name: "delegate falls to default allow", in: in(deleg, nothing), want: Allow, fired: []string{"default:delegate"}},
		{name: "invalid kind is treated as unknown", in: in("frobnicate", nothing), want: Ask, fired: []string{"builtin.unknown-tool"}, notFired: []string{"builtin.kind-not-granted"}},

		// session-inactive
		{name: "suspended session denies even reads", in: in(read, readWrite, with(func(i *Input) { i.Session.Status = "suspended" })), want: Deny, fired: []string{"builtin.session-inactive"}, reason: "the session is suspended"},
		{name: "terminated session denies", in: in(write, readWrite, with(func(i *Input) { i.Session.Status = "terminated" })), want: Deny, fired: []string{"builtin.session-inactive"}},
		{name: "idle session is not inactive", in: in(write, readWrite, with(func(i *Input) { i.Session.Status = "idle" })), want: Allow, notFired: []string{"builtin.session-inactive"}},

		// expired
		{name: "expired mandate denies", in: in(read, readWrite, with(func(i *Input) { i.Mandate.ExpiresAt = &expiry; i.Scope.Expired = true })), want: Deny, fired: []string{"builtin.expired"}, reason: "the mandate expired at 2030-01-02T03:04:05Z"},
		{name: "unexpired mandate with expiry allows", in: in(write, readWrite, with(func(i *Input) { i.Mandate.ExpiresAt = &expiry })), want: Allow, notFired: []string{"builtin.expired"}},

		// prohibited
		{name: "prohibition quotes the user", in: in(pay, readFetch, denyKinds(pay), with(func(i *Input) { i.Scope.Prohibited = []string{"Do not buy."} })), want: Deny, fired: []string{"builtin.prohibited"}, reason: `the user ruled this out: "Do not buy."`},
		{name: "two prohibitions are both quoted", in: in(send, readSend, with(func(i *Input) { i.Scope.Prohibited = []string{"don't email bob", "nothing to bob"} })), want: Deny, reason: `"don't email bob"; "nothing to bob"`},
		{name: "denied kind without prohibition text", in: in(del, readWrite, denyKinds(del)), want: Deny, fired: []string{"builtin.prohibited"}, reason: "the mandate rules out delete"},
		{name: "denied kind beats a grant", in: in(write, readWrite, denyKinds(write)), want: Deny, fired: []string{"builtin.prohibited", "builtin.granted"}},
		{name: "no prohibition, granted", in: in(pay, readPay, with(func(i *Input) { i.Action.Amounts = []action.Amount{{Value: 84.2, Currency: "EUR"}} })), want: Allow, notFired: []string{"builtin.prohibited"}},

		// granted
		{name: "granted write is allowed", in: in(write, readWrite), want: Allow, fired: []string{"builtin.granted"}, reason: "the task grants write"},
		{name: "granted send without read in allow", in: in(send, []action.Kind{send}, kinds(read, send)), want: Allow, fired: []string{"builtin.granted"}},
		{name: "fetch and write with write granted", in: in(write, readWrite, kinds(fetch, write)), want: Allow, fired: []string{"builtin.granted"}},
		{name: "grant of another kind does not grant", in: in(send, readWrite), want: Ask, notFired: []string{"builtin.granted"}},

		// kind-not-granted
		{name: "send not granted asks", in: in(send, readFetch), want: Ask, fired: []string{"builtin.kind-not-granted"}, reason: "the task did not ask to send"},
		{name: "pay not granted asks", in: in(pay, readFetch), want: Ask, fired: []string{"builtin.kind-not-granted"}, reason: "did not ask to pay"},
		{name: "write not granted asks", in: in(write, readFetch), want: Ask, fired: []string{"builtin.kind-not-granted"}},
		{name: "delete among kinds not granted", in: in(del, readWrite, kinds(write, del)), want: Ask, fired: []string{"builtin.kind-not-granted"}, reason: "did not ask to delete"},
		{name: "nil mandate grants nothing", in: in(send, nothing, with(func(i *Input) { i.Mandate = nil })), want: Ask, fired: []string{"builtin.kind-not-granted"}},
		{name: "fetch needs no grant", in: in(fetch, []action.Kind{read}), want: Allow, notFired: []string{"builtin.kind-not-granted"}},

		// project-dev-commands
		{name: "go test in a coding task", in: in(execute, readWrite, tool("Bash"), with(func(i *Input) { i.Action.Commands = []action.Command{goTest, tailCmd} })), want: Allow, fired: []string{"builtin.project-dev-commands"}, notFired: []string{"builtin.kind-not-granted"}, reason: "building and testing the project (go)"},
		{name: "go test writing a file inside the project", in: in(execute, readWrite, kinds(write, execute), with(func(i *Input) { i.Action.Commands = []action.Command{goTest} })), want: Allow, fired: []string{"builtin.project-dev-commands"}},
		{name: "go test without a write grant asks", in: in(execute, readFetch, with(func(i *Input) { i.Action.Commands = []action.Command{goTest} })), want: Ask, fired: []string{"builtin.kind-not-granted"}},
		{name: "sudo go test asks", in: in(execute, readWrite, with(func(i *Input) {
			c := goTest
			c.Via = []string{"sudo"}
			i.Action.Commands = []action.Command{c}
		})), want: Ask, fired: []string{"builtin.kind-not-granted"}, notFired: []string{"builtin.project-dev-commands"}},
		{name: "unknown program asks", in: in(execute, readWrite, with(func(i *Input) {
			i.Action.Commands = []action.Command{{Argv: []string{"./deploy.sh"}, Name: "deploy.sh", Kind: action.Execute}}
		})), want: Ask, fired: []string{"builtin.kind-not-granted"}},
		{name: "external execute asks", in: in(execute, readWrite, with(func(i *Input) {
			i.Action.Commands = []action.Command{goTest}
			i.Action.Effects.External = true
		})), want: Ask, notFired: []string{"builtin.project-dev-commands"}},
		{name: "execute with paths outside asks", in: in(execute, readWrite, with(func(i *Input) {
			i.Action.Commands = []action.Command{goTest}
			i.Action.Paths = []action.PathRef{{Path: "/etc/x", Access: action.Execute}}
			i.Scope.PathsOutside = []string{"/etc/x"}
		})), want: Ask, fired: []string{"builtin.path-outside-scope", "builtin.kind-not-granted"}},
		{name: "execute without parsed commands asks", in: in(execute, readWrite), want: Ask, fired: []string{"builtin.kind-not-granted"}},
		{name: "granted execute is allowed by the grant", in: in(execute, []action.Kind{read, execute}, with(func(i *Input) {
			i.Action.Commands = []action.Command{{Argv: []string{"./deploy.sh"}, Name: "deploy.sh", Kind: action.Execute}}
		})), want: Allow, fired: []string{"builtin.granted"}},

		// credential-not-granted
		{name: "credential read not granted asks", in: in(cred, readWrite, kinds(read, cred), tool("printenv")), want: Ask, fired: []string{"builtin.credential-not-granted"}, notFired: []string{"builtin.kind-not-granted"}, reason: "printenv reads credentials"},
		{name: "a secret file the user named is part of the task", in: in(cred, readWrite, kinds(write, cred), tool("Edit"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/home/sam/proj/.env", Access: action.Write, Sensitive: true}}
			i.Action.Sensitive = true
		})), want: Allow, fired: []string{"builtin.granted"}, notFired: []string{"builtin.credential-not-granted"}},
		{name: "a secret file the user did not name asks", in: in(cred, readWrite, kinds(write, cred), tool("Edit"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/home/sam/proj/.env", Access: action.Write, Sensitive: true}}
			i.Scope.SensitivePathsOutside = []string{"/home/sam/proj/.env"}
		})), want: Ask, fired: []string{"builtin.credential-not-granted", "builtin.sensitive-path"}, notFired: []string{"builtin.granted"}},
		{name: "a credential command with a named secret file asks", in: in(cred, readWrite, kinds(read, cred), tool("Bash"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/home/sam/proj/.env", Access: action.Read, Sensitive: true}}
			i.Action.Commands = []action.Command{{Argv: []string{"printenv"}, Name: "printenv", Kind: action.Credential}}
		})), want: Ask, fired: []string{"builtin.credential-not-granted"}},
		{name: "credential granted is allowed", in: in(cred, []action.Kind{read, cred}), want: Allow, notFired: []string{"builtin.credential-not-granted"}},

		// unknown-tool
		{name: "unknown tool asks", in: in(unknownKind, readWrite, tool("frob_widget")), want: Ask, fired: []string{"builtin.unknown-tool"}, notFired: []string{"builtin.kind-not-granted"}, reason: "cannot tell what frob_widget does"},
		{name: "nil action is unknown", in: in(read, readWrite, with(func(i *Input) { i.Action = nil })), want: Ask, fired: []string{"builtin.unknown-tool"}},

		// scratch-files
		{name: "a scratch file needs no write grant", in: in(write, readFetch, tool("Write"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/tmp/policy.json", Access: action.Write}}
			i.Scope.PathsOutside = []string{"/tmp/policy.json"}
			i.Scope.ScratchWrites = []string{"/tmp/policy.json"}
		})), want: Allow, fired: []string{"builtin.scratch-files"}, notFired: []string{"builtin.kind-not-granted", "builtin.path-outside-scope"}, reason: "it only writes scratch files (/tmp/policy.json)"},
		{name: "a download to a scratch file", in: in(fetch, readFetch, kinds(fetch), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/var/tmp/dl/x.pdf", Access: action.Write}}
			i.Scope.PathsOutside = []string{"/var/tmp/dl/x.pdf"}
			i.Scope.ScratchWrites = []string{"/var/tmp/dl/x.pdf"}
		})), want: Allow, notFired: []string{"builtin.path-outside-scope"}},
		{name: "a command line writing to /tmp is not covered", in: in(write, readFetch, tool("Bash"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/tmp/x", Access: action.Write}}
			i.Action.Commands = []action.Command{{Argv: []string{"cp", "a", "/tmp/x"}, Name: "cp", Kind: action.Write}}
		})), want: Ask, fired: []string{"builtin.kind-not-granted"}, notFired: []string{"builtin.scratch-files"}},
		{name: "deleting in /tmp is judged as anywhere", in: in(del, []action.Kind{read, del}, with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/tmp/other-user-cache", Access: action.Delete}}
			i.Scope.PathsOutside = []string{"/tmp/other-user-cache"}
		})), want: Ask, fired: []string{"builtin.path-outside-scope"}, notFired: []string{"builtin.scratch-files"}},
		{name: "a sensitive file in /tmp still asks", in: in(write, readFetch, kinds(write, cred), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/tmp/id_rsa", Access: action.Write, Sensitive: true}}
			i.Action.Sensitive = true
			i.Scope.SensitivePathsOutside = []string{"/tmp/id_rsa"}
		})), want: Ask, fired: []string{"builtin.sensitive-path"}},

		// path-outside-scope
		{name: "write outside the scope asks", in: in(write, readWrite, tool("Write"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/etc/hosts", Access: action.Write}}
			i.Scope.PathsOutside = []string{"/etc/hosts"}
		})), want: Ask, fired: []string{"builtin.path-outside-scope"}, reason: "write outside the task's scope: /etc/hosts"},
		{name: "delete outside the scope asks", in: in(del, []action.Kind{read, del}, with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/home/sam/other", Access: action.Delete}}
			i.Scope.PathsOutside = []string{"/home/sam/other"}
		})), want: Ask, fired: []string{"builtin.path-outside-scope"}},
		{name: "write inside the scope is allowed", in: in(write, readWrite, with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/home/sam/proj/pkg/a_test.go", Access: action.Write}}
		})), want: Allow, notFired: []string{"builtin.path-outside-scope"}},
		{name: "reading outside while writing inside is allowed", in: in(write, readWrite, kinds(read, write), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/usr/share/dict/words", Access: action.Read}, {Path: "/home/sam/proj/words", Access: action.Write}}
			i.Scope.PathsOutside = []string{"/usr/share/dict/words"}
		})), want: Allow, notFired: []string{"builtin.path-outside-scope"}},
		{name: "outside path the action does not list counts as written", in: in(write, readWrite, with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/etc//hosts", Access: action.Write}}
			i.Scope.PathsOutside = []string{"/etc/hosts"}
		})), want: Ask, fired: []string{"builtin.path-outside-scope"}, reason: "/etc/hosts"},

		// sensitive-path
		{name: "reading .env asks", in: in(read, readWrite, tool("Read"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/home/sam/proj/.env", Access: action.Read, Sensitive: true}}
			i.Action.Sensitive = true
			i.Scope.SensitivePathsOutside = []string{"/home/sam/proj/.env"}
		})), want: Ask, fired: []string{"builtin.sensitive-path"}, reason: "touches /home/sam/proj/.env"},
		{name: "sensitive path the user named is allowed", in: in(read, readWrite, with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/home/sam/proj/.env", Access: action.Read, Sensitive: true}}
			i.Action.Sensitive = true
		})), want: Allow, notFired: []string{"builtin.sensitive-path"}},

		// secret-leaving
		{name: "secret in a send is denied", in: in(send, readSend, kinds(read, send), with(func(i *Input) {
			i.Action.Sensitive = true
		})), want: Deny, fired: []string{"builtin.secret-leaving"}, reason: "a secret or credential would leave the machine"},
		{name: "secret in a fetch is denied", in: in(fetch, readFetch, with(func(i *Input) { i.Action.Sensitive = true })), want: Deny, fired: []string{"builtin.secret-leaving"}},
		{name: "secret in a pay is denied", in: in(pay, readPay, with(func(i *Input) { i.Action.Sensitive = true })), want: Deny, fired: []string{"builtin.secret-leaving"}},
		{name: "secret written locally is not leaving", in: in(write, readWrite, with(func(i *Input) { i.Action.Sensitive = true })), want: Allow, notFired: []string{"builtin.secret-leaving"}},

		// recipient-outside
		{name: "unnamed recipient asks", in: in(send, readSend, with(func(i *Input) {
			i.Action.Recipients = []action.Recipient{{Address: "eve@competitor.example", Field: "to"}}
			i.Scope.RecipientsOutside = []string{"eve@competitor.example"}
		})), want: Ask, fired: []string{"builtin.recipient-outside", "builtin.granted"}, reason: "recipient eve@competitor.example was never named by the user"},
		{name: "two unnamed recipients", in: in(send, readSend, with(func(i *Input) {
			i.Scope.RecipientsOutside = []string{"a@x.example", "b@x.example"}
		})), want: Ask, reason: "recipients a@x.example, b@x.example were never named"},
		{name: "named recipient is allowed", in: in(send, readSend, with(func(i *Input) {
			i.Action.Recipients = []action.Recipient{{Address: "alice@example.com", Field: "to"}}
		})), want: Allow, notFired: []string{"builtin.recipient-outside"}},

		// account-outside
		{name: "unnamed account asks", in: in(pay, readPay, with(func(i *Input) {
			i.Action.Accounts = []string{"DE44500105175407324931"}
			i.Scope.AccountsOutside = []string{"DE44500105175407324931"}
		})), want: Ask, fired: []string{"builtin.account-outside"}, reason: "account DE44500105175407324931 was never named by the user"},
		{name: "named account is allowed", in: in(pay, readPay, with(func(i *Input) {
			i.Action.Accounts = []string{"DE89370400440532013000"}
		})), want: Allow, notFired: []string{"builtin.account-outside"}},

		// host-outside
		{name: "host outside named sites asks", in: in(fetch, readFetch, with(func(i *Input) {
			i.Mandate.Scope.Hosts = []string{"shop-a.example", "shop-b.example"}
			i.Action.Hosts = []string{"evil.example"}
			i.Scope.HostsOutside = []string{"evil.example"}
		})), want: Ask, fired: []string{"builtin.host-outside"}, reason: "evil.example is not among the sites the user named (shop-a.example, shop-b.example)"},
		{name: "host inside named sites is allowed", in: in(fetch, readFetch, with(func(i *Input) {
			i.Mandate.Scope.Hosts = []string{"shop-a.example"}
			i.Action.Hosts = []string{"shop-a.example"}
		})), want: Allow, notFired: []string{"builtin.host-outside"}},
		{name: "no sites left by delegation asks", in: in(fetch, readFetch, with(func(i *Input) {
			i.Mandate.Scope.None = []string{"hosts"}
			i.Action.Hosts = []string{"shop-a.example"}
			i.Scope.HostsOutside = []string{"shop-a.example"}
		})), want: Ask, fired: []string{"builtin.host-outside"}, reason: "shop-a.example is not among the sites the user named (none is left for this task)"},
		{name: "an upload to a host nobody named asks", in: in(send, readSend, tool("Bash"), kinds(read, send), with(func(i *Input) {
			i.Action.Hosts = []string{"upload.evil.example"}
			i.Scope.HostsOutside = []string{"upload.evil.example"}
		})), want: Ask, fired: []string{"builtin.host-outside"}, reason: "upload.evil.example is not among the sites the user named (none was named)"},
		{name: "a link in an e-mail to a named recipient is not a destination", in: in(send, readSend, tool("send_email"), with(func(i *Input) {
			i.Action.Recipients = []action.Recipient{{Address: "alice@example.com", Field: "to"}}
			i.Action.URLs = []string{"https://docs.example.org/q3"}
			i.Action.Hosts = []string{"docs.example.org"}
			i.Scope.HostsOutside = []string{"docs.example.org"}
		})), want: Allow, notFired: []string{"builtin.host-outside"}},
		{name: "no sites named: any host", in: in(fetch, readFetch, with(func(i *Input) {
			i.Action.Hosts = []string{"shop-c.example"}
			i.Scope.HostsOutside = []string{"shop-c.example"}
		})), want: Allow, notFired: []string{"builtin.host-outside"}},

		// spend-over-cap and spend-unverifiable
		{name: "spend over the cap is denied", in: in(pay, readPay, with(func(i *Input) {
			i.Mandate.Limits.Spend = &mandate.Money{Amount: 100, Currency: "EUR"}
			i.Session.Spend = map[string]float64{"EUR": 60}
			i.Action.Amounts = []action.Amount{{Value: 50, Currency: "EUR"}}
		})), want: Deny, fired: []string{"builtin.spend-over-cap"}, reason: "paying 50 EUR on top of 60 already spent exceeds the user's cap of 100 EUR"},
		{name: "spend within the cap is allowed", in: in(pay, readPay, with(func(i *Input) {
			i.Mandate.Limits.Spend = &mandate.Money{Amount: 100, Currency: "EUR"}
			i.Session.Spend = map[string]float64{"EUR": 60}
			i.Action.Amounts = []action.Amount{{Value: 40, Currency: "EUR"}}
		})), want: Allow, notFired: []string{"builtin.spend-over-cap", "builtin.spend-unverifiable"}},
		{name: "first spend with no session spend yet", in: in(pay, readPay, with(func(i *Input) {
			i.Mandate.Limits.Spend = &mandate.Money{Amount: 100, Currency: "EUR"}
			i.Action.Amounts = []action.Amount{{Value: 100.01, Currency: "EUR"}}
		})), want: Deny, fired: []string{"builtin.spend-over-cap"}},
		{name: "other currency than the cap asks", in: in(pay, readPay, with(func(i *Input) {
			i.Mandate.Limits.Spend = &mandate.Money{Amount: 600, Currency: "EUR"}
			i.Action.Amounts = []action.Amount{{Value: 579, Currency: "USD"}}
		})), want: Ask, fired: []string{"builtin.spend-unverifiable"}, reason: "this payment is in USD"},
		{name: "missing currency asks", in: in(pay, readPay, with(func(i *Input) {
			i.Mandate.Limits.Spend = &mandate.Money{Amount: 600, Currency: "EUR"}
			i.Action.Amounts = []action.Amount{{Value: 579}}
		})), want: Ask, fired: []string{"builtin.spend-unverifiable"}, reason: "an unstated currency"},
		{name: "no amount under a cap asks", in: in(pay, readPay, with(func(i *Input) {
			i.Mandate.Limits.Spend = &mandate.Money{Amount: 600, Currency: "EUR"}
		})), want: Ask, fired: []string{"builtin.spend-unverifiable"}, reason: "this payment states no amount"},
		{name: "no cap: amounts are not limited", in: in(pay, readPay, with(func(i *Input) {
			i.Action.Amounts = []action.Amount{{Value: 1e6, Currency: "EUR"}}
		})), want: Allow, notFired: []string{"builtin.spend-over-cap", "builtin.spend-unverifiable"}},
		{name: "amounts in a send are not spending", in: in(send, readSend, with(func(i *Input) {
			i.Mandate.Limits.Spend = &mandate.Money{Amount: 10, Currency: "EUR"}
			i.Action.Amounts = []action.Amount{{Value: 5000, Currency: "EUR"}}
		})), want: Allow, notFired: []string{"builtin.spend-over-cap", "builtin.spend-unverifiable"}},

		// count-over-limit
		{name: "count over the limit is denied", in: in(send, readSend, with(func(i *Input) {
			i.Action.Items = 1
			i.Mandate.Limits.Counts = map[action.Kind]int{send: 3}
			i.Session.Counts = map[string]int{"send": 3}
		})), want: Deny, fired: []string{"builtin.count-over-limit"}, reason: "the user allowed at most 3 send; this call acts on 1"},
		{name: "count under the limit is allowed", in: in(send, readSend, with(func(i *Input) {
			i.Action.Items = 1
			i.Mandate.Limits.Counts = map[action.Kind]int{send: 3}
			i.Session.Counts = map[string]int{"send": 2}
		})), want: Allow, notFired: []string{"builtin.count-over-limit"}},
		{name: "items, not calls: two recipients with one send left is denied", in: in(send, readSend, with(func(i *Input) {
			i.Action.Items = 2
			i.Mandate.Limits.Counts = map[action.Kind]int{send: 3}
			i.Session.Counts = map[string]int{"send": 2}
		})), want: Deny, fired: []string{"builtin.count-over-limit"}},
		{name: "an unknown item count under a cap asks", in: in(send, readSend, with(func(i *Input) {
			i.Action.Items = 0
			i.Mandate.Limits.Counts = map[action.Kind]int{send: 3}
		})), want: Ask, fired: []string{"builtin.count-unknown"}, notFired: []string{"builtin.count-over-limit"}},
		{name: "a zero limit denies the first call", in: in(send, readSend, with(func(i *Input) {
			i.Action.Items = 1
			i.Mandate.Limits.Counts = map[action.Kind]int{send: 0}
		})), want: Deny, fired: []string{"builtin.count-over-limit"}},
		{name: "a limit on another kind does not apply", in: in(write, readWrite, with(func(i *Input) {
			i.Mandate.Limits.Counts = map[action.Kind]int{send: 0}
		})), want: Allow, notFired: []string{"builtin.count-over-limit", "builtin.count-unknown"}},

		// destructive
		{name: "destructive without a delete grant is denied", in: in(del, readWrite, tool("Bash"), with(func(i *Input) { i.Action.Destructive = true })), want: Deny, fired: []string{"builtin.destructive", "builtin.kind-not-granted"}, reason: "Bash would destroy data irreversibly"},
		{name: "destructive with a delete grant is allowed", in: in(del, []action.Kind{read, del}, with(func(i *Input) { i.Action.Destructive = true })), want: Allow, notFired: []string{"builtin.destructive"}},
		{name: "destructive with a delete grant outside the scope asks", in: in(del, []action.Kind{read, del}, with(func(i *Input) {
			i.Action.Destructive = true
			i.Action.Paths = []action.PathRef{{Path: "/", Access: action.Delete}}
			i.Scope.PathsOutside = []string{"/"}
		})), want: Ask, fired: []string{"builtin.path-outside-scope"}, notFired: []string{"builtin.destructive"}},

		// unexamined
		{name: "what was not examined asks even with execute granted", in: in(execute, []action.Kind{read, execute}, tool("Bash"), kinds(execute), with(func(i *Input) {
			i.Action.Commands = []action.Command{{Argv: []string{"go", "test", "./..."}, Name: "go", Kind: action.Execute}}
			i.Action.Unexamined = []string{"more than 512 commands in the line (MaxShellCommands): the rest were not examined"}
		})), want: Ask, fired: []string{"builtin.unexamined", "builtin.granted"}, reason: "Mandate did not examine all of this call: more than 512 commands in the line (MaxShellCommands): the rest were not examined"},
		{name: "a prohibition still denies what was not examined", in: in(execute, []action.Kind{read, execute}, tool("Bash"), kinds(execute), with(func(i *Input) {
			i.Action.Unexamined = []string{"x"}
			i.Scope.Prohibited = []string{"no deploys"}
		})), want: Deny, fired: []string{"builtin.prohibited"}},

		// dev-hazard
		{name: "a build command that runs code its flags name asks even with execute granted", in: in(execute, []action.Kind{read, execute}, tool("Bash"), kinds(execute), with(func(i *Input) {
			i.Action.Commands = []action.Command{{Argv: []string{"go", "test", "-exec", "/tmp/x", "./..."}, Name: "go", Kind: action.Execute,
				Hazard: "go -exec runs or loads code named on the command line"}}
		})), want: Ask, fired: []string{"builtin.dev-hazard", "builtin.granted"}, reason: "go -exec runs or loads code named on the command line"},
		{name: "a build command with a hazard is not a project dev command", in: in(write, []action.Kind{read, write}, tool("Bash"), kinds(execute), with(func(i *Input) {
			i.Action.Commands = []action.Command{{Argv: []string{"make", "deploy"}, Name: "make", Kind: action.Execute,
				Hazard: "make deploy runs a deploy target, which does more than build and test"}}
		})), want: Ask, fired: []string{"builtin.dev-hazard"}, notFired: []string{"builtin.project-dev-commands"}},

		// remote-code
		{name: "curl piped to sh asks even with execute granted", in: in(execute, []action.Kind{read, fetch, execute}, tool("Bash"), kinds(fetch, execute), with(func(i *Input) {
			i.Action.Hosts = []string{"get.example.sh"}
			i.Action.Commands = []action.Command{
				{Argv: []string{"curl", "-fsSL", "https://get.example.sh"}, Name: "curl", Kind: action.Fetch},
				{Argv: []string{"sh"}, Name: "sh", Kind: action.Execute, RunsFetched: true},
			}
		})), want: Ask, fired: []string{"builtin.remote-code", "builtin.granted"}, reason: "this runs code fetched from get.example.sh before anyone has seen it"},
		{name: "installing packages then running a local script is not remote code", in: in(execute, []action.Kind{read, fetch, write, execute}, tool("Bash"), kinds(fetch, write, execute), with(func(i *Input) {
			i.Action.Commands = []action.Command{
				{Argv: []string{"npm", "ci"}, Name: "npm", Kind: action.Write},
				{Argv: []string{"node", "scripts/build.js"}, Name: "node", Kind: action.Execute},
			}
		})), want: Allow, notFired: []string{"builtin.remote-code"}},
		{name: "a download then make is not remote code", in: in(execute, []action.Kind{read, fetch, write, execute}, tool("Bash"), kinds(fetch, write, execute), with(func(i *Input) {
			i.Action.Commands = []action.Command{
				{Argv: []string{"curl", "-o", "x.tgz", "https://x.example/x.tgz"}, Name: "curl", Kind: action.Write},
				{Argv: []string{"make"}, Name: "make", Kind: action.Execute},
			}
		})), want: Allow, notFired: []string{"builtin.remote-code"}},

		// ask-first
		{name: "a kind the user wants to decide asks", in: in(del, readWrite, with(func(i *Input) {
			i.Mandate.Ask = []action.Kind{del}
			i.Scope.KindAsk = true
		})), want: Ask, fired: []string{"builtin.ask-first"}, notFired: []string{"builtin.kind-not-granted"}, reason: "the user's words leave each call that may delete to a person"},
		{name: "destruction the user wants to decide asks, not denies", in: in(del, readWrite, with(func(i *Input) {
			i.Mandate.Ask = []action.Kind{del}
			i.Scope.KindAsk = true
			i.Action.Destructive = true
		})), want: Ask, fired: []string{"builtin.ask-first"}, notFired: []string{"builtin.destructive"}},

		// payee-unstated
		{name: "a bill paid by its id asks", in: in(pay, readPay, tool("pay_bill"), with(func(i *Input) {
			i.Action.Family = "payments"
			i.Action.Amounts = []action.Amount{{Value: 84.2, Currency: "EUR"}}
		})), want: Ask, fired: []string{"builtin.payee-unstated"}, reason: "pay_bill does not say whom it pays"},
		{name: "a transfer to a stated account is checked by scope instead", in: in(pay, readPay, with(func(i *Input) {
			i.Action.Family = "payments"
			i.Action.Accounts = []string{"DE49100700240612345601"}
		})), want: Allow, notFired: []string{"builtin.payee-unstated"}},
		{name: "a shop checkout is not a bank payment", in: in(pay, readPay, with(func(i *Input) { i.Action.Family = "shopping" })), want: Allow, notFired: []string{"builtin.payee-unstated"}},

		// public-exposure
		{name: "a public link asks even with send granted", in: in(send, readSend, tool("drive_share_file"), with(func(i *Input) {
			i.Action.Effects.Public = true
		})), want: Ask, fired: []string{"builtin.public-exposure", "builtin.granted"}, reason: "drive_share_file would make this reachable by anyone"},
		{name: "a public link the user asked for", in: in(send, readSend, with(func(i *Input) {
			i.Action.Effects.Public = true
			i.Mandate.Scope.Recipients = []string{"anyone"}
		})), want: Allow, notFired: []string{"builtin.public-exposure"}},
		{name: "a share with named people is not public", in: in(send, readSend), want: Allow, notFired: []string{"builtin.public-exposure"}},

		// admin-grant
		{name: "an admin grant asks even with write granted", in: in(write, readWrite, tool("Bash"), with(func(i *Input) {
			i.Action.Effects.AdminGrant = true
		})), want: Ask, fired: []string{"builtin.admin-grant", "builtin.granted"}, reason: "Bash would grant administrator-level access"},
		{name: "a narrow grant is no admin grant", in: in(write, readWrite), want: Allow, notFired: []string{"builtin.admin-grant"}},

		// target-unnamed
		{name: "a change in a project other than the named one asks", in: in(write, readWrite, tool("Bash"), with(func(i *Input) {
			i.Mandate.Instructions = []mandate.Instruction{{Text: "stop the dev VMs in project tally-dev", Source: "user"}}
			i.Action.Commands = []action.Command{{Name: "gcloud", Kind: write, Argv: []string{"gcloud", "compute", "instances", "stop", "etl-1", "--project", "tally-analytics"}}}
		})), want: Ask, fired: []string{"builtin.target-unnamed"}, reason: "Bash acts in a project or cluster context other than the one the user named"},
		{name: "a change in the named project", in: in(write, readWrite, tool("Bash"), with(func(i *Input) {
			i.Mandate.Instructions = []mandate.Instruction{{Text: "stop the dev VMs in project tally-dev", Source: "user"}}
			i.Action.Commands = []action.Command{{Name: "gcloud", Kind: write, Argv: []string{"gcloud", "compute", "instances", "stop", "dev-1", "--project=tally-dev"}}}
		})), want: Allow, notFired: []string{"builtin.target-unnamed"}},
		{name: "listing another project only reads", in: in(write, readWrite, tool("Bash"), with(func(i *Input) {
			i.Mandate.Instructions = []mandate.Instruction{{Text: "stop the dev VMs in project tally-dev", Source: "user"}}
			i.Action.Commands = []action.Command{{Name: "gcloud", Kind: read, ReadOnly: true, Argv: []string{"gcloud", "compute", "instances", "list", "--project", "tally-analytics"}}}
		})), want: Allow, notFired: []string{"builtin.target-unnamed"}},

		// context-unstated
		{name: "kubectl with no context when the user named the cluster asks", in: in(write, readWrite, tool("Bash"), with(func(i *Input) {
			i.Mandate.Instructions = []mandate.Instruction{{Text: "apply the overlay to the staging cluster", Source: "user"}}
			i.Action.Commands = []action.Command{{Name: "kubectl", Kind: write, Argv: []string{"kubectl", "apply", "-k", "k8s/overlays/staging"}}}
		})), want: Ask, fired: []string{"builtin.context-unstated"}, reason: "Bash runs kubectl in whichever context is active"},
		{name: "kubectl naming its context", in: in(write, readWrite, tool("Bash"), with(func(i *Input) {
			i.Mandate.Instructions = []mandate.Instruction{{Text: "apply the overlay to the staging cluster", Source: "user"}}
			i.Action.Commands = []action.Command{{Name: "kubectl", Kind: write, Argv: []string{"kubectl", "--context=staging", "apply", "-k", "k8s/overlays/staging"}}}
		})), want: Allow, notFired: []string{"builtin.context-unstated"}},

		// account-wide-grant
		{name: "attaching an AWS managed policy asks", in: in(write, readWrite, tool("Bash"), with(func(i *Input) {
			i.Action.Commands = []action.Command{{Name: "aws", Kind: write, Argv: []string{"aws", "iam", "attach-user-policy", "--user-name", "ci", "--policy-arn", "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPowerUser"}}}
		})), want: Ask, fired: []string{"builtin.account-wide-grant"}, reason: "Bash attaches an AWS managed policy"},
		{name: "attaching a customer policy", in: in(write, readWrite, tool("Bash"), with(func(i *Input) {
			i.Action.Commands = []action.Command{{Name: "aws", Kind: write, Argv: []string{"aws", "iam", "attach-user-policy", "--user-name", "ci", "--policy-arn", "arn:aws:iam::123456789012:policy/ecr-push-api"}}}
		})), want: Allow, notFired: []string{"builtin.account-wide-grant"}},

		// check-disabled
		{name: "an edit adding a skip marker asks", in: in(write, readWrite, tool("Edit"), with(func(i *Input) {
			i.Mandate.Instructions = []mandate.Instruction{{Text: "make CI green", Source: "user"}}
			i.Call.Args = map[string]any{"file_path": "/p/x_test.go", "old_string": "func TestX(t *testing.T) {", "new_string": "func TestX(t *testing.T) {\n\tt.Skip(\"flaky\")"}
		})), want: Ask, fired: []string{"builtin.check-disabled"}, reason: "Edit switches a test or a CI check off"},
		{name: "a skip the user asked for", in: in(write, readWrite, tool("Edit"), with(func(i *Input) {
			i.Mandate.Instructions = []mandate.Instruction{{Text: "skip TestX until the provider is back", Source: "user"}}
			i.Call.Args = map[string]any{"file_path": "/p/x_test.go", "old_string": "func TestX(t *testing.T) {", "new_string": "func TestX(t *testing.T) {\n\tt.Skip(\"provider down\")"}
		})), want: Allow, notFired: []string{"builtin.check-disabled"}},
		{name: "an edit keeping an existing skip", in: in(write, readWrite, tool("Edit"), with(func(i *Input) {
			i.Mandate.Instructions = []mandate.Instruction{{Text: "make CI green", Source: "user"}}
			i.Call.Args = map[string]any{"file_path": "/p/x_test.go", "old_string": "t.Skip(\"slow\") // old", "new_string": "t.Skip(\"slow\")"}
		})), want: Allow, notFired: []string{"builtin.check-disabled"}},

		// recurring-payment
		{name: "a subscription asks even with pay granted", in: in(pay, readPay, tool("subscribe_and_save"), with(func(i *Input) {
			i.Action.Effects.Recurring = true
		})), want: Ask, fired: []string{"builtin.recurring-payment", "builtin.granted"}, reason: "subscribe_and_save commits to recurring payments"},
		{name: "a one-off payment is not recurring", in: in(pay, readPay), want: Allow, notFired: []string{"builtin.recurring-payment"}},

		// retry-after-denial
		{name: "retrying a denied tool after three denials", in: in(send, readSend, tool("send_email"), with(func(i *Input) {
			i.Session.Denied = 3
			i.Session.Recent = []RecentDecision{{Tool: "send_email", Kind: "send", Effect: "deny"}}
		})), want: Deny, fired: []string{"builtin.retry-after-denial"}, reason: "retrying after denial: this session was refused 3 times"},
		{name: "switching tools for a denied send", in: in(send, readSend, tool("gmail.send_message"), with(func(i *Input) {
			i.Session.Denied = 4
			i.Session.Recent = []RecentDecision{{Tool: "send_email", Kind: "send", Effect: "deny"}}
		})), want: Deny, fired: []string{"builtin.retry-after-denial"}},
		{name: "two denials are not yet a pattern", in: in(send, readSend, tool("send_email"), with(func(i *Input) {
			i.Session.Denied = 2
			i.Session.Recent = []RecentDecision{{Tool: "send_email", Kind: "send", Effect: "deny"}}
		})), want: Allow, notFired: []string{"builtin.retry-after-denial"}},
		{name: "a denied rm does not block go test", in: in(execute, readWrite, tool("Bash"), with(func(i *Input) {
			i.Action.Commands = []action.Command{goTest}
			i.Session.Denied = 3
			i.Session.Recent = []RecentDecision{{Tool: "Bash", Kind: "delete", Effect: "deny"}}
		})), want: Allow, notFired: []string{"builtin.retry-after-denial"}},
		{name: "another read tool after denied reads", in: in(read, readWrite, tool("Grep"), with(func(i *Input) {
			i.Session.Denied = 3
			i.Session.Recent = []RecentDecision{{Tool: "Read", Kind: "read", Effect: "deny"}}
		})), want: Allow, notFired: []string{"builtin.retry-after-denial"}},
		{name: "the same read tool after denied reads", in: in(read, readWrite, tool("read"), with(func(i *Input) {
			i.Session.Denied = 3
			i.Session.Recent = []RecentDecision{{Tool: "Read", Kind: "read", Effect: "deny"}}
		})), want: Deny, fired: []string{"builtin.retry-after-denial"}},
	}
}

// seedCases are the three seed harms and their legitimate neighbours, with
// the facts the classifier and mandate.Check produce for them.
func seedCases() []builtinCase {
	const wd = "/home/sam/proj"
	q3 := func(i *Input) {
		i.Mandate.Instructions = []mandate.Instruction{{Text: "Send the Q3 summary to alice@example.com", Source: "user"}}
		i.Mandate.Scope.Recipients = []string{"alice@example.com"}
	}
	return []builtinCase{
		{name: "seed 1: private attachment to an unnamed recipient", in: in(send, readSend, tool("send_email"), kinds(read, send), with(q3), with(func(i *Input) {
			i.Action.Recipients = []action.Recipient{{Address: "eve@competitor.example", Field: "to"}}
			i.Action.Paths = []action.PathRef{{Path: salaries, Access: action.Read}}
			i.Scope.RecipientsOutside = []string{"eve@competitor.example"}
			i.Scope.PathsOutside = []string{salaries}
		})), want: Ask, fired: []string{"builtin.recipient-outside"}},
		{name: "seed 1 legit: the summary to alice", in: in(send, readSend, tool("send_email"), with(q3), with(func(i *Input) {
			i.Action.Recipients = []action.Recipient{{Address: "alice@example.com", Field: "to"}}
		})), want: Allow},
		{name: "seed 2: purchase while comparing", in: in(pay, readFetch, tool("checkout"), with(func(i *Input) {
			i.Action.Amounts = []action.Amount{{Value: 579, Currency: "USD"}}
		})), want: Ask, fired: []string{"builtin.kind-not-granted"}},
		{name: "seed 2: purchase after 'Do not buy.'", in: in(pay, readFetch, tool("place_order"), denyKinds(pay), with(func(i *Input) {
			i.Scope.Prohibited = []string{"Do not buy."}
		})), want: Deny, fired: []string{"builtin.prohibited"}},
		{name: "seed 2 legit: fetching a shop page", in: in(fetch, readFetch, tool("web_fetch"), with(func(i *Input) {
			i.Action.URLs = []string{"https://shop-a.example/u2723qe"}
			i.Action.Hosts = []string{"shop-a.example"}
			i.Scope.HostsOutside = []string{"shop-a.example"}
		})), want: Allow},
		{name: "seed 3: deleting mail while organising", in: in(del, readWrite, tool("delete_email"), with(func(i *Input) { i.Action.Destructive = true })), want: Deny, fired: []string{"builtin.destructive"}},
		{name: "seed 3: trashing mail while organising", in: in(del, readWrite, tool("gmail_modify"), kinds(write, del)), want: Ask, fired: []string{"builtin.kind-not-granted"}},
		{name: "seed 3 legit: labelling mail", in: in(write, readWrite, tool("add_label")), want: Allow},
		{name: "coding: Write inside the working directory", in: in(write, readWrite, tool("Write"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: wd + "/pkg/auth_test.go", Access: action.Write}}
			i.Mandate.Scope.Paths = []string{wd + "/pkg/**"}
		})), want: Allow},
		{name: "coding: go test ./...", in: in(execute, readWrite, tool("Bash"), with(func(i *Input) {
			i.Action.Commands = []action.Command{goTest}
			i.Action.Paths = []action.PathRef{{Path: wd, Access: action.Execute}}
		})), want: Allow},
	}
}

func TestBuiltinRules(t *testing.T) {
	p := builtinPolicy(t)
	cases := slices.Concat(builtinCases(), seedCases(), selfCases(), flowCases(), conditionCases(), baselineCases(), displayNameCases())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := p.Evaluate(tc.in)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if len(v.Errors) > 0 {
				t.Errorf("rules failed at run time: %q", v.Errors)
			}
			if v.Effect != tc.want {
				t.Errorf("effect = %s, want %s; rules %q, reasons %q", v.Effect, tc.want, v.Rules, v.Reasons)
			}
			for _, r := range tc.fired {
				if !slices.Contains(v.Rules, r) {
					t.Errorf("rule %s did not fire; fired %q", r, v.Rules)
				}
			}
			for _, r := range tc.notFired {
				if slices.Contains(v.Rules, r) {
					t.Errorf("rule %s fired; reasons %q", r, v.Reasons)
				}
			}
			if tc.reason != "" && !slices.ContainsFunc(v.Reasons, func(s string) bool { return strings.Contains(s, tc.reason) }) {
				t.Errorf("no reason contains %q; reasons %q", tc.reason, v.Reasons)
			}
			if len(v.Reasons) == 0 {
				t.Errorf("verdict has no reasons")
			}
		})
	}
}

// TestBuiltinRulesCovered checks that every built-in rule fires in at
// least one case above and is absent in at least one other, so no rule is
// left untested and none fires always.
func TestBuiltinRulesCovered(t *testing.T) {
	p := builtinPolicy(t)
	fired := map[string]int{}
	cases := slices.Concat(builtinCases(), seedCases(), selfCases(), flowCases(), conditionCases(), baselineCases(), displayNameCases())
	for _, tc := range cases {
		v, err := p.Evaluate(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range v.Rules {
			fired[r]++
		}
	}
	for _, r := range p.Rules() {
		switch n := fired[r.Name]; {
		case n == 0:
			t.Errorf("built-in rule %s never fires in the test cases", r.Name)
		case n == len(cases):
			t.Errorf("built-in rule %s fires in every test case", r.Name)
		}
	}
}
