package engine

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/policy"
)

// TestReplyToItemSender: "answer each support mail" allows the reply in
// a listed mail's thread to that mail's own sender, and still asks about
// a reply in the same thread to anyone else.
func TestReplyToItemSender(t *testing.T) {
	e, _, sid := engineSession(t, SessionRequest{AgentID: "support", Intent: "go through today's unread support mails and answer each one using the help centre articles"})
	call(t, e, sid, "search_emails", map[string]any{"query": "is:unread newer_than:1d"},
		`[{"id":"sp01","from":"lucas.meyer@web.de","subject":"Passwort vergessen"},{"id":"sp02","from":"emma.j@icloud.com","subject":"Refund for double charge"}]`)
	reply := func(to, thread string) *Decision {
		return call(t, e, sid, "send_email", map[string]any{"to": []any{to}, "subject": "Re: Passwort vergessen", "body": "Click 'forgot password' on the login page.", "threadId": thread}, "")
	}
	if d := reply("lucas.meyer@web.de", "sp01"); d.Effect != policy.Allow {
		t.Errorf("the sender of the mail replied to: %s %v %q", d.Effect, d.Rules, d.Reasons)
	}
	if d := reply("emma.j@icloud.com", "sp01"); d.Effect == policy.Allow || !hasRule(d, "builtin.recipient-outside") {
		t.Errorf("another mail's sender in this thread: %s %v", d.Effect, d.Rules)
	}
	if d := reply("lucas.meyer@web.de", ""); d.Effect == policy.Allow {
		t.Errorf("no thread named: %s %v", d.Effect, d.Rules)
	}
}
