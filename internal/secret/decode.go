package secret

import (
	"encoding/base64"
	"slices"
	"strings"
	"unicode/utf8"
)

// A secret hidden by an encoding is still a secret: Find also looks into
// the percent-decoded text (a key in a URL's query, %2F for /) and into
// base64 runs (a token in a data: URL, a config blob), and reports the
// encoded span with the type of what it found inside. It decodes one
// level only, and each run at most once, so the cost stays linear.

// Bounds on what is decoded.
const (
	// MinBase64 is the shortest base64 run decoded: the shortest secret
	// shape the detectors know, encoded.
	MinBase64 = 24
	// MaxBase64 is the longest base64 run decoded; a longer one is
	// decoded up to it.
	MaxBase64 = 64 << 10
)

// decoded adds to ms the secrets found inside encodings in s.
func (sc *Scanner) decoded(s string, ms []Match) []Match {
	var extra []Match
	if strings.IndexByte(s, '%') >= 0 {
		extra = append(extra, sc.percent(s)...)
	}
	extra = append(extra, sc.base64Runs(s)...)
	if len(extra) == 0 {
		return ms
	}
	for _, e := range extra {
		if !slices.ContainsFunc(ms, func(m Match) bool { return e.Start < m.End && m.Start < e.End }) {
			ms = append(ms, e)
		}
	}
	slices.SortFunc(ms, func(a, b Match) int { return a.Start - b.Start })
	// Extras may overlap one another: the earlier wins.
	out := ms[:1]
	for _, m := range ms[1:] {
		if m.Start >= out[len(out)-1].End {
			out = append(out, m)
		}
	}
	return out
}

// percent finds secrets in the percent-decoded s, as spans of s.
func (sc *Scanner) percent(s string) []Match {
	var b []byte
	var off []int // off[i]: where decoded byte i starts in s
	escapes := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			off = append(off, i)
			i += 2
			escapes++
			continue
		}
		b = append(b, s[i])
		off = append(off, i)
	}
	if escapes == 0 {
		return nil
	}
	off = append(off, len(s))
	var out []Match
	for _, m := range sc.find(string(b)) {
		end := off[m.End]
		out = append(out, Match{Type: m.Type, Start: off[m.Start], End: end})
	}
	return out
}

// base64Runs finds base64 runs of s whose decoded text holds a secret.
func (sc *Scanner) base64Runs(s string) []Match {
	var out []Match
	for i := 0; i < len(s); {
		if !isB64(s[i]) || i > 0 && isB64(s[i-1]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isB64(s[j]) {
			j++
		}
		// Padding ends a run ("=" elsewhere separates: cfg=R0lU…).
		for k := 0; k < 2 && j < len(s) && s[j] == '='; k++ {
			j++
		}
		if j-i >= MinBase64 {
			run := s[i:min(j, i+MaxBase64)]
			if dec, ok := decodeB64(run); ok {
				if ms := sc.find(dec); len(ms) > 0 {
					out = append(out, Match{Type: ms[0].Type, Start: i, End: j})
				}
			}
		}
		i = j
	}
	return out
}

// decodeB64 decodes standard or URL-safe base64, padded or not, and
// reports whether the result is text.
func decodeB64(run string) (string, bool) {
	run = strings.TrimRight(run, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(run, "-_") {
		enc = base64.RawURLEncoding
	}
	// A run cut at MaxBase64 or of a stray length decodes up to its last
	// whole group.
	run = run[:len(run)-len(run)%4*boolInt(len(run)%4 == 1)]
	b, err := enc.DecodeString(run)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			return "", false
		}
	}
	return string(b), true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isB64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
