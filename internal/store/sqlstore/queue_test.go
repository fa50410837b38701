package sqlstore

import (
	"errors"
	"slices"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
)

func TestQueue(t *testing.T) {
	q := NewQueue[int](8)
	for i := range 5 {
		if err := q.Put(i, nil); err != nil {
			t.Fatalf("Put(%d) = %v", i, err)
		}
	}
	broken := errors.New("broken")
	if err := q.Put(9, func() error { return broken }); err != broken {
		t.Errorf("Put with a refusal = %v, want it", err)
	}
	if !q.Close() || q.Close() {
		t.Error("Close should report true once, then false")
	}
	if err := q.Put(5, nil); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Put after Close = %v, want store.ErrClosed", err)
	}
	var got [][]int
	for batch := range q.Batches(2) {
		got = append(got, batch)
	}
	// Batches of at most two, in order; the refused and late jobs are not
	// among them.
	if want := [][]int{{0, 1}, {2, 3}, {4}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches = %v, want %v", got, want)
	}
}
