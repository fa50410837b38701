package flow

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// The link a mail gives as its List-Unsubscribe header unsubscribes when
// fetched; the user's words that ask to unsubscribe make it theirs.
func TestUnsubscribeLink(t *testing.T) {
	const out = `{"headers":{"From":"news@kickstarter.com","List-Unsubscribe":"<https://news.kickstarter.com/u?e=ZmluYQ&l=9>"}}`
	fetch := &action.Action{Tool: "web_fetch", Kind: action.Fetch, Kinds: []action.Kind{action.Fetch}, Hosts: []string{"news.kickstarter.com"}, URLs: []string{"https://news.kickstarter.com/u?e=ZmluYQ&l=9"}}
	args := map[string]any{"url": "https://news.kickstarter.com/u?e=ZmluYQ&l=9"}
	for words, want := range map[string]bool{
		"mark everything older than a week as read":                  true,
		"unsubscribe me from the Kickstarter newsletter":             false,
		"meld mich vom Kickstarter-Newsletter ab, bitte abbestellen": false,
	} {
		ss := newSession(t, words)
		ss.observe("read_email", "email", TrustOpen, out)
		f := ss.facts(fetch, args)
		got := false
		for _, v := range f.Values {
			got = got || v.UnsubscribeLink
		}
		if got != want {
			t.Errorf("%q: unsubscribe_link %v, want %v (%+v)", words, got, want, f.Values)
		}
	}
}
