package flow

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/secret"
)

// Hasher turns a secret into the salted hash its redaction marker carries
// (redact.Redactor is one), so that a secret in an output and the same
// secret in a later call meet as one value without either being kept.
type Hasher interface {
	Hash(value string) string
}

// hit is one value found in a string: s[start:end] is where it is.
type hit struct {
	class      Class
	keys       []key
	display    string
	start, end int
}

// markerRE recognises redaction markers, in outputs as stored.
var markerRE = regexp.MustCompile(`\[REDACTED:[a-z0-9_]+:([0-9a-f]{32})\]`)

var currencyWords = map[string]string{
	"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY", "euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD",
}

func currencyCode(s string) string {
	if c, ok := currencyWords[strings.ToLower(s)]; ok {
		return c
	}
	return strings.ToUpper(s)
}

// extractor finds values in strings. It is immutable after construction.
type extractor struct {
	voc    *vocabulary
	hasher Hasher
}

// maxHitsPerString bounds what one string yields.
const maxHitsPerString = 256

// find returns the values in s in one pass over its tokens, plus targeted
// looks at the few places an IBAN, a phone number or an amount can start.
// (Go's regexp searches unanchored patterns at several MB/s only; a
// 64 KB output would cost tens of milliseconds through a handful of them.)
func (x *extractor) find(s string, out []hit) []hit {
	out = out[:0]
	if len(s) < 3 {
		return out
	}
	var covered [][2]int
	isCovered := func(a, b int) bool {
		for _, c := range covered {
			if a < c[1] && b > c[0] {
				return true
			}
		}
		return false
	}
	add := func(h hit) {
		if len(out) < maxHitsPerString && len(h.keys) > 0 && h.keys[0] != "" {
			out = append(out, h)
		}
	}
	// Secrets first: their spans are never read as anything else.
	if strings.Contains(s, "[REDACTED:") {
		for _, m := range markerRE.FindAllStringSubmatchIndex(s, 32) {
			add(hit{class: Secret, keys: []key{key(kSecret + s[m[2]:m[3]])}, display: s[m[0]:m[1]], start: m[0], end: m[1]})
			covered = append(covered, [2]int{m[0], m[1]})
		}
	}
	if x.hasher != nil {
		for _, m := range secret.Find(s) {
			if m.End-m.Start < 6 || isCovered(m.Start, m.End) {
				continue
			}
			hash := x.hasher.Hash(s[m.Start:m.End])
			add(hit{class: Secret, keys: []key{key(kSecret + hash)}, display: "[REDACTED:" + m.Type + ":" + hash + "]", start: m.Start, end: m.End})
			covered = append(covered, [2]int{m.Start, m.End})
		}
	}
	// IBANs and phone numbers span spaces: look where they can begin.
	for i := 0; i+3 < len(s) && len(out) < maxHitsPerString; i++ {
		c := s[i]
		switch {
		case isUpper(c) && isUpper(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) && (i == 0 || !isAlnum(s[i-1])):
			if iban, end, ok := ibanAt(s, i); ok && !isCovered(i, end) {
				add(hit{class: IBAN, keys: []key{keyOf(IBAN, iban)}, display: iban, start: i, end: end})
				covered = append(covered, [2]int{i, end})
				i = end - 1
			}
		case (c == '+' && isDigit(s[i+1]) || c == '0' && s[i+1] == '0' && isDigit(s[i+2])) && (i == 0 || !isAlnum(s[i-1])):
			if end, ok := phoneAt(s, i); ok && !isCovered(i, end) {
				p := s[i:end]
				add(hit{class: Phone, keys: []key{keyOf(Phone, p)}, display: p, start: i, end: end})
				covered = append(covered, [2]int{i, end})
				i = end - 1
			}
		}
	}
	x.amounts(s, add)
	// Everything else is one token: URLs, e-mail addresses, paths, hosts,
	// ids.
	for i := 0; i < len(s) && len(out) < maxHitsPerString; {
		for i < len(s) && isSep(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isSep(s[j]) {
			j++
		}
		if j > i {
			x.token(s, i, j, isCovered, add, &covered)
		}
		i = j
	}
	return out
}

// isSep separates tokens: white space, brackets, quotes and the list
// punctuation. Dots, colons, slashes and @ stay inside tokens.
func isSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '<', '>', '(', ')', '[', ']', '{', '}', '"', '\'', '`', ',', ';', '|', '\\', '*', '!':
		return true
	}
	return c < ' '
}

func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || isUpper(c) }

// token classifies s[a:b].
func (x *extractor) token(s string, a, b int, isCovered func(int, int) bool, add func(hit), covered *[][2]int) {
	for a < b && (s[a] == '.' || s[a] == ':' || s[a] == '=' || s[a] == '#' && b-a > 1 && !isAlnum(s[a+1])) {
		a++
	}
	for b > a && strings.IndexByte(".,:;?=", s[b-1]) >= 0 {
		b--
	}
	if b-a < 3 || b-a > 2048 || isCovered(a, b) {
		return
	}
	t := s[a:b]
	if k := strings.Index(t, "://"); k > 0 && isScheme(t[:k]) {
		add(hit{class: URL, keys: []key{keyOf(URL, t)}, display: clip(t, maxValueLen), start: a, end: b})
		if h := hostOfURL(t); h != "" {
			add(hit{class: Host, keys: []key{keyOf(Host, h)}, display: h, start: a, end: b})
		}
		*covered = append(*covered, [2]int{a, b})
		return
	}
	if action.IsConversationID(t) {
		// A Teams channel or chat ("19:…@thread.tacv2") is one id,
		// not the mailbox after its colon.
		add(hit{class: ID, keys: []key{tokenKey(t)}, display: t, start: a, end: b})
		*covered = append(*covered, [2]int{a, b})
		return
	}
	if at := strings.IndexByte(t, '@'); at > 0 {
		local, domain := t[:at], t[at+1:]
		if k := strings.LastIndexAny(local, ":="); k >= 0 {
			// from:dana@x, mailto:dana@x, to=dana@x
			local, a = local[k+1:], a+k+1
		}
		if validLocal(local) && validDomain(domain) {
			e := strings.ToLower(local + "@" + domain)
			add(hit{class: Email, keys: []key{keyOf(Email, e)}, display: e, start: a, end: b})
			*covered = append(*covered, [2]int{a, b})
		}
		return
	}
	if t[0] == '/' || strings.HasPrefix(t, "~/") || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") {
		if (strings.Count(t, "/") >= 2 || strings.HasPrefix(t, "~/")) && validPath(t) {
			add(hit{class: Path, keys: []key{keyOf(Path, t)}, display: t, start: a, end: b})
		}
		return
	}
	if strings.IndexByte(t, '.') > 0 {
		if h := strings.ToLower(t); x.isHost(h) {
			add(hit{class: Host, keys: []key{keyOf(Host, h)}, display: h, start: a, end: b})
			return
		}
	}
	if len(t) <= 48 && idChars(t) && idShaped(t) {
		add(hit{class: ID, keys: []key{tokenKey(t)}, display: t, start: a, end: b})
	}
}

func isScheme(s string) bool {
	switch strings.ToLower(s) {
	case "http", "https", "ftp", "ws", "wss", "sftp":
		return true
	}
	return false
}

func validLocal(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(isAlnum(c) || strings.IndexByte("._%+-'", c) >= 0) {
			return false
		}
	}
	return true
}

func validDomain(s string) bool {
	dot := strings.LastIndexByte(s, '.')
	if dot <= 0 || len(s)-dot-1 < 2 || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(isAlnum(c) || c == '.' || c == '-') {
			return false
		}
	}
	for i := dot + 1; i < len(s); i++ {
		if isDigit(s[i]) || s[i] == '-' {
			return false
		}
	}
	return true
}

func validPath(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isAlnum(c) || strings.IndexByte("/._-~@+%", c) >= 0 || c >= 0x80) {
			return false
		}
	}
	return true
}

func idChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(isAlnum(c) || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// isHost accepts lower-cased a.b.tld names whose top-level domain is in the
// vocabulary, so that README.md and main.go are files, not sites.
func (x *extractor) isHost(h string) bool {
	if len(h) > 253 || h[0] == '-' || h[len(h)-1] == '.' {
		return false
	}
	dot := strings.LastIndexByte(h, '.')
	if dot <= 0 || !x.voc.tlds[h[dot+1:]] {
		return false
	}
	label := 0
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case c == '.':
			if label == 0 {
				return false
			}
			label = 0
		case c >= 'a' && c <= 'z' || isDigit(c) || c == '-':
			label++
		default:
			return false
		}
	}
	return true
}

// ibanAt reads an IBAN starting at s[i] (groups of four may be spaced).
func ibanAt(s string, i int) (string, int, bool) {
	var b strings.Builder
	j := i
	for j < len(s) && b.Len() < 34 {
		c := s[j]
		switch {
		case isUpper(c) || isDigit(c):
			b.WriteByte(c)
		case c == ' ' && j+1 < len(s) && (isUpper(s[j+1]) || isDigit(s[j+1])) && b.Len() >= 4:
		default:
			goto done
		}
		j++
	}
done:
	iban := b.String()
	if n, ok := action.IBANLength(iban[:2]); ok {
		if len(iban) < n {
			return "", 0, false
		}
		if len(iban) > n {
			// Give back what followed: walk j back over the extra
			// characters (and the spaces between them).
			extra := len(iban) - n
			for extra > 0 && j > i {
				j--
				if s[j] != ' ' {
					extra--
				}
			}
			for j > i && s[j-1] == ' ' {
				j--
			}
			iban = iban[:n]
		}
	}
	if !action.ValidIBAN(iban) {
		return "", 0, false
	}
	return iban, j, true
}

// phoneAt reads an international number starting at s[i] (+… or 00…):
// digits with spaces, dots, dashes or one bracketed area code, 8 to 15
// digits in all.
func phoneAt(s string, i int) (int, bool) {
	digits, j, last := 0, i+1, i+1
	if s[i] == '0' {
		j, last = i, i
	}
	for j < len(s) && j-i < 24 {
		c := s[j]
		switch {
		case isDigit(c):
			digits++
			last = j + 1
		case c == ' ' || c == '.' || c == '-' || c == '/' || c == '(' || c == ')':
			if j+1 < len(s) && !(isDigit(s[j+1]) || s[j+1] == '(') && c != ')' {
				goto done
			}
		default:
			goto done
		}
		j++
	}
done:
	if last < len(s) && isAlnum(s[last]) {
		return 0, false
	}
	return last, digits >= 8 && digits <= 15
}

// currencyMarks are the symbols and codes an amount is recognised by.
var currencyMarks = []string{"€", "$", "£", "¥", "EUR", "USD", "GBP", "CHF", "JPY", "CAD", "AUD", "SEK", "NOK", "DKK", "PLN", "CZK", "euros", "euro", "Euro", "dollars", "dollar"}

// amounts finds money: a number right before or after a currency mark.
func (x *extractor) amounts(s string, add func(hit)) {
	for _, mark := range currencyMarks {
		for off := 0; ; {
			k := strings.Index(s[off:], mark)
			if k < 0 {
				break
			}
			p := off + k
			off = p + len(mark)
			word := isUpper(mark[0]) || mark[0] == 'e' || mark[0] == 'd'
			if word && (p > 0 && isAlnum(s[p-1]) || off < len(s) && isAlnum(s[off])) {
				continue // part of a longer word ("EURO2026", "euronews")
			}
			cur := currencyCode(mark)
			if n, a, ok := numberBefore(s, p); ok {
				add(hit{class: Amount, keys: amountKeys(n, cur), display: strconv.FormatFloat(n, 'f', -1, 64) + " " + cur, start: a, end: off})
			} else if n, b, ok := numberAfter(s, off); ok {
				add(hit{class: Amount, keys: amountKeys(n, cur), display: strconv.FormatFloat(n, 'f', -1, 64) + " " + cur, start: p, end: b})
			}
		}
	}
}

func isNumChar(c byte) bool { return isDigit(c) || c == '.' || c == ',' || c == '\'' }

func numberBefore(s string, p int) (float64, int, bool) {
	e := p
	if e > 0 && s[e-1] == ' ' {
		e--
	}
	a := e
	for a > 0 && e-a < 20 && (isNumChar(s[a-1]) || s[a-1] == ' ' && a >= 2 && isDigit(s[a-2]) && a < e && isDigit(s[a])) {
		a--
	}
	for a < e && !isDigit(s[a]) {
		a++
	}
	if a == e || a > 0 && isAlnum(s[a-1]) {
		return 0, 0, false
	}
	n, ok := action.ParseNumber(strings.TrimRight(s[a:e], ".,"))
	return n, a, ok
}

func numberAfter(s string, p int) (float64, int, bool) {
	a := p
	if a < len(s) && s[a] == ' ' {
		a++
	}
	b := a
	for b < len(s) && b-a < 20 && (isNumChar(s[b]) || s[b] == ' ' && b+3 < len(s) && isDigit(s[b+1]) && isDigit(s[b+2]) && isDigit(s[b+3]) && b > a && isDigit(s[b-1])) {
		b++
	}
	num := strings.TrimRight(s[a:b], ".,' ")
	if num == "" || !isDigit(num[0]) || b < len(s) && isAlnum(s[b]) {
		return 0, 0, false
	}
	n, ok := action.ParseNumber(num)
	return n, a + len(num), ok
}

// idShaped accepts tokens that look like identifiers rather than words or
// numbers: letters and digits mixed (B0C1XYZ, care-3y-49, AAMkSr7), at
// least five long.
func idShaped(w string) bool {
	if len(w) < 5 {
		return false
	}
	letters, digits := 0, 0
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		}
	}
	return letters > 0 && digits > 0
}

func hostOfURL(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	rest := u[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	if j := strings.LastIndexByte(rest, '@'); j >= 0 {
		rest = rest[j+1:]
	}
	return normHost(rest)
}

func isIBANShape(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	return len(s) >= 15 && len(s) <= 34 && isUpper(s[0]) && isUpper(s[1]) && isDigit(s[2]) && isDigit(s[3])
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
