package hook

import (
	"regexp"
	"strings"
	"testing"
)

var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$`)

func TestSessionIDs(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct{ session, tool, agent string }{
		{"7f3e2a1c-9b4d-4e6f-8a2b-1c3d5e7f9a0b", "toolu_01Task7GhJ2kP9sXqW3mN5vB", "a3f9c2e1b7d04e58"},
		{long, long, long},
		{"with space", "tool/slash", "agent\x00nul"},
		{"-leading-dash", "_x", ".y"},
	} {
		main := MainSessionID(tc.session)
		for _, id := range []string{main, LaunchSessionID(main, tc.tool), SubagentSessionID(main, tc.agent)} {
			if !sessionIDPattern.MatchString(id) {
				t.Errorf("%q is not a valid session id", id)
			}
		}
		if !strings.HasPrefix(LaunchSessionID(main, tc.tool), LaunchPrefix(main)) {
			t.Errorf("launch id does not start with its prefix")
		}
		if strings.HasPrefix(SubagentSessionID(main, tc.agent), LaunchPrefix(main)) {
			t.Errorf("a sub-agent id looks like a launch")
		}
	}
	if MainSessionID("a b") == MainSessionID("a_b") || MainSessionID(long) == MainSessionID(long+"y") {
		t.Error("distinct ids collide")
	}
	if got := subagentAgentID("claude-code", ""); got != "claude-code:general-purpose" {
		t.Errorf("default agent type: %s", got)
	}
}
