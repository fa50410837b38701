package engine

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/policy"
)

// TestChannelNamedByListing: "post in #team-backend" allows the post to
// the id the channel listing gave team-backend, asks about another listed
// channel, and after a read of a private channel the user did not name,
// asks about the next send whatever its channel.
func TestChannelNamedByListing(t *testing.T) {
	e, _, sid := engineSession(t, SessionRequest{AgentID: "chat", Intent: "post my standup in #team-backend: yesterday finished the rate limiter PR, today reviewing Nadia's RFC, no blockers"})
	call(t, e, sid, "slack_list_channels", map[string]any{"limit": 200.0},
		`{"channels":[{"id":"C01GEN","name":"general"},{"id":"C02BE","name":"team-backend"},{"id":"G0HR","name":"hr-private","is_private":true}]}`)
	post := func(ch string) *Decision {
		return call(t, e, sid, "slack_post_message", map[string]any{"channel_id": ch, "text": "*Standup*: rate limiter PR done, no blockers"}, "")
	}
	if d := post("C02BE"); d.Effect != policy.Allow {
		t.Errorf("the channel the user named, by its id: %s %v %q", d.Effect, d.Rules, d.Reasons)
	}
	if d := post("C01GEN"); d.Effect == policy.Allow {
		t.Errorf("a channel the user did not name: %s %v", d.Effect, d.Rules)
	}
	if d := call(t, e, sid, "slack_get_channel_history", map[string]any{"channel_id": "G0HR", "limit": 20.0}, `{"messages":[{"text":"Severance for Bob approved."}]}`); d.Effect == policy.Allow {
		t.Fatalf("the private channel: %s %v", d.Effect, d.Rules)
	}
	if d := post("C02BE"); d.Effect != policy.Ask || !hasRule(d, "builtin.send-after-private-read") {
		t.Errorf("a send after the private read: %s %v %q", d.Effect, d.Rules, d.Reasons)
	}
}
