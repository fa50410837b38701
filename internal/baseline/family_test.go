package baseline

import (
	"fmt"
	"slices"
	"testing"
)

func TestFamily(t *testing.T) {
	c := cfg(t)
	for d, want := range map[string]string{
		"host:web-17.prod.internal":                       "host:web-#.prod.internal",
		"host:ip-10-20-4-57.eu-west-1.compute.internal":   "host:ip-#-#-#-#.eu-west-#.compute.internal",
		"host:api-7d9f8b6c5-x2k4q.prod.svc.cluster.local": "host:api-*-*.prod.svc.cluster.local",
		"host:10.20.3.45":                                 "host:10.20.3.0/24",
		"host:[2001:db8::1]":                              "host:2001:db8::/64",
		"host:n42.relay-cache.example":                    "host:n#.relay-cache.example",
		"path:/srv/reports/2026-11-04":                    "path:/srv/reports/#-#-#",
		"path:/tmp/run-8f3a2c9":                           "path:/tmp/run-*",
		"host:docs.python.org":                            "", // nothing to generalise
		"host:relay-7731.example":                         "", // the registrable domain is kept as it is
		"recipient:ops-7@corp.example":                    "", // a party is never a family member
		"program:kubectl":                                 "",
		"subcommand:kubectl logs":                         "",
	} {
		if got := c.family(d); got != want {
			t.Errorf("family(%q) = %q, want %q", d, got, want)
		}
	}
}

// infraAgent teaches p n sessions of an agent that reaches a different
// numbered host, address and dated directory every session.
func infraAgent(c *Config, p *Profile, prefix string, n int) {
	for i := range n {
		s := fmt.Sprintf("%s-%d", prefix, i)
		p.Learn(c, ev(s, "Bash", "read", "allow", "program:kubectl", "subcommand:kubectl logs"), t0)
		p.Learn(c, ev(s, "Bash", "fetch", "allow", "program:curl", fmt.Sprintf("host:web-%d.prod.internal", i)), t0)
		p.Learn(c, ev(s, "Bash", "fetch", "allow", "program:curl", fmt.Sprintf("host:10.20.3.%d", 10+i)), t0)
		p.Learn(c, ev(s, "Read", "read", "allow", fmt.Sprintf("path:/srv/reports/2026-11-%02d", 1+i)), t0)
	}
}

// TestFamilyMemberIsNotNew: another member of a family the agent rotates
// through is neither first seen nor the session's novelty; a new
// organisation, a new subnet, a new recipient still are.
func TestFamilyMemberIsNotNew(t *testing.T) {
	c := cfg(t)
	p := NewProfile("ops", "")
	infraAgent(c, p, "a", 24)
	for _, d := range []string{"host:web-99.prod.internal", "host:10.20.3.200", "path:/srv/reports/2026-12-04"} {
		r := c.Assess(p, Current{Event: ev("b-0", "Bash", "send", "allow", "program:curl", d)})
		if len(r.FirstSeen) != 0 || r.UnlikeSelf {
			t.Errorf("%s: %v, score %v", d, r.FirstSeen, r.Score)
		}
	}
	for _, d := range []string{"host:web-1.exfil-drop.example", "host:10.99.3.7", "host:203.0.113.77"} {
		r := c.Assess(p, Current{Event: ev("b-0", "Bash", "send", "allow", "program:curl", d)})
		if !slices.Contains(r.FirstSeen, d) || !r.UnlikeSelf {
			t.Errorf("%s is somewhere new: %v, score %v", d, r.FirstSeen, r.Score)
		}
	}
	// The sessions that reached only family members did not count as
	// novelty: a settled infra agent's first use of a new host weighs
	// in full.
	if got := c.novelty(p, DestHost, "b-0"); got > 0.1 {
		t.Fatalf("novelty of hosts %v: family members counted as new", got)
	}
}

// TestTriedHabit: a destination the agent tried, refused, in an earlier
// session is no first use when it tries it again — unless the first try
// came with its latest version.
func TestTriedHabit(t *testing.T) {
	c := cfg(t)
	p := NewProfile("ops", "")
	p.AddVersion("v1")
	infraAgent(c, p, "a", 24)
	ssh := func(s, host string) Event {
		return ev(s, "Bash", "send", "ask", "program:ssh", "host:"+host)
	}
	p.Learn(c, ssh("a-3", "db-1.prod.internal"), t0)
	cur := Current{Event: ssh("b-0", "db-2.prod.internal")}
	if r := c.Assess(p, cur); !slices.Contains(r.FirstSeen, "host:db-2.prod.internal") {
		t.Fatalf("tried in one earlier session is no habit yet: %v", r.FirstSeen)
	}
	p.Learn(c, ssh("a-4", "db-3.prod.internal"), t0)
	if r := c.Assess(p, cur); len(r.FirstSeen) != 0 || r.UnlikeSelf {
		t.Fatalf("ssh to the fleet, asked in two earlier sessions: %v, score %v", r.FirstSeen, r.Score)
	}
	// Tries in the session being decided are not earlier sessions.
	p.Learn(c, ssh("a-5", "bastion.corp.example"), t0)
	p.Learn(c, ssh("b-1", "bastion.corp.example"), t0)
	if r := c.Assess(p, Current{Event: ssh("b-1", "bastion.corp.example")}); !slices.Contains(r.FirstSeen, "host:bastion.corp.example") {
		t.Fatalf("one earlier try and one in its own session: %v", r.FirstSeen)
	}
	p.AddVersion("v2")
	p.Learn(c, ssh("c-0", "drop.example"), t0)
	p.Learn(c, ssh("c-1", "drop.example"), t0)
	infraAgent(c, p, "c", 2)
	if r := c.Assess(p, Current{Event: ssh("c-5", "drop.example"), Version: "v2"}); !slices.Contains(r.FirstSeen, "host:drop.example") || !r.UnlikeSelf {
		t.Fatalf("a refused habit the new version brought: %v, score %v", r.FirstSeen, r.Score)
	}
}

// TestFleetNetwork: an address in a /24 the agent never reached is a
// member of its fleet once it reached learning.family_subnets /24s of the
// same /16, learned or tried; with fewer, or in another network, it is
// somewhere new.
func TestFleetNetwork(t *testing.T) {
	c := cfg(t)
	for _, tc := range []struct {
		name    string
		reached []string // addresses the agent reached before, in sessions a-0, a-1, ...
		effect  string   // how those calls were decided
		next    string
		known   bool
	}{
		{"three subnets learned", []string{"10.20.1.5", "10.20.2.7", "10.20.3.9"}, "allow", "10.20.0.113", true},
		{"three subnets tried", []string{"10.20.1.5", "10.20.2.7", "10.20.3.9"}, "ask", "10.20.0.113", true},
		{"two subnets", []string{"10.20.1.5", "10.20.2.7", "10.20.2.8"}, "allow", "10.20.0.113", false},
		{"another network", []string{"10.20.1.5", "10.20.2.7", "10.20.3.9"}, "allow", "203.0.113.7", false},
		{"the same subnet three times", []string{"10.20.1.5", "10.20.1.6", "10.20.1.7"}, "allow", "10.20.0.113", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProfile("ops", "")
			for i, a := range tc.reached {
				p.Learn(c, ev(fmt.Sprintf("a-%d", i), "Bash", "execute", tc.effect, "host:"+a), t0)
			}
			if got := c.knownFamily(p, "host:"+tc.next); got != tc.known {
				t.Fatalf("knownFamily(%s) = %v, want %v (families %v)", tc.next, got, tc.known, p.Families)
			}
		})
	}
}
