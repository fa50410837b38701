package engine

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/policy"
)

// TestItemNamedBySubject: "everyone from the Kickoff mail" names the mail
// by its subject; its participants, read by the mail's id, are the
// people the user pointed to. The same invite after reading a mail the
// user did not name by its subject is asked about.
func TestItemNamedBySubject(t *testing.T) {
	run := func(subject string) *Decision {
		e, _ := newEngine(t, "")
		sid := mustSession(t, e, SessionRequest{AgentID: "cal", Intent: "Invite everyone on the Kickoff mail to a meeting on Friday at 9, 45 minutes"})
		call(t, e, sid, "search_emails", map[string]any{"query": "kickoff", "maxResults": 5.0},
			`[{"id":"s1","from":"Sabine Vogt <sabine.vogt@kanzlei.example>","subject":"`+subject+`"}]`)
		call(t, e, sid, "read_email", map[string]any{"messageId": "s1"},
			`{"from":"Sabine Vogt <sabine.vogt@kanzlei.example>","to":["me@kanzlei.example","t.meier@kanzlei.example"],"cc":["a.kaya@kanzlei.example"],"body":"Let's start on Friday."}`)
		return call(t, e, sid, "create_event", map[string]any{"calendarId": "primary", "summary": "Kickoff",
			"start": "2026-12-11T09:00:00+01:00", "end": "2026-12-11T09:45:00+01:00",
			"attendees": []any{"sabine.vogt@kanzlei.example", "t.meier@kanzlei.example", "a.kaya@kanzlei.example"}}, "")
	}
	if d := run("Kickoff"); d.Effect != policy.Allow {
		t.Errorf("the participants of the mail the user named by its subject: %s %v %q", d.Effect, d.Rules, d.Reasons)
	}
	if d := run("Quarterly figures"); d.Effect == policy.Allow || !hasRule(d, "builtin.recipient-outside") {
		t.Errorf("the participants of a mail the user did not name: %s %v", d.Effect, d.Rules)
	}
}
