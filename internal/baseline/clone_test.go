package baseline

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// oddStrings are strings encoding/json escapes or replaces.
var oddStrings = []string{"", "host:example.org", `a"b\c`, "a<b", "a>b", "a&b", "<&>", "line\nbreak\t\b\f\x00\x1f", "\u2028\u2029", "\xff\xfe", "é 日本", "\x7f", "ok"}

// fill sets every field reachable from v. With r nil every value is not
// its zero: maps and slices get one element, pointers a target. With r,
// each is drawn: nil, empty or a few elements, odd strings, negative and
// large integers, zero and zoned times.
func fill(t *testing.T, v reflect.Value, n int, r *rand.Rand) {
	t.Helper()
	size := 1
	if r != nil {
		size = r.IntN(4) - 1 // -1: nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s")
		if r != nil {
			v.SetString(oddStrings[r.IntN(len(oddStrings))])
		}
	case reflect.Int:
		v.SetInt(int64(n))
		if r != nil {
			v.SetInt([]int64{0, 1, -7, 1 << 40, math.MinInt64}[r.IntN(5)])
		}
	case reflect.Bool:
		v.SetBool(r == nil || r.IntN(2) == 1)
	case reflect.Array:
		for i := range v.Len() {
			fill(t, v.Index(i), n+i, r)
		}
	case reflect.Slice:
		if size >= 0 {
			v.Set(reflect.MakeSlice(v.Type(), size, size))
		}
		for i := range max(size, 0) {
			fill(t, v.Index(i), n+i, r)
		}
	case reflect.Map:
		if size >= 0 {
			v.Set(reflect.MakeMap(v.Type()))
		}
		for i := range max(size, 0) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(t, k, n+i, r)
			fill(t, e, n+i, r)
			v.SetMapIndex(k, e)
		}
	case reflect.Pointer:
		if size != -1 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(t, v.Elem(), n, r)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			at := time.Date(2026, 12, 4, 21, 0, 0, n, time.UTC)
			if r != nil {
				at = []time.Time{{}, at, at.In(time.FixedZone("", 5*3600+1800)), time.Unix(0, 1).Add(time.Duration(r.Int64())), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}[r.IntN(5)]
			}
			v.Set(reflect.ValueOf(at))
			return
		}
		for i := range v.NumField() {
			fill(t, v.Field(i), n+i, r)
		}
	default:
		t.Fatalf("fill: a field of kind %s", v.Kind())
	}
}

// shared names the first map, slice or pointer a and b share, "" if none.
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer:
		if !a.IsNil() && a.UnsafePointer() == b.UnsafePointer() {
			return path
		}
	}
	switch a.Kind() {
	case reflect.Array, reflect.Slice:
		for i := range a.Len() {
			if p := shared(a.Index(i), b.Index(i), path+"[]"); p != "" {
				return p
			}
		}
	case reflect.Map:
		for _, k := range a.MapKeys() {
			if p := shared(a.MapIndex(k), b.MapIndex(k), path+"[k]"); p != "" {
				return p
			}
		}
	case reflect.Pointer:
		if !a.IsNil() {
			return shared(a.Elem(), b.Elem(), path)
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if p := shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestCloneSharesNothing: a clone of a profile with every field set is
// equal to it and shares none of its maps, slices or pointers; a nil or
// empty collection stays nil or empty, so the clone stores as the
// original does.
func TestCloneSharesNothing(t *testing.T) {
	p := &Profile{}
	fill(t, reflect.ValueOf(p).Elem(), 1, nil)
	q := p.Clone()
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("clone differs:\n%+v\n%+v", p, q)
	}
	if path := shared(reflect.ValueOf(p), reflect.ValueOf(q), "Profile"); path != "" {
		t.Fatalf("the clone shares %s", path)
	}
	empty := &Profile{Tools: map[string]int{}, Shapes: []Shape{}}
	for _, e := range []*Profile{{}, empty} {
		a, _ := json.Marshal(e)
		b, _ := json.Marshal(e.Clone())
		if string(a) != string(b) {
			t.Fatalf("clone stores as %s, original as %s", b, a)
		}
	}
}
