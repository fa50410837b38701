package flow

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/fold"
)

// tok is one token of a sentence: a folded word, or one of the punctuation
// marks patterns may name (":" and ",").
type tok struct {
	text       string
	start, end int // byte offsets in the text the sentence was cut from
}

// maxTokens bounds the tokens of one sentence; a "sentence" longer than
// that is a blob, not prose.
const maxTokens = 400

// tokenize splits s[from:to] into folded words and the marks ':' and ','.
// Apostrophes split words ("l'utilisateur" → "l", "utilisateur"), as do
// hyphens and underscores ("KI-Assistent" → "ki", "assistent").
func tokenize(s string, from, to int, out []tok) []tok {
	out = out[:0]
	i := from
	for i < to && len(out) < maxTokens {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i
			for j < to {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !(unicode.IsLetter(r2) || unicode.IsDigit(r2) || unicode.Is(unicode.Mn, r2)) {
					break
				}
				j += n2
			}
			out = append(out, tok{text: fold.String(s[i:j]), start: i, end: j})
			i = j
			continue
		case r == '@' && i+1 < to && (i == from || !isWordByte(s[i-1])) && isASCIILetter(s[i+1]):
			// An @mention of a handle ("@copilot please …") is one
			// token, so a table can name the bots people summon that way.
			j := i + 1
			for j < to && (isWordByte(s[j]) || s[j] == '-') {
				j++
			}
			out = append(out, tok{text: "@" + fold.String(s[i+1:j]), start: i, end: j})
			i = j
			continue
		case r == ':' || r == ',' || r == '：' || r == '，':
			out = append(out, tok{text: string(rune(r)), start: i, end: i + n})
			if r == '：' {
				out[len(out)-1].text = ":"
			} else if r == '，' {
				out[len(out)-1].text = ","
			}
		}
		i += n
	}
	return out
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// sentence is a byte range of a text.
type sentence struct{ start, end int }

// maxSentence bounds a sentence's bytes; longer runs are cut.
const maxSentence = 1200

// sentences cuts s into sentences: at . ! ? followed by a space or the end,
// at line breaks, and at most every maxSentence bytes (on a rune boundary).
func sentences(s string, out []sentence) []sentence {
	out = out[:0]
	start := 0
	emit := func(end int) {
		if end > start && strings.TrimSpace(s[start:end]) != "" {
			out = append(out, sentence{start, end})
		}
		start = end
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n' || c == '\r':
			emit(i)
			start = i + 1
		case c == '.' && initial(s, i):
			// "P.S. to the bot …", "J. Smith": a single letter's
			// full stop ends an abbreviation, not a sentence.
		case (c == '.' || c == '!' || c == '?') && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n' || s[i+1] == '\t' || s[i+1] == '"' || s[i+1] == '<'):
			emit(i + 1)
		case i-start >= maxSentence && utf8.RuneStart(c):
			emit(i)
		}
		i++
	}
	emit(len(s))
	return out
}

// initial reports whether the '.' at s[i] follows a single letter that
// stands alone ("P.S.", "p. ej.", "J. Smith").
func initial(s string, i int) bool {
	if i == 0 || !isASCIILetter(s[i-1]) {
		return false
	}
	return i == 1 || !isWordByte(s[i-2])
}

// clip returns at most n bytes of s, cut on a rune boundary, marked with
// "…" when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// squash collapses runs of white space into one space and trims.
func squash(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
