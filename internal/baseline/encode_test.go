package baseline

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestAppendJSONMatchesMarshal: AppendJSON writes what json.Marshal writes,
// byte for byte, for profiles with every field set, with fields drawn
// (nil, empty and full collections, strings JSON escapes or replaces,
// zoned and zero times), for an empty and a learned profile; a field added
// to Profile, Shape, DestUse or Fingerprint that AppendJSON does not write
// fails here.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	c := cfg(t)
	learned := NewProfile("coder", "v1")
	for i := range 40 {
		ev := Event{Session: string(rune('a' + i%7)), Tool: "Bash", Kind: "execute", Kinds: []string{"execute"},
			Effect: []string{"allow", "deny", "ask"}[i%3], Destinations: []string{"host:h.example", "path:/w/<x>"}}
		learned.Learn(c, ev, time.Date(2026, 12, 4, 21, i, 0, 0, time.UTC))
	}
	full := &Profile{}
	fill(t, reflect.ValueOf(full).Elem(), 1, nil)
	profiles := []*Profile{{}, NewProfile("a", ""), learned, full}
	r := rand.New(rand.NewPCG(17, 5))
	for range 2000 {
		p := &Profile{}
		fill(t, reflect.ValueOf(p).Elem(), 1, r)
		profiles = append(profiles, p)
	}
	failed := 0
	for i, p := range profiles {
		want, werr := json.Marshal(p)
		if werr != nil {
			failed++
		}
		got, gerr := p.AppendJSON([]byte("x"))
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("profile %d: json.Marshal error %v, AppendJSON error %v", i, werr, gerr)
		}
		if werr == nil && !bytes.Equal(got[1:], want) {
			t.Fatalf("profile %d:\nAppendJSON  %s\njson.Marshal %s", i, got[1:], want)
		}
	}
	if failed == 0 || failed == len(profiles) {
		t.Fatalf("%d of %d profiles failed to encode: the draws miss a case", failed, len(profiles))
	}
}
