package baseline

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// TestAppendJSONReusing: a profile learned round by round, each round one
// session's events (a new session or an old one, past the ring's bound),
// written reusing the last round's shapes, is json.Marshal's bytes every
// round; two shapes naming one session are written afresh.
func TestAppendJSONReusing(t *testing.T) {
	c := cfg(t)
	r := rand.New(rand.NewPCG(17, 6))
	p := NewProfile("coder", "")
	var prev ShapeJSON
	sessions := 0
	for round := range 600 {
		if sessions == 0 || r.IntN(2) == 0 {
			sessions++
		}
		sess := fmt.Sprintf("s-%d", sessions-r.IntN(min(sessions, 5)))
		for range 1 + r.IntN(4) {
			k := []string{"read", "write", "execute", "fetch"}[r.IntN(4)]
			ev := Event{Session: sess, Tool: "T" + k, Kind: k, Kinds: []string{k}, Effect: []string{"allow", "allow", "deny", "ask"}[r.IntN(4)],
				Destinations: []string{fmt.Sprintf("host:h%d.example", r.IntN(40))}}
			p.Learn(c, ev, time.Date(2026, 12, 4, 0, round, 0, 0, time.UTC))
		}
		got, next, err := p.AppendJSONReusing(nil, prev, sess)
		want, _ := json.Marshal(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("round %d (%v):\nreusing      %s\njson.Marshal %s", round, err, got, want)
		}
		prev = next
	}
	if len(p.Shapes) != c.Learning.MaxShapes {
		t.Fatalf("%d shapes: the ring was not filled", len(p.Shapes))
	}
	d := &Profile{Shapes: []Shape{{Session: "a", Calls: 1}, {Session: "a", Calls: 2}, {Session: "b"}}}
	_, prev, _ = d.AppendJSONReusing(nil, nil, "")
	d.Shapes[0].Calls, d.Shapes[1].Calls = 7, 8
	got, _, _ := d.AppendJSONReusing(nil, prev, "b")
	if want, _ := json.Marshal(d); !bytes.Equal(got, want) {
		t.Fatalf("shapes sharing a session:\nreusing      %s\njson.Marshal %s", got, want)
	}
}
