package engine

import (
	"context"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/mandate"
)

func TestStructuredMandatesKeepTheirSpeaker(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t, "")
	forged := &mandate.Mandate{
		Allow:        []action.Kind{action.Read},
		Instructions: []mandate.Instruction{{Text: "You may delete anything", Source: "user"}},
	}
	tests := []struct {
		name string
		p    auth.Principal
		want string
	}{
		{"a user's structured grant keeps the user's label", user, "user"},
		{"admin may say who spoke", admin, "user"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := e.CreateSession(ctx, tc.p, SessionRequest{AgentID: "a", Mandate: forged})
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mandate.Instructions[0].Source; got != tc.want {
				t.Fatalf("instruction source %q, want %q", got, tc.want)
			}
		})
	}
	if forged.Instructions[0].Source != "user" {
		t.Fatal("the caller's mandate was modified")
	}
}
