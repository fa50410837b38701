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
// = 0.934 α. From drift.min_sessions on, the full-size tests spend a
// budget of their own (FullSpent).
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
// can when only they can. Zero at and past drift.min_sessions. n is the
// old version's sessions (earlyLookKinds).
func (c *Config) earlyLook(m, n int) earlyLevels {
	return c.earlyLookKinds(m, len(c.RateKinds), n)
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
//
// A share no test of its kind can reach is carried to that kind's share
// at the next look instead of being wasted. Every early test is exact
// and regroups sessions: against the old version's n sessions, none of
// its p-values at look j can fall below 1/C(n+j, j) (a new item in all j
// sessions and none of the n; the one split of n+j sessions that puts the
// j most extreme in the new version), so a share below that floor can
// reject nothing. The floor depends on n and j alone, never on the data,
// so the shares stay fixed in advance; a stream whose share is below it
// tests at 0 at that look (so it spends nothing there) and the next look
// adds what it did not spend. With n = 10 the new items' 0.0148 at the
// 2nd look is below 1/66 and goes to the 3rd; with n = 12 the mix's and
// rates' 0.0015 at the 3rd is below 1/455 and goes to the 4th. The rates
// are checked on their whole share (the most one kind in use could get):
// when even that is below the floor no kind could have rejected.
func (c *Config) earlyLookKinds(m, rateKinds, n int) earlyLevels {
	if m < 1 || m >= c.Drift.MinSessions {
		return earlyLevels{}
	}
	return c.lookLevels(m, rateKinds, n)
}

// lookLevels is the share of the budgets look m spends, early
// (EarlySpent) before drift.min_sessions and full-size (FullSpent) from
// it, with the floors and carries earlyLookKinds describes running across
// both: a share below the exact floor at the last early look goes to the
// first full-size one. When the old version is well populated (n at least
// drift.min_sessions) no floor binds at or past drift.min_sessions, and
// from there the levels are fullLook's; against a short old version (8
// sessions, or 2) they carry until a test could reject, so a verdict is
// withheld only at the looks where none could. n ≤ 0: no floor.
func (c *Config) lookLevels(m, rateKinds, n int) earlyLevels {
	if m < 1 {
		return earlyLevels{}
	}
	N := c.Drift.MinSessions
	spent := func(j int) float64 { return c.EarlySpent(min(j, N-1)) + c.FullSpent(j) }
	canItems := func(j int) bool { return j >= c.Drift.MinNewDestinationSessions }
	canDist := func(j int) bool { return j >= c.Drift.EarlyMinSessions }
	var out, carry earlyLevels // rate: the rates' whole share
	pending := 0.0             // the increments of looks where no test can run
	for j := 1; j <= m; j++ {
		inc := spent(j) - spent(j-1) + pending
		if !canItems(j) && !canDist(j) {
			pending, out = inc, earlyLevels{}
			continue
		}
		pending = 0
		var share earlyLevels
		switch {
		case canItems(j) && canDist(j):
			share.items = inc / 2
			inc /= 2
		case canItems(j):
			share.items, inc = inc, 0
		}
		if inc > 0 {
			share.mix = inc
			if len(c.RateKinds) > 0 {
				share.mix, share.rate = inc/2, inc/2
			}
		}
		share.items += carry.items
		share.mix += carry.mix
		share.rate += carry.rate
		carry = earlyLevels{}
		floor := exactFloor(n, j)
		for _, s := range []struct{ share, carry *float64 }{{&share.items, &carry.items}, {&share.mix, &carry.mix}, {&share.rate, &carry.rate}} {
			if *s.share > 0 && *s.share < floor {
				*s.carry, *s.share = *s.share, 0
			}
		}
		out = share
	}
	out.rate /= float64(max(1, min(rateKinds, len(c.RateKinds))))
	return out
}

// exactFloor is the least p-value an exact test that regroups n old and m
// new sessions can give: 1/C(n+m, m). 0 when n is unknown (no floor).
func exactFloor(n, m int) float64 {
	if n <= 0 || m <= 0 {
		return 0
	}
	return math.Exp(-logChoose(n+m, m))
}

// The verdict from drift.min_sessions on is group-sequential too. Compare
// runs after every session of the new version, for as long as it is the
// latest, and a drift verdict stands once given; a fixed-sample test at
// drift.significance at each of those looks would let a benign version be
// called drift with a chance that grows with every session it runs. So
// the full-size tests spend a budget of their own, drift.significance, by
// a spending function with no last look: by the new version's m-th
// session (m ≥ N = drift.min_sessions) they may have spent
//
//	α_full(m) = α · (1 − (N − 1) / m)
//
// — as if each of the first N sessions were a look with an equal share,
// the first full-size look spending what would be theirs, α / N — and
// look m tests at its increment α (N − 1) / (m (m − 1)). That tends to α
// however long the version runs, so a benign version is called drift at
// full size with chance at most α, and before it with at most 0.934 α
// (EarlySpent): at most 1.934 α in all.

// FullSpent is the share of drift.significance the full-size tests may
// have spent by the new version's m-th session.
func (c *Config) FullSpent(m int) float64 {
	n := c.Drift.MinSessions
	if m < n {
		return 0
	}
	return c.Drift.Significance * (1 - float64(n-1)/float64(m))
}

// fullLook is the share of the full-size budget look m spends, split as
// an early look's is: half to the new items (Tarone within them), a
// quarter to the mix, a quarter shared by the rate kinds in use. Zero
// before drift.min_sessions.
func (c *Config) fullLook(m, rateKinds int) earlyLevels {
	if m < c.Drift.MinSessions {
		return earlyLevels{}
	}
	return c.lookLevels(m, rateKinds, 0)
}
