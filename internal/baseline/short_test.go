package baseline

import (
	"fmt"
	"strings"
	"testing"
)

// learned is a profile of version v that learned n ordinary sessions.
func learned(c *Config, v string, n int) *Profile {
	p := NewProfile("mailer", v)
	ordinary(c, p, "a", n)
	return p
}

// TestCompareShortOld: an old version with fewer than drift.min_sessions
// sessions is tested by the exact tests at the looks' levels, not passed
// over: a verdict is withheld only while no test could reach the level
// against its few sessions (the least p-value 1/C(n+m, m) above it), and
// once the new version has its sample a version no test rejects is stable.
func TestCompareShortOld(t *testing.T) {
	c := cfg(t)
	for _, tc := range []struct {
		name          string
		old, sessions int
		uses          int // sessions of the new version that run nc
		verdict, what string
	}{
		{"6 old, nc in 3 of 3", 6, 3, 3, VerdictDrift, "program:nc in 3 of the new version's 3 sessions and none of the old one's 6 (p 0.0119"},
		{"6 old, nc in 2 of 2: 1/28 reaches no level", 6, 2, 2, VerdictInsufficient, "no exact test can reach this look's level against the old version's 6 sessions yet (least p 0.0357)"},
		{"2 old, nc in 3 of 3: 1/10 reaches no level", 2, 3, 3, VerdictInsufficient, "least p 0.1000"},
		{"8 old, nc in 4 of 4", 8, 4, 4, VerdictDrift, "program:nc in 4 of the new version's 4 sessions and none of the old one's 8"},
		{"8 old, nc in 1 of 12", 8, 12, 1, VerdictStable, "no test rejects at this look against the old version's 8 sessions"},
		{"4 old, the same behaviour in 12", 4, 12, 0, VerdictStable, "no test rejects"},
		{"1 old, the same behaviour in 10", 1, 10, 0, VerdictInsufficient, "least p 0.0909"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, p := learned(c, "v1", tc.old), NewProfile("mailer", "v2")
			ordinary(c, p, "b", tc.sessions)
			for i := range tc.uses {
				for range 2 {
					p.Learn(c, ev(fmt.Sprintf("b-%d", i), "Bash", "execute", "allow", "program:nc"), t0)
				}
			}
			d := c.Compare(old, p)
			if d.Verdict != tc.verdict || !strings.Contains(strings.Join(d.Reasons, " "), tc.what) {
				t.Fatalf("verdict %s %v, want %s with %q", d.Verdict, d.Reasons, tc.verdict, tc.what)
			}
		})
	}
}

// TestAssessLearning: while learning, a call is unlike itself once the
// agent has signals.unlike_self_min_sessions ordinary sessions, with the
// novelty discount judged by its upper bound on those sessions (never
// going somewhere new in 10 sessions could still be a habit of one in
// five); the state stays learning.
func TestAssessLearning(t *testing.T) {
	c, exposed := cfg(t), []string{"the session read secrets"}
	for _, tc := range []struct {
		name       string
		sessions   int
		exposure   []string
		unlikeSelf bool
	}{
		{"7 sessions: too few", 7, exposed, false},
		{"12 sessions, a new recipient after a secret", 12, exposed, true},
		{"12 sessions, a new recipient alone: the bound keeps it below", 12, nil, false},
		{"19 sessions, a new recipient after a secret", 19, exposed, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := learned(c, "", tc.sessions)
			r := c.Assess(p, Current{Event: ev("n", "send_mail", "send", "allow", "recipient:drop@evil.example"), PrevTool: "fetch", Exposure: tc.exposure})
			if r.State != Learning {
				t.Fatalf("state %s, want learning", r.State)
			}
			if r.UnlikeSelf != tc.unlikeSelf || (signal(r, SignalUnlikeSelf) != nil) != tc.unlikeSelf {
				t.Fatalf("unlike itself %v (score %v, %v), want %v", r.UnlikeSelf, r.Score, r.Reasons, tc.unlikeSelf)
			}
		})
	}
}
