package baseline

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestEarlyLookCarriesUnreachableShares: a share below the least p-value
// an exact test of its kind can give at that look (1/C(n+m, m)) tests at
// 0 and goes to the next look; the levels never add up to more than the
// spending function allows, and every level given can be reached.
func TestEarlyLookCarriesUnreachableShares(t *testing.T) {
	c := cfg(t)
	kinds := len(c.RateKinds)
	for _, n := range []int{10, 12, 24} {
		sum := 0.0
		for m := 1; m < c.Drift.MinSessions; m++ {
			l := c.earlyLook(m, n)
			floor := exactFloor(n, m)
			for name, v := range map[string]float64{"items": l.items, "mix": l.mix, "rates": float64(kinds) * l.rate} {
				if v != 0 && v < floor {
					t.Errorf("n %d look %d: %s level %.5f below the floor %.5f", n, m, name, v, floor)
				}
			}
			sum += l.items + l.mix + float64(kinds)*l.rate
			if sum > c.EarlySpent(m)+1e-12 {
				t.Errorf("n %d: looks 1..%d spend %.6f, more than the function's %.6f", n, m, sum, c.EarlySpent(m))
			}
		}
	}
	// n = 10: 1/66 is above the items' 0.0148 at the 2nd look; the 3rd
	// tests at both looks' shares.
	if l := c.earlyLook(2, 10); l.items != 0 {
		t.Errorf("n 10, look 2: items at %.5f, want 0 (the floor is 1/66)", l.items)
	}
	if got, want := c.earlyLook(3, 10).items, c.earlyLook(2, 24).items+c.earlyLook(3, 24).items; math.Abs(got-want) > 1e-12 {
		t.Errorf("n 10, look 3: items at %.5f, want the 2nd and 3rd looks' %.5f", got, want)
	}
	// n = 12: the mix's and rates' 0.0015 at the 3rd look are below 1/455
	// and go to the 4th.
	l3, l4 := c.earlyLook(3, 12), c.earlyLook(4, 12)
	if l3.mix != 0 || l3.rate != 0 || l3.items == 0 {
		t.Errorf("n 12, look 3: %+v, want the items only", l3)
	}
	if got, want := l4.mix, c.earlyLook(3, 24).mix+c.earlyLook(4, 24).mix; math.Abs(got-want) > 1e-12 {
		t.Errorf("n 12, look 4: mix at %.5f, want the 3rd and 4th looks' %.5f", got, want)
	}
}

// TestEarlyDriftAgainstTenSessions: against an old version of 10
// sessions, a new program in 2 of 2 sessions cannot be told from chance
// at the 2nd look's share (p 1/66); in 3 of 3 it is drift at the 3rd,
// which tests at the share the 2nd could not use.
func TestEarlyDriftAgainstTenSessions(t *testing.T) {
	c, old := mailer(t, "v1", 10)
	for _, tc := range []struct {
		sessions int
		verdict  string
	}{{2, VerdictInsufficient}, {3, VerdictDrift}} {
		p := NewProfile("mailer", "v2")
		ordinary(c, p, "b", tc.sessions)
		for i := range tc.sessions {
			p.Learn(c, ev(fmt.Sprint("b-", i), "Bash", "execute", "allow", "program:nc"), t0)
		}
		d := c.Compare(old, p)
		if d.Verdict != tc.verdict || tc.verdict == VerdictDrift && !strings.Contains(strings.Join(d.Reasons, " "), "program:nc in 3 of") {
			t.Errorf("program:nc in %d of %d: %s %v, want %s", tc.sessions, tc.sessions, d.Verdict, d.Reasons, tc.verdict)
		}
	}
}

// TestFullSpent: the full-size looks spend α/N at the N-th session, more
// at every look after, never reach α, and the looks' levels add up to
// what was spent.
func TestFullSpent(t *testing.T) {
	c := cfg(t)
	alpha, n := c.Drift.Significance, c.Drift.MinSessions
	if c.FullSpent(n-1) != 0 || math.Abs(c.FullSpent(n)-alpha/float64(n)) > 1e-12 {
		t.Fatalf("FullSpent(%d) = %v, FullSpent(%d) = %v, want 0 and α/%d", n-1, c.FullSpent(n-1), n, c.FullSpent(n), n)
	}
	if l := c.fullLook(n-1, len(c.RateKinds)); l != (earlyLevels{}) {
		t.Errorf("an early look spends the full-size budget: %+v", l)
	}
	sum := 0.0
	for m := n; m < 500; m++ {
		l := c.fullLook(m, len(c.RateKinds))
		sum += l.items + l.mix + float64(len(c.RateKinds))*l.rate
		if math.Abs(sum-c.FullSpent(m)) > 1e-12 || c.FullSpent(m) >= alpha || c.FullSpent(m) <= c.FullSpent(m-1) {
			t.Fatalf("look %d: levels add up to %v, FullSpent %v (α %v)", m, sum, c.FullSpent(m), alpha)
		}
	}
}
