package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

// TestMigrationBindsExistingToolPins: a shared store written before tool
// pins and changes were bound (schema version 6) gets their leaves from
// their records at upgrade, then loads and verifies like a new one, and a
// pin edited after it is refused by name.
func TestMigrationBindsExistingToolPins(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s := openTest(t, dsn, Options{})
	rs := storetest.Recording(s)
	now := time.Unix(1700000000, 0).UTC()
	for _, c := range []*store.Change{
		storetest.NewSession("s1"),
		{ToolPins: []*store.ToolPin{
			{SessionID: "s1", Tool: "search", Hash: "h1", Definition: json.RawMessage(`{"name":"search"}`), CreatedAt: now},
			{SessionID: "s1", Tool: "fetch", Hash: "h2", Definition: json.RawMessage(`{"name":"fetch"}`), CreatedAt: now},
		}},
		{ToolChanges: []*store.ToolChange{{ID: "c1", SessionID: "s1", Tool: "search", PinnedHash: "h1", Hash: "h3", Definition: json.RawMessage(`{"name":"search","description":"evil"}`), CreatedAt: now}}},
	} {
		if err := store.Apply(ctx, rs, c); err != nil {
			t.Fatal(err)
		}
	}
	storetest.Sync(ctx, t, s)
	s.Close()
	// Back to version 6: undo what migration 7 and every later one made
	// (a migration appended after 9 must be undone here too).
	if v := SchemaVersion(); v != 9 {
		t.Fatalf("schema version %d: undo the migrations after 9 below, then raise this", v)
	}
	c := pgtest.Conn(t, dsn)
	toLegacyDecisions(ctx, t, c, nil)
	for _, q := range []string{
		`ALTER TABLE tool_pins DROP COLUMN leaf`, `ALTER TABLE tool_changes DROP COLUMN leaf`,
		// migration 8: budgets bound to their draw records
		`DROP FUNCTION mandate_draw(TEXT, TEXT, DOUBLE PRECISION, DOUBLE PRECISION, DOUBLE PRECISION, BYTEA)`, `ALTER TABLE budgets DROP COLUMN leaf`,
		`UPDATE mandate_schema SET version = 6`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s = openTest(t, dsn, Options{})
	storetest.Upgraded(t, s, "s1", 2, 1)
	if _, err := c.Exec(ctx, `UPDATE tool_pins SET hash = 'h3' WHERE tool = 'search'`); err != nil {
		t.Fatal(err)
	}
	var te *store.TamperError
	if _, err := s.ListToolPins(ctx, "s1"); !errors.As(err, &te) || te.Table != "tool_pins" || te.Row != "s1/search" || te.Column != "hash" {
		t.Fatalf("edited tool pin: %v", err)
	}
	if _, err := c.Exec(ctx, `DELETE FROM tool_changes WHERE id = 'c1'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSession(ctx, "s1"); !errors.As(err, &te) || te.Table != "tool_changes" {
		t.Fatalf("a deleted tool change: %v", err)
	}
}
