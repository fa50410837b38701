// Secret-shaped tokens: a key copied out of a credentials file is matched
// by its hash, not by the context the secret detectors need.

package flow

import "strings"

// maxSecretCandidates bounds the tokens of one call hashed to be matched
// against secrets the session read.
const maxSecretCandidates = 64

// secretCandidates hashes the call's secret-shaped tokens: a key copied
// out of a credentials file carries none of the context ("aws_secret_access_key
// = …") the detectors need, but its hash meets the one kept when it was
// read. Candidates are only looked up, never added to the table.
func (st *scanState) secretCandidates(s string) {
	if st.s.x.hasher == nil {
		return
	}
	eachSecretToken(s, func(tok string) bool {
		st.out.secretKeys = append(st.out.secretKeys, key(kSecret+st.s.x.hasher.Hash(tok)))
		st.out.secretToks = append(st.out.secretToks, tok)
		return len(st.out.secretKeys) < maxSecretCandidates
	})
}

// tokenCandidates hashes an output's secret-shaped tokens, kept only as
// hashes (Table.Observe adds them when the read was sensitive).
func (st *scanState) tokenCandidates(s string) {
	if st.s.x.hasher == nil || len(st.out.tokenKeys) >= maxSecretCandidates {
		return
	}
	eachSecretToken(s, func(tok string) bool {
		st.out.tokenKeys = append(st.out.tokenKeys, key(kSecret+st.s.x.hasher.Hash(tok)))
		return len(st.out.tokenKeys) < maxSecretCandidates
	})
}

// eachSecretToken calls f with each secret-shaped token of s (16 bytes or
// more of key characters, letters and digits both) until f returns false.
// A token written as an assignment or a query parameter ("t=dpl_live_…"),
// or as a URL's last path segment, is also given without
// what precedes it: the value read from a token file arrives in a URL as
// "?t=<token>" or "/confirm/<token>". (A host before the segment tells a
// URL from base64, whose '/' is a key character.)
func eachSecretToken(s string, f func(string) bool) {
	isSecretChar := func(c byte) bool {
		return isAlnum(c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-' || c == '.'
	}
	ok := func(tok string) bool { return len(tok) >= 16 && len(tok) <= maxValueLen && mixedChars(tok) }
	for i := 0; i < len(s); {
		for i < len(s) && !isSecretChar(s[i]) {
			i++
		}
		j := i
		for j < len(s) && isSecretChar(s[j]) {
			j++
		}
		tok := s[i:j]
		if ok(tok) && !f(tok) {
			return
		}
		// The value after a name= (not base64 padding, which ends a
		// token), and a URL's last path segment.
		if k := strings.IndexByte(strings.TrimRight(tok, "="), '='); k >= 0 {
			if v := tok[k+1:]; ok(v) && !f(v) {
				return
			}
		}
		if k := strings.LastIndexByte(tok, '/'); k >= 0 && strings.Contains(tok[:k], ".") {
			if v := tok[k+1:]; ok(v) && !f(v) {
				return
			}
		}
		i = j
	}
}

// mixedChars: letters and digits both, as keys and tokens have.
func mixedChars(s string) bool {
	letter, digit := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			digit = true
		case c >= 'a' && c <= 'z' || isUpper(c):
			letter = true
		}
	}
	return letter && digit
}
