package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The walk carries one bit of context, sensitive: the value sits under a
// key that names a secret. It applies to the value itself and, through
// arrays, to their elements; an object (or struct) resets it, and its own
// keys decide for their values — so {"password": "…"} and {"tokens":
// ["…"]} are redacted whole, while a JSON schema's {"password": {"type":
// "string"}} is read key by key.

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	numberType     = reflect.TypeFor[json.Number]()
)

// plan lists the fields of a struct type that can hold strings.
type plan struct {
	fields []planField
}

type planField struct {
	index     int
	sensitive bool
}

func (r *Redactor) planFor(t reflect.Type) *plan {
	if p, ok := r.plans.Load(t); ok {
		return p.(*plan)
	}
	p := &plan{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || !holdsStrings(f.Type, map[reflect.Type]bool{}) {
			continue
		}
		name := f.Name
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
			name = tag
		}
		p.fields = append(p.fields, planField{index: i, sensitive: r.sensitiveKey(name)})
	}
	r.plans.Store(t, p)
	return p
}

// holdsStrings reports whether a value of type t can contain text.
func holdsStrings(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // a cycle: the first visit answers
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Array:
		return holdsStrings(t.Elem(), seen)
	case reflect.Slice:
		return t == rawMessageType || t.Elem().Kind() != reflect.Uint8 && holdsStrings(t.Elem(), seen)
	case reflect.Map:
		return holdsStrings(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsStrings(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// walk returns v with its secrets replaced, as a new value if anything
// changed; v itself and what it points to are never modified.
func (r *Redactor) walk(v reflect.Value, sensitive bool) (reflect.Value, bool, error) {
	switch v.Kind() {
	case reflect.String:
		if v.Type() == numberType {
			return v, false, nil // a typed number stays a number
		}
		s, changed := r.str(v.String(), sensitive)
		if !changed {
			return v, false, nil
		}
		nv := reflect.New(v.Type()).Elem()
		nv.SetString(s)
		return nv, true, nil

	case reflect.Pointer:
		if v.IsNil() {
			return v, false, nil
		}
		ev, changed, err := r.walk(v.Elem(), sensitive)
		if err != nil || !changed {
			return v, false, err
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(ev)
		return p, true, nil

	case reflect.Interface:
		if v.IsNil() {
			return v, false, nil
		}
		nv, changed, err := r.dynamic(v.Elem().Interface(), sensitive)
		if err != nil || !changed {
			return v, false, err
		}
		nrv := reflect.ValueOf(nv)
		if !nrv.Type().AssignableTo(v.Type()) {
			return v, false, fmt.Errorf("cannot put a redacted %s into a %s", nrv.Type(), v.Type())
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(nrv)
		return out, true, nil

	case reflect.Struct:
		var cp reflect.Value
		for _, f := range r.planFor(v.Type()).fields {
			nv, changed, err := r.walk(v.Field(f.index), f.sensitive)
			if err != nil {
				return v, false, fmt.Errorf("%s: %w", v.Type().Field(f.index).Name, err)
			}
			if changed {
				if !cp.IsValid() {
					cp = reflect.New(v.Type()).Elem()
					cp.Set(v)
				}
				cp.Field(f.index).Set(nv)
			}
		}
		if cp.IsValid() {
			return cp, true, nil
		}
		return v, false, nil

	case reflect.Slice:
		if v.Type() == rawMessageType {
			out, changed, err := r.JSON(v.Bytes())
			if err != nil || !changed {
				return v, false, err
			}
			return reflect.ValueOf(json.RawMessage(out)), true, nil
		}
		if v.Len() == 0 || v.Type().Elem().Kind() == reflect.Uint8 {
			return v, false, nil // nothing, or binary
		}
		var cp reflect.Value
		for i := range v.Len() {
			ev, changed, err := r.walk(v.Index(i), sensitive)
			if err != nil {
				return v, false, fmt.Errorf("[%d]: %w", i, err)
			}
			if changed {
				if !cp.IsValid() {
					cp = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
					reflect.Copy(cp, v)
				}
				cp.Index(i).Set(ev)
			}
		}
		if cp.IsValid() {
			return cp, true, nil
		}
		return v, false, nil

	case reflect.Array:
		var cp reflect.Value
		for i := range v.Len() {
			ev, changed, err := r.walk(v.Index(i), sensitive)
			if err != nil {
				return v, false, err
			}
			if changed {
				if !cp.IsValid() {
					cp = reflect.New(v.Type()).Elem()
					cp.Set(v)
				}
				cp.Index(i).Set(ev)
			}
		}
		if cp.IsValid() {
			return cp, true, nil
		}
		return v, false, nil

	case reflect.Map:
		if v.Len() == 0 {
			return v, false, nil
		}
		changes := map[int]reflect.Value{}
		var keys []reflect.Value
		iter := v.MapRange()
		renamed := map[int]reflect.Value{}
		for iter.Next() {
			k := iter.Key()
			keySensitive := k.Kind() == reflect.String && r.sensitiveKey(k.String())
			nv, changed, err := r.walk(iter.Value(), keySensitive)
			if err != nil {
				return v, false, err
			}
			if changed {
				changes[len(keys)] = nv
			}
			if k.Kind() == reflect.String {
				if nk, ok := r.Text(k.String()); ok {
					renamed[len(keys)] = reflect.ValueOf(nk).Convert(k.Type())
				}
			}
			keys = append(keys, k)
		}
		if len(changes) == 0 && len(renamed) == 0 {
			return v, false, nil
		}
		cp := reflect.MakeMapWithSize(v.Type(), v.Len())
		for i, k := range keys {
			val := v.MapIndex(k)
			if nv, ok := changes[i]; ok {
				val = nv
			}
			if nk, ok := renamed[i]; ok {
				k = nk
			}
			cp.SetMapIndex(k, val)
		}
		return cp, true, nil
	}
	return v, false, nil
}

// dynamic redacts a value held in an interface: decoded JSON (maps,
// slices, strings, numbers) directly, anything else by reflection. Numbers
// under a sensitive key become markers (strings), which an interface can
// hold.
func (r *Redactor) dynamic(v any, sensitive bool) (any, bool, error) {
	switch x := v.(type) {
	case nil, bool:
		return v, false, nil
	case string:
		s, changed := r.str(x, sensitive)
		return s, changed, nil
	case json.Number:
		if sensitive {
			return r.Marker(KeySensitive, string(x)), true, nil
		}
		return v, false, nil
	case float64:
		if sensitive {
			return r.Marker(KeySensitive, strconv.FormatFloat(x, 'g', -1, 64)), true, nil
		}
		return v, false, nil
	case map[string]any:
		var out map[string]any
		for k, val := range x {
			nv, changed, err := r.dynamic(val, r.sensitiveKey(k))
			if err != nil {
				return v, false, err
			}
			// A secret used as an object's key ({"sk-live-…": true})
			// is redacted like one in a value.
			nk, keyChanged := r.Text(k)
			if changed || keyChanged {
				if out == nil {
					out = maps.Clone(x)
				}
				if keyChanged {
					delete(out, k)
				}
				out[nk] = nv
			}
		}
		if out == nil {
			return v, false, nil
		}
		return out, true, nil
	case []any:
		var out []any
		for i, val := range x {
			nv, changed, err := r.dynamic(val, sensitive)
			if err != nil {
				return v, false, err
			}
			if changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = nv
			}
		}
		if out == nil {
			return v, false, nil
		}
		return out, true, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32:
		if sensitive {
			return r.Marker(KeySensitive, fmt.Sprint(v)), true, nil
		}
		return v, false, nil
	}
	nv, changed, err := r.walk(rv, sensitive)
	if err != nil || !changed {
		return v, false, err
	}
	return nv.Interface(), true, nil
}

// JSON redacts a JSON document. It first scans the text, without decoding
// it, for anything that would be redacted; only then does it decode,
// redact and encode it again (object members then come out sorted).
func (r *Redactor) JSON(data []byte) ([]byte, bool, error) {
	dirty, err := r.scanJSON(data)
	if err != nil || !dirty {
		return data, false, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return data, false, fmt.Errorf("redact JSON: %w", err)
	}
	nv, changed, err := r.dynamic(v, false)
	if err != nil || !changed {
		return data, false, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(nv); err != nil {
		return data, false, fmt.Errorf("redact JSON: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true, nil
}

// scanFrame is an open object or array during scanJSON.
type scanFrame struct {
	object bool
	// sensitive: for an object, the current member's key names a secret;
	// for an array, its elements are under such a key.
	sensitive bool
	expectKey bool
}

// scanJSON reports whether redacting the document would change anything,
// applying the same rules as dynamic to the same values, without decoding.
func (r *Redactor) scanJSON(data []byte) (bool, error) {
	var stackBuf [16]scanFrame
	stack := stackBuf[:0]
	top := func() *scanFrame {
		if len(stack) == 0 {
			return nil
		}
		return &stack[len(stack)-1]
	}
	valueSensitive := func() bool {
		t := top()
		return t != nil && t.sensitive
	}
	for i := 0; i < len(data); {
		switch c := data[i]; c {
		case ' ', '\t', '\n', '\r', ':':
			i++
		case ',':
			if t := top(); t != nil && t.object {
				t.expectKey = true
			}
			i++
		case '{':
			stack = append(stack, scanFrame{object: true, expectKey: true})
			i++
		case '[':
			stack = append(stack, scanFrame{sensitive: valueSensitive()})
			i++
		case '}', ']':
			if len(stack) == 0 {
				return false, fmt.Errorf("redact JSON: unexpected %q at byte %d", c, i)
			}
			stack = stack[:len(stack)-1]
			i++
		case '"':
			s, n, err := readString(data[i:])
			if err != nil {
				return false, fmt.Errorf("redact JSON at byte %d: %w", i, err)
			}
			i += n
			if t := top(); t != nil && t.object && t.expectKey {
				t.sensitive, t.expectKey = r.sensitiveKey(s), false
				if _, changed := r.Text(s); changed {
					return true, nil // a secret used as a key
				}
				continue
			}
			if _, changed := r.str(s, valueSensitive()); changed {
				return true, nil
			}
		default:
			j := i
			for j < len(data) && !strings.ContainsRune(",]} \t\n\r", rune(data[j])) {
				j++
			}
			if j == i {
				return false, fmt.Errorf("redact JSON: unexpected %q at byte %d", c, i)
			}
			lit := data[i:j]
			isNumber := !bytes.Equal(lit, []byte("true")) && !bytes.Equal(lit, []byte("false")) && !bytes.Equal(lit, []byte("null"))
			if isNumber && valueSensitive() {
				return true, nil
			}
			i = j
		}
	}
	if len(stack) != 0 {
		return false, errors.New("redact JSON: unexpected end of input")
	}
	return false, nil
}

// readString decodes the JSON string at the start of data and returns it
// with the number of bytes it took.
func readString(data []byte) (string, int, error) {
	escaped := false
	for j := 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			escaped = true
			j++ // skip the escaped byte
		case '"':
			if !escaped && utf8.Valid(data[1:j]) {
				return string(data[1:j]), j + 1, nil
			}
			// Escapes, and invalid UTF-8 (which decoding turns into
			// U+FFFD): decode as the full redaction will.
			var s string
			if err := json.Unmarshal(data[:j+1], &s); err != nil {
				return "", 0, err
			}
			return s, j + 1, nil
		}
	}
	return "", 0, errors.New("unterminated string")
}
