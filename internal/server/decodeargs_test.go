package server

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/mandate-dev/mandate/internal/engine"
)

// TestDecodeArgs: absent and null arguments are an empty object, anything
// but an object is invalid, an object is decoded and kept as sent.
func TestDecodeArgs(t *testing.T) {
	cases := []struct {
		raw     string
		want    map[string]any
		wantRaw string
		invalid bool
	}{
		{"", map[string]any{}, "{}", false},
		{" \n\t", map[string]any{}, "{}", false},
		{"null", map[string]any{}, "{}", false},
		{" null ", map[string]any{}, "{}", false},
		{`{"a":1}`, map[string]any{"a": 1.0}, `{"a":1}`, false},
		{` {"a":"b"} `, map[string]any{"a": "b"}, ` {"a":"b"} `, false},
		{`[1]`, nil, "", true},
		{`"x"`, nil, "", true},
		{`{"a":`, nil, "", true},
	}
	for _, c := range cases {
		got, raw, err := decodeArgs(json.RawMessage(c.raw))
		if c.invalid {
			if !errors.Is(err, engine.ErrInvalid) {
				t.Errorf("%q: err %v, want ErrInvalid", c.raw, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) || string(raw) != c.wantRaw {
			t.Errorf("%q: got %v %q %v, want %v %q", c.raw, got, raw, err, c.want, c.wantRaw)
		}
	}
}
