package jcs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"whitespace", " { \"b\" : 1 ,\n\t\"a\" : [ 1 , 2 ] } ", `{"a":[1,2],"b":1}`},
		{"nested sort", `{"z":{"y":1,"x":2},"a":null}`, `{"a":null,"z":{"x":2,"y":1}}`},
		// RFC 8785 §3.2.3: sorted by UTF-16 code units, so U+1F600 (a
		// surrogate pair starting 0xD83D) sorts before U+FB33.
		{"utf16 order", `{"\ufb33":1,"😀":2,"a":3,"\u00e9":4,"A":5}`, "{\"A\":5,\"a\":3,\"\u00e9\":4,\"\U0001F600\":2,\"\ufb33\":1}"},
		{"empty", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`},
		{"literals", `[true,false,null]`, `[true,false,null]`},
		{"escapes", `"a\"b\\c\/d\b\f\n\r\t\u0001\u001F"`, `"a\"b\\c/d\b\f\n\r\t\u0001\u001f"`},
		{"unicode kept", `"\u20ac\u2028é😀"`, "\"€\u2028é😀\""},
		{"surrogate pair", `"\ud83d\ude00"`, `"😀"`},
		{"lone surrogate", `"\ud800x"`, "\"\ufffdx\""},
		{"lone surrogate then escape", `"\ud800\u0041"`, "\"\ufffdA\""},
		{"invalid utf8", "\"a\xffb\"", "\"a\ufffdb\""},
		{"html not escaped", `"<a>&"`, `"<a>&"`},
		{"integer", `[0,-0,12,-12,9007199254740993,123456789012345678901234567890]`, `[0,0,12,-12,9007199254740993,123456789012345678901234567890]`},
		{"floats", `[1.0,1.5,-0.0,0.1,1e2,1E-7,0.000001,1e21,1e20,123e-20,1.7976931348623157e308,5e-324]`,
			`[1,1.5,0,0.1,100,1e-7,0.000001,1e+21,100000000000000000000,1.23e-18,1.7976931348623157e+308,5e-324]`},
		{"top-level string", `"x"`, `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Canonical(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			again, err := Canonical(got)
			if err != nil || string(again) != string(got) {
				t.Errorf("not idempotent: %s → %s (%v)", got, again, err)
			}
		})
	}
}

func TestCanonicalErrors(t *testing.T) {
	for _, in := range []string{
		``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":1}x`, `"abc`, `"\x"`, `"\u12"`,
		`tru`, `nul`, `01`, `-`, `1.`, `1e`, `.5`, `+1`, "\"a\x01\"", `1e400`, "2" + strings.Repeat("0", 320), `{"a":1,"a":2}`, `{1:2}`,
		strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2),
	} {
		if got, err := Canonical([]byte(in)); err == nil {
			t.Errorf("Canonical(%.40q) = %s, want an error", in, got)
		}
	}
	var se *SyntaxError
	_, err := Canonical([]byte(`{"a": tru}`))
	if !asSyntax(err, &se) || se.Offset != 6 {
		t.Errorf("error %v: want a SyntaxError at byte 6", err)
	}
}

func asSyntax(err error, se **SyntaxError) bool {
	s, ok := err.(*SyntaxError)
	*se = s
	return ok
}

func TestCanonicalLenientDuplicates(t *testing.T) {
	// encoding/json keeps the last of duplicate members; so does the
	// record of what the engine decided on.
	var c Canonicalizer
	got, err := c.Append(nil, []byte(`{"b":1,"a":1,"b":2,"a":{"x":1,"x":3}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{"x":3},"b":2}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// FuzzCanonical holds the canonical form to its promises on any input: it
// is valid JSON, a fixed point, and means what the input meant.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[1,2.5,"x"]}`, `"\ud83d\ude00\u0000"`, `[1e21,1e-7,-0,0.1]`, `{"é":{"\u00e9x":null}}`,
		`123456789012345678901234567890`, "\"\xff\"", `{"a":"\ud800"}`, ` [ ] `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonical(in)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Canonical(%q) = %q is not valid JSON", in, out)
		}
		again, err := Canonical(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not a fixed point: %q → %q → %q (%v)", in, out, again, err)
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil {
			t.Fatalf("Canonical accepted %q, which encoding/json rejects", in)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed: %q → %q", in, out)
		}
	})
}

func BenchmarkCanonical(b *testing.B) {
	in := []byte(`{"tool":"Bash","args":{"command":"go test ./pkg/auth/... 2>&1 | tail -20","description":"run tests"},"action":{"kind":"execute","kinds":["execute","read"],"paths":[{"path":"/home/dev/project/pkg/auth","access":"read"}],"commands":[{"argv":["go","test","./pkg/auth/..."],"name":"go","kind":"execute"},{"argv":["tail","-20"],"name":"tail","kind":"read","read_only":true}],"notes":["shell: 2 commands"]},"rules":["builtin.granted"],"reasons":["the task asked for it"],"seq":12,"latency_us":180}`)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Canonical(in); err != nil {
			b.Fatal(err)
		}
	}
}
