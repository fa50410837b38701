package evidence

import (
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/jcs"
)

// The typed canonical encoder writes a record's content in canonical form
// straight from its Go value: members in canonical order worked out once per
// type, strings, numbers and times written as the canonical form has them.
// It stands for the generic path — encoding/json (no HTML escaping), then
// jcs over its output, which parses the content again and sorts every
// object — and must give the same bytes, so that what the verifier
// computes of a body is what was written: TestTypedMatchesGeneric and
// FuzzTypedMatchesGeneric hold the two to it.
//
// It knows only what it can encode exactly as that path does. A type with
// anything else in it (an embedded field, a tag option other than
// omitempty, a Marshaler of its own, a float32, a []byte, a map not keyed by
// strings, a recursive type) has no typed encoder, and a value whose
// encoding could differ or fail (a NaN, a time outside RFC 3339, a map key
// or raw message it cannot be sure of) makes the encoder give up: both go
// the generic path, which then also gives the same errors.

// errGeneric is the typed encoder giving up on a value.
var errGeneric = errors.New("evidence: value needs the generic encoder")

// canonFunc appends the canonical JSON of v, depth containers deep.
type canonFunc func(c *jcs.Canonicalizer, dst []byte, v reflect.Value, depth int) ([]byte, error)

// canonFuncs caches each type's encoder; a nil one means the generic path.
var canonFuncs sync.Map // reflect.Type → canonFunc

var (
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	timeType          = reflect.TypeFor[time.Time]()
	rawPointerType    = reflect.TypeFor[*json.RawMessage]()
	timePointerType   = reflect.TypeFor[*time.Time]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
	numberType        = reflect.TypeFor[json.Number]()
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// typedEncoder returns t's typed encoder, or nil.
func typedEncoder(t reflect.Type) canonFunc {
	if f, ok := canonFuncs.Load(t); ok {
		return f.(canonFunc)
	}
	f := compileCanon(t, map[reflect.Type]bool{})
	canonFuncs.Store(t, f)
	return f
}

// appendTyped appends the canonical JSON of content, or returns errGeneric.
func appendTyped(c *jcs.Canonicalizer, dst []byte, content any) ([]byte, error) {
	if content == nil {
		return append(dst, "null"...), nil
	}
	v := reflect.ValueOf(content)
	f := typedEncoder(v.Type())
	if f == nil {
		return nil, errGeneric
	}
	return f(c, dst, v, 0)
}

// compileCanon builds t's encoder; seen holds the types being built
// (a type met again inside itself is recursive: nil).
func compileCanon(t reflect.Type, seen map[reflect.Type]bool) canonFunc {
	switch t {
	case rawMessageType:
		return canonRaw
	case timeType:
		return canonTime
	case rawPointerType, timePointerType:
		// Marshalers by their value's methods: nil is null, else the value.
		return canonPointer(compileCanon(t.Elem(), seen))
	}
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		(t.Kind() != reflect.Pointer && (reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType))) {
		return nil
	}
	if seen[t] || t == numberType {
		return nil // recursive; a json.Number is written as a number
	}
	seen[t] = true
	defer delete(seen, t)
	switch t.Kind() {
	case reflect.Bool:
		return canonBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return canonInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return canonUint
	case reflect.Float64:
		return canonFloat
	case reflect.String:
		return canonString
	case reflect.Interface:
		return canonInterface
	case reflect.Pointer:
		elem := compileCanon(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return canonPointer(elem)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // base64 in encoding/json
		}
		elem := compileCanon(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(c *jcs.Canonicalizer, dst []byte, v reflect.Value, depth int) ([]byte, error) {
			if v.IsNil() {
				return append(dst, "null"...), nil
			}
			dst = append(dst, '[')
			n := v.Len()
			for i := range n {
				if i > 0 {
					dst = append(dst, ',')
				}
				var err error
				if dst, err = elem(c, dst, v.Index(i), depth+1); err != nil {
					return nil, err
				}
			}
			return append(dst, ']'), nil
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil
		}
		elem := compileCanon(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(c *jcs.Canonicalizer, dst []byte, v reflect.Value, depth int) ([]byte, error) {
			return canonMap(c, dst, v, depth, elem)
		}
	case reflect.Struct:
		return compileStruct(t, seen)
	}
	return nil
}

// canonPointer writes a pointer's value by elem, and nil as null.
func canonPointer(elem canonFunc) canonFunc {
	return func(c *jcs.Canonicalizer, dst []byte, v reflect.Value, depth int) ([]byte, error) {
		if v.IsNil() {
			return append(dst, "null"...), nil
		}
		return elem(c, dst, v.Elem(), depth)
	}
}

// canonField is one member of a struct's canonical object.
type canonField struct {
	index     int
	name      string
	prefix    string // the member's `"name":`, canonical
	omitEmpty bool
	omitZero  func(reflect.Value) bool // omitzero's test
	kind      reflect.Kind
	enc       canonFunc
}

func compileStruct(t reflect.Type, seen map[reflect.Type]bool) canonFunc {
	var fields []canonField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // encoding/json's promotion rules: not reproduced here
		}
		if !f.IsExported() {
			continue
		}
		tag, ok := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !ok || !validTag(name) {
			name = f.Name // as encoding/json names it
		}
		cf := canonField{index: i, name: name, prefix: string(jcs.AppendString(nil, name)) + ":", kind: f.Type.Kind()}
		for opts != "" {
			var o string
			o, opts, _ = strings.Cut(opts, ",")
			switch o {
			case "omitempty":
				cf.omitEmpty = true
			case "omitzero":
				switch {
				case f.Type == timeType:
					cf.omitZero = zeroTime
				case f.Type.Kind() == reflect.Interface || f.Type.Implements(isZeroerType) || reflect.PointerTo(f.Type).Implements(isZeroerType):
					return nil // its own IsZero: not reproduced here
				default:
					cf.omitZero = reflect.Value.IsZero
				}
			default:
				return nil // string, and options to come
			}
		}
		if cf.enc = compileCanon(f.Type, seen); cf.enc == nil {
			return nil
		}
		fields = append(fields, cf)
	}
	slices.SortFunc(fields, func(a, b canonField) int { return jcs.CompareNames(a.name, b.name) })
	for i := 1; i < len(fields); i++ {
		if fields[i-1].name == fields[i].name {
			return nil // encoding/json drops both, or picks by tag
		}
	}
	return func(c *jcs.Canonicalizer, dst []byte, v reflect.Value, depth int) ([]byte, error) {
		dst = append(dst, '{')
		first := true
		for i := range fields {
			f := &fields[i]
			fv := v.Field(f.index)
			if f.omitEmpty && isEmpty(f.kind, fv) || f.omitZero != nil && f.omitZero(fv) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, f.prefix...)
			var err error
			if dst, err = f.enc(c, dst, fv, depth+1); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
}

// validTag is encoding/json's test of a tag's name; it names a field by
// its Go name otherwise.
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

func zeroTime(v reflect.Value) bool {
	if v.CanAddr() {
		return (*time.Time)(v.Addr().UnsafePointer()).IsZero()
	}
	return v.Interface().(time.Time).IsZero()
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(k reflect.Kind, v reflect.Value) bool {
	switch k {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

func canonBool(_ *jcs.Canonicalizer, dst []byte, v reflect.Value, _ int) ([]byte, error) {
	return strconv.AppendBool(dst, v.Bool()), nil
}

func canonInt(_ *jcs.Canonicalizer, dst []byte, v reflect.Value, _ int) ([]byte, error) {
	return strconv.AppendInt(dst, v.Int(), 10), nil
}

func canonUint(_ *jcs.Canonicalizer, dst []byte, v reflect.Value, _ int) ([]byte, error) {
	return strconv.AppendUint(dst, v.Uint(), 10), nil
}

func canonFloat(_ *jcs.Canonicalizer, dst []byte, v reflect.Value, _ int) ([]byte, error) {
	f := v.Float()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errGeneric // encoding/json's error
	}
	return jcs.AppendFloat(dst, f), nil
}

func canonString(_ *jcs.Canonicalizer, dst []byte, v reflect.Value, _ int) ([]byte, error) {
	return appendText(dst, v.String()), nil
}

// appendText writes s as encoding/json and then jcs would: each byte that
// is not valid UTF-8 becomes U+FFFD.
func appendText(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return jcs.AppendString(dst, s)
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return jcs.AppendString(dst, b.String())
}

func canonRaw(c *jcs.Canonicalizer, dst []byte, v reflect.Value, depth int) ([]byte, error) {
	raw := v.Bytes()
	if raw == nil {
		return append(dst, "null"...), nil
	}
	if len(raw) == 0 {
		return nil, errGeneric
	}
	out, err := c.AppendAt(dst, raw, false, depth)
	if err != nil {
		return nil, errGeneric
	}
	return out, nil
}

func canonTime(_ *jcs.Canonicalizer, dst []byte, v reflect.Value, _ int) ([]byte, error) {
	var t time.Time
	if v.CanAddr() {
		t = *(*time.Time)(v.Addr().UnsafePointer())
	} else {
		t = v.Interface().(time.Time)
	}
	n := len(dst)
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	// time.Time.MarshalJSON's checks: a four-digit year, a zone hour
	// below 24. It fails otherwise; the generic path says how.
	b := dst[n+1:]
	if len(b) < 5 || b[4] != '-' {
		return nil, errGeneric
	}
	if b[len(b)-1] != 'Z' {
		if len(b) < 6 {
			return nil, errGeneric
		}
		z := b[len(b)-6:]
		if z[0] >= '0' && z[0] <= '9' || (z[1]-'0')*10+(z[2]-'0') >= 24 {
			return nil, errGeneric
		}
	}
	return append(dst, '"'), nil
}

func canonInterface(c *jcs.Canonicalizer, dst []byte, v reflect.Value, depth int) ([]byte, error) {
	if v.IsNil() {
		return append(dst, "null"...), nil
	}
	if depth > 256 {
		return nil, errGeneric // cycles and deep nesting: encoding/json's limits
	}
	e := v.Elem()
	f := typedEncoder(e.Type())
	if f == nil {
		return nil, errGeneric
	}
	return f(c, dst, e, depth)
}

func canonMap(c *jcs.Canonicalizer, dst []byte, v reflect.Value, depth int, elem canonFunc) ([]byte, error) {
	if v.IsNil() {
		return append(dst, "null"...), nil
	}
	keys := v.MapKeys()
	for _, k := range keys {
		if !utf8.ValidString(k.String()) {
			return nil, errGeneric // keys U+FFFD would make equal
		}
	}
	slices.SortFunc(keys, func(a, b reflect.Value) int { return jcs.CompareNames(a.String(), b.String()) })
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jcs.AppendString(dst, k.String())
		dst = append(dst, ':')
		var err error
		if dst, err = elem(c, dst, v.MapIndex(k), depth+1); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}
