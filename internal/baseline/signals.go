package baseline

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Signal is one observation about a call against its agent's history, as
// decisions record it.
type Signal struct {
	Name string `json:"name"`
	// Value is the signal's value: a state name, a list of destinations, a
	// probability, a count ratio or the score.
	Value  json.RawMessage `json:"value"`
	Reason string          `json:"reason"`
}

// Signal names.
const (
	SignalState          = "baseline.state"
	SignalFirstSeen      = "baseline.first_seen"
	SignalRareTool       = "baseline.rare_tool"
	SignalRareTransition = "baseline.rare_transition"
	SignalRate           = "baseline.rate"
	SignalScore          = "baseline.score"
	// SignalNewInVersion names destinations the agent used only since its
	// latest version appeared, while that version is young (fewer sessions
	// than the monitoring minimum): a change the drift verdict cannot yet
	// speak of.
	SignalNewInVersion = "baseline.new_in_version"
	// SignalUnlikeSelf is present, true, when the call is unlike itself:
	// in monitoring, or while learning once the agent has
	// signals.unlike_self_min_sessions ordinary sessions.
	SignalUnlikeSelf = "baseline.unlike_self"
	// SignalRareHour is the hour of day the agent rarely works at:
	// recorded, never weighed in the score.
	SignalRareHour = "baseline.rare_hour"
)

// Current is the call being decided, in its session's context.
type Current struct {
	Event Event
	// PrevTool and PrevKind are the session's previous allowed call ("" at
	// its start).
	PrevTool, PrevKind string
	// Counts are the session's allowed calls per kind before this one.
	Counts map[string]int
	// Version is the session's agent version ("" unknown).
	Version string
	// Exposure says why the session's data flow makes a new destination
	// riskier (the call carries sensitive or private data, the session
	// read secrets, the destination came from open content or an
	// injected instruction); empty when nothing does or the flow is
	// unknown.
	Exposure []string
}

// Result is what Assess found.
type Result struct {
	State   string
	Signals []Signal
	// FirstSeen are the call's destinations the agent never used.
	FirstSeen []string
	// Score is how unusual the call is for the agent, 0-1.
	Score float64
	// UnlikeSelf is true when the baseline is monitoring and the score is
	// at or above the configured threshold.
	UnlikeSelf bool
	// RareTool and RareTransition are the tool's and the transition's
	// smoothed probabilities under the agent's history; 1 while the
	// history is too short to say.
	RareTool, RareTransition float64
	// Rate is the highest ratio of this session's count of a watched kind
	// (this call included) to the agent's usual; 0 when none is known.
	// RateHigh is true when it is far above (the rate signal fired).
	Rate     float64
	RateHigh bool
	// Reasons are the score's top contributors, most weighty first.
	Reasons []string
}

type part struct {
	weight float64
	why    string
	// onlyNew: a first use that is only new (no consequential, strong or
	// young destination), which a new tool explains.
	onlyNew bool
	// means: a read-only call's program, subcommand or path.
	means bool
}

// Assess compares a call with the agent's profile. It is O(1) per
// destination and per kind: a few map lookups, and a pass over the kept
// session shapes for rates.
func (c *Config) Assess(p *Profile, cur Current) Result {
	if p == nil {
		p = NewProfile("", "")
	}
	p.init()
	r := Result{State: p.State(c), RareTool: 1, RareTransition: 1}
	r.Signals = append(r.Signals, Signal{Name: SignalState, Value: jsonOf(r.State), Reason: c.stateReason(p, r.State)})
	var parts []part
	ev := cur.Event
	consequential := slices.ContainsFunc(ev.Kinds, func(k string) bool { return c.consequential[k] })
	// means: a program, subcommand or path of a read-only call, which
	// weighs as an ordinary first use whatever its type (see weigh).
	readOnly := c.readOnlyCall(ev.Kinds)
	means := func(typ string) bool { return readOnly && c.readOnlyTypes[typ] }
	var young, firstOnly []string
	// youngDom: the destination's domain was first used since the
	// version changed, in another session (see Learn).
	var youngDom map[string]bool
	if p.Calls > 0 {
		fresh := cur.Version != "" && len(p.Versions) > 1 && p.Versions[len(p.Versions)-1] == cur.Version && p.SinceVersion <= c.Lifecycle.MinSessions
		this := -1 // this session's ordinal, once folded
		if fresh || len(p.TriedUse) > 0 {
			for i := len(p.Shapes) - 1; i >= 0; i-- {
				if p.Shapes[i].Session == ev.Session {
					this = p.Shapes[i].N
					break
				}
			}
		}
		for _, d := range ev.Destinations {
			switch {
			case p.Destinations[d] == 0:
				if dom := c.domainKey(d); fresh && dom != "" && p.NewSinceChange[youngDomainKey(dom)] > 0 && p.NewSinceFirst[youngDomainKey(dom)] != this {
					// A domain the new version brought: its family is
					// no family the agent had (checked first).
					r.FirstSeen = append(r.FirstSeen, d)
					if youngDom == nil {
						youngDom = map[string]bool{}
					}
					youngDom[d] = true
					young = append(young, d)
					continue
				}
				if c.knownFamily(p, d) || c.triedHabit(p, d, this) {
					// Another member of a family the agent rotates
					// through (a pod, a numbered host, an address in a
					// subnet it reaches, a dated directory), or somewhere
					// it tried, refused, in earlier sessions: not new
					// to it.
					continue
				}
				r.FirstSeen = append(r.FirstSeen, d)
				firstOnly = append(firstOnly, d)
			case fresh && p.NewSinceChange[d] > 0 && p.NewSinceFirst[d] != this:
				young = append(young, d)
			}
		}
	}
	// weigh gives new destinations their parts, one per destination type:
	// by what the call does there (consequential kinds, a new recipient or
	// account: unlike itself alone; a new host or program: a new reach,
	// not alone; anything else: little), times 1 - how often this agent
	// goes somewhere new of that type. young destinations (first used
	// since the version changed, and used again) weigh as a habit the new
	// version brought, whatever the type.
	// A host or recipient inside a domain the agent already uses with
	// other destinations (familiar) weighs one step less, first seen or
	// young: consequential becomes a new reach, a new reach an ordinary
	// first use.
	// A domain the new version brought is no domain the agent knows.
	familiar := func(d string) bool { return !youngDom[d] && c.familiar(p, d) }
	// knownTarget: the call's consequence lands somewhere the agent
	// already took it (a host, recipient, account or path it used, not
	// new since its version changed). A consequential call's new program
	// or subcommand is then a new means to a known end (curl where it used
	// wget to post to the same API): it weighs as what it is, a new reach
	// or an ordinary first use, not as a consequential first use.
	knownTarget := false
	if consequential && p.Calls > 0 {
		for _, d := range ev.Destinations {
			typ, _, _ := strings.Cut(d, ":")
			if !c.readOnlyTypes[typ] && (p.Destinations[d] > 0 || c.knownFamily(p, d)) && !slices.Contains(young, d) {
				knownTarget = true
				break
			}
		}
	}
	weigh := func(dests []string, young bool) []part {
		// A call has a handful of destinations: grouped by a scan, not a map.
		type group struct {
			typ      string
			familiar bool
		}
		var groups [12]group
		ng := 0
		for _, d := range dests {
			typ, _, _ := strings.Cut(d, ":")
			g := group{typ, familiar(d)}
			if !slices.Contains(groups[:ng], g) && ng < len(groups) {
				groups[ng] = g
				ng++
			}
		}
		out := make([]part, 0, ng)
		for _, g := range groups[:ng] {
			var ofType []string
			for _, d := range dests {
				if t, _, _ := strings.Cut(d, ":"); t == g.typ && familiar(d) == g.familiar {
					ofType = append(ofType, d)
				}
			}
			level := 0 // 2: consequential, 1: a new reach, 0: anything else
			switch {
			case means(g.typ):
				// A read-only call's program (dig, rg, curl -sI) is a
				// means: what it reaches weighs on its own.
			case consequential && knownTarget && !young && c.readOnlyTypes[g.typ] && !c.strong[g.typ]:
				// A new means to a known end (see knownTarget).
				if c.reach[g.typ] {
					level = 1
				}
			case consequential || c.strong[g.typ] || young && c.reach[g.typ]:
				level = 2
			case c.reach[g.typ]:
				level = 1
			}
			if g.familiar && level > 0 {
				level--
			}
			w, what := c.Signals.Weights.FirstSeen, "destination"
			switch level {
			case 2:
				w, what = c.Signals.Weights.FirstSeenConsequential, ev.Kind+" destination"
			case 1:
				w, what = c.Signals.Weights.FirstSeenReach, "new reach"
			}
			if g.familiar {
				what += " in a domain it already uses"
			}
			// How often the agent goes somewhere new discounts a first
			// use, not a habit: an agent that explores does not go back,
			// so a young destination gone back to is not its curiosity.
			rate := 0.0
			if !young {
				rate = c.novelty(p, g.typ, ev.Session)
			}
			if rate > 0 {
				what += fmt.Sprintf(" (this agent went somewhere new of that kind in %.0f%% of its recent sessions)", 100*rate)
			}
			ds := strings.Join(ofType, ", ")
			why := fmt.Sprintf("first use of %s %s by this agent (in %d learned calls)", what, ds, p.Calls)
			if young {
				why = fmt.Sprintf("%s %s used only since this agent's version changed %d sessions ago", what, ds, p.SinceVersion)
			}
			pt := part{weight: w * (1 - rate), why: why, onlyNew: level < 2 && (!young || means(g.typ)), means: means(g.typ)}
			// A read-only call's program, subcommand and path are one
			// means (dig, dig +short): counted once, as the strongest.
			if i := slices.IndexFunc(out, func(q part) bool { return q.means }); pt.means && i >= 0 {
				out[i].weight = max(out[i].weight, pt.weight)
				out[i].why += "; " + pt.why
				continue
			}
			out = append(out, pt)
		}
		return out
	}
	if len(firstOnly) > 0 {
		ps := weigh(firstOnly, false)
		why := ps[0].why
		for _, pt := range ps[1:] {
			why += "; " + pt.why
		}
		r.Signals = append(r.Signals, Signal{Name: SignalFirstSeen, Value: jsonOf(r.FirstSeen), Reason: why})
		parts = append(parts, ps...)
	}
	if len(young) > 0 {
		ps := weigh(young, true)
		why := ps[0].why
		for _, pt := range ps[1:] {
			why += "; " + pt.why
		}
		r.Signals = append(r.Signals, Signal{Name: SignalNewInVersion, Value: jsonOf(young), Reason: why})
		parts = append(parts, ps...)
	}
	// Exposure makes a new destination riskier, never an old one: the
	// session's flow is not unusual for the agent by itself.
	// A host in a domain the agent already uses is no new reach, so it
	// takes no exposure either (a new recipient there still does).
	if len(cur.Exposure) > 0 && slices.ContainsFunc(append(r.FirstSeen[:len(r.FirstSeen):len(r.FirstSeen)], young...), func(d string) bool {
		typ, _, _ := strings.Cut(d, ":")
		return consequential || c.strong[typ] || c.reach[typ] && !familiar(d) && !means(typ)
	}) {
		parts = append(parts, part{weight: c.Signals.Weights.Exposed, why: "somewhere new " + strings.Join(cur.Exposure, " and ")})
	}
	// A probability is judged by the most it could be given the history
	// (the upper Wilson bound of how often it was seen in how many calls),
	// not by its point estimate: a tool never seen in 40 calls could be
	// one call in 17; never seen in 400, one in 150. A small baseline's
	// gaps are not evidence.
	z := c.Signals.RareZ
	toolProb, rareTool := 1.0, false
	if p.Calls >= c.Signals.RareMinCalls {
		prob := wilsonUpper(p.Tools[ev.Tool], p.Calls, z)
		r.RareTool, toolProb = round(prob), prob
		if prob < c.Signals.RareTool {
			rareTool = true
			why := fmt.Sprintf("tool %s: %d of this agent's %d calls", ev.Tool, p.Tools[ev.Tool], p.Calls)
			r.Signals = append(r.Signals, Signal{Name: SignalRareTool, Value: jsonOf(round(prob)), Reason: why})
			rare := part{weight: c.Signals.Weights.RareTool * (1 - prob/c.Signals.RareTool), why: why}
			if p.Tools[ev.Tool] == 0 {
				// A tool's first use goes somewhere it never went: its
				// destinations are new because the tool is. The tool and
				// the destinations that are only new are one departure,
				// counted as its strongest part; a consequential, strong
				// or young destination still counts on its own.
				kept := parts[:0]
				for _, pt := range parts {
					if pt.onlyNew {
						if pt.weight > rare.weight {
							rare.weight = pt.weight
						}
						rare.why += "; " + pt.why
						continue
					}
					kept = append(kept, pt)
				}
				parts = kept
			}
			parts = append(parts, rare)
		}
	}
	if cur.PrevTool != "" && p.ToolFrom[cur.PrevTool] >= c.Signals.RareTransitionMinFrom {
		from := p.ToolFrom[cur.PrevTool]
		n := p.ToolNext[cur.PrevTool+">"+ev.Tool]
		prob := wilsonUpper(n, from, z)
		r.RareTransition = round(prob)
		if prob < c.Signals.RareTransition && !rareTool && prob < c.Signals.RareTransitionLift*toolProb {
			why := fmt.Sprintf("%s after %s: %d of %d times", ev.Tool, cur.PrevTool, n, from)
			r.Signals = append(r.Signals, Signal{Name: SignalRareTransition, Value: jsonOf(round(prob)), Reason: why})
			parts = append(parts, part{weight: c.Signals.Weights.RareTransition * (1 - prob/c.Signals.RareTransition), why: why})
		}
	}
	if sig, ok := c.rareHour(p, ev.Hour); ok {
		r.Signals = append(r.Signals, sig)
	}
	for _, k := range c.RateKinds {
		if !slices.Contains(ev.Kinds, k) {
			continue
		}
		usual, ok := c.usual(p, k, ev.Session)
		if !ok {
			continue
		}
		n := cur.Counts[k] + 1
		r.Rate = max(r.Rate, round(float64(n)/float64(max(usual, 1))))
		if float64(n) > float64(usual)*c.Signals.RateFactor && n > usual+c.Signals.RateExcess {
			r.RateHigh = true
			why := fmt.Sprintf("%d %s calls in this session; this agent's most in its last sessions is %d", n, k, usual)
			r.Signals = append(r.Signals, Signal{Name: SignalRate, Value: jsonOf(round(float64(n) / float64(max(usual, 1)))), Reason: why})
			parts = append(parts, part{weight: c.Signals.Weights.Rate, why: why})
		}
	}
	keep := 1.0
	for _, pt := range parts {
		keep *= 1 - pt.weight
	}
	r.Score = round(1 - keep)
	slices.SortStableFunc(parts, func(x, y part) int { return cmpDesc(x.weight, y.weight) })
	for _, pt := range parts[:min(3, len(parts))] {
		r.Reasons = append(r.Reasons, pt.why)
	}
	reason := "nothing unusual for this agent"
	if len(r.Reasons) > 0 {
		reason = strings.Join(r.Reasons, "; ")
	}
	if r.State == Learning {
		reason += " (baseline still learning)"
	}
	r.Signals = append(r.Signals, Signal{Name: SignalScore, Value: jsonOf(r.Score), Reason: reason})
	// Each part of the score carries the sample it needs (see
	// unlike_self_min_sessions), so a learning baseline past that many
	// sessions can say a call is unlike itself; the state stays learning.
	early := r.State == Learning && p.Ordinary >= c.Signals.UnlikeSelfMinSessions
	r.UnlikeSelf = (r.State == Monitoring || early) && r.Score >= c.Signals.UnlikeSelf
	if r.UnlikeSelf {
		why := fmt.Sprintf("score %.2f at or above %.2f in monitoring", r.Score, c.Signals.UnlikeSelf)
		if early {
			why = fmt.Sprintf("score %.2f at or above %.2f while learning, after %d ordinary sessions (%d needed for monitoring)", r.Score, c.Signals.UnlikeSelf, p.Ordinary, c.Lifecycle.MinSessions)
		}
		r.Signals = append(r.Signals, Signal{Name: SignalUnlikeSelf, Value: jsonOf(true), Reason: why})
	}
	return r
}

// rareHour is the baseline.rare_hour signal for a call at hour h, when the
// agent's learned calls within an hour of it (h-1, h, h+1, around the
// clock) are so few that their share could be at most signals.rare_hour
// (the upper Wilson bound), once signals.rare_min_calls calls have an
// hour.
func (c *Config) rareHour(p *Profile, h int) (Signal, bool) {
	if h < 0 || h >= 24 || c.Signals.RareHour <= 0 {
		return Signal{}, false
	}
	n := 0
	for _, x := range p.Hours {
		n += x
	}
	if n < c.Signals.RareMinCalls {
		return Signal{}, false
	}
	k := p.Hours[(h+23)%24] + p.Hours[h] + p.Hours[(h+1)%24]
	prob := wilsonUpper(k, n, c.Signals.RareZ)
	if prob >= c.Signals.RareHour {
		return Signal{}, false
	}
	why := fmt.Sprintf("hour %02d: %d of this agent's %d learned calls within an hour of it (recorded, not weighed)", h, k, n)
	return Signal{Name: SignalRareHour, Value: jsonOf(round(prob)), Reason: why}, true
}

func (c *Config) stateReason(p *Profile, state string) string {
	switch state {
	case Frozen:
		return "frozen by an operator: learning stopped"
	case Monitoring:
		return fmt.Sprintf("learned from %d sessions and %d calls", p.Ordinary, p.Calls)
	}
	return fmt.Sprintf("learning: %d of %d sessions, %d of %d calls", p.Ordinary, c.Lifecycle.MinSessions, p.Calls, c.Lifecycle.MinCalls)
}

// novelty is the smoothed share of the agent's last ordinary sessions
// (other than this one, signals.novelty_sessions at most) that used a
// destination of typ new to it; 0 while there are fewer than
// signals.novelty_sessions of them and fewer than
// signals.unlike_self_min_sessions (a learning baseline is weighed on
// what it has).
func (c *Config) novelty(p *Profile, typ, session string) float64 {
	n, k := 0, 0
	for i := len(p.Shapes) - 1; i >= 0 && n < c.Signals.NoveltySessions; i-- {
		s := &p.Shapes[i]
		if s.Session == session || s.Calls < c.Lifecycle.MinSessionCalls || s.N == 1 {
			// The agent's first session went somewhere new because it
			// had been nowhere: no habit of exploring.
			continue
		}
		n++
		if s.Novel[typ] > 0 {
			k++
		}
	}
	if n < min(c.Signals.NoveltySessions, c.Signals.UnlikeSelfMinSessions) {
		return 0
	}
	if p.State(c) == Learning {
		// A learning baseline's share is judged by the most it could be
		// (the upper Wilson bound, as a rare tool's): going somewhere new
		// in none of 8 sessions could still be a habit of one session in
		// four, and the first use weighs that much less.
		return wilsonUpper(k, n, c.Signals.RareZ)
	}
	return (float64(k) + 0.5) / (float64(n) + 1)
}

// usual is the highest per-session count of kind among the kept shapes of
// other sessions with at least the minimum length; ok is false while there
// are too few of them.
func (c *Config) usual(p *Profile, kind, session string) (int, bool) {
	n, most := 0, 0
	for i := range p.Shapes {
		s := &p.Shapes[i]
		if s.Session == session || s.Calls < c.Lifecycle.MinSessionCalls {
			continue
		}
		n++
		most = max(most, s.Kinds[kind])
	}
	return most, n >= c.Signals.RateMinSessions
}

// wilsonUpper is the upper end of the Wilson score interval for k
// successes in n trials at the normal quantile z (one-sided): the most the
// probability could be, given what was seen. For k = 0 it is z²/(n+z²).
func wilsonUpper(k, n int, z float64) float64 {
	if n <= 0 {
		return 1
	}
	nf, ph := float64(n), float64(k)/float64(n)
	z2 := z * z
	centre := ph + z2/(2*nf)
	spread := z * math.Sqrt(ph*(1-ph)/nf+z2/(4*nf*nf))
	return math.Min(1, (centre+spread)/(1+z2/nf))
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

func round(v float64) float64 { return math.Round(v*10000) / 10000 }

func jsonOf(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null") // values here are strings, numbers and string lists
	}
	return b
}
