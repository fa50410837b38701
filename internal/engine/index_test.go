package engine

import (
	"fmt"
	"testing"
)

func TestDecisionIndexEvictsOldest(t *testing.T) {
	x := newDecisionIndex(3)
	for i := range 5 {
		x.put(fmt.Sprint("d", i), indexed{session: fmt.Sprint("s", i)})
	}
	for i, want := range []bool{false, false, true, true, true} {
		s, ok := x.get(fmt.Sprint("d", i))
		if ok != want || (ok && s.session != fmt.Sprint("s", i)) {
			t.Errorf("d%d: %q %v, want present=%v", i, s, ok, want)
		}
	}
	if len(x.m) != 3 {
		t.Errorf("index holds %d entries, want 3", len(x.m))
	}
}
