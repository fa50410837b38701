package ui

import (
	"testing"
	"time"
)

// The sign-ins kept in memory are bounded: past the bound the one that
// expires first goes, expired ones go first of all.
func TestSignInsBounded(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newSignIns(time.Hour, 3)
	a, _ := s.add([]byte("a"), now)
	b, _ := s.add([]byte("b"), now.Add(time.Minute))
	c, _ := s.add([]byte("c"), now.Add(2*time.Minute))
	d, _ := s.add([]byte("d"), now.Add(3*time.Minute))
	if _, ok := s.get(a, now.Add(4*time.Minute)); ok {
		t.Error("the oldest sign-in survived past the bound")
	}
	for _, id := range []string{b, c, d} {
		if _, ok := s.get(id, now.Add(4*time.Minute)); !ok {
			t.Errorf("sign-in %s was dropped", id)
		}
	}
	if len(s.m) != 3 {
		t.Errorf("%d sign-ins kept, bound 3", len(s.m))
	}
	// Expired ones are dropped when read, and make room first.
	if _, ok := s.get(b, now.Add(2*time.Hour)); ok {
		t.Error("an expired sign-in still works")
	}
	e, _ := s.add([]byte("e"), now.Add(2*time.Hour))
	if _, ok := s.get(e, now.Add(2*time.Hour)); !ok || len(s.m) > 3 {
		t.Errorf("after expiry: %d kept", len(s.m))
	}
	// Each sign-in has its own CSRF token and handle.
	x, sx := s.add([]byte("x"), now)
	y, sy := s.add([]byte("x"), now)
	if x == y || sx.csrf == sy.csrf || len(x) < 40 {
		t.Errorf("handles %q %q, csrf %q %q", x, y, sx.csrf, sy.csrf)
	}
}
