package mandate

import (
	"slices"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

func TestAmend(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	prev := &Mandate{
		Version:      2,
		Instructions: []Instruction{{Text: "Compare prices. Don't buy.", Source: "user"}},
		Allow:        []action.Kind{action.Read, action.Fetch},
		Deny:         []action.Kind{action.Pay, action.Delete},
		Prohibitions: []Prohibition{{Kind: action.Pay, Text: "Don't buy."}, {Kind: action.Send, Target: "bob@example.com", Text: "not to bob"}},
		Scope:        Scope{Hosts: []string{"shop-a.example"}, Recipients: []string{}, None: []string{"accounts"}},
		Limits:       Limits{Counts: map[action.Kind]int{action.Send: 1}},
	}
	add := &Mandate{
		Instructions: []Instruction{{Text: "OK, buy the cheaper one, up to 600 EUR, and send the receipt to alice@example.com", Source: "user"}},
		Allow:        []action.Kind{action.Read, action.Pay, action.Send},
		Deny:         []action.Kind{action.Write},
		Scope:        Scope{Recipients: []string{"alice@example.com"}, Accounts: []string{"DE89370400440532013000"}},
		Limits:       Limits{Spend: &Money{Amount: 600, Currency: "EUR"}, Counts: map[action.Kind]int{action.Send: 2}},
		ExpiresAt:    &at,
	}
	got := Amend(prev, add)
	tests := []struct {
		name string
		ok   bool
	}{
		{"instructions accumulate", len(got.Instructions) == 2 && got.Instructions[1].Text == add.Instructions[0].Text},
		{"newly granted kind lifted from deny", slices.Contains(got.Allow, action.Pay) && !slices.Contains(got.Deny, action.Pay)},
		{"untargeted prohibition of a granted kind dropped", !slices.ContainsFunc(got.Prohibitions, func(p Prohibition) bool { return p.Kind == action.Pay })},
		{"targeted prohibition kept", slices.ContainsFunc(got.Prohibitions, func(p Prohibition) bool { return p.Target == "bob@example.com" })},
		{"unrelated deny kept", slices.Contains(got.Deny, action.Delete)},
		{"new deny added", slices.Contains(got.Deny, action.Write) && !slices.Contains(got.Allow, action.Write)},
		{"scope grows", slices.Contains(got.Scope.Hosts, "shop-a.example") && slices.Contains(got.Scope.Recipients, "alice@example.com")},
		{"named dimension no longer matches nothing", !slices.Contains(got.Scope.None, "accounts")},
		{"spend cap set", got.Limits.Spend != nil && got.Limits.Spend.Amount == 600},
		{"count replaced", got.Limits.Counts[action.Send] == 2},
		{"expiry set", got.ExpiresAt != nil && got.ExpiresAt.Equal(at)},
		{"version kept for the caller", got.Version == 2},
		{"prev untouched", len(prev.Instructions) == 1 && slices.Contains(prev.Deny, action.Pay) && prev.Limits.Counts[action.Send] == 1},
	}
	for _, tt := range tests {
		if !tt.ok {
			t.Errorf("%s: got %+v", tt.name, got)
		}
	}
	if err := got.Validate(); err != nil {
		t.Errorf("amended mandate does not validate: %v", err)
	}
}

func TestAmendAsk(t *testing.T) {
	prev := &Mandate{Allow: []action.Kind{action.Read, action.Write, action.Delete}, Ask: []action.Kind{action.Send}}
	// The user now wants to be asked about deleting, and allows sending.
	got := Amend(prev, &Mandate{Allow: []action.Kind{action.Send}, Ask: []action.Kind{action.Delete}})
	sameKinds(t, "allow", got.Allow, []action.Kind{action.Read, action.Write, action.Send})
	sameKinds(t, "ask", got.Ask, []action.Kind{action.Delete})
	// …and then rules writing out altogether.
	got = Amend(got, &Mandate{Deny: []action.Kind{action.Write}, Ask: []action.Kind{action.Write}})
	sameKinds(t, "ask", got.Ask, []action.Kind{action.Delete})
	sameKinds(t, "deny", got.Deny, []action.Kind{action.Write})
	if err := got.Validate(); err != nil {
		t.Errorf("amended mandate does not validate: %v", err)
	}
}

func TestAmendGrantAndDenySameKind(t *testing.T) {
	got := Amend(&Mandate{Allow: []action.Kind{action.Read}}, &Mandate{Allow: []action.Kind{action.Send}, Deny: []action.Kind{action.Send}})
	if slices.Contains(got.Allow, action.Send) || !slices.Contains(got.Deny, action.Send) {
		t.Fatalf("deny must win within one amendment: %+v", got)
	}
}
