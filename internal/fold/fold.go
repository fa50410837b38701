// Package fold folds text for matching written words: it lower-cases,
// strips diacritics, spells ß, æ and œ out and makes every apostrophe a
// plain one, so that "Lösche", "losche" and "LÖSCHE" meet, and so do
// "n’achète" and "n'achete".
//
// The mandate lexicons and the flow tables (injection phrasing, cues) are
// written folded and matched against folded text; both fold with this one
// function, so a phrase reads the same way in either table.
package fold

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// String folds s. Plain lower-case ASCII is returned as it is, without
// allocating.
func String(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c >= 'A' && c <= 'Z' || c == '`' {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		WriteRune(&b, r)
	}
	return b.String()
}

// WriteRune writes r folded to b: nothing for a combining mark (of
// decomposed text), two letters for ß, æ and œ, one otherwise.
func WriteRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		} else if r == '`' {
			r = '\''
		}
		b.WriteByte(byte(r))
		return
	}
	if unicode.Is(unicode.Mn, r) {
		return
	}
	r = unicode.ToLower(r)
	switch r {
	case 'à', 'á', 'â', 'ã', 'ä', 'å', 'ā', 'ă', 'ą':
		r = 'a'
	case 'ç', 'ć', 'č':
		r = 'c'
	case 'ď', 'đ':
		r = 'd'
	case 'è', 'é', 'ê', 'ë', 'ē', 'ė', 'ę', 'ě':
		r = 'e'
	case 'ì', 'í', 'î', 'ï', 'ī', 'į', 'ı':
		r = 'i'
	case 'ł', 'ľ', 'ĺ':
		r = 'l'
	case 'ñ', 'ń', 'ň':
		r = 'n'
	case 'ò', 'ó', 'ô', 'õ', 'ö', 'ø', 'ō', 'ő':
		r = 'o'
	case 'ř', 'ŕ':
		r = 'r'
	case 'ś', 'š', 'ş', 'ș':
		r = 's'
	case 'ť', 'ţ', 'ț':
		r = 't'
	case 'ù', 'ú', 'û', 'ü', 'ū', 'ů', 'ű', 'ų':
		r = 'u'
	case 'ý', 'ÿ':
		r = 'y'
	case 'ź', 'ż', 'ž':
		r = 'z'
	case 'ß':
		b.WriteString("ss")
		return
	case 'æ':
		b.WriteString("ae")
		return
	case 'œ':
		b.WriteString("oe")
		return
	case '’', '‘', 'ʼ', '′', '´':
		r = '\''
	}
	b.WriteRune(r)
}
