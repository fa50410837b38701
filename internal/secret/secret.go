// Package secret recognises values that look like credentials: provider API
// keys and tokens, private key blocks, JWTs, passwords embedded in URLs and
// connection strings, and key names under which secrets are usually kept.
//
// The classifier uses it to mark actions sensitive; the evidence log uses it to
// redact values before they are stored. Detection is deliberately cheap: each
// pattern has a literal anchor that is searched for first, and the pattern's
// regular expression only runs where its anchor occurs.
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
	valid func(string) bool
}

// maxSpan bounds how far past an anchor a single match may extend; it keeps
// each regexp run short on large inputs. Private key blocks are the longest.
const maxSpan = 16 << 10

// detectors is an immutable table, built once at package initialisation.
var detectors = []detector{
	{typ: "private_key", anchors: []string{"-----BEGIN "},
		re: regexp.MustCompile(`^-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP |SSH2 )?PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)?`)},
	{typ: "aws_access_key", anchors: []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"},
		re: regexp.MustCompile(`^(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z2-7]{16}\b`)},
	{typ: "aws_secret_key", anchors: []string{"aws_secret_access_key", "aws_secret_key", "secretaccesskey"}, fold: true,
		re: regexp.MustCompile(`(?i)^(?:aws_secret_access_key|aws_secret_key|secretaccesskey)["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})\b`), group: 1},
	{typ: "github_token", anchors: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
		re: regexp.MustCompile(`^gh[pousr]_[A-Za-z0-9]{36,255}\b`)},
	{typ: "github_token", anchors: []string{"github_pat_"},
		re: regexp.MustCompile(`^github_pat_[A-Za-z0-9_]{22,255}\b`)},
	{typ: "gitlab_token", anchors: []string{"glpat-"},
		re: regexp.MustCompile(`^glpat-[A-Za-z0-9_\-]{20,}`)},
	{typ: "slack_token", anchors: []string{"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xoxe-"},
		re: regexp.MustCompile(`^xox[abprse]-[A-Za-z0-9\-]{10,}`)},
	{typ: "slack_webhook", anchors: []string{"hooks.slack.com/services/"},
		re: regexp.MustCompile(`^hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+`)},
	{typ: "stripe_key", anchors: []string{"sk_live_", "rk_live_", "sk_test_", "rk_test_"},
		re: regexp.MustCompile(`^[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`)},
	{typ: "anthropic_key", anchors: []string{"sk-ant-"},
		re: regexp.MustCompile(`^sk-ant-[A-Za-z0-9_\-]{20,}`)},
	{typ: "openai_key", anchors: []string{"sk-"},
		re: regexp.MustCompile(`^sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`),
		valid: func(s string) bool {
			// sk-ant- is Anthropic's; a key must mix letters and digits
			// so that prose like "sk-learn-is-a-python-library" is no key.
			return !strings.HasPrefix(s, "sk-ant-") && hasDigit(s) && hasLetter(s[3:])
		}},
	{typ: "google_api_key", anchors: []string{"AIza"},
		re: regexp.MustCompile(`^AIza[0-9A-Za-z_\-]{35}`)},
	{typ: "npm_token", anchors: []string{"npm_"},
		re: regexp.MustCompile(`^npm_[A-Za-z0-9]{36}\b`)},
	{typ: "huggingface_token", anchors: []string{"hf_"},
		re: regexp.MustCompile(`^hf_[A-Za-z]{34}\b`)},
	{typ: "sendgrid_key", anchors: []string{"SG."},
		re: regexp.MustCompile(`^SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}`)},
	{typ: "jwt", anchors: []string{"eyJ"},
		re: regexp.MustCompile(`^eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10,}`)},
	// scheme://user:password@host — the password is the secret.
	{typ: "password_in_url", anchors: []string{"://"}, back: 32,
		re: regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/?#@'"]+:([^\s/?#@'"]+)@[^\s/?#@'"]+`), group: 1,
		valid: notPlaceholder},
	// Connection strings: "Server=x;User Id=u;Password=secret;" and
	// "postgres://...?password=secret".
	{typ: "connection_string_password", anchors: []string{"password=", "pwd="}, fold: true,
		re: regexp.MustCompile(`(?i)^(?:password|pwd)=([^;&\s'"]{3,})`), group: 1, valid: notPlaceholder},
	{typ: "bearer_token", anchors: []string{"bearer "}, fold: true,
		re: regexp.MustCompile(`(?i)^bearer\s+([A-Za-z0-9_\-.~+/]{16,}=*)`), group: 1, valid: notPlaceholder},
	{typ: "basic_auth", anchors: []string{"authorization"}, fold: true,
		re: regexp.MustCompile(`(?i)^authorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/]{8,}=*)`), group: 1},
	// KEY=value and "key": "value" assignments whose key names a secret,
	// as in .env files, shell exports and config snippets.
	// The anchor is the assignment operator; the key before it decides.
	{typ: "secret_assignment", anchors: []string{"=", ":"}, back: 64,
		re: regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.\-]{1,60})["']?\s*[:=]\s*["']?([^\s"',;}{\]\[]{6,})`), group: 2},
}

// anchorRef is one anchor of one detector. Case-insensitive anchors are
// listed in their lower, Title and UPPER spellings, which is how they occur
// in practice.
type anchorRef struct {
	anchor string
	det    int
}

// anchorsByByte indexes the anchors by their first byte, so that Find
// reads its input once. Built once from detectors and never changed.
var anchorsByByte = func() [256][]anchorRef {
	var t [256][]anchorRef
	for di, d := range detectors {
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
	return t
}()

// Find returns every secret-looking span in s, ordered by position and not
// overlapping (where two detectors claim overlapping text the earlier, then
// longer, then more specific span wins).
func Find(s string) []Match {
	if len(s) < 8 {
		return nil
	}
	var out []found
	// next[d] is where detector d may match again: a match is not
	// searched for inside an earlier match of the same detector.
	var next [32]int
	for i := 0; i < len(s); i++ {
		for _, r := range anchorsByByte[s[i]] {
			if i < next[r.det] || !strings.HasPrefix(s[i:], r.anchor) {
				continue
			}
			if m, ok := detectors[r.det].matchAt(s, i); ok {
				out = append(out, found{m, r.det})
				next[r.det] = max(m.End, i+len(r.anchor))
			}
		}
	}
	return normalise(out)
}

// matchAt tries d at anchor position i of s.
func (d *detector) matchAt(s string, i int) (Match, bool) {
	if d.typ == "secret_assignment" {
		return d.matchAssignment(s, i)
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
	if d.valid != nil && !d.valid(s[st+ms:st+me]) {
		return Match{}, false
	}
	return Match{Type: d.typ, Start: st + ms, End: st + me}, true
}

// matchAssignment handles KEY=value and "key": "value" with the operator at
// i: the key before it must name a secret.
func (d detector) matchAssignment(s string, i int) (Match, bool) {
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
	if j == keyEnd || !mayBeSensitiveKey(s[j:keyEnd]) {
		return Match{}, false
	}
	loc := d.re.FindStringSubmatchIndex(s[j:min(len(s), i+maxSpan)])
	if loc == nil {
		return Match{}, false
	}
	key := s[j+loc[2] : j+loc[3]]
	val := s[j+loc[4] : j+loc[5]]
	if !SensitiveKey(key) || !notPlaceholder(val) || looksLikeReference(val) || isAuthScheme(val) {
		return Match{}, false
	}
	return Match{Type: d.typ, Start: j + loc[4], End: j + loc[5]}, true
}

// mayBeSensitiveKey is a cheap, allocation-free pre-check for SensitiveKey:
// the key contains one of the words secrets are kept under.
func mayBeSensitiveKey(k string) bool {
	for _, w := range []string{"pass", "pwd", "secret", "token", "key", "auth", "credential", "cookie", "cvv", "cvc", "otp", "mfa", "psk", "session"} {
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

// sensitiveWords are fragments of key names under which secrets live. They
// are matched against the key lower-cased with separators removed.
var sensitiveWords = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey",
	"accesskey", "privatekey", "authorization", "credential", "cookie",
	"sessionid", "sessionkey", "signingkey", "encryptionkey", "masterkey",
	"clientsecret", "webhooksecret", "cvv", "cvc", "pincode", "sshkey",
}

// exactSensitive are whole key names that are sensitive on their own but too
// short or common to match as fragments.
var exactSensitive = []string{"pwd", "pass", "auth", "psk", "otp", "totp", "mfa"}

// keyQualifiers are the words that make "<word>_key" a credential (api_key,
// ssh_key, stripe_secret_key) rather than a lookup key (cache_key, s3_key).
var keyQualifiers = []string{
	"api", "access", "secret", "private", "ssh", "signing", "encryption", "decryption",
	"master", "auth", "client", "app", "service", "deploy", "gpg", "pgp", "session",
	"admin", "root", "bot", "license", "subscription", "openai", "anthropic", "stripe",
	"aws", "google", "gcp", "azure", "github", "gitlab", "slack", "twilio", "sendgrid",
	"mailgun", "webhook", "hmac", "jwt", "shared", "live", "prod", "write", "dev",
}

// benignSuffixes make a key name describe a secret rather than hold one:
// secret_name, token_type, password_policy, api_key_id …
var benignSuffixes = []string{
	"name", "id", "ids", "type", "url", "uri", "path", "file", "length", "count",
	"policy", "hint", "field", "prompt", "expires", "expiry", "expiration",
	"ttl", "usage", "limit", "format", "endpoint", "required", "reset",
	"enabled", "label", "description", "version", "created", "updated",
	"method", "mode", "scheme", "provider", "status", "state", "tokens",
}

// benignWhole are key names that contain a sensitive word but never hold a
// credential (LLM token counts, pagination cursors).
var benignWhole = []string{
	"maxtokens", "tokens", "tokencount", "maxoutputtokens", "maxcompletiontokens",
	"pagetoken", "nextpagetoken", "nexttoken", "continuationtoken", "synctoken",
	"cursortoken", "idempotencykey", "primarykey", "foreignkey", "sortkey",
	"partitionkey", "hotkey", "keyboard", "keyword", "keywords", "monkey",
	"turkey", "donkey", "hockey", "jockey", "whiskey", "keynote", "keys",
	"passenger", "passengers", "passage", "passport", "compass", "bypass",
	"passthrough", "pkey", "publickey", "pubkey",
}

// SensitiveKey reports whether an argument, field or variable named name
// usually holds a secret: "password", "api_key", "Authorization",
// "client_secret", "GITHUB_TOKEN", "x-api-key" … but not "max_tokens",
// "secret_name" or "page_token".
func SensitiveKey(name string) bool {
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
	if compact == "" || slices.Contains(benignWhole, compact) {
		return false
	}
	if len(words) > 1 && slices.Contains(benignSuffixes, words[len(words)-1]) {
		return false
	}
	if slices.Contains(exactSensitive, compact) {
		return true
	}
	for _, w := range words {
		if slices.Contains(exactSensitive, w) {
			return true
		}
	}
	for _, w := range sensitiveWords {
		if strings.Contains(compact, w) {
			return true
		}
	}
	if len(words) > 1 && words[len(words)-1] == "key" {
		return slices.Contains(keyQualifiers, words[len(words)-2])
	}
	return false
}

// IsPlaceholder reports whether v stands for a secret without being one:
// "****", "<password>", "${DB_PASSWORD}", "changeme", "xxxxxx", or a value
// too short to be a credential.
func IsPlaceholder(v string) bool { return !notPlaceholder(v) }

func notPlaceholder(v string) bool {
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
	switch strings.ToLower(v) {
	case "password", "changeme", "redacted", "[redacted]", "secret", "your_password", "yourpassword",
		"none", "null", "undefined", "example", "placeholder", "true", "false",
		"string", "required", "optional", "boolean", "integer", "number":
		return false
	}
	return true
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
