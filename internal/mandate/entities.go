package mandate

import (
	"math"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/fold"
)

// entKind is what an entity in the user's text is.
type entKind uint8

const (
	entURL entKind = iota
	entEmail
	entIBAN
	entAmount
	entDomain
	entPath
	entChannel
	entQuote
	// entObject is a storage object or other resource named by a URL
	// whose scheme is not the web's ("s3://foto-backup/famiglia/"): it
	// names what a verb acts on, but no scope dimension holds it.
	entObject
)

// entity is a span of the user's text that names a resource or an amount.
type entity struct {
	kind       entKind
	start, end int
	raw        string // verbatim
	value      string // the scope entry it becomes
	money      Money  // for amounts
	why        string // what it was recognised as
	// file marks a path that names one file ("notes.txt",
	// "notes/summary.md"), not a directory or a pattern.
	file bool
}

// Language-independent entity data: codes and symbols are the same in
// every language, so they live here rather than in the lexicons.
var (
	isoCurrencies = []string{"EUR", "USD", "GBP", "CHF", "JPY", "CNY", "CAD", "AUD", "NZD", "SEK", "NOK", "DKK",
		"PLN", "CZK", "HUF", "RON", "BGN", "TRY", "INR", "BRL", "MXN", "ZAR", "SGD", "HKD", "KRW", "ILS", "AED"}
	currencySymbols = map[string]string{"€": "EUR", "$": "USD", "US$": "USD", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW", "₺": "TRY", "₪": "ILS"}
	// Top-level domains a bare word.word must end in to count as a host:
	// enough to catch "amazon.de" without taking "main.go" or "notes.md".
	hostTLDs = []string{"com", "net", "org", "io", "dev", "app", "ai", "co", "de", "fr", "es", "it", "nl", "be", "at",
		"ch", "eu", "uk", "us", "ca", "au", "jp", "cn", "pl", "se", "no", "dk", "fi", "pt", "ie", "gr", "cz", "hu",
		"ro", "br", "mx", "ar", "info", "biz", "tv", "shop", "store", "online", "site", "cloud", "example", "test",
		"gov", "edu", "org", "lu", "li", "cat", "gal", "eus"}
	// File extensions that make a bare word a file name ("report.pdf").
	fileExts = []string{"go", "py", "js", "ts", "tsx", "jsx", "mjs", "rs", "java", "kt", "rb", "php", "c", "h", "cc",
		"cpp", "hpp", "cs", "swift", "md", "txt", "rst", "json", "yaml", "yml", "toml", "ini", "cfg", "conf", "env",
		"sh", "bash", "zsh", "sql", "html", "htm", "css", "scss", "csv", "tsv", "xml", "lock", "mod", "sum", "pdf",
		"doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "png", "jpg", "jpeg", "gif", "svg", "zip", "tar",
		"gz", "tgz", "log", "pem", "key", "crt", "proto", "tf", "tfvars", "ipynb", "vue", "svelte", "lua", "pl"}
	// A relative path with one slash and no extension ("src/auth") is
	// only taken as a path when it starts with a usual directory name;
	// "and/or" and "Mails/Chats" are words.
	dirNames = []string{"src", "pkg", "cmd", "internal", "lib", "libs", "docs", "doc", "test", "tests", "app", "apps",
		"web", "api", "config", "configs", "scripts", "script", "bin", "build", "dist", "home", "etc", "var", "tmp",
		"usr", "opt", "srv", "data", "assets", "static", "public", "vendor", "node_modules", "deploy", "infra",
		"k8s", "charts", "migrations", "tools", "examples", "services", "modules", "packages", "components", "prod",
		"staging", "dev", "backup", "backups", "downloads", "documents", "desktop", "projects", "repos", "spec"}
	notPaths = []string{"and/or", "und/oder", "et/ou", "y/o", "km/h", "i/o", "n/a", "w/o", "c/o", "tcp/ip", "24/7",
		"yes/no", "ja/nein", "oui/non", "si/no", "on/off", "true/false", "read/write", "input/output", "he/she",
		"his/her", "pros/cons", "s/he", "r/w"}
	ibanLengths = map[string]int{"AD": 24, "AE": 23, "AL": 28, "AT": 20, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
		"BR": 29, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "ES": 24,
		"FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "HR": 21, "HU": 28,
		"IE": 22, "IL": 23, "IS": 26, "IT": 27, "KW": 30, "KZ": 20, "LB": 28, "LI": 21, "LT": 20, "LU": 20,
		"LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PL": 28,
		"PT": 25, "RO": 24, "RS": 22, "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TN": 24, "TR": 26,
		"UA": 29, "VA": 22, "XK": 20}
)

// entityRegexps are compiled once per lexicon; see newEntityRegexps.
type entityRegexps struct {
	url, object, email, iban, domain, channel, word *regexp.Regexp
	amountBefore, amountAfter                       *regexp.Regexp
}

const numberRE = `\d{1,3}(?:[.,'\x{00A0}\x{202F}]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`

func newEntityRegexps(currencyWords []string) *entityRegexps {
	var syms []string
	for s := range currencySymbols {
		syms = append(syms, regexp.QuoteMeta(s))
	}
	slices.SortFunc(syms, func(a, b string) int { return len(b) - len(a) }) // "US$" before "$"
	words := slices.Clone(currencyWords)
	slices.SortFunc(words, func(a, b string) int {
		if d := len(b) - len(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	sym := strings.Join(syms, "|")
	iso := strings.Join(isoCurrencies, "|")
	wordAlt := "(?i:" + strings.Join(words, "|") + ")"
	if len(words) == 0 {
		wordAlt = iso
	}
	return &entityRegexps{
		url:          regexp.MustCompile(`(?i)\b(?:https?|ftp)://[^\s<>"'“”«»]+`),
		object:       regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]{0,15}://[^\s<>"'“”«»]+`),
		email:        regexp.MustCompile(`(?:\*|[\p{L}\p{N}_%+-][\p{L}\p{N}._%+-]*)?@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}`),
		iban:         regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}`),
		domain:       regexp.MustCompile(`(?i)(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+(?:` + strings.Join(hostTLDs, "|") + `)(?:/[^\s<>"'“”«»]*)?`),
		channel:      regexp.MustCompile(`#[\p{L}_][\p{L}\p{N}_.-]*`),
		word:         regexp.MustCompile(`[^\s"“”„«»<>]+`),
		amountBefore: regexp.MustCompile(`(` + sym + `|\b(?:` + iso + `)\b)\s?(` + numberRE + `)`),
		amountAfter:  regexp.MustCompile(`(` + numberRE + `)\s?(` + sym + `|(?:` + iso + `)\b|` + wordAlt + `)`),
	}
}

// extractEntities finds every entity in text, earliest-priority first
// where spans would overlap, and returns them sorted by position.
func (lx *lexicon) extractEntities(text string, re *entityRegexps) []entity {
	// ents stays sorted by start and free of overlaps, so a new span is
	// checked against its two neighbours only.
	var ents []entity
	add := func(e entity) {
		if e.start >= e.end {
			return
		}
		i, _ := slices.BinarySearchFunc(ents, e.start, func(x entity, start int) int { return x.start - start })
		if (i > 0 && ents[i-1].end > e.start) || (i < len(ents) && ents[i].start < e.end) {
			return
		}
		e.raw = text[e.start:e.end]
		ents = slices.Insert(ents, i, e)
	}

	for _, m := range re.url.FindAllStringIndex(text, -1) {
		end := m[0] + len(trimTrailingPunct(text[m[0]:m[1]]))
		u, err := url.Parse(text[m[0]:end])
		if err != nil {
			continue
		}
		h := lowerASCII(strings.TrimSuffix(u.Hostname(), "."))
		if validHost(h) != "" {
			continue
		}
		add(entity{kind: entURL, start: m[0], end: end, value: h, why: "URL; its host"})
	}
	// After the web's URLs: any other scheme names an object as one
	// token, so the colon in "s3://" does not cut the clause the object
	// stands in ("cancella dal bucket s3://foto-backup le foto più
	// vecchie di due anni" keeps its age condition on the delete).
	for _, m := range re.object.FindAllStringIndex(text, -1) {
		end := m[0] + len(trimTrailingPunct(text[m[0]:m[1]]))
		add(entity{kind: entObject, start: m[0], end: end, value: text[m[0]:end], why: "object named by a URL no scope dimension holds"})
	}
	for _, m := range re.email.FindAllStringIndex(text, -1) {
		if m[0] > 0 {
			if r, _ := utf8.DecodeLastRuneInString(text[:m[0]]); r == '/' || r == ':' {
				continue // part of a URL or path
			}
		}
		add(entity{kind: entEmail, start: m[0], end: m[1], value: strings.ToLower(text[m[0]:m[1]]), why: "e-mail address"})
	}
	for _, m := range re.iban.FindAllStringIndex(text, -1) {
		if start, end, iban, ok := pickIBAN(text, m[0], m[1]); ok {
			add(entity{kind: entIBAN, start: start, end: end, value: iban, why: "IBAN (checksum valid)"})
		}
	}
	lx.extractAmounts(text, re, add)
	for _, m := range re.domain.FindAllStringIndex(text, -1) {
		start, end := m[0], m[0]+len(trimTrailingPunct(text[m[0]:m[1]]))
		if start > 0 {
			if r, _ := utf8.DecodeLastRuneInString(text[:start]); isWordRune(r) || strings.ContainsRune("-.@/_~", r) {
				continue
			}
		}
		host, _, _ := strings.Cut(text[start:end], "/")
		if end < len(text) {
			if r, _ := utf8.DecodeRuneInString(text[end:]); isWordRune(r) || r == '-' || r == '@' || r == '_' {
				continue
			}
			if text[end] == '.' && end+1 < len(text) {
				if r, _ := utf8.DecodeRuneInString(text[end+1:]); isWordRune(r) {
					continue // "file.de.bak"
				}
			}
		}
		h := strings.ToLower(host)
		if validHost(h) != "" || !strings.ContainsFunc(h, unicode.IsLetter) {
			continue
		}
		add(entity{kind: entDomain, start: start, end: end, value: h, why: "domain name"})
	}
	for _, m := range re.word.FindAllStringIndex(text, -1) {
		if e, ok := pathEntity(text, m[0], m[1]); ok {
			add(e)
		}
	}
	lx.homeFolderEntities(text, add)
	for _, m := range re.channel.FindAllStringIndex(text, -1) {
		if m[0] > 0 {
			if r, _ := utf8.DecodeLastRuneInString(text[:m[0]]); !unicode.IsSpace(r) && r != '(' {
				continue
			}
		}
		end := m[0] + len(strings.TrimRight(text[m[0]:m[1]], ".-"))
		add(entity{kind: entChannel, start: m[0], end: end, value: strings.ToLower(text[m[0]:end]), why: "chat channel"})
	}
	for _, q := range findQuotes(text) {
		add(q)
	}
	return ents
}

// homeFolderEntities finds folders of the user's home named in words: a
// folder name next to a word for "folder" ("my Downloads folder", "le
// dossier Téléchargements"), or capitalised after "my" ("my Pictures").
// Each becomes the glob "~/<name>/**".
func (lx *lexicon) homeFolderEntities(text string, add func(entity)) {
	if len(lx.homeFolders) == 0 {
		return
	}
	// Words are runs of letters; only those as long as a folder name are
	// folded and looked up, and their neighbours only then.
	type span struct{ start, end int }
	var prev span
	wordAt := func(from int) (span, bool) {
		i := from
		for i < len(text) {
			r, n := utf8.DecodeRuneInString(text[i:])
			if unicode.IsLetter(r) {
				break
			}
			i += n
		}
		if i >= len(text) {
			return span{}, false
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsLetter(r) {
				break
			}
			j += n
		}
		return span{i, j}, true
	}
	cur, ok := wordAt(0)
	for ok {
		next, more := wordAt(cur.end)
		if n := cur.end - cur.start; n >= lx.folderMin && n <= lx.folderMax {
			w := text[cur.start:cur.end]
			if name, found := lx.homeFolders[fold.String(w)]; found {
				before, after := "", ""
				if prev.end > 0 {
					before = fold.String(text[prev.start:prev.end])
				}
				if more {
					after = fold.String(text[next.start:next.end])
				}
				r, _ := utf8.DecodeRuneInString(w)
				if lx.folderWords[before] || lx.folderWords[after] || (lx.mine[before] && unicode.IsUpper(r)) {
					add(entity{kind: entPath, start: cur.start, end: cur.end, value: "~/" + name + "/**", why: "a folder of the user's home, named in words"})
				}
			}
		}
		prev, cur, ok = cur, next, more
	}
}

func (lx *lexicon) extractAmounts(text string, re *entityRegexps, add func(entity)) {
	boundaryBefore := func(i int) bool {
		if i == 0 {
			return true
		}
		r, _ := utf8.DecodeLastRuneInString(text[:i])
		return !isWordRune(r) && r != '.' && r != ','
	}
	boundaryAfter := func(i int) bool {
		if i >= len(text) {
			return true
		}
		r, _ := utf8.DecodeRuneInString(text[i:])
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}
	for _, m := range re.amountBefore.FindAllStringSubmatchIndex(text, -1) {
		cur, num := text[m[2]:m[3]], text[m[4]:m[5]]
		if !boundaryBefore(m[0]) || !boundaryAfter(m[1]) {
			continue
		}
		if v, ok := parseAmount(num); ok {
			add(entity{kind: entAmount, start: m[0], end: m[1], money: Money{Amount: v, Currency: lx.currencyCode(cur)}, why: "amount"})
		}
	}
	for _, m := range re.amountAfter.FindAllStringSubmatchIndex(text, -1) {
		num, cur := text[m[2]:m[3]], text[m[4]:m[5]]
		if !boundaryBefore(m[0]) {
			continue
		}
		if _, isSym := currencySymbols[cur]; !isSym && !boundaryAfter(m[1]) {
			continue
		}
		if v, ok := parseAmount(num); ok {
			add(entity{kind: entAmount, start: m[0], end: m[1], money: Money{Amount: v, Currency: lx.currencyCode(cur)}, why: "amount"})
		}
	}
}

func (lx *lexicon) currencyCode(cur string) string {
	if c, ok := currencySymbols[cur]; ok {
		return c
	}
	if slices.Contains(isoCurrencies, cur) {
		return cur
	}
	if c, ok := lx.currencies[fold.String(cur)]; ok {
		return c
	}
	return strings.ToUpper(cur)
}

// parseAmount reads "84.20", "84,20", "1.234,50", "1,234.50", "1 234,50".
// With both separators, the last is the decimal one; a single separator
// followed by exactly three digits groups thousands.
func parseAmount(s string) (float64, bool) {
	s = strings.NewReplacer("\u00a0", "", "\u202f", "", "'", "").Replace(s)
	lastDot, lastComma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	switch {
	case lastDot >= 0 && lastComma >= 0:
		if lastDot > lastComma {
			s = strings.ReplaceAll(s, ",", "")
		} else {
			s = strings.ReplaceAll(s, ".", "")
			s = strings.Replace(s, ",", ".", 1)
		}
	case lastDot >= 0 || lastComma >= 0:
		sep := "."
		i := lastDot
		if lastComma >= 0 {
			sep, i = ",", lastComma
		}
		if strings.Count(s, sep) > 1 || len(s)-i-1 == 3 {
			s = strings.ReplaceAll(s, sep, "")
		} else {
			s = strings.Replace(s, sep, ".", 1)
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v < 0 {
		return 0, false
	}
	return v, true
}

// pickIBAN finds the IBAN at the start of a candidate span: the country's
// length when known, else the longest prefix whose checksum verifies. It
// returns the span it covers and the compact IBAN.
func pickIBAN(text string, start, end int) (int, int, string, bool) {
	var compact []byte
	var ends []int // ends[i] is the byte offset just after compact[i]
	for i := start; i < end; i++ {
		if text[i] == ' ' {
			continue
		}
		compact = append(compact, text[i])
		ends = append(ends, i+1)
	}
	try := func(n int) (int, int, string, bool) {
		if n > len(compact) || n < 15 {
			return 0, 0, "", false
		}
		s := string(compact[:n])
		e := ends[n-1]
		if !ibanValid(s) {
			return 0, 0, "", false
		}
		if e < len(text) {
			if r, _ := utf8.DecodeRuneInString(text[e:]); unicode.IsLetter(r) || unicode.IsDigit(r) {
				return 0, 0, "", false
			}
		}
		return start, e, s, true
	}
	if n, ok := ibanLengths[string(compact[:2])]; ok {
		return try(n)
	}
	for n := min(len(compact), 34); n >= 15; n-- {
		if s, e, iban, ok := try(n); ok {
			return s, e, iban, true
		}
	}
	return 0, 0, "", false
}

func trimTrailingPunct(s string) string {
	return strings.TrimRightFunc(s, func(r rune) bool { return strings.ContainsRune(`.,;:!?)]}'"”»›`, r) })
}

// pathEntity decides whether a whitespace-delimited word is a file path
// and, if so, which glob it stands for.
func pathEntity(text string, start, end int) (entity, bool) {
	w := text[start:end]
	lead := len(w) - len(strings.TrimLeft(w, `('"[`))
	w = w[lead:]
	start += lead
	w = strings.TrimRightFunc(w, func(r rune) bool { return strings.ContainsRune(`.,;:!?)'"]`, r) })
	end = start + len(w)
	if w == "" || strings.Contains(w, "://") || strings.ContainsRune(w, '@') || hasControl(w) {
		return entity{}, false
	}
	lw := strings.ToLower(w)
	if slices.Contains(notPaths, lw) {
		return entity{}, false
	}
	anchored := strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") || strings.HasPrefix(w, "~/") ||
		(strings.HasPrefix(w, "/") && strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' }))
	segs := strings.Split(strings.Trim(w, "/"), "/")
	last := segs[len(segs)-1]
	ext := ""
	if i := strings.LastIndexByte(last, '.'); i > 0 {
		ext = strings.ToLower(last[i+1:])
	}
	switch {
	case anchored:
	case strings.ContainsRune(w, '/'):
		for _, s := range segs {
			if s == "" || !strings.ContainsFunc(s, unicode.IsLetter) && !isDigits(s) && !strings.ContainsAny(s, "*?") {
				return entity{}, false
			}
			for _, r := range s {
				if !(isWordRune(r) || strings.ContainsRune("._-*?[]+~", r)) {
					return entity{}, false
				}
			}
		}
		if !strings.ContainsFunc(w, unicode.IsLetter) {
			return entity{}, false
		}
		if !strings.HasSuffix(w, "/") && len(segs) < 3 && !slices.Contains(fileExts, ext) && !strings.ContainsAny(w, "*?") &&
			!slices.Contains(dirNames, strings.ToLower(segs[0])) {
			return entity{}, false
		}
	case isTypePattern(w):
		// A bare pattern of file names: "*.log" is every .log file, like
		// ".log" (settleExtensions narrows a folder named with it).
		return entity{kind: entPath, start: start, end: end, value: "**/" + w, why: "file name pattern; matched anywhere under the working directory"}, true
	default:
		// A bare file name: "report.pdf", ".env".
		dotfile := strings.HasPrefix(w, ".") && len(w) > 1 && unicode.IsLetter(rune(w[1])) && !strings.ContainsAny(w[1:], "/")
		if !dotfile && !slices.Contains(fileExts, ext) {
			return entity{}, false
		}
		for _, r := range w {
			if !(isWordRune(r) || strings.ContainsRune("._-", r)) {
				return entity{}, false
			}
		}
		if !dotfile && !strings.ContainsFunc(last[:strings.LastIndexByte(last, '.')], unicode.IsLetter) {
			return entity{}, false
		}
		return entity{kind: entPath, start: start, end: end, value: "**/" + escapeGlob(w), why: "file name; matched anywhere under the working directory", file: true}, true
	}
	glob, why := pathGlob(w)
	if glob == "" || validGlob(glob) != "" {
		return entity{}, false
	}
	return entity{kind: entPath, start: start, end: end, value: glob, why: why, file: why == fileWhy}, true
}

// isTypePattern reports whether w is a pattern of file names: "*.log",
// "report-*.csv", "IMG_????.jpg" — a wildcard, a letter, and only the
// characters of a file name.
func isTypePattern(w string) bool {
	return len(w) <= 128 && strings.ContainsAny(w, "*?") && strings.ContainsFunc(w, unicode.IsLetter) && strings.ContainsRune(w, '.') &&
		!strings.ContainsFunc(w, func(r rune) bool { return !isWordRune(r) && !strings.ContainsRune("._-*?", r) }) &&
		validGlob("**/"+w) == ""
}

// pathGlob turns a path as written into a scope glob: cleaned, relative
// ones kept relative, directories (a trailing slash, or no extension) as
// "dir/**", which matches the directory itself too.
func pathGlob(w string) (string, string) {
	intended := strings.ContainsAny(w, "*?") && validGlob(w) == ""
	dir := strings.HasSuffix(w, "/")
	p := path.Clean(w)
	if !intended {
		p = escapeGlob(p)
	}
	if intended {
		return p, "file path pattern"
	}
	base := path.Base(p)
	hasExt := strings.Contains(strings.TrimPrefix(base, "."), ".")
	switch {
	case p == "/":
		return "/**", "directory: everything under it"
	case dir || !hasExt:
		return p + "/**", "directory: everything under it"
	}
	return p, fileWhy
}

// fileWhy is what a path naming one file is recognised as.
const fileWhy = "file path"

func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// quotePairs maps opening quotation marks to their closing ones.
var quotePairs = map[rune]string{'"': `"`, '“': `”`, '„': `“”`, '«': `»`, '‹': `›`, '\'': `'`, '‚': `‘’`}

// findQuotes finds quoted names: text between quotation marks, at most 80
// characters on one line, starting after a space or the start of the text.
func findQuotes(text string) []entity {
	var out []entity
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		closers, ok := quotePairs[r]
		if !ok {
			i += size
			continue
		}
		if i > 0 {
			if p, _ := utf8.DecodeLastRuneInString(text[:i]); !unicode.IsSpace(p) && p != '(' && p != ':' {
				i += size
				continue
			}
		}
		j, n := i+size, 0
		found := -1
		for j < len(text) && n <= 80 {
			c, cs := utf8.DecodeRuneInString(text[j:])
			if c == '\n' {
				break
			}
			if strings.ContainsRune(closers, c) {
				after := j + cs
				if r == '"' || r == '\'' {
					if after < len(text) {
						if a, _ := utf8.DecodeRuneInString(text[after:]); isWordRune(a) {
							j += cs
							n++
							continue
						}
					}
				}
				found = j
				break
			}
			j += cs
			n++
		}
		if found < 0 {
			i += size
			continue
		}
		_, cs := utf8.DecodeRuneInString(text[found:])
		inner := strings.TrimSpace(text[i+size : found])
		if inner != "" && strings.ContainsFunc(inner, unicode.IsLetter) && !hasControl(inner) {
			out = append(out, entity{kind: entQuote, start: i, end: found + cs, value: collapseSpace(inner), why: "quoted name"})
		}
		i = found + cs
	}
	return out
}
