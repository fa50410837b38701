package approval

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

func TestArgsHashIsCanonical(t *testing.T) {
	a, err := ArgsHash([]byte(`{"to":"a@x.example","subject":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ArgsHash([]byte("{ \"subject\" : \"hi\",\n \"to\":\"a@x.example\" }"))
	c, _ := ArgsHash([]byte(`{"to":"b@x.example","subject":"hi"}`))
	empty, _ := ArgsHash(nil)
	obj, _ := ArgsHash([]byte(`{}`))
	if a != b || a == c || len(a) != 64 || empty != obj {
		t.Errorf("hashes %s %s %s %s %s", a, b, c, empty, obj)
	}
	if _, err := ArgsHash([]byte(`{"to":`)); err == nil {
		t.Error("malformed args hashed")
	}
}

func TestAnswerChecks(t *testing.T) {
	for _, tc := range []struct {
		a  Answer
		ok bool
	}{
		{Answer{Decision: "approve"}, true},
		{Answer{Decision: "deny", Scope: "session"}, true},
		{Answer{Decision: "Approve"}, false},
		{Answer{}, false},
		{Answer{Decision: "approve", Scope: "always"}, false},
		{Answer{Decision: "approve", Note: string(make([]byte, MaxNote+1))}, false},
		{Answer{Decision: "approve", Note: "\xff"}, false},
	} {
		a := tc.a
		if err := a.Check(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.a, err)
		}
		if tc.ok && a.Scope == "" {
			t.Errorf("%+v: scope not defaulted", tc.a)
		}
	}
}

func TestAnswerable(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := now.Add(-time.Minute)
	base := store.Approval{ID: "a1", State: store.ApprovalPending, Deadline: now.Add(time.Minute)}
	for _, tc := range []struct {
		mod  func(*store.Approval)
		want error
	}{
		{func(*store.Approval) {}, nil},
		{func(a *store.Approval) { a.Deadline = now }, ErrExpired},
		{func(a *store.Approval) { a.State = store.ApprovalExpired }, ErrExpired},
		{func(a *store.Approval) { a.State = store.ApprovalWithdrawn }, ErrWithdrawn},
		{func(a *store.Approval) {
			a.State, a.AnsweredBy, a.AnsweredAt = store.ApprovalApproved, "approver:tok_1", &at
		}, ErrAnswered},
		{func(a *store.Approval) { a.State = store.ApprovalDenied }, ErrAnswered},
	} {
		a := base
		tc.mod(&a)
		if err := Answerable(&a, now); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", a.State, err, tc.want)
		}
	}
	r := Resolve(&base, store.ApprovalApproved, store.ScopeSession, "user:tok_u", "user", ViaCLI, "observed", "ok", now)
	if r.Rev != base.Rev+1 || r.State != store.ApprovalApproved || base.State != store.ApprovalPending || r.AnsweredBy != "user:tok_u" || *r.AnsweredAt != now {
		t.Errorf("resolved %+v from %+v", r, base)
	}
}

func TestDeadline(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		rules        []time.Duration
		session, def time.Duration
		want         time.Duration
	}{
		{nil, 0, 0, DefaultTimeout},
		{nil, 0, time.Hour, time.Hour},
		{nil, 5 * time.Minute, time.Hour, 5 * time.Minute},
		{[]time.Duration{0, 3 * time.Minute, time.Minute}, 5 * time.Minute, time.Hour, time.Minute},
		{nil, 30 * 24 * time.Hour, 0, MaxTimeout},
	} {
		if got := Deadline(now, tc.rules, tc.session, tc.def).Sub(now); got != tc.want {
			t.Errorf("%+v: %s", tc, got)
		}
	}
	for _, bad := range []string{"soon", "-1m", "0s", "9000h"} {
		if _, err := ParseTimeout(bad); err == nil {
			t.Errorf("ParseTimeout(%q) passed", bad)
		}
	}
}

func send(to ...string) *action.Action {
	a := &action.Action{Kind: action.Send, Kinds: []action.Kind{action.Send}}
	for _, r := range to {
		a.Recipients = append(a.Recipients, action.Recipient{Address: r, Field: "to"})
	}
	return a
}

func TestLikeness(t *testing.T) {
	pay := &action.Action{Kind: action.Pay, Kinds: []action.Kind{action.Pay}, Accounts: []string{"DE89370400440532013000"}, Amounts: []action.Amount{{Value: 40, Currency: "EUR"}}}
	git := &action.Action{Kind: action.Execute, Kinds: []action.Kind{action.Execute}, Commands: []action.Command{{Name: "git", Argv: []string{"git", "push", "origin", "main"}}}}
	l := Like("send_email", send("Eve@X.example"))
	lp := Like("pay", pay)
	lg := Like("Bash", git)
	for _, tc := range []struct {
		name string
		l    *store.Likeness
		tool string
		a    *action.Action
		want bool
	}{
		{"same recipient", l, "send_email", send("eve@x.example"), true},
		{"another recipient too", l, "send_email", send("eve@x.example", "mallory@x.example"), false},
		{"another tool", l, "post_message", send("eve@x.example"), false},
		{"another kind", l, "send_email", &action.Action{Kind: action.Delete, Recipients: []action.Recipient{{Address: "eve@x.example"}}}, false},
		{"less money", lp, "pay", &action.Action{Kind: action.Pay, Accounts: pay.Accounts, Amounts: []action.Amount{{Value: 39.5, Currency: "EUR"}}}, true},
		{"more money", lp, "pay", &action.Action{Kind: action.Pay, Accounts: pay.Accounts, Amounts: []action.Amount{{Value: 41, Currency: "EUR"}}}, false},
		{"other currency", lp, "pay", &action.Action{Kind: action.Pay, Accounts: pay.Accounts, Amounts: []action.Amount{{Value: 1, Currency: "USD"}}}, false},
		{"git push elsewhere", lg, "Bash", &action.Action{Kind: action.Execute, Commands: []action.Command{{Name: "git", Argv: []string{"git", "push", "-f", "fork"}}}}, true},
		{"git reset", lg, "Bash", &action.Action{Kind: action.Execute, Commands: []action.Command{{Name: "git", Argv: []string{"git", "reset", "--hard"}}}}, false},
		{"nil likeness", nil, "send_email", send("eve@x.example"), false},
	} {
		if got := Matches(tc.l, tc.tool, tc.a); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

func TestAmendmentNeverLiftsWhatTheUserRuledOut(t *testing.T) {
	prev := &mandate.Mandate{
		Version: 1, Allow: []action.Kind{action.Read}, Deny: []action.Kind{action.Pay}, Ask: []action.Kind{action.Delete},
		Prohibitions: []mandate.Prohibition{{Kind: action.Execute, Text: "don't run anything"}},
		Instructions: []mandate.Instruction{{Text: "Read my mail", Source: "user"}},
	}
	a := &action.Action{Kind: action.Send, Kinds: []action.Kind{action.Send, action.Delete, action.Pay, action.Execute}, Recipients: []action.Recipient{{Address: "eve@x.example"}}}
	rep := mandate.Report{RecipientsOutside: []string{"eve@x.example"}, HostsOutside: []string{"x.example"}}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	m := Amendment(prev, a, rep, "ap1", "approver:tok_1", "Eve is our auditor", now)
	if !slices.Contains(m.Allow, action.Send) {
		t.Errorf("send not granted: %v", m.Allow)
	}
	for _, k := range []action.Kind{action.Pay, action.Delete, action.Execute} {
		if slices.Contains(m.Allow, k) {
			t.Errorf("%s was granted: the user ruled it out or left it to a person", k)
		}
	}
	if !slices.Contains(m.Deny, action.Pay) || !slices.Contains(m.Ask, action.Delete) || len(m.Prohibitions) != 1 {
		t.Errorf("the user's limits changed: deny %v ask %v prohibitions %v", m.Deny, m.Ask, m.Prohibitions)
	}
	if !slices.Contains(m.Scope.Recipients, "eve@x.example") || !slices.Contains(m.Scope.Hosts, "x.example") {
		t.Errorf("scope %+v", m.Scope)
	}
	last := m.Instructions[len(m.Instructions)-1]
	if len(m.Instructions) != 2 || last.Text != "Eve is our auditor" || last.Source != "approver" || len(m.Notes) != 1 {
		t.Errorf("instructions %+v notes %v", m.Instructions, m.Notes)
	}
	if prev.Version != 1 || len(prev.Allow) != 1 || len(prev.Instructions) != 1 {
		t.Errorf("the previous version was modified: %+v", prev)
	}
}
