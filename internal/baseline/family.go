package baseline

import (
	"net/netip"
	"strings"
)

// Destination families. An infrastructure agent touches destinations that
// look new every session but are one place it always goes: the pod
// api-7d9f8b6c5-x2k4q after api-5c8d7f9b1-p9w2z, web-17.prod.internal after
// web-04, 10.20.3.45 in a subnet it already reaches, /srv/reports/2026-11-04
// after /srv/reports/2026-11-03. family maps such a destination to its
// family — digit runs "#", random-looking tokens "*", an IPv4 address its
// /24, an IPv6 address its /64 — and a profile counts the distinct members
// it learned per family (Profile.Families). A first-seen destination of a
// family with at least learning.family_members members is not somewhere
// new: it is neither first seen nor counted as the session's novelty.
//
// A family keeps the registrable domain as it is (a new organisation is
// never a member of a known family), and a family whose domain the agent
// first used since its version changed is still a young domain's habit
// (Assess checks that first).

// family is the family key of destination d, "" when d's type is not
// generalised (learning.family_types) or d has nothing to generalise.
func (c *Config) family(d string) string {
	typ, v, _ := strings.Cut(d, ":")
	if !c.familyTypes[typ] {
		return ""
	}
	var f string
	switch typ {
	case DestHost:
		f = c.hostFamily(v)
	case DestPath:
		f = pathFamily(v)
	default:
		f = generaliseToken(v, "")
	}
	if f == "" || f == v {
		return ""
	}
	return typ + ":" + f
}

func (c *Config) hostFamily(host string) string {
	h := strings.Trim(host, "[]")
	if a, err := netip.ParseAddr(h); err == nil {
		bits := 24
		if !a.Is4() {
			bits = 64
		}
		p, err := a.Prefix(bits)
		if err != nil {
			return ""
		}
		return p.String()
	}
	dom := c.registrable(host)
	if dom == host || !strings.HasSuffix(host, "."+dom) {
		return ""
	}
	sub := strings.Split(strings.TrimSuffix(host, "."+dom), ".")
	for i, l := range sub {
		sub[i] = generaliseToken(l, "-")
	}
	return strings.Join(sub, ".") + "." + dom
}

func pathFamily(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = generaliseToken(s, "-_.")
	}
	return strings.Join(parts, "/")
}

// generaliseToken generalises each piece of s between the separators
// seps: a piece of digits is "#", a random-looking piece (5 or more
// letters and digits, with a digit and a letter) is "*", and digit runs in
// any other piece are "#" (web17 → web#).
func generaliseToken(s, seps string) string {
	var b strings.Builder
	piece := func(t string) {
		digits, letters := 0, 0
		for _, r := range t {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
				letters++
			}
		}
		switch {
		case digits > 0 && letters == 0 && digits == len(t):
			b.WriteByte('#')
		case digits > 0 && letters > 0 && digits+letters == len(t) && len(t) >= 5:
			b.WriteByte('*')
		default:
			inRun := false
			for _, r := range t {
				if r >= '0' && r <= '9' {
					if !inRun {
						b.WriteByte('#')
					}
					inRun = true
					continue
				}
				inRun = false
				b.WriteRune(r)
			}
		}
	}
	start := 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(seps, s[i]) >= 0 {
			piece(s[start:i])
			b.WriteByte(s[i])
			start = i + 1
		}
	}
	piece(s[start:])
	return b.String()
}

// knownFamily reports whether d, not itself in the profile, belongs to a
// family the profile learned enough members of, or is an address of a
// new /24 in a /16 where the agent already reached
// learning.family_subnets distinct /24s (learned or tried): a fleet that
// spans the subnets of one network grows into the next one, and its
// first address there is the fleet, not somewhere new. An address
// outside every network the agent knows stays new.
func (c *Config) knownFamily(p *Profile, d string) bool {
	f := c.family(d)
	if f == "" {
		return false
	}
	if p.Families[f] >= c.Learning.FamilyMembers {
		return true
	}
	n := networkKey(f)
	return n != "" && c.Learning.FamilySubnets > 0 && p.Families[n] >= c.Learning.FamilySubnets
}

// networkKey is, for the family of an IPv4 address ("host:10.20.3.0/24"),
// the key that counts its network's distinct /24s in Profile.Families
// ("host:10.20.0.0/16", a key no destination's family takes); "" for
// anything else.
func networkKey(f string) string {
	v, ok := strings.CutPrefix(f, DestHost+":")
	if !ok {
		return ""
	}
	pfx, err := netip.ParsePrefix(v)
	if err != nil || !pfx.Addr().Is4() || pfx.Bits() != 24 {
		return ""
	}
	n, err := pfx.Addr().Prefix(16)
	if err != nil {
		return ""
	}
	return DestHost + ":" + n.String()
}

// noteSubnet counts family f's /24 in its network (networkKey) the first
// time the profile meets the family, learned or tried.
func (p *Profile) noteSubnet(c *Config, f string) {
	n := networkKey(f)
	if n == "" || p.Families[f] > 0 {
		return
	}
	if _, tried := p.TriedUse[f]; tried && p.Version == "" {
		return
	}
	bump(p.Families, n, c.Learning.MaxDestinations, &p.Dropped)
}
