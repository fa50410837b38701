package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

// TestMigrationBindsExistingRows: a database written before rows were bound
// (schema version 7) gets every row's leaf from its record at upgrade, and
// then loads and verifies like a new one.
func TestMigrationBindsExistingRows(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1700000000, 0).UTC()
	d1, d2 := decision("s1", 1), decision("s1", 2)
	s, path := seeded(t, Options{}, newSession("s1"), d1, d2,
		recorded(&store.Change{Observation: &store.Observation{ID: "o1", DecisionID: "s1-d1", SessionID: "s1", Output: json.RawMessage(`"ok"`), Origin: "observed", CreatedAt: now}}),
		recorded(&store.Change{Approvals: []*store.Approval{{ID: "a1", SessionID: "s1", DecisionID: "s1-d2", Tool: "Read", ArgsHash: "h", State: store.ApprovalPending, Deadline: now.Add(time.Hour), Rev: 1, CreatedAt: now}}}),
		recorded(&store.Change{ToolPins: []*store.ToolPin{
			{SessionID: "s1", Tool: "search", Hash: "h1", Definition: json.RawMessage(`{"name":"search"}`), CreatedAt: now},
			{SessionID: "s1", Tool: "fetch", Hash: "h2", Definition: json.RawMessage(`{"name":"fetch"}`), CreatedAt: now},
		}}),
		recorded(&store.Change{ToolChanges: []*store.ToolChange{{ID: "c1", SessionID: "s1", Tool: "search", PinnedHash: "h1", Hash: "h3", Definition: json.RawMessage(`{"name":"search","description":"evil"}`), CreatedAt: now}}}),
	)
	s.Close()
	// Every field of a decision in its own column again (version 13).
	toLegacyDecisions(t, path, []*store.Decision{d1.Decision, d2.Decision})
	// Back to version 7: no leaf columns, none of their indexes, and none
	// of what the migrations after the binding made (budgets, provenance,
	// the tool pins' and changes' leaves).
	edit(t, path,
		`DROP INDEX evidence_leaf`, `DROP INDEX evidence_session_type`, `DROP INDEX observations_session`,
		`ALTER TABLE sessions DROP COLUMN leaf`, `ALTER TABLE mandates DROP COLUMN leaf`, `ALTER TABLE decisions DROP COLUMN leaf`,
		`ALTER TABLE observations DROP COLUMN leaf`, `ALTER TABLE approvals DROP COLUMN leaf`,
		`ALTER TABLE tool_pins DROP COLUMN leaf`, `ALTER TABLE tool_changes DROP COLUMN leaf`,
		`DROP TABLE budgets`, `ALTER TABLE decisions DROP COLUMN provenance`, `PRAGMA user_version = 7`)
	s = open(t, path, Options{})
	if ds, err := s.ListDecisions(ctx, store.DecisionFilter{SessionID: "s1"}); err != nil || len(ds) != 2 {
		t.Fatalf("decisions after the upgrade: %d %v", len(ds), err)
	}
	if _, err := s.GetApproval(ctx, "a1"); err != nil {
		t.Fatalf("approval after the upgrade: %v", err)
	}
	storetest.Upgraded(t, s, "s1", 2, 1)
	// And a row edited after it is refused, by name.
	s.Close()
	edit(t, path, `UPDATE decisions SET effect = 'deny' WHERE id = 's1-d2'`)
	s = open(t, path, Options{})
	var te *store.TamperError
	if _, err := s.GetDecision(ctx, "s1-d2"); !errors.As(err, &te) || te.Table != "decisions" || te.Row != "s1-d2" || te.Column != "effect" {
		t.Fatalf("edited decision: %v", err)
	}
	s.Close()
	edit(t, path, `UPDATE tool_pins SET hash = 'h3' WHERE tool = 'search'`)
	s = open(t, path, Options{})
	if _, err := s.ListToolPins(ctx, "s1"); !errors.As(err, &te) || te.Table != "tool_pins" || te.Row != "s1/search" || te.Column != "hash" {
		t.Fatalf("edited tool pin: %v", err)
	}
}
