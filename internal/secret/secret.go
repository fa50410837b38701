// Package secret recognises values that look like credentials: provider API
// keys and tokens, private key blocks, JWTs, passwords embedded in URLs and
// connection strings, and key names under which secrets are usually kept.
//
// The classifier uses it to mark actions sensitive; the evidence log uses it to
// redact values before they are stored. Detection is deliberately cheap: each
// pattern has a literal anchor that is searched for first, and the pattern's
// regular expression only runs where its anchor occurs.
//
// What it knows is data: the detectors and the key-name lists are
// detectors.yaml beside this file, and operators add their own with a
// `secrets:` section in a catalog file (Scanner.With). Find, SensitiveKey
// and IsPlaceholder use the built-in Scanner.
package secret

import (
	"regexp"
	"slices"
	"strings"
)

// Match is one secret-looking span of a string: s[Start:End] is the secret
// (without surrounding key names or quotes where the pattern can tell).
type Match struct {
	// Type names what was recognised, e.g. "aws_access_key",
	// "github_token", "private_key", "jwt", "password_in_url".
	Type       string
	Start, End int
}

// detector finds one type of secret. anchors are literal substrings at least
// one of which must occur in every match; re is anchored at the start and
// runs on the text from the anchor on (or from up to back bytes before it).
type detector struct {
	typ     string
	anchors []string
	// fold makes the anchor search case-insensitive (in the spellings
	// lower, Title and UPPER).
	fold bool
	// back is how far before the anchor a match may begin (over URL
	// scheme bytes, or key-name bytes for assignments).
	back int
	re   *regexp.Regexp
	// group, when > 0, is the submatch that holds the secret itself.
	group int
	// valid, when set, rejects candidate secrets that are placeholders.
	valid func(*Scanner, string) bool
	// assignment marks the KEY=value detector: the key before the
	// operator decides.
	assignment bool
	// near, when set, makes the detector anchor-less: reAny is searched
	// for within within bytes of each match of type near.
	near   string
	within int
	reAny  *regexp.Regexp
}

// maxSpan bounds how far past an anchor a single match may extend; it keeps
// each regexp run short on large inputs. Private key blocks are the longest.
const maxSpan = 16 << 10

// validators are the named checks a detector's candidates may have to pass.
var validators = map[string]func(*Scanner, string) bool{
	"not_placeholder": (*Scanner).notPlaceholder,
	"openai_key": func(_ *Scanner, s string) bool {
		return !strings.HasPrefix(s, "sk-ant-") && hasDigit(s) && hasLetter(s[3:])
	},
}

// anchorRef is one anchor of one detector. Case-insensitive anchors are
// listed in their lower, Title and UPPER spellings, which is how they occur
// in practice.
type anchorRef struct {
	anchor string
	det    int
}

// index lists the anchors by their first byte, so that Find reads its
// input once.
func index(ds []detector) *[256][]anchorRef {
	var t [256][]anchorRef
	for di, d := range ds {
		for _, a := range d.anchors {
			variants := []string{a}
			if d.fold {
				low := strings.ToLower(a)
				variants = []string{low}
				for _, v := range []string{strings.ToUpper(low[:1]) + low[1:], strings.ToUpper(low)} {
					if !slices.Contains(variants, v) {
						variants = append(variants, v)
					}
				}
			}
			for _, v := range variants {
				t[v[0]] = append(t[v[0]], anchorRef{v, di})
			}
		}
	}
	return &t
}

// Find returns every secret-looking span in s, ordered by position and not
// overlapping (where two detectors claim overlapping text the earlier, then
// longer, then more specific span wins).
func Find(s string) []Match { return builtinScanner().Find(s) }

// Find returns every secret-looking span in s, as the package's Find does,
// with the scanner's detectors.
func (sc *Scanner) Find(s string) []Match {
	if len(s) < 8 {
		return nil
	}
	return sc.decoded(s, sc.find(s))
}

// find is Find without looking into encodings: the anchored detectors,
// then those that only count near another's match.
func (sc *Scanner) find(s string) []Match {
	if len(s) < 8 {
		return nil
	}
	var out []found
	// next[d] is where detector d may match again: a match is not
	// searched for inside an earlier match of the same detector.
	var nextBuf [32]int
	next := nextBuf[:]
	if len(sc.detectors) > len(nextBuf) {
		next = make([]int, len(sc.detectors))
	}
	for i := 0; i < len(s); i++ {
		for _, r := range sc.anchors[s[i]] {
			if i < next[r.det] || !strings.HasPrefix(s[i:], r.anchor) {
				continue
			}
			if m, ok := sc.matchAt(&sc.detectors[r.det], s, i); ok {
				out = append(out, found{m, r.det})
				next[r.det] = max(m.End, i+len(r.anchor))
			}
		}
	}
	return normalise(sc.findNear(s, out))
}

// findNear adds the matches of the near detectors: each searched within
// its window around the matches of the type it is near.
func (sc *Scanner) findNear(s string, out []found) []found {
	n := len(out)
	for di := range sc.detectors {
		d := &sc.detectors[di]
		if d.near == "" {
			continue
		}
		for _, f := range out[:n] {
			if f.m.Type != d.near {
				continue
			}
			lo, hi := max(0, f.m.Start-d.within), min(len(s), f.m.End+d.within)
			for _, loc := range d.reAny.FindAllStringSubmatchIndex(s[lo:hi], 4) {
				ms, me := loc[0], loc[1]
				if d.group > 0 && len(loc) > 2*d.group+1 && loc[2*d.group] >= 0 {
					ms, me = loc[2*d.group], loc[2*d.group+1]
				}
				if d.valid != nil && !d.valid(sc, s[lo+ms:lo+me]) {
					continue
				}
				out = append(out, found{Match{Type: d.typ, Start: lo + ms, End: lo + me}, di})
			}
		}
	}
	return out
}

// matchAt tries d at anchor position i of s.
func (sc *Scanner) matchAt(d *detector, s string, i int) (Match, bool) {
	if d.assignment {
		return sc.matchAssignment(d, s, i)
	}
	st := i
	// A match may begin before its anchor (the scheme before "://"):
	// walk back over the bytes that can precede it.
	for d.back > 0 && st > 0 && i-st < d.back && isSchemeByte(s[st-1]) {
		st--
	}
	// Only match at a token boundary, so that "xAKIA…" or "task-…"
	// inside a longer word does not count.
	if st > 0 && isWordByte(s[st-1]) && isWordByte(s[st]) {
		return Match{}, false
	}
	loc := d.re.FindStringSubmatchIndex(s[st:min(len(s), i+maxSpan)])
	if loc == nil {
		return Match{}, false
	}
	ms, me := loc[0], loc[1]
	if d.group > 0 && len(loc) > 2*d.group+1 && loc[2*d.group] >= 0 {
		ms, me = loc[2*d.group], loc[2*d.group+1]
	}
	if d.valid != nil && !d.valid(sc, s[st+ms:st+me]) {
		return Match{}, false
	}
	return Match{Type: d.typ, Start: st + ms, End: st + me}, true
}

// matchAssignment handles KEY=value and "key": "value" with the operator at
// i: the key before it must name a secret.
func (sc *Scanner) matchAssignment(d *detector, s string, i int) (Match, bool) {
	j := i
	for j > 0 && i-j < 4 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
	}
	keyEnd := j
	for j > 0 && keyEnd-j < d.back && isKeyByte(s[j-1]) {
		j--
	}
	if j == keyEnd || !sc.mayBeSensitiveKey(s[j:keyEnd]) {
		return Match{}, false
	}
	loc := d.re.FindStringSubmatchIndex(s[j:min(len(s), i+maxSpan)])
	if loc == nil {
		return Match{}, false
	}
	key := s[j+loc[2] : j+loc[3]]
	val := s[j+loc[4] : j+loc[5]]
	if !sc.SensitiveKey(key) || !sc.notPlaceholder(val) || looksLikeReference(val) || isAuthScheme(val) {
		return Match{}, false
	}
	return Match{Type: d.typ, Start: j + loc[4], End: j + loc[5]}, true
}

// mayBeSensitiveKey is a cheap, allocation-free pre-check for SensitiveKey:
// the key contains one of the words secrets are kept under.
func (sc *Scanner) mayBeSensitiveKey(k string) bool {
	for _, w := range sc.stems {
		if containsFold(k, w) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains the lower-case ASCII word w,
// ignoring case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if hasPrefixFold(s[i:], w) {
			return true
		}
	}
	return false
}

// hasPrefixFold is an ASCII-case-insensitive strings.HasPrefix for a
// lower-case prefix.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// found is a match with the detector that made it; detectors listed first
// are more specific and win ties.
type found struct {
	m   Match
	det int
}

// normalise sorts matches and drops overlaps: the earlier span wins, then
// the longer, then the more specific detector.
func normalise(fs []found) []Match {
	if len(fs) == 0 {
		return nil
	}
	slices.SortFunc(fs, func(a, b found) int {
		if a.m.Start != b.m.Start {
			return a.m.Start - b.m.Start
		}
		if la, lb := a.m.End-a.m.Start, b.m.End-b.m.Start; la != lb {
			return lb - la
		}
		return a.det - b.det
	})
	out := make([]Match, 0, len(fs))
	out = append(out, fs[0].m)
	for _, f := range fs[1:] {
		if f.m.Start < out[len(out)-1].End {
			continue
		}
		out = append(out, f.m)
	}
	return out
}

// SensitiveKey reports whether an argument, field or variable named name
// usually holds a secret: "password", "api_key", "Authorization",
// "client_secret", "GITHUB_TOKEN", "x-api-key" … but not "max_tokens",
// "secret_name" or "page_token".
func SensitiveKey(name string) bool { return builtinScanner().SensitiveKey(name) }

// SensitiveKey reports whether name usually holds a secret, as the
// package's SensitiveKey does, with the scanner's key lists.
func (sc *Scanner) SensitiveKey(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	var b [128]byte
	n := 0
	// Split into lower-case words on separators and case changes, and
	// keep a compact form without separators.
	words := make([]string, 0, 4)
	wstart := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		sep := c == '_' || c == '-' || c == '.' || c == ' ' || c == ':'
		upper := c >= 'A' && c <= 'Z'
		if sep || (upper && i > 0 && name[i-1] >= 'a' && name[i-1] <= 'z') {
			if n > wstart {
				words = append(words, string(b[wstart:n]))
			}
			wstart = n
			if sep {
				continue
			}
		}
		if upper {
			c += 'a' - 'A'
		}
		b[n] = c
		n++
	}
	if n > wstart {
		words = append(words, string(b[wstart:n]))
	}
	compact := string(b[:n])
	k := &sc.keys
	if compact == "" || k.benignNames[compact] {
		return false
	}
	if len(words) > 1 && k.benignSuffixes[words[len(words)-1]] {
		return false
	}
	if k.exact[compact] {
		return true
	}
	for _, w := range words {
		if k.exact[w] {
			return true
		}
	}
	for _, w := range k.words {
		if strings.Contains(compact, w) {
			return true
		}
	}
	if len(words) > 1 && words[len(words)-1] == "key" {
		return k.qualifiers[words[len(words)-2]]
	}
	return false
}

// IsPlaceholder reports whether v stands for a secret without being one:
// "****", "<password>", "${DB_PASSWORD}", "changeme", "xxxxxx", or a value
// too short to be a credential.
func IsPlaceholder(v string) bool { return !builtinScanner().notPlaceholder(v) }

// IsPlaceholder reports whether v stands for a secret without being one,
// as the package's IsPlaceholder does, with the scanner's placeholders.
func (sc *Scanner) IsPlaceholder(v string) bool { return !sc.notPlaceholder(v) }

func (sc *Scanner) notPlaceholder(v string) bool {
	v = strings.Trim(v, `"' `)
	if len(v) < 3 {
		return false
	}
	if strings.HasPrefix(v, "$") || strings.HasPrefix(v, "<") || strings.HasPrefix(v, "{{") || strings.HasPrefix(v, "%") {
		return false
	}
	same := true
	for i := 1; i < len(v); i++ {
		if v[i] != v[0] {
			same = false
			break
		}
	}
	if same {
		return false
	}
	return !sc.keys.placeholders[strings.ToLower(v)]
}

// looksLikeReference rejects assignment values that refer to a secret held
// elsewhere rather than contain it: function calls, environment lookups,
// attribute access.
func looksLikeReference(v string) bool {
	return strings.ContainsAny(v, "()") || strings.HasPrefix(v, "os.") || strings.HasPrefix(v, "process.env") ||
		strings.HasPrefix(v, "env.") || strings.HasPrefix(v, "self.") || strings.HasPrefix(v, "this.")
}

// isAuthScheme reports whether v is an HTTP authentication scheme name, as in
// "Authorization: Bearer …", where the credential follows the scheme.
func isAuthScheme(v string) bool {
	switch strings.ToLower(v) {
	case "bearer", "basic", "token", "digest", "negotiate", "apikey":
		return true
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isKeyByte(c byte) bool { return isWordByte(c) || c == '-' || c == '.' }

func isSchemeByte(c byte) bool { return isWordByte(c) && c != '_' || c == '+' || c == '-' || c == '.' }

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}
