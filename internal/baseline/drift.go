package baseline

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Drift verdicts.
const (
	VerdictDrift        = "drift"
	VerdictStable       = "stable"
	VerdictInsufficient = "insufficient"
)

// Drift compares a version of an agent with the version before it.
type Drift struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Sessions and Calls are the new version's.
	Sessions int `json:"sessions"`
	Calls    int `json:"calls"`
	// Divergence is the larger Jensen-Shannon divergence (base 2, 0-1) of
	// the kind and the tool distributions.
	Divergence      float64         `json:"divergence"`
	NewDestinations []string        `json:"new_destinations"`
	NewTransitions  []string        `json:"new_transitions"`
	Rates           map[string]Rate `json:"rates"`
	Verdict         string          `json:"verdict"`
	// Reasons say what made the verdict.
	Reasons []string `json:"reasons"`
}

// Rate is a kind's mean count per session before and after.
type Rate struct {
	From    float64 `json:"from"`
	To      float64 `json:"to"`
	Changed bool    `json:"changed"`
}

// maxListed bounds the destinations and transitions a drift lists.
const maxListed = 50

// Compare compares version b of an agent with the version a before it.
// Until both have the configured minimum of sessions the verdict is
// insufficient (the figures are still given).
func (c *Config) Compare(a, b *Profile) Drift {
	a.init()
	b.init()
	d := Drift{From: a.Version, To: b.Version, Sessions: b.Sessions, Calls: b.Calls, Rates: map[string]Rate{}}
	d.Divergence = round(max(JensenShannon(a.Kinds, b.Kinds), JensenShannon(a.Tools, b.Tools)))
	// Destinations count whether the calls were allowed or refused: a
	// version that keeps trying somewhere new has changed either way.
	for dest := range unionKeys(b.Destinations, b.Attempted) {
		if b.Destinations[dest]+b.Attempted[dest] >= c.Drift.MinNewDestinationCalls && a.Destinations[dest]+a.Attempted[dest] == 0 {
			d.NewDestinations = append(d.NewDestinations, dest)
		}
	}
	total := 0
	for _, n := range b.KindNext {
		total += n
	}
	for t, n := range b.KindNext {
		src, _, _ := strings.Cut(t, ">")
		// New, and a habit of the new version: a large enough share of
		// everything that followed src, unless the old version never
		// went on from src at all.
		habit := a.KindFrom[src] == 0 || float64(n) >= c.Drift.MinNewTransitionFromShare*float64(b.KindFrom[src])
		if n >= c.Drift.MinNewTransitionCalls && a.KindNext[t] == 0 && habit && float64(n) >= c.Drift.MinNewTransitionShare*float64(total) {
			d.NewTransitions = append(d.NewTransitions, t)
		}
	}
	slices.Sort(d.NewDestinations)
	slices.Sort(d.NewTransitions)
	d.NewDestinations = d.NewDestinations[:min(maxListed, len(d.NewDestinations))]
	d.NewTransitions = d.NewTransitions[:min(maxListed, len(d.NewTransitions))]
	for _, k := range c.RateKinds {
		from, to := perSession(a, k), perSession(b, k)
		r := Rate{From: round(from), To: round(to)}
		r.Changed = to >= from*c.Drift.RateFactor && to-from >= c.Drift.RateExcess
		d.Rates[k] = r
	}
	if a.Sessions < c.Drift.MinSessions || b.Sessions < c.Drift.MinSessions {
		d.Verdict = VerdictInsufficient
		d.Reasons = []string{fmt.Sprintf("%d and %d sessions; a verdict needs %d of each", a.Sessions, b.Sessions, c.Drift.MinSessions)}
		return d
	}
	if d.Divergence >= c.Drift.Divergence {
		d.Reasons = append(d.Reasons, fmt.Sprintf("kind/tool divergence %.3f (threshold %.3f)", d.Divergence, c.Drift.Divergence))
	}
	if len(d.NewDestinations) > 0 {
		d.Reasons = append(d.Reasons, "new destinations: "+strings.Join(d.NewDestinations, ", "))
	}
	if len(d.NewTransitions) > 0 {
		d.Reasons = append(d.Reasons, "new transitions: "+strings.Join(d.NewTransitions, ", "))
	}
	for _, k := range c.RateKinds {
		if r := d.Rates[k]; r.Changed {
			d.Reasons = append(d.Reasons, fmt.Sprintf("%s per session %.2f → %.2f", k, r.From, r.To))
		}
	}
	d.Verdict = VerdictStable
	if len(d.Reasons) > 0 {
		d.Verdict = VerdictDrift
	} else {
		d.Reasons = []string{"same kinds, tools, destinations, transitions and rates"}
	}
	return d
}

func unionKeys(a, b map[string]int) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// perSession is the mean count of kind per kept session, allowed or not.
func perSession(p *Profile, kind string) float64 {
	if p.Sessions == 0 {
		return 0
	}
	n := 0
	for _, s := range p.Shapes {
		n += s.Kinds[kind] + s.Tried[kind]
	}
	return float64(n) / float64(max(1, len(p.Shapes)))
}

// JensenShannon is the Jensen-Shannon divergence (base 2, 0-1) of two count
// distributions; 0 when either is empty.
func JensenShannon(p, q map[string]int) float64 {
	tp, tq := 0, 0
	for _, n := range p {
		tp += n
	}
	for _, n := range q {
		tq += n
	}
	if tp == 0 || tq == 0 {
		return 0
	}
	// Summed in key order: floating-point addition is not associative, and
	// map order would make the last digits (and a verdict on the
	// threshold) differ between runs.
	keys := make([]string, 0, len(p)+len(q))
	for k := range unionKeys(p, q) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	js := 0.0
	for _, k := range keys {
		a, b := float64(p[k])/float64(tp), float64(q[k])/float64(tq)
		m := (a + b) / 2
		if a > 0 {
			js += a / 2 * math.Log2(a/m)
		}
		if b > 0 {
			js += b / 2 * math.Log2(b/m)
		}
	}
	return math.Max(0, math.Min(1, js))
}
