package policy

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"
)

// globMatch reports whether name matches pattern. Patterns use '/' as the
// separator; "*", "?" and "[…]" match within one segment as in path.Match,
// and a segment that is exactly "**" matches zero or more whole segments.
// Matching is case-sensitive, like the file systems Mandate mostly guards.
//
// It runs in O(len(pattern segments) × len(name segments)) so that a rule
// author cannot write a pattern that takes exponential time.
func globMatch(pattern, name string) (bool, error) {
	if pattern == "" {
		return name == "", nil
	}
	ps := strings.Split(pattern, "/")
	ns := strings.Split(name, "/")
	if len(ps) > maxGlobSegments || len(ns) > maxGlobSegments {
		return false, fmt.Errorf("glob: more than %d path segments", maxGlobSegments)
	}
	// Validate every segment up front: a bad pattern is an error even when
	// an earlier mismatch would make matching stop early.
	for _, p := range ps {
		if p == "**" {
			continue
		}
		if _, err := path.Match(p, ""); err != nil {
			return false, fmt.Errorf("bad glob pattern %q: %w", pattern, err)
		}
	}
	// cur[j] is true when ps[:i] matches ns[:j].
	cur := make([]bool, len(ns)+1)
	next := make([]bool, len(ns)+1)
	cur[0] = true
	for _, p := range ps {
		clear(next)
		if p == "**" {
			reached := false
			for j := range cur {
				reached = reached || cur[j]
				next[j] = reached
			}
		} else {
			for j := 0; j < len(ns); j++ {
				if !cur[j] {
					continue
				}
				// path.Match cannot fail here: the pattern was validated.
				if ok, _ := path.Match(p, ns[j]); ok {
					next[j+1] = true
				}
			}
		}
		cur, next = next, cur
	}
	return cur[len(ns)], nil
}

// hostMatch reports whether host matches pattern, case-insensitively and
// ignoring ports and a trailing dot. "*" matches every host;
// "*.example.com" matches the subdomains of example.com but not example.com
// itself; "example.com" matches example.com and its subdomains, the same
// reading mandate scopes use. host may also be a URL, whose host is used.
func hostMatch(pattern, host string) bool {
	p := normHost(pattern)
	h := normHost(host)
	if p == "" || h == "" {
		return false
	}
	if p == "*" {
		return true
	}
	if suffix, ok := strings.CutPrefix(p, "*."); ok {
		return strings.HasSuffix(h, "."+suffix)
	}
	return h == p || strings.HasSuffix(h, "."+p)
}

// normHost lowercases a host name and strips a scheme, path, port and
// trailing dot, so "HTTPS://Shop.Example:443/x" becomes "shop.example".
func normHost(s string) string {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			s = u.Host
		}
	}
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	s = strings.TrimPrefix(strings.TrimSuffix(s, "]"), "[")
	return strings.ToLower(strings.TrimSuffix(s, "."))
}
