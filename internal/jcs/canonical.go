// Package jcs is the canonical form of JSON that evidence records are
// written and verified in (RFC 8785, with the integer deviation Canonical
// states), shared by the evidence log and the store's row checks so that
// both hold bytes to the same form.
package jcs

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds nesting, as encoding/json does.
const MaxDepth = 10000

// Canonical returns the canonical form of the JSON value in data: RFC 8785
// (JSON Canonicalization Scheme) — object members sorted by the UTF-16 code
// units of their names, no insignificant whitespace, strings escaped only
// where JSON requires, floating-point numbers in ECMAScript form — with one
// deviation: a number written as a plain integer keeps all its digits, so
// identifiers beyond 2^53 are not rounded. Duplicate member names are
// errors. Canonical(Canonical(x)) == Canonical(x).
func Canonical(data []byte) ([]byte, error) {
	var c Canonicalizer
	return c.Append(nil, data, true)
}

// Canonicalizer holds the scratch space of canonicalisation; reusing one
// (it is not safe for concurrent use) saves allocating it per document.
type Canonicalizer struct {
	data   []byte
	pos    int
	strict bool
	// members is a stack shared by the objects being read, innermost last.
	members []member
	// tmp holds an object's members while they are written back sorted,
	// in the order in order.
	tmp   []byte
	order []int32
}

// Append appends the canonical form of data to dst. Without strict, duplicate
// member names keep the last value, as encoding/json does: for input that
// was already accepted elsewhere (a call's arguments), so the record shows
// what the engine decided on.
func (c *Canonicalizer) Append(dst, data []byte, strict bool) ([]byte, error) {
	return c.AppendAt(dst, data, strict, 0)
}

// AppendAt is Append for a value that stands depth containers deep in the
// document being written, so that MaxDepth bounds the whole document as it
// would if the document were canonicalised in one pass.
func (c *Canonicalizer) AppendAt(dst, data []byte, strict bool, depth int) ([]byte, error) {
	c.data, c.pos, c.strict, c.members = data, 0, strict, c.members[:0]
	defer func() { c.data = nil }()
	c.skipSpace()
	out, err := c.value(dst, depth)
	if err != nil {
		return nil, err
	}
	c.skipSpace()
	if c.pos != len(c.data) {
		return nil, c.errorf("unexpected data after the JSON value")
	}
	return out, nil
}

// SyntaxError is a malformed JSON value; Offset is the byte where it was
// found.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("JSON at byte %d: %s", e.Offset, e.Msg) }

func (c *Canonicalizer) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: c.pos, Msg: fmt.Sprintf(format, args...)}
}

func (c *Canonicalizer) skipSpace() {
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *Canonicalizer) value(dst []byte, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, c.errorf("nested deeper than %d", MaxDepth)
	}
	if c.pos >= len(c.data) {
		return nil, c.errorf("unexpected end of input")
	}
	switch b := c.data[c.pos]; {
	case b == '{':
		return c.object(dst, depth)
	case b == '[':
		return c.array(dst, depth)
	case b == '"':
		dst, _, err := c.str(dst)
		return dst, err
	case b == '-' || b >= '0' && b <= '9':
		return c.number(dst)
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if bytes.HasPrefix(c.data[c.pos:], []byte(lit)) {
				c.pos += len(lit)
				return append(dst, lit...), nil
			}
		}
		return nil, c.errorf("invalid character %q looking for a value", b)
	}
}

// member is one object member already written to the output: dst[start:
// end] is its canonical `"name":value`.
type member struct {
	name       []byte // decoded
	start, end int
}

func (c *Canonicalizer) object(dst []byte, depth int) ([]byte, error) {
	c.pos++ // '{'
	c.skipSpace()
	if c.pos < len(c.data) && c.data[c.pos] == '}' {
		c.pos++
		return append(dst, "{}"...), nil
	}
	dst = append(dst, '{')
	body := len(dst)
	base := len(c.members)
	for first := true; ; first = false {
		c.skipSpace()
		if c.pos >= len(c.data) || c.data[c.pos] != '"' {
			return nil, c.errorf("expected a member name")
		}
		if !first {
			dst = append(dst, ',')
		}
		start := len(dst)
		var (
			name []byte
			err  error
		)
		if dst, name, err = c.str(dst); err != nil {
			return nil, err
		}
		c.skipSpace()
		if c.pos >= len(c.data) || c.data[c.pos] != ':' {
			return nil, c.errorf("expected ':' after member name %q", name)
		}
		c.pos++
		c.skipSpace()
		dst = append(dst, ':')
		if dst, err = c.value(dst, depth+1); err != nil {
			return nil, err
		}
		c.members = append(c.members, member{name: name, start: start, end: len(dst)})
		c.skipSpace()
		if c.pos >= len(c.data) {
			return nil, c.errorf("unexpected end of input in an object")
		}
		if c.data[c.pos] == '}' {
			c.pos++
			break
		}
		if c.data[c.pos] != ',' {
			return nil, c.errorf("expected ',' or '}' after an object member")
		}
		c.pos++
	}
	ms := c.members[base:]
	defer func() { c.members = c.members[:base] }()
	sorted := true
	for i := 1; i < len(ms); i++ {
		if compareUTF16(ms[i-1].name, ms[i].name) >= 0 {
			sorted = false
			break
		}
	}
	if !sorted {
		// Sort indices (cheaper to move than members), ties in source
		// order, so that of duplicate names the last one is last.
		order := c.order[:0]
		for i := range ms {
			order = append(order, int32(i))
		}
		slices.SortFunc(order, func(a, b int32) int {
			if c := compareUTF16(ms[a].name, ms[b].name); c != 0 {
				return c
			}
			return int(a - b)
		})
		c.order = order
		c.tmp = append(c.tmp[:0], dst[body:]...)
		dst = dst[:body]
		first := true
		for k, oi := range order {
			m := ms[oi]
			if k+1 < len(order) && bytes.Equal(ms[order[k+1]].name, m.name) {
				if c.strict {
					return nil, c.errorf("duplicate member name %q", m.name)
				}
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, c.tmp[m.start-body:m.end-body]...)
		}
	}
	return append(dst, '}'), nil
}

func (c *Canonicalizer) array(dst []byte, depth int) ([]byte, error) {
	c.pos++ // '['
	c.skipSpace()
	dst = append(dst, '[')
	if c.pos < len(c.data) && c.data[c.pos] == ']' {
		c.pos++
		return append(dst, ']'), nil
	}
	for i := 0; ; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		c.skipSpace()
		var err error
		if dst, err = c.value(dst, depth+1); err != nil {
			return nil, err
		}
		c.skipSpace()
		if c.pos >= len(c.data) {
			return nil, c.errorf("unexpected end of input in an array")
		}
		if c.data[c.pos] == ']' {
			c.pos++
			return append(dst, ']'), nil
		}
		if c.data[c.pos] != ',' {
			return nil, c.errorf("expected ',' or ']' after an array element")
		}
		c.pos++
	}
}

// str reads the string at c.pos, appends it to dst in canonical form and
// returns its decoded bytes. Invalid UTF-8 and lone surrogates become
// U+FFFD, as encoding/json decodes them.
func (c *Canonicalizer) str(dst []byte) ([]byte, []byte, error) {
	c.pos++ // opening quote
	start := c.pos
	// Fast path: no escapes, valid UTF-8, no control characters: the
	// bytes are their own canonical form.
	for i := start; i < len(c.data); i++ {
		b := c.data[i]
		if b == '"' {
			s := c.data[start:i]
			if utf8.Valid(s) {
				c.pos = i + 1
				dst = append(dst, '"')
				dst = append(dst, s...)
				return append(dst, '"'), s, nil
			}
			break
		}
		if b == '\\' || b < 0x20 {
			break
		}
	}
	var out []byte
	for {
		if c.pos >= len(c.data) {
			return nil, nil, c.errorf("unterminated string")
		}
		b := c.data[c.pos]
		switch {
		case b == '"':
			c.pos++
			return AppendString(dst, string(out)), out, nil
		case b < 0x20:
			return nil, nil, c.errorf("control character %#02x in a string", b)
		case b == '\\':
			if c.pos+1 >= len(c.data) {
				return nil, nil, c.errorf("unterminated escape")
			}
			e := c.data[c.pos+1]
			c.pos += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := c.hex4()
				if !ok {
					return nil, nil, c.errorf("invalid \\u escape")
				}
				if utf16.IsSurrogate(r) {
					r2 := utf8.RuneError
					if c.pos+1 < len(c.data) && c.data[c.pos] == '\\' && c.data[c.pos+1] == 'u' {
						save := c.pos
						c.pos += 2
						lo, ok := c.hex4()
						if !ok {
							return nil, nil, c.errorf("invalid \\u escape")
						}
						if r2 = utf16.DecodeRune(r, lo); r2 == utf8.RuneError {
							c.pos = save // a lone high surrogate; lo stands alone
						}
					}
					r = r2
				}
				out = utf8.AppendRune(out, r)
			default:
				return nil, nil, c.errorf("invalid escape \\%c", e)
			}
		case b < utf8.RuneSelf:
			out = append(out, b)
			c.pos++
		default:
			r, size := utf8.DecodeRune(c.data[c.pos:])
			out = utf8.AppendRune(out, r) // RuneError for invalid bytes
			c.pos += size
		}
	}
}

func (c *Canonicalizer) hex4() (rune, bool) {
	if c.pos+4 > len(c.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(c.data[c.pos:c.pos+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	c.pos += 4
	return rune(v), true
}

// digits is the end of the run of digits at p. A number needs one there:
// none is an error, at p, saying where it was missing.
func (c *Canonicalizer) digits(p int, where string) (int, error) {
	d := p
	for p < len(c.data) && c.data[p] >= '0' && c.data[p] <= '9' {
		p++
	}
	if p == d {
		c.pos = p
		return p, c.errorf("invalid number: no digits %s", where)
	}
	return p, nil
}

func (c *Canonicalizer) number(dst []byte) ([]byte, error) {
	start := c.pos
	p := c.pos
	if p < len(c.data) && c.data[p] == '-' {
		p++
	}
	switch {
	case p < len(c.data) && c.data[p] == '0':
		p++
	case p < len(c.data) && c.data[p] >= '1' && c.data[p] <= '9':
		for p < len(c.data) && c.data[p] >= '0' && c.data[p] <= '9' {
			p++
		}
	default:
		c.pos = p
		return nil, c.errorf("invalid number")
	}
	integer := true
	var err error
	if p < len(c.data) && c.data[p] == '.' {
		integer = false
		if p, err = c.digits(p+1, "after '.'"); err != nil {
			return nil, err
		}
	}
	if p < len(c.data) && (c.data[p] == 'e' || c.data[p] == 'E') {
		integer = false
		p++
		if p < len(c.data) && (c.data[p] == '+' || c.data[p] == '-') {
			p++
		}
		if p, err = c.digits(p, "in the exponent"); err != nil {
			return nil, err
		}
	}
	c.pos = p
	lit := c.data[start:p]
	if integer {
		if string(lit) == "-0" {
			return append(dst, '0'), nil
		}
		// Beyond float64's range no JSON decoder here would accept it.
		if len(lit) > 308 {
			if _, err := strconv.ParseFloat(string(lit), 64); err != nil {
				c.pos = start
				return nil, c.errorf("number %.20s… is out of range", lit)
			}
		}
		return append(dst, lit...), nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) && !math.IsInf(f, 0) {
			// Underflow to zero is a value; overflow is not.
			return appendNumber(dst, f), nil
		}
		c.pos = start
		return nil, c.errorf("number %s is out of range", lit)
	}
	return appendNumber(dst, f), nil
}

// AppendFloat writes a finite f in canonical form, as ECMAScript's
// Number.prototype.toString does: what Canonical makes of any JSON number
// that is not a plain integer and reads as f.
func AppendFloat(dst []byte, f float64) []byte { return appendNumber(dst, f) }

// CompareNames orders member names as canonical objects sort them (by their
// UTF-16 code units): negative when a sorts first.
func CompareNames(a, b string) int { return compareUTF16([]byte(a), []byte(b)) }

// appendNumber writes f as ECMAScript's Number.prototype.toString does.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if a := math.Abs(f); a < 1e21 && a >= 1e-6 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	s := strconv.AppendFloat(nil, f, 'e', -1, 64)
	// Go writes e-07 and e+21; ECMAScript e-7 and e+21.
	i := bytes.IndexByte(s, 'e')
	exp := s[i+2:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	dst = append(dst, s[:i+2]...)
	return append(dst, exp...)
}

// AppendString writes s as a JSON string in canonical form: only '"', '\\'
// and control characters are escaped, the short escapes where JSON has them.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch b {
		case '"', '\\':
			dst = append(dst, '\\', b)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			const hex = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// compareUTF16 orders names by their UTF-16 code units, as RFC 8785 sorts
// member names.
func compareUTF16(a, b []byte) int {
	for len(a) > 0 && len(b) > 0 {
		if a[0] < utf8.RuneSelf && b[0] < utf8.RuneSelf {
			if a[0] != b[0] {
				return int(a[0]) - int(b[0])
			}
			a, b = a[1:], b[1:]
			continue
		}
		ra, na := utf8.DecodeRune(a)
		rb, nb := utf8.DecodeRune(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				return int(ua) - int(ub)
			}
			// Same high surrogate: the low surrogates order as the runes.
			return int(ra) - int(rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func firstUnit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}
