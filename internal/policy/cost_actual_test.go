package policy

import (
	"strings"
	"testing"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// TestActualCostCharges checks the run-time charge of each custom
// function, from the table and above it, and that a charge from the
// table costs no allocation.
func TestActualCostCharges(t *testing.T) {
	a := newActualCost()
	deep := strings.Repeat("a/", 40) // 41 segments
	cases := []struct {
		fn   string
		args []ref.Val
		want uint64
		ok   bool
	}{
		{"glob", []ref.Val{types.String("a/*"), types.String("a/b")}, 4, true},
		{"glob", []ref.Val{types.String(deep), types.String(deep)}, 41 * 41, true},
		{"glob", []ref.Val{types.String("x")}, 0, true},
		{"host_matches", []ref.Val{types.String("*.example.org"), types.String("a.example.org")}, 3, true},
		{"origin", nil, flowLookupCost, true},
		{"trust", nil, flowLookupCost, true},
		{"injected", nil, flowLookupCost, true},
		{"size", nil, 0, false},
	}
	for _, c := range cases {
		got := a.CallCost(c.fn, "", c.args, nil)
		if (got != nil) != c.ok || (got != nil && *got != c.want) {
			t.Errorf("%s%v: got %v, want %d (charged %v)", c.fn, c.args, got, c.want, c.ok)
		}
	}
	args := []ref.Val{types.String("a/*"), types.String("a/b")}
	if n := testing.AllocsPerRun(100, func() { a.CallCost("glob", "", args, nil) }); n != 0 {
		t.Errorf("a charge from the table allocates %.0f times", n)
	}
}
