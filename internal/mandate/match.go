package mandate

import (
	"net/netip"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/fold"
)

// This file holds the matchers Check uses and the syntactic subsumption
// tests Intersect uses. Each dimension has one matcher and one "is every
// match of c also a match of p" test; the two must agree, or delegation
// could widen a grant.

// ---- paths ----

// hasMeta reports whether a glob segment contains pattern syntax.
func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// cutSeg splits a slash path into its first segment and the rest.
func cutSeg(s string) (seg, rest string) {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// matchGlob reports whether the cleaned path name matches the cleaned glob
// pattern. "**" as a whole segment matches zero or more segments (so "a/**"
// matches "a" itself); other segments follow path.Match. A pattern and a name
// match only when both are absolute or both relative.
func matchGlob(pattern, name string) bool {
	pattern, name, ok := sameRoot(pattern, name)
	return ok && matchSegs(pattern, name)
}

// sameRoot reports whether a and b are both absolute or both relative, and
// returns them without their leading "/".
func sameRoot(a, b string) (string, string, bool) {
	aabs, babs := strings.HasPrefix(a, "/"), strings.HasPrefix(b, "/")
	if aabs != babs {
		return a, b, false
	}
	if aabs {
		a, b = a[1:], b[1:]
	}
	return a, b, true
}

func matchSegs(pat, name string) bool {
	for {
		if pat == "" {
			return name == ""
		}
		pseg, prest := cutSeg(pat)
		if pseg == "**" {
			if prest == "" {
				return true
			}
			for {
				if matchSegs(prest, name) {
					return true
				}
				if name == "" {
					return false
				}
				_, name = cutSeg(name)
			}
		}
		if name == "" {
			return false
		}
		nseg, nrest := cutSeg(name)
		if hasMeta(pseg) {
			if ok, err := path.Match(pseg, nseg); err != nil || !ok {
				return false
			}
		} else if pseg != nseg {
			return false
		}
		pat, name = prest, nrest
	}
}

// globSubsumes reports whether every path matched by glob c is provably
// matched by glob p. It errs towards false: an unproven pair is not
// subsumed.
func globSubsumes(p, c string) bool {
	if p == c {
		return true
	}
	p, c, ok := sameRoot(p, c)
	return ok && segsSubsume(p, c)
}

func segsSubsume(p, c string) bool {
	if p == "" {
		return c == ""
	}
	pseg, prest := cutSeg(p)
	if pseg == "**" {
		if segsSubsume(prest, c) {
			return true
		}
		if c == "" {
			return false
		}
		// p's "**" absorbs whatever c's first segment produces, "**"
		// included.
		_, crest := cutSeg(c)
		return segsSubsume(p, crest)
	}
	if c == "" {
		return false
	}
	cseg, crest := cutSeg(c)
	if cseg == "**" {
		return false
	}
	if !segSubsumes(pseg, cseg) {
		return false
	}
	return segsSubsume(prest, crest)
}

// segSubsumes compares one segment pattern against another.
func segSubsumes(p, c string) bool {
	switch {
	case p == c:
		return true
	case p == "*":
		// "*" matches any one non-empty segment; every segment pattern
		// matches only such segments.
		return true
	case !hasMeta(c):
		ok, err := path.Match(p, c)
		return err == nil && ok
	}
	return false
}

// validGlob checks a path glob's syntax.
func validGlob(g string) string {
	if g == "" {
		return "empty path"
	}
	if strings.IndexByte(g, 0) >= 0 {
		return "contains a NUL byte"
	}
	for s := g; s != ""; {
		var seg string
		seg, s = cutSeg(s)
		if seg == "**" || !hasMeta(seg) {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return "bad glob segment " + quote(seg)
		}
	}
	return ""
}

// resolvePath makes p absolute against workDir when it is relative and
// workDir is known, and cleans it. "~" paths stay symbolic: the home
// directory is not the working directory.
func resolvePath(p, workDir string) string {
	if p == "" {
		return ""
	}
	if workDir != "" && !strings.HasPrefix(p, "/") && p != "~" && !strings.HasPrefix(p, "~/") {
		return path.Join(workDir, p)
	}
	return path.Clean(p)
}

// ---- hosts ----

// normHost lower-cases a host and drops a port, IPv6 brackets and a
// trailing dot.
func normHost(h string) string {
	h = strings.TrimSpace(h)
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			h = h[1:i]
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.Count(h, ":") == 1 && isDigits(h[i+1:]) {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	return lowerASCII(h)
}

// matchHost reports whether host (normalised) matches the scope entry. A
// plain entry matches itself and its "www." form; "*.d" matches every
// subdomain of d but not d.
func matchHost(entry, host string) bool {
	entry = normHost(entry)
	if host == "" || entry == "" {
		return false
	}
	if d, ok := strings.CutPrefix(entry, "*."); ok {
		return len(host) > len(d)+1 && strings.HasSuffix(host, d) && host[len(host)-len(d)-1] == '.'
	}
	return host == entry || (len(host) == len(entry)+4 && strings.HasPrefix(host, "www.") && host[4:] == entry)
}

// hostSubsumes reports whether every host matched by entry c is matched by
// entry p.
func hostSubsumes(p, c string) bool {
	p, c = normHost(p), normHost(c)
	if p == c {
		return true
	}
	if pd, ok := strings.CutPrefix(p, "*."); ok {
		if cd, ok := strings.CutPrefix(c, "*."); ok {
			return strings.HasSuffix(cd, "."+pd)
		}
		// A plain c matches c and www.c; both must be subdomains of pd.
		return strings.HasSuffix(c, "."+pd)
	}
	// A plain p matches p and www.p; c = "www.p" matches only itself
	// (and www.www.p, which p does not match), so only equality is safe.
	return false
}

// validHost checks a host entry: a name, "*."+name, or an IP address,
// optionally with a port.
func validHost(h string) string {
	if h == "" {
		return "empty host"
	}
	if strings.Contains(h, "://") || strings.ContainsAny(h, "/?#@ \t") {
		return "want a host name or pattern, not a URL or address"
	}
	n := normHost(h)
	if _, err := netip.ParseAddr(n); err == nil {
		return ""
	}
	n = strings.TrimPrefix(n, "*.")
	if n == "" {
		return "a pattern needs a domain after \"*.\""
	}
	for label := range strings.SplitSeq(n, ".") {
		if label == "" {
			return "empty label"
		}
		for _, r := range label {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
				return "bad character " + quote(string(r))
			}
		}
	}
	return ""
}

// ---- recipients and names ----

// recipientParts splits "Name <addr>" into its address and display name,
// both lower-cased and trimmed; a bare address has no name.
func recipientParts(r string) (addr, name string) {
	r = strings.TrimSpace(r)
	if i := strings.LastIndexByte(r, '<'); i >= 0 && strings.HasSuffix(r, ">") {
		name = strings.Trim(strings.TrimSpace(r[:i]), `"'`)
		r = r[i+1 : len(r)-1]
	}
	r = strings.TrimSpace(r)
	if len(r) > 7 && strings.EqualFold(r[:7], "mailto:") {
		r = r[7:]
	}
	return strings.ToLower(r), strings.ToLower(name)
}

// recipientOf is a classified recipient's address and display name, both
// lower-cased: the name the classifier kept beside the address, else one
// written into the address itself ("Name <addr>").
func recipientOf(rc action.Recipient) (addr, name string) {
	addr, name = recipientParts(rc.Address)
	if n := collapseSpace(rc.Name); n != "" {
		name = strings.ToLower(n)
	}
	return addr, name
}

// namesPerson reports whether entry, a person's or organisation's name
// (not an address, channel or phone number), names the holder of the
// display name: its words are whole words of the name, in order and
// together, ignoring case and punctuation ("Dana" and "Reyes" name "Dana
// Reyes"; "Dan" does not, nor does "Dana Reyes" name "Dana").
func namesPerson(entry, name string) bool {
	entry = strings.TrimSpace(entry)
	if entry == "" || name == "" || strings.ContainsAny(entry, "@#*") || isPhone(entry) {
		return false
	}
	ew, nw := nameWords(entry), nameWords(name)
	if len(ew) == 0 || len(ew) > len(nw) {
		return false
	}
	for i := 0; i+len(ew) <= len(nw); i++ {
		if slices.Equal(nw[i:i+len(ew)], ew) {
			return true
		}
	}
	return false
}

// personTarget reports whether a prohibition's target reads as a person's
// or organisation's name, not a path, host, address, channel, phone
// number or branch.
func personTarget(t string) bool {
	t = strings.TrimSpace(t)
	return t != "" && !strings.ContainsAny(t, "/~.*?@#:") && !isPhone(t)
}

// addressFitsName reports whether an e-mail address reads as the display
// name's holder's: a word of its local part (three letters at least) is
// a word of the name, or a word's initials followed by another word
// ("dreyes", "d.reyes" and "dana.reyes" for "Dana Reyes"), or the name's
// words run together ("danareyes"). An address that is not an e-mail
// address (a channel, a user id) has no local part to fit. A look-alike
// writes the name of the person the user named over an address of
// somebody else's ("Dana <eve@evil.example>"), which does not fit it.
func addressFitsName(addr, name string) bool {
	local, _, ok := strings.Cut(addr, "@")
	if !ok || local == "" {
		return false
	}
	// An address spells "Krüger" as "kruger" or "krueger".
	return localFits(fold.String(local), nameWords(name)) || localFits(fold.String(local), nameWords(umlautSpelling.Replace(strings.ToLower(name))))
}

// umlautSpelling writes German umlauts the way addresses spell them.
var umlautSpelling = strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue")

// localFits is addressFitsName for a folded local part and the name's words.
func localFits(local string, nw []string) bool {
	if len(nw) == 0 {
		return false
	}
	joined := strings.Join(nw, "")
	for _, t := range strings.FieldsFunc(local, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(t) < 3 {
			continue
		}
		if t == joined || slices.Contains(nw, t) {
			return true
		}
		for _, w := range nw {
			// initials of the other words, then the word: "dreyes".
			if len(w) >= 3 && strings.HasSuffix(t, w) && initialsOf(t[:len(t)-len(w)], nw) {
				return true
			}
		}
	}
	return false
}

// initialsOf reports whether p (non-empty) is made of the first letters of
// words of the name, in order.
func initialsOf(p string, words []string) bool {
	if p == "" {
		return false
	}
	i := 0
	for _, w := range words {
		if i < len(p) && strings.HasPrefix(w, p[i:i+1]) {
			i++
		}
	}
	return i == len(p)
}

// nameWords are the folded words of a name (lower case, no diacritics:
// "Müller" meets "Muller"), split at anything that is neither a letter nor
// a digit ("Reyes, Dana" → reyes, dana; "Jean-Luc"
// → jean, luc).
func nameWords(s string) []string {
	return strings.FieldsFunc(fold.String(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// matchRecipient reports whether a recipient (address and display name,
// from recipientParts) matches a scope entry.
func matchRecipient(entry, addr, name string) bool {
	entry = strings.TrimSpace(entry)
	switch {
	case entry == "":
		return false
	case entry[0] == '#':
		return strings.EqualFold(addr, entry) || (!strings.HasPrefix(addr, "#") && strings.EqualFold(addr, entry[1:]))
	case strings.HasPrefix(entry, "*@") || entry[0] == '@':
		d := entry[strings.IndexByte(entry, '@')+1:]
		i := strings.LastIndexByte(addr, '@')
		return i >= 0 && strings.EqualFold(addr[i+1:], d)
	case strings.IndexByte(entry, '@') >= 0:
		return strings.EqualFold(addr, entry)
	case isPhone(entry):
		return isPhone(addr) && phoneDigits(entry) == phoneDigits(addr)
	}
	return matchName(entry, addr, name)
}

// matchName compares a person's or organisation's name with an address and
// display name, ignoring case and repeated spaces.
func matchName(entry, addr, name string) bool {
	entry = collapseSpace(entry)
	return strings.EqualFold(entry, collapseSpace(addr)) || (name != "" && strings.EqualFold(entry, collapseSpace(name)))
}

// recipientSubsumes reports whether every recipient matched by entry c is
// matched by entry p.
func recipientSubsumes(p, c string) bool {
	p, c = strings.TrimSpace(p), strings.TrimSpace(c)
	if p == "" || c == "" {
		return false
	}
	if strings.EqualFold(p, c) {
		return true
	}
	if strings.HasPrefix(p, "*@") || p[0] == '@' {
		d := p[strings.IndexByte(p, '@')+1:]
		if strings.HasPrefix(c, "*@") || c[0] == '@' {
			return strings.EqualFold(d, c[strings.IndexByte(c, '@')+1:])
		}
		i := strings.LastIndexByte(c, '@')
		return i > 0 && !strings.ContainsAny(c[:i], "*?") && strings.EqualFold(c[i+1:], d)
	}
	if isPhone(p) && isPhone(c) {
		return phoneDigits(p) == phoneDigits(c)
	}
	// "#chan" matches "#chan" and "chan"; "chan" alone also matches display
	// names, so it is not inside "#chan". Names compare as names.
	if !strings.ContainsAny(p, "@#") && !strings.ContainsAny(c, "@#") && !isPhone(p) && !isPhone(c) {
		return strings.EqualFold(collapseSpace(p), collapseSpace(c))
	}
	return false
}

func validRecipient(r string) string {
	if strings.TrimSpace(r) == "" {
		return "empty recipient"
	}
	if hasControl(r) {
		return "contains control characters"
	}
	switch {
	case r == "#" || r == "@" || r == "*@":
		return "a pattern needs a name or domain"
	case strings.HasPrefix(r, "*@") || r[0] == '@':
		if msg := validHost(r[strings.IndexByte(r, '@')+1:]); msg != "" {
			return "domain: " + msg
		}
	case strings.IndexByte(r, '@') >= 0 && !strings.Contains(r, "<"):
		i := strings.LastIndexByte(r, '@')
		if i == 0 || i == len(r)-1 {
			return "an address needs a local part and a domain"
		}
	}
	return ""
}

func isPhone(s string) bool {
	digits := 0
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' && i == 0, r == ' ', r == '-', r == '(', r == ')', r == '.', r == '/':
		default:
			return false
		}
	}
	return digits >= 5
}

func phoneDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ---- accounts ----

// normAccount upper-cases an IBAN and drops its spaces; other account ids
// are compared as written (trimmed).
func normAccount(a string) string {
	a = strings.TrimSpace(a)
	if compact := strings.ToUpper(strings.ReplaceAll(a, " ", "")); ibanShape(compact) {
		return compact
	}
	return a
}

// matchAccount reports whether an account matches a scope entry: IBANs
// normalised, other ids exactly.
func matchAccount(entry, account string) bool {
	return normAccount(entry) == normAccount(account)
}

func validAccount(a string) string {
	if strings.TrimSpace(a) == "" {
		return "empty account"
	}
	if hasControl(a) {
		return "contains control characters"
	}
	if n := normAccount(a); ibanShape(n) && !ibanValid(n) {
		return "IBAN checksum does not verify"
	}
	return ""
}

// ibanShape reports whether s (compact, upper case) looks like an IBAN: two
// letters, two digits, then 11 to 30 letters or digits.
func ibanShape(s string) bool {
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	if !isUpperASCII(s[0]) || !isUpperASCII(s[1]) || !isDigit(s[2]) || !isDigit(s[3]) {
		return false
	}
	for i := 4; i < len(s); i++ {
		if !isUpperASCII(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// ibanValid checks the ISO 13616 mod-97 checksum of a compact IBAN.
func ibanValid(s string) bool {
	if !ibanShape(s) {
		return false
	}
	rem := 0
	for i := range len(s) {
		c := s[(i+4)%len(s)]
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A'+10)) % 97
		}
	}
	return rem == 1
}

// ---- names ----

func validName(n string) string {
	if strings.TrimSpace(n) == "" {
		return "empty name"
	}
	if hasControl(n) {
		return "contains control characters"
	}
	return ""
}

// ---- small helpers ----

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isUpperASCII(c byte) bool { return c >= 'A' && c <= 'Z' }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// lowerASCII lower-cases ASCII letters without allocating when there are
// none; other runes go through strings.ToLower.
func lowerASCII(s string) string {
	for i := range len(s) {
		c := s[i]
		if c >= utf8.RuneSelf || (c >= 'A' && c <= 'Z') {
			return strings.ToLower(s)
		}
	}
	return s
}

func collapseSpace(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "  ") && !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

func quote(s string) string { return `"` + s + `"` }
