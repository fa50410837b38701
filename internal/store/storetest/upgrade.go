package storetest

import (
	"context"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
)

// Upgraded checks a store migrated from a schema before rows were bound,
// by each backend's migration test: session sess loads, with its pins
// tool pins and its changes tool changes, and every row holds against the
// evidence log (VerifyRows).
func Upgraded(t *testing.T, s interface {
	store.Store
	VerifyRows(ctx context.Context, report func(problem string)) error
}, sess string, pins, changes int) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.GetSession(ctx, sess); err != nil {
		t.Fatalf("session after the upgrade: %v", err)
	}
	if got, err := s.ListToolPins(ctx, sess); err != nil || len(got) != pins {
		t.Fatalf("tool pins after the upgrade: %d %v, want %d", len(got), err, pins)
	}
	if got, err := s.ListToolChanges(ctx, sess); err != nil || len(got) != changes {
		t.Fatalf("tool changes after the upgrade: %d %v, want %d", len(got), err, changes)
	}
	var problems []string
	if err := s.VerifyRows(ctx, func(p string) { problems = append(problems, p) }); err != nil || len(problems) > 0 {
		t.Fatalf("rows after the upgrade: %v %v", err, problems)
	}
}
