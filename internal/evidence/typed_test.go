package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/jcs"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// genericContent is a content's canonical form by the generic path:
// encoding/json without HTML escaping, then the canonicaliser.
func genericContent(content any) ([]byte, error) {
	var e recordEncoder
	raw, err := e.generic(content)
	if err != nil {
		return nil, err
	}
	var c jcs.Canonicalizer
	return c.Append(nil, raw, false)
}

// checkTyped holds the typed encoder to the generic path on content: the
// same bytes, or the typed encoder gives the value up (then the generic
// path is what records use). It reports whether the typed encoder wrote it.
func checkTyped(t *testing.T, content any) bool {
	t.Helper()
	want, gerr := genericContent(content)
	var c jcs.Canonicalizer
	got, err := appendTyped(&c, nil, content)
	switch {
	case errors.Is(err, errGeneric):
		return false
	case err != nil:
		t.Fatalf("typed encoder: %v", err)
	case gerr != nil:
		t.Fatalf("typed encoder wrote %s where the generic path fails: %v", got, gerr)
	case !bytes.Equal(got, want):
		t.Fatalf("typed encoder differs from the generic path\n typed:   %q\n generic: %q", got, want)
	}
	// And what it wrote is canonical, as the verifier checks.
	if canon, err := Canonical(got); err != nil || !bytes.Equal(canon, got) {
		t.Fatalf("typed output is not canonical (%v): %q", err, got)
	}
	return true
}

// filler fills values of any type from a stream of choices: random ones
// for the test, a fuzzer's bytes for the fuzz target.
type filler struct {
	next func() uint64
	left int // values still to make deep down (bounds the size)
}

var (
	tickyStrings = []string{
		"", "a", "Bash", "allow", "go test ./... 2>&1 | tail -20", "ä€😀", "\u2028\u2029", "<script>&amp;</script>",
		"quote\"back\\slash", "tab\tnl\ncr\rbs\bff\f", "\x00\x01\x1f\x7f", "\xff", "a\xffb\xfe", "\xed\xa0\x80",
		"\xc3", "e\u0301", "\ufffd", "/home/dev/.env", "AKIA[REDACTED]", "𝄞 clef", "key", "Key", "é", "\U0010ffff",
	}
	trickyRaws = []string{
		`{}`, `[]`, `null`, `true`, `0`, `-0`, `1.0`, `1e2`, `1E+2`, `-1.5e-7`, `123456789012345678901234567890`,
		`0.1`, `1e21`, `1e-6`, `5e-324`, `1.7976931348623157e308`, `1e400`, `1e-400`, `"\u00e9\ud83d\ude00"`,
		`"\ud800"`, `"\ud800\u0041"`, `"\/\b"`, ` { "b" : 1 , "a" : [ 1 , 2 ] } `, `{"a":1,"a":2}`,
		`{"é":1,"z":2,"😀":3,"\uffff":4}`, `{"command":"ls -la","description":"list"}`, `"a\u2028b"`,
		`"\xff"`, "\"\xff\"", `{"a":}`, `[1,]`, `01`, `nul`, "", `{"a":1}x`, `"unterminated`, "[\"\x01\"]",
		`{"nested":{"deep":[{"x":[1,{"y":null}]}]}}`, `[1, 2.50, -3e0]`,
	}
	trickyFloats = []float64{0, math.Copysign(0, -1), 1, -1, 3, 0.1, 1e20, 1e21, 1e-6, 1e-7, 5e-324, math.MaxFloat64,
		123.456, -9.99e-10, 2.5, 1 << 53, 1<<53 + 2, math.NaN(), math.Inf(1)}
	trickyInts  = []int64{0, 1, -1, 42, math.MaxInt64, math.MinInt64, 1 << 53, 1<<53 + 1}
	trickyTimes = []time.Time{{}, time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 3, 12, 0, 0, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 100, time.FixedZone("x", 5*3600+1800)), time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("y", -7*3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("far", 25*3600))}
)

func (f *filler) pick(n int) int { return int(f.next() % uint64(n)) }

func (f *filler) fill(v reflect.Value) {
	f.left--
	t := v.Type()
	switch t {
	case rawMessageType:
		if f.pick(6) == 0 {
			return // nil
		}
		v.SetBytes([]byte(trickyRaws[f.pick(len(trickyRaws))]))
		return
	case timeType:
		v.Set(reflect.ValueOf(trickyTimes[f.pick(len(trickyTimes))]))
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(f.pick(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := trickyInts[f.pick(len(trickyInts))]
		if f.pick(3) == 0 {
			n = int64(f.next())
		}
		if !v.OverflowInt(n) {
			v.SetInt(n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n := f.next(); !v.OverflowUint(n) {
			v.SetUint(n)
		}
	case reflect.Float32, reflect.Float64:
		x := trickyFloats[f.pick(len(trickyFloats))]
		if f.pick(3) == 0 {
			x = math.Float64frombits(f.next())
		}
		if t.Kind() == reflect.Float64 || !v.OverflowFloat(x) {
			v.SetFloat(x)
		}
	case reflect.String:
		v.SetString(tickyStrings[f.pick(len(tickyStrings))])
	case reflect.Pointer:
		if f.left <= 0 || f.pick(5) == 0 {
			return
		}
		p := reflect.New(t.Elem())
		f.fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		if f.left <= 0 || f.pick(5) == 0 {
			return // nil
		}
		n := f.pick(4)
		s := reflect.MakeSlice(t, n, n)
		for i := range n {
			f.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i))
		}
	case reflect.Map:
		if f.left <= 0 || f.pick(4) == 0 {
			return
		}
		m := reflect.MakeMap(t)
		for range f.pick(4) {
			k := reflect.New(t.Key()).Elem()
			f.fill(k)
			e := reflect.New(t.Elem()).Elem()
			f.fill(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		if f.left <= 0 || t.NumMethod() > 0 || f.pick(4) == 0 {
			return
		}
		var x reflect.Value
		switch f.pick(6) {
		case 0:
			x = reflect.New(reflect.TypeFor[string]()).Elem()
		case 1:
			x = reflect.New(reflect.TypeFor[float64]()).Elem()
		case 2:
			x = reflect.New(reflect.TypeFor[map[string]any]()).Elem()
		case 3:
			x = reflect.New(reflect.TypeFor[[]any]()).Elem()
		case 4:
			x = reflect.New(reflect.TypeFor[json.RawMessage]()).Elem()
		default:
			x = reflect.New(reflect.TypeFor[*store.Provenance]()).Elem()
		}
		f.fill(x)
		v.Set(x)
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	}
}

// oddities has what the typed encoder must give up or get right beyond
// the store's types.
type oddities struct {
	Untagged string
	Renamed  int `json:"renamed"`
	//lint:ignore SA5008 a field named "-" on purpose: the typed encoder must name it as encoding/json does
	Dash      string            `json:"-,"`
	Skipped   string            `json:"-"`
	OmitStr   string            `json:"omit_str,omitempty"`
	OmitInt   int64             `json:"omit_int,omitempty"`
	OmitUint  uint8             `json:"omit_uint,omitempty"`
	OmitFloat float64           `json:"omit_float,omitempty"`
	OmitBool  bool              `json:"omit_bool,omitempty"`
	OmitPtr   *string           `json:"omit_ptr,omitempty"`
	OmitSlice []int             `json:"omit_slice,omitempty"`
	OmitMap   map[string]string `json:"omit_map,omitempty"`
	OmitTime  time.Time         `json:"omit_time,omitempty"`
	OmitAny   any               `json:"omit_any,omitempty"`
	Any       any               `json:"any"`
	Map       map[string]any    `json:"map"`
	Nested    map[string][]*store.Provenance
	Order     string `json:"Z_before_a"`
	Unicode   string `json:"é"`
	//lint:ignore SA5008 a malformed name on purpose: encoding/json falls back to the field's name, and so must the typed encoder
	BadTag     string           `json:"bad\\tag"`
	ZeroTime   time.Time        `json:"zero_time,omitzero"`
	ZeroInt    int              `json:"zero_int,omitzero"`
	ZeroBoth   []string         `json:"zero_both,omitempty,omitzero"`
	ZeroStruct store.Provenance `json:"zero_struct,omitzero"`
	//lint:ignore U1000 an unexported field on purpose: neither encoder may write it
	hidden string
}

type withFloat32 struct {
	F float32 `json:"f"`
}

type withBytes struct {
	B []byte `json:"b"`
}

type withEmbedded struct {
	store.Provenance
	X int `json:"x"`
}

type withZeroer struct {
	T *time.Time `json:"t,omitzero"`
}

type withString struct {
	N int `json:"n,string"`
}

type withMarshaler struct {
	T textish `json:"t"`
}

type withNumber struct {
	N json.Number `json:"n"` // written as a number
}

type textish string

func (t textish) MarshalText() ([]byte, error) { return []byte("text:" + string(t)), nil }

type recursive struct {
	Next *recursive `json:"next"`
}

// contentTypes are the types records carry, each made fresh.
func contentTypes() []func() any {
	return []func() any{
		func() any { return &store.Decision{} },
		func() any { return &store.Session{} },
		func() any { return &store.MandateVersion{} },
		func() any { return &store.Observation{} },
		func() any { return &store.ToolPin{} },
		func() any { return &store.ToolChange{} },
		func() any { return &store.Reported{} },
		func() any { return &store.Approval{} },
		func() any { return &store.JudgeExchange{} },
		func() any { return &statusContent{} },
		func() any { return &approvalStateContent{} },
		func() any { return &oddities{} },
		func() any { return &withFloat32{} },
		func() any { return &withBytes{} },
		func() any { return &withEmbedded{} },
		func() any { return &withString{} },
		func() any { return &withZeroer{} },
		func() any { return &withMarshaler{} },
		func() any { return &withNumber{} },
		func() any { return &recursive{} },
		func() any { return new(map[string]any) },
		func() any { return new([]any) },
	}
}

// The record types must have a typed encoder (else the speed is gone
// without a test failing); the odd ones must not.
func TestTypedEncoderCovers(t *testing.T) {
	for _, x := range []any{&store.Decision{}, &store.Session{}, &store.MandateVersion{}, &store.Observation{}, &store.ToolPin{},
		&store.ToolChange{}, &store.Reported{}, &store.Approval{}, &store.JudgeExchange{}, statusContent{}, approvalStateContent{}, &oddities{}} {
		if typedEncoder(reflect.TypeOf(x)) == nil {
			t.Errorf("%T has no typed encoder", x)
		}
	}
	for _, x := range []any{&withFloat32{}, &withBytes{}, &withEmbedded{}, &withString{}, &withZeroer{}, &withMarshaler{}, &withNumber{}, &recursive{}} {
		if typedEncoder(reflect.TypeOf(x)) != nil {
			t.Errorf("%T has a typed encoder: it needs the generic path", x)
		}
	}
}

// TestTypedMatchesGeneric fills every record content type (and odd ones)
// many times with tricky values and compares the typed encoder's bytes
// with the generic path's.
func TestTypedMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	n := testpeer.Size(3000, 300)
	typed := 0
	for i := range n {
		for _, mk := range contentTypes() {
			v := mk()
			f := filler{next: r.Uint64, left: 40 + i%60}
			f.fill(reflect.ValueOf(v).Elem())
			if checkTyped(t, v) {
				typed++
			}
			// The value itself as well as the pointer to it.
			checkTyped(t, reflect.ValueOf(v).Elem().Interface())
		}
	}
	if typed < n*len(contentTypes())/4 {
		t.Errorf("only %d of %d values went the typed way", typed, n*len(contentTypes()))
	}
}

// Whole records: the body through the Recorder is the body the generic
// path gives, and it parses.
func TestTypedRecordBodies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rec := NewRecorder(nil)
	for range 500 {
		d := &store.Decision{}
		(&filler{next: r.Uint64, left: 60}).fill(reflect.ValueOf(d).Elem())
		d.CreatedAt = trickyTimes[1+r.IntN(4)]
		d.SessionID = "s1" // the envelope's, written as given
		got, err := rec.Record(&store.Change{Decision: d})
		want, gerr := genericContent(d)
		if gerr != nil {
			if err == nil {
				t.Fatalf("recorded %s where the generic path fails: %v", got[0].Body, gerr)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewRecord(TypeDecision, Observed, d.SessionID, d.CreatedAt, json.RawMessage(want))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[0].Body, g.Body) || !bytes.Equal(got[0].LeafHash, g.LeafHash) {
			t.Fatalf("record body differs\n typed:   %s\n generic: %s", got[0].Body, g.Body)
		}
		if _, err := ParseBody(got[0].Body); err != nil {
			t.Fatal(err)
		}
	}
}

// A raw message nested near the depth bound fails as the generic path
// does: the bound counts the containers around it.
func TestTypedDepthBound(t *testing.T) {
	for _, n := range []int{maxDepth - 2, maxDepth - 1, maxDepth, maxDepth + 1} {
		raw := bytes.Repeat([]byte("["), n)
		raw = append(raw, bytes.Repeat([]byte("]"), n)...)
		checkTyped(t, &store.Decision{Args: raw})
		checkTyped(t, &store.Decision{Signals: nil, Provenance: nil, Args: raw, Action: nil})
		checkTyped(t, &[]json.RawMessage{raw})
	}
}

func FuzzTypedMatchesGeneric(f *testing.F) {
	f.Add([]byte{0}, "", "")
	f.Add([]byte("decision"), "go test ./...", `{"command":"ls"}`)
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "\xff\u2028", `{"b":1,"a":[1.50,"\ud83d\ude00"]}`)
	f.Fuzz(func(t *testing.T, choices []byte, s string, raw string) {
		i := 0
		next := func() uint64 {
			if len(choices) == 0 {
				return 0
			}
			var x uint64
			for k := 0; k < 8; k++ {
				x = x<<8 | uint64(choices[i%len(choices)])
				i++
			}
			return x
		}
		types := contentTypes()
		v := types[int(next()%uint64(len(types)))]()
		(&filler{next: next, left: 30}).fill(reflect.ValueOf(v).Elem())
		checkTyped(t, v)
		// The fuzzer's own text as a string and as a raw message.
		d := &store.Decision{Tool: s, Reasons: []string{s}, Args: json.RawMessage(raw),
			Signals: []baseline.Signal{{Name: s, Value: json.RawMessage(raw)}}}
		checkTyped(t, d)
		checkTyped(t, map[string]any{s: raw, "k": s})
	})
}
