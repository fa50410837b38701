package flow

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// hiddenText is text a person reading the output would not see: an HTML
// comment, an element styled away, alt text and link titles, Unicode tag
// characters (invisible ASCII), or words laced with zero-width characters.
// When base >= 0, text is s[base:base+len(text)] of the string it was found
// in; otherwise it was decoded and stands alone.
type hiddenText struct {
	text string
	kind string
	base int
}

// The patterns are compiled on first use, not at package initialisation:
// the {12,1000} repetitions compile to about a megabyte of program, which
// every process importing the package paid for at start — a hook process
// that only relays an event included.
var (
	// hiddenAttrRE decides whether an opening tag's attributes hide the
	// element.
	hiddenAttrRE = lazyRE(`(?i)(display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:px|pt|em|rem|%)?\s*(?:;|$|["'])|opacity\s*:\s*0(?:\.0+)?\s*(?:;|$|["'])|(?:^|[;"'\s])color\s*:\s*(?:#fff\b|#ffffff|white\b|transparent\b|rgba?\(\s*255\s*,\s*255\s*,\s*255)|font-size\s*:\s*[01](?:\.\d+)?(?:px|pt)\s*(?:;|$|["'])|(?:^|[;"'\s])(?:height|width|max-height)\s*:\s*0(?:px)?\s*(?:;|$|["'])|left\s*:\s*-\d{3,}|\bhidden\b|aria-hidden\s*=\s*["']?true)`)
	attrTextRE   = lazyRE(`(?i)\b(alt|title|aria-label|data-[a-z-]+)\s*=\s*"([^"]{12,1000})"`)
	mdTitleRE    = lazyRE(`\]\([^)\s]+\s+"([^"]{12,1000})"\)`)
	// mdCommentRE: a markdown link definition nothing links to, the
	// usual way to write a comment in markdown ("[//]: # (…)",
	// "[comment]: <> (…)"); it renders as nothing.
	mdCommentRE = lazyRE(`(?m)^[ \t]*\[(?://|comment|_|#)\]:[ \t]*(?:#|<>)[ \t]*\((.{8,1000}?)\)[ \t]*$`)
)

// lazyRE compiles expr once, when first called.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// openTag reads the HTML opening tag at s[i] ('<'): its lower-cased name,
// its attributes and where it ends.
func openTag(s string, i int) (tag, attrs string, end int, ok bool) {
	j := i + 1
	for j < len(s) && j-i <= 16 && (isASCIILetter(s[j]) || j > i+1 && isDigit(s[j])) {
		j++
	}
	if j == i+1 || j >= len(s) || (s[j] != ' ' && s[j] != '\t' && s[j] != '\n') {
		return "", "", 0, false
	}
	k := strings.IndexByte(s[j:min(len(s), j+600)], '>')
	if k < 0 {
		return "", "", 0, false
	}
	return strings.ToLower(s[i+1 : j]), s[j : j+k], j + k + 1, true
}

// attrTextMatches finds attribute texts (alt, title …) only where an
// attribute value starts, so the expression runs on a few windows.
func attrTextMatches(s string) [][]int {
	if !strings.Contains(s, "=\"") && !strings.Contains(s, "= \"") {
		return nil
	}
	return attrTextRE().FindAllStringSubmatchIndex(s, maxHidden)
}

// maxHidden bounds the hidden texts taken from one string.
const maxHidden = 32

// findHidden returns the hidden texts of s.
func findHidden(s string, out []hiddenText) []hiddenText {
	out = out[:0]
	if strings.Contains(s, "<!--") {
		for i := 0; len(out) < maxHidden; {
			a := strings.Index(s[i:], "<!--")
			if a < 0 {
				break
			}
			a += i + 4
			b := strings.Index(s[a:], "-->")
			end := len(s)
			if b >= 0 {
				end = a + b
			}
			if end-a > 64<<10 {
				end = a + 64<<10
			}
			out = append(out, hiddenText{text: s[a:end], kind: "html-comment", base: a})
			i = end
		}
	}
	if strings.IndexByte(s, '<') >= 0 {
		for i, tries := 0, 0; i < len(s) && len(out) < maxHidden && tries < 4*maxHidden; i++ {
			if s[i] != '<' {
				continue
			}
			tag, attrs, end, ok := openTag(s, i)
			if !ok {
				continue
			}
			tries++
			low := strings.ToLower(attrs)
			if !strings.Contains(low, "style") && !strings.Contains(low, "hidden") {
				continue
			}
			hm := hiddenAttrRE().FindString(attrs)
			if hm == "" {
				continue
			}
			start := end
			stop := strings.Index(strings.ToLower(s[start:min(len(s), start+16<<10)]), "</"+tag)
			if stop < 0 {
				stop = min(len(s)-start, 4096)
			}
			kind := "display-none"
			switch lowm := strings.ToLower(hm); {
			case strings.Contains(lowm, "color"):
				kind = "white-text"
			case strings.Contains(lowm, "font-size") || strings.Contains(lowm, "opacity") || strings.Contains(lowm, "height") || strings.Contains(lowm, "width") || strings.Contains(lowm, "left"):
				kind = "invisible-text"
			}
			if stop > 0 {
				out = append(out, hiddenText{text: s[start : start+stop], kind: kind, base: start})
			}
			i = end - 1
		}
		for _, m := range attrTextMatches(s) {
			if len(out) >= maxHidden {
				break
			}
			kind := "alt-text"
			if a := strings.ToLower(s[m[2]:m[3]]); a != "alt" {
				kind = a + "-attribute"
			}
			out = append(out, hiddenText{text: s[m[4]:m[5]], kind: kind, base: m[4]})
		}
	}
	if strings.Contains(s, "](") {
		for _, m := range mdTitleRE().FindAllStringSubmatchIndex(s, maxHidden) {
			if len(out) >= maxHidden {
				break
			}
			out = append(out, hiddenText{text: s[m[2]:m[3]], kind: "link-title", base: m[2]})
		}
	}
	if strings.Contains(s, "]:") {
		for _, m := range mdCommentRE().FindAllStringSubmatchIndex(s, maxHidden) {
			if len(out) >= maxHidden {
				break
			}
			out = append(out, hiddenText{text: s[m[2]:m[3]], kind: "md-comment", base: m[2]})
		}
	}
	if t, ok := tagChars(s); ok && len(out) < maxHidden {
		out = append(out, hiddenText{text: t, kind: "tag-chars", base: -1})
	}
	if t, ok := zeroWidth(s); ok && len(out) < maxHidden {
		out = append(out, hiddenText{text: t, kind: "zero-width", base: -1})
	}
	return out
}

// tagChars decodes Unicode tag characters (U+E0020–U+E007E), which render
// as nothing and spell ASCII: text smuggled past a reader.
func tagChars(s string) (string, bool) {
	if !strings.Contains(s, "\U000E0000"[:2]) { // every tag character starts with F3 A0
		return "", false
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 0xE0020 && r <= 0xE007E {
			b.WriteByte(byte(r - 0xE0000))
		} else if r >= 0xE0000 && r <= 0xE007F {
			continue
		} else if b.Len() > 0 && b.Len() < 16<<10 {
			// keep words apart across interruptions
			if last := b.String(); last[len(last)-1] != ' ' {
				b.WriteByte(' ')
			}
		}
	}
	t := strings.TrimSpace(b.String())
	return t, len(t) >= 8
}

// zeroWidth returns s without its zero-width characters when they sit
// inside words ("ig\u200bnore") — a way to slip phrases past filters.
func zeroWidth(s string) (string, bool) {
	found := false
	for _, z := range []string{"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"} {
		if strings.Contains(s, z) {
			found = true
			break
		}
	}
	if !found {
		return "", false
	}
	var b strings.Builder
	inside := 0
	prev := ' '
	for i, r := range s {
		switch r {
		case 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0xad:
			if next, _ := utf8.DecodeRuneInString(s[min(len(s), i+utf8.RuneLen(r)):]); isLetterRune(prev) && isLetterRune(next) {
				inside++
			}
			continue
		}
		b.WriteRune(r)
		prev = r
		if b.Len() > 256<<10 {
			break
		}
	}
	return b.String(), inside > 0
}

func isLetterRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f && r != utf8.RuneError
}
