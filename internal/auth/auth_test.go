package auth

import (
	"strings"
	"testing"
)

func TestPermissions(t *testing.T) {
	all := []Permission{Evaluate, Observe, CreateSession, AmendMandate, ChangeStatus, Read, ManageTokens}
	want := map[Role][]Permission{
		RoleAdmin: all,
		RoleUser:  {Evaluate, Observe, CreateSession, AmendMandate, ChangeStatus, Read},
		RoleHook:  {Evaluate, Observe, CreateSession, AmendMandate, ChangeStatus},
		RoleAgent: {Evaluate, Observe},
	}
	for role, perms := range want {
		p := Principal{Role: role}
		for _, perm := range all {
			allowed := false
			for _, w := range perms {
				allowed = allowed || w == perm
			}
			if got := p.Can(perm); got != allowed {
				t.Errorf("%s can %s = %v, want %v", role, perm, got, allowed)
			}
		}
	}
	if (Principal{Role: "nobody"}).Can(Read) {
		t.Error("unknown role can read")
	}
}

func TestOwns(t *testing.T) {
	tests := []struct {
		p     Principal
		agent string
		want  bool
	}{
		{Principal{Role: RoleAgent, AgentID: "a"}, "a", true},
		{Principal{Role: RoleAgent, AgentID: "a"}, "b", false},
		{Principal{Role: RoleAgent}, "", false},
		{Principal{Role: RoleUser}, "b", true},
		{Principal{Role: RoleHook}, "b", true},
	}
	for _, tt := range tests {
		if got := tt.p.Owns(tt.agent); got != tt.want {
			t.Errorf("%+v owns %q = %v", tt.p, tt.agent, got)
		}
	}
}

func TestTokens(t *testing.T) {
	tok, hash := NewToken()
	if !strings.HasPrefix(tok, TokenPrefix) || len(tok) < 40 {
		t.Fatalf("token %q", tok)
	}
	if string(HashToken(tok+"\n")) != string(hash) {
		t.Error("hash must ignore surrounding whitespace (tokens are read from files)")
	}
	other, _ := NewToken()
	if other == tok {
		t.Error("tokens repeat")
	}
	if _, err := ParseRole("root"); err == nil {
		t.Error("root accepted")
	}
}
