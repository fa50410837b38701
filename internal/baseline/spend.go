package baseline

import "math"

// Early drift is a group-sequential test. Before the new version has
// drift.min_sessions sessions, Compare may find drift at any of its
// sessions; testing again at every session at a fixed level would make the
// chance that a benign version is called drift at one of them grow with
// every look (nine looks at 5 % each come to about 35 %). Instead the early
// tests spend a budget: by the new version's m-th session they may have
// used at most EarlySpent(m) of drift.significance, Lan and DeMets'
// Pocock-type spending function
//
//	α(t) = α · ln(1 + (e − 1) · t),  t = min(1, m / drift.min_sessions)
//
// and look m tests at only its increment α(t_m) − α(t_{m−1}). The
// increments are the per-look levels (a union bound over the looks: no
// assumption on how the looks' tests correlate, so it holds for the exact
// and permutation tests alike, and is conservative), so whatever the looks
// and however often each is repeated with the same data, the chance that
// a benign version is called drift early is at most α(t_{min_sessions−1})
// = 0.934 α. From drift.min_sessions on, the verdict is the fixed-sample
// one, as before.
//
// A look at which no early test can reject (the new version's first
// session: a new item needs two sessions, a rate and the mix
// drift.early_min_sessions) spends nothing; its increment goes to the
// first look that can use it. Which looks can reject depends only on m and
// the configuration, never on the data, so the bound holds.

// EarlySpent is the share of drift.significance the early tests may have
// spent by the new version's m-th session.
func (c *Config) EarlySpent(m int) float64 {
	if m <= 0 {
		return 0
	}
	t := min(1, float64(m)/float64(c.Drift.MinSessions))
	return c.Drift.Significance * math.Log(1+(math.E-1)*t)
}

// earlyLevels are the levels one look's tests are held against: the new
// items together (Tarone within them), each rate kind, and the mix.
type earlyLevels struct {
	items, rate, mix float64
}

// earlyLook is the share of the budget look m spends, split between the
// tests that can reject at m: half to the new items and half to the
// distribution tests (the mix and the rates, halved again, the rate half
// split over the rate kinds) once both can run, all of it to the ones that
// can when only they can. Zero at and past drift.min_sessions.
func (c *Config) earlyLook(m int) earlyLevels {
	return c.earlyLookKinds(m, len(c.RateKinds))
}

// earlyLookKinds is earlyLook with the rate half split over rateKinds
// kinds: the rate kinds either version's sessions used at all. A kind
// neither used cannot change (its permutation p-value is 1 at every
// split), so a share of the budget kept for it is a share no test can
// spend. The mix keeps its quarter whatever the rates use: giving it an
// idle rate kind's share too found one more benign version drift on dev
// (a coding agent with a new read-only program, from its 5th session).
// Which kinds are in use is a property of the two versions' sessions
// pooled, the same under every regrouping of them, so the permutation
// tests stay exact at the levels it gives.
func (c *Config) earlyLookKinds(m, rateKinds int) earlyLevels {
	if m < 1 || m >= c.Drift.MinSessions {
		return earlyLevels{}
	}
	canItems := func(m int) bool { return m >= c.Drift.MinNewDestinationSessions }
	canDist := func(m int) bool { return m >= c.Drift.EarlyMinSessions }
	if !canItems(m) && !canDist(m) {
		return earlyLevels{}
	}
	prev := m - 1
	for prev > 0 && !canItems(prev) && !canDist(prev) {
		prev--
	}
	inc := c.EarlySpent(m) - c.EarlySpent(prev)
	var out earlyLevels
	switch {
	case canItems(m) && canDist(m):
		out.items = inc / 2
		inc /= 2
	case canItems(m):
		out.items = inc
		return out
	}
	out.mix = inc / 2
	if len(c.RateKinds) == 0 {
		out.mix = inc
		return out
	}
	out.rate = inc / 2 / float64(max(1, min(rateKinds, len(c.RateKinds))))
	return out
}
