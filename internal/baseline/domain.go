package baseline

import (
	"net/netip"
	"strings"
)

// A first-seen host or recipient inside a domain the agent already uses
// (docs.python.org for an agent that reads www.python.org, a new colleague
// at the company it already mails) is a smaller step than one somewhere it
// never went: the same organisation, a new page or person in it.

// registrable is the part of a host an organisation registers: its last
// two labels, or one label more under a suffix shared by many owners
// (learning.shared_suffixes: co.uk, github.io, …). An IP address or a
// single label is its own domain.
func (c *Config) registrable(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.Contains(h, "]") {
		host = h // a port
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil || !strings.Contains(host, ".") {
		return host
	}
	labels := 2
	for _, s := range c.Learning.SharedSuffixes {
		if strings.HasSuffix(host, "."+s) {
			labels = strings.Count(s, ".") + 2
			break
		}
	}
	parts := strings.Split(host, ".")
	if len(parts) <= labels {
		return host
	}
	return strings.Join(parts[len(parts)-labels:], ".")
}

// domainKey is the profile's Domains key of a host or recipient
// destination ("host:b.example" for "host:a.b.example"), "" for other
// types.
func (c *Config) domainKey(d string) string {
	typ, v, _ := strings.Cut(d, ":")
	switch typ {
	case DestHost:
		return DestHost + ":" + c.registrable(v)
	case DestRecipient:
		if _, dom, ok := strings.Cut(v, "@"); ok && dom != "" {
			return DestRecipient + ":" + c.registrable(dom)
		}
	}
	return ""
}

// familiar reports whether destination d lies inside a domain p already
// uses with other destinations (Domains counts every destination's calls
// in the domain, so it is above d's own count exactly then).
func (c *Config) familiar(p *Profile, d string) bool {
	k := c.domainKey(d)
	return k != "" && p.Domains[k] > p.Destinations[d]
}
