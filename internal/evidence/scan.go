package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// A bundle of 10,000 records is some 16 MB of JSON; decoding it with
// encoding/json takes several passes per record (validation, then decoding,
// at every level). Verification instead walks the text once with the small
// scanner below, takes the few fields it needs, and canonicalises each
// record (which validates it) before hashing.

// jsonScanner walks JSON text, reporting the byte offset of any error.
type jsonScanner struct {
	data []byte
}

func (s *jsonScanner) errorf(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func (s *jsonScanner) space(i int) int {
	for i < len(s.data) {
		switch s.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skip returns the end of the value starting at i (after leading space).
func (s *jsonScanner) skip(i int, depth int) (int, error) {
	i = s.space(i)
	if i >= len(s.data) {
		return 0, s.errorf(i, "unexpected end of input")
	}
	if depth > maxDepth {
		return 0, s.errorf(i, "nested deeper than %d", maxDepth)
	}
	switch c := s.data[i]; {
	case c == '"':
		return s.str(i)
	case c == '{':
		return s.object(i, depth, func(_ []byte, _, _ int) error { return nil })
	case c == '[':
		return s.array(i, depth, func(_, _ int) error { return nil })
	case c == '-' || c >= '0' && c <= '9':
		j := i + 1
		for j < len(s.data) && bytes.IndexByte([]byte("0123456789.eE+-"), s.data[j]) >= 0 {
			j++
		}
		return j, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(s.data[i:], []byte(lit)) {
				return i + len(lit), nil
			}
		}
		return 0, s.errorf(i, "invalid character %q looking for a value", c)
	}
}

// str returns the end of the string starting at i. It does not check the
// string's contents: the values verification uses are decoded (and records
// canonicalised) after.
func (s *jsonScanner) str(i int) (int, error) {
	for j := i + 1; ; {
		k := bytes.IndexByte(s.data[j:], '"')
		if k < 0 {
			return 0, s.errorf(len(s.data), "unterminated string")
		}
		j += k
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		n := 0
		for b := j - 1; b > i && s.data[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			// A raw newline cannot be in a string: report it where it
			// is, so a damaged line is named, not a later one.
			if nl := bytes.IndexByte(s.data[i+1:j], '\n'); nl >= 0 {
				return 0, s.errorf(i+1+nl, "newline in a string")
			}
			return j + 1, nil
		}
		j++
	}
}

// object calls fn with each member's raw name and value span, and returns
// the end of the object starting at i.
func (s *jsonScanner) object(i, depth int, fn func(name []byte, start, end int) error) (int, error) {
	i, empty, err := s.open(i, '{', '}', "an object")
	if err != nil || empty {
		return i, err
	}
	for {
		i = s.space(i)
		if i >= len(s.data) || s.data[i] != '"' {
			return 0, s.errorf(i, "expected a member name")
		}
		end, err := s.str(i)
		if err != nil {
			return 0, err
		}
		name := s.data[i+1 : end-1]
		i = s.space(end)
		if i >= len(s.data) || s.data[i] != ':' {
			return 0, s.errorf(i, "expected ':' after a member name")
		}
		start := s.space(i + 1)
		if i, err = s.skip(start, depth+1); err != nil {
			return 0, err
		}
		if err := fn(name, start, i); err != nil {
			return 0, err
		}
		var done bool
		if i, done, err = s.after(i, '}', "an object", "an object member"); err != nil || done {
			return i, err
		}
	}
}

// array calls fn with each element's span and returns the end of the array
// starting at i.
func (s *jsonScanner) array(i, depth int, fn func(start, end int) error) (int, error) {
	i, empty, err := s.open(i, '[', ']', "an array")
	if err != nil || empty {
		return i, err
	}
	for {
		start := s.space(i)
		end, err := s.skip(start, depth+1)
		if err != nil {
			return 0, err
		}
		if err := fn(start, end); err != nil {
			return 0, err
		}
		var done bool
		if i, done, err = s.after(end, ']', "an array", "an array element"); err != nil || done {
			return i, err
		}
	}
}

// open reads the opening byte of an object or an array (what) at i and
// what follows it: the closing byte at once (empty, with the end past it)
// or the offset of the first member.
func (s *jsonScanner) open(i int, opening, closing byte, what string) (next int, empty bool, err error) {
	i = s.space(i)
	if i >= len(s.data) || s.data[i] != opening {
		return 0, false, s.errorf(i, "expected %s", what)
	}
	i = s.space(i + 1)
	if i < len(s.data) && s.data[i] == closing {
		return i + 1, true, nil
	}
	return i, false, nil
}

// after reads what follows a member of an object or an array (in) at i:
// the closing byte (done, with the end past it) or a comma (with the
// offset past it).
func (s *jsonScanner) after(i int, closing byte, in, member string) (next int, done bool, err error) {
	i = s.space(i)
	if i >= len(s.data) {
		return 0, false, s.errorf(i, "unexpected end of input in %s", in)
	}
	switch s.data[i] {
	case closing:
		return i + 1, true, nil
	case ',':
		return i + 1, false, nil
	}
	return 0, false, s.errorf(i, "expected ',' or '%c' after %s", closing, member)
}

// text decodes a JSON string value.
func text(v []byte) (string, error) {
	if len(v) < 2 || v[0] != '"' {
		return "", fmt.Errorf("expected a string, got %.20s", v)
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), nil
	}
	var out string
	err := json.Unmarshal(v, &out)
	return out, err
}

// integer decodes a JSON number that must be a non-negative integer.
func integer(v []byte) (uint64, error) {
	return strconv.ParseUint(string(v), 10, 64)
}
