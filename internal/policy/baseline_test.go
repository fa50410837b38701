package policy

import (
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/flow"
)

// withBaseline sets the call's baseline facts.
func withBaseline(b BaselineFacts) func(*Input) {
	return func(i *Input) { i.Baseline = &b }
}

// sawOpen is a session that has read open content.
func sawOpen(i *Input) { i.Flow = &flow.Facts{OpenContentSeen: true} }

func fetchHost(host string) func(*Input) {
	return func(i *Input) {
		i.Call.Tool, i.Action.Tool, i.Action.Family = "WebFetch", "WebFetch", "web"
		i.Action.Hosts = []string{host}
		i.Call.Args = map[string]any{"url": "https://" + host + "/x"}
	}
}

// baselineCases are built-in cases whose verdict rests on the agent's
// baseline.
func baselineCases() []builtinCase {
	newHost := BaselineFacts{State: "monitoring", FirstSeen: []string{"host:paste.collector.example"}, RareTool: 0.3, RareTransition: 0.2,
		Score: 0.6, UnlikeSelf: true, Reasons: []string{"first use of fetch destination host:paste.collector.example by this agent (in 131 learned calls)"}}
	learning := newHost
	learning.State, learning.UnlikeSelf = "learning", false
	explorer := newHost // an agent that often uses new hosts: not unlike itself
	explorer.Score, explorer.UnlikeSelf = 0.2, false
	newPath := newHost
	newPath.FirstSeen = []string{"path:/tmp"}
	rate := BaselineFacts{State: "monitoring", RareTool: 0.4, RareTransition: 0.5, Rate: 3.5, RateHigh: true, Score: 0.6, UnlikeSelf: true,
		Reasons: []string{"7 send calls in this session; this agent's most in its last sessions is 2"}}
	usualRate := rate
	usualRate.Rate, usualRate.RateHigh, usualRate.Score, usualRate.UnlikeSelf = 1.5, false, 0, false
	const firstSeen, rateRule = "builtin.baseline-first-seen-after-open-content", "builtin.baseline-rate-far-above-usual"
	return []builtinCase{
		{name: "a monitored agent fetching a host it never used, after open content, is asked",
			in:   in(fetch, []action.Kind{fetch}, fetchHost("paste.collector.example"), sawOpen, withBaseline(newHost)),
			want: Ask, fired: []string{firstSeen}, reason: "after reading open content, a first use by this agent of host:paste.collector.example"},
		{name: "legit - the same fetch without open content seen",
			in:   in(fetch, []action.Kind{fetch}, fetchHost("paste.collector.example"), withBaseline(newHost)),
			want: Allow, notFired: []string{firstSeen}},
		{name: "legit - the same fetch while the baseline is learning",
			in:   in(fetch, []action.Kind{fetch}, fetchHost("paste.collector.example"), sawOpen, withBaseline(learning)),
			want: Allow, notFired: []string{firstSeen}},
		{name: "legit - an agent that routinely uses new hosts is not unlike itself",
			in:   in(fetch, []action.Kind{fetch}, fetchHost("paste.collector.example"), sawOpen, withBaseline(explorer)),
			want: Allow, notFired: []string{firstSeen}},
		{name: "legit - a new path prefix alone is not a new reach",
			in:   in(fetch, []action.Kind{fetch}, fetchHost("docs.example"), sawOpen, withBaseline(newPath)),
			want: Allow, notFired: []string{firstSeen}},
		{name: "sends far above the agent's usual are asked",
			in:   in(send, readSend, sendTo("send_email", "ann@corp.example"), withBaseline(rate)),
			want: Ask, fired: []string{rateRule}, reason: "3.5 times this agent's usual per session"},
		{name: "legit - sends within the agent's usual",
			in:   in(send, readSend, sendTo("send_email", "ann@corp.example"), withBaseline(usualRate)),
			want: Allow, notFired: []string{rateRule}},
	}
}
