package auth

import (
	"strings"
	"testing"
	"time"
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
		{Principal{Role: RoleHook, AgentID: "b"}, "b", true},
		{Principal{Role: RoleHook, AgentID: "b"}, "b:Explore", true},
		{Principal{Role: RoleHook, AgentID: "b"}, "bc", false},
		{Principal{Role: RoleHook, AgentID: "b"}, "c:b", false},
		{Principal{Role: RoleHook, AgentID: "b"}, "b:", true},
		{Principal{Role: RoleHook}, DefaultHookAgent, true},
		{Principal{Role: RoleHook}, DefaultHookAgent + ":general-purpose", true},
		{Principal{Role: RoleHook}, "mailer", false},
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

func TestIssueBindsHookTokens(t *testing.T) {
	tests := []struct {
		role, agent, want string
		ok                bool
	}{
		{"hook", "", DefaultHookAgent, true},
		{"hook", "my-runtime", "my-runtime", true},
		{"agent", "mailer", "mailer", true},
		{"agent", "", "", false},
		{"user", "mailer", "", false},
		{"admin", "x", "", false},
		{"hook", "has space", "", false},
		{"hook", strings.Repeat("a", 129), "", false},
	}
	for _, tt := range tests {
		_, rec, err := Issue(tt.role, tt.agent, "", time.Now())
		if (err == nil) != tt.ok {
			t.Errorf("Issue(%s, %q): %v", tt.role, tt.agent, err)
			continue
		}
		if err == nil && rec.AgentID != tt.want {
			t.Errorf("Issue(%s, %q): agent %q, want %q", tt.role, tt.agent, rec.AgentID, tt.want)
		}
	}
	if !(Principal{Role: RoleHook}).Observes() || (Principal{Role: RoleAgent, AgentID: "a"}).Observes() {
		t.Error("hooks observe, agents report")
	}
}
