package action

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NormalizeToolName splits a tool name into the server that namespaces it (if
// any) and the tool's own name in snake_case, lower case.
//
//	"mcp__gmail__send_email" -> ("gmail", "send_email")   Claude Code's MCP naming
//	"gmail.send_email"       -> ("gmail", "send_email")   the gateway's server.tool
//	"gmail__send_email"      -> ("gmail", "send_email")
//	"sendEmail", "SendEmail", "send-email", "Send Email" -> ("", "send_email")
//	"HTTPRequest"            -> ("", "http_request")
//
// Server names are normalised the same way as tool names.
func NormalizeToolName(name string) (server, tool string) {
	name = strings.TrimSpace(name)
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if i := strings.Index(rest, "__"); i >= 0 {
			return snakeCase(rest[:i]), snakeCase(rest[i+2:])
		}
		return "", snakeCase(rest)
	}
	if i := strings.LastIndex(name, "__"); i > 0 && i+2 < len(name) {
		return snakeCase(name[:i]), snakeCase(name[i+2:])
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 && i+1 < len(name) {
		return snakeCase(name[:i]), snakeCase(name[i+1:])
	}
	return "", snakeCase(name)
}

// snakeCase converts any naming style to lower snake_case: camelCase,
// PascalCase, kebab-case, "space separated", dotted, and acronyms
// ("getAPIKey" -> "get_api_key"). Runs of separators collapse.
func snakeCase(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 4)
	prev := rune(0) // previous rune written, 0 after a separator
	rs := []rune(s)
	if len(rs) > 256 {
		rs = rs[:256]
	}
	for i, r := range rs {
		orig := r
		switch {
		case r == '_' || r == '-' || r == ' ' || r == '.' || r == '/' || r == ':' || unicode.IsSpace(r):
			prev = 0
			continue
		case unicode.IsUpper(r):
			// Start a new word at a lower->Upper change, and at the
			// last capital of an acronym followed by lower case
			// ("HTTPRequest" -> "http_request").
			if prev != 0 && (unicode.IsLower(prev) || unicode.IsDigit(prev) ||
				(unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			prev = 0
			continue
		}
		if prev == 0 && b.Len() > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(r)
		prev = orig
	}
	return b.String()
}

// compactName is a snake_case name without underscores, used to match names
// written with no word boundaries at all ("sendemail", "SENDEMAIL").
func compactName(snake string) string {
	return strings.ReplaceAll(snake, "_", "")
}

// tokens splits a snake_case name into its words.
func tokens(snake string) []string {
	if snake == "" {
		return nil
	}
	return strings.Split(snake, "_")
}

// wordsOf splits free text (a description) into lower-case words, at most
// limit of them.
func wordsOf(text string, limit int) []string {
	var out []string
	start := -1
	for i, r := range text {
		letter := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'
		if letter && start < 0 {
			start = i
		}
		if !letter && start >= 0 {
			out = append(out, strings.ToLower(text[start:i]))
			start = -1
			if len(out) >= limit {
				return out
			}
		}
	}
	if start >= 0 && len(out) < limit {
		out = append(out, strings.ToLower(text[start:]))
	}
	return out
}

// firstSentence returns text up to its first sentence end, bounded in length.
func firstSentence(text string) string {
	if len(text) > 400 {
		text = text[:400]
		for !utf8.ValidString(text) {
			text = text[:len(text)-1]
		}
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == '\n' || (c == '.' && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n')) {
			return text[:i]
		}
	}
	return text
}
