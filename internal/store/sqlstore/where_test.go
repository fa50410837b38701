package sqlstore

import (
	"slices"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
)

// The listings are shared by both stores: the placeholders and the
// parameters must line up in each dialect, the LIMIT last.
func TestListingQueries(t *testing.T) {
	sqlite := Dialect{AgentID: "json_extract(agent, '$.id')", Order: "rowid", Gap: "gap = 1"}
	pg := Dialect{Numbered: true, AgentID: "agent_id", Order: "ord", Gap: "gap"}
	f := store.SessionFilter{AgentID: "a1", Status: "open", Before: "s9", Limit: 5}
	for _, tc := range []struct {
		name     string
		run      func() (string, []any)
		wantQ    string
		wantArgs []any
	}{
		{"sessions, sqlite", func() (string, []any) { return SessionsQuery(sqlite, "c", f) },
			"SELECT c FROM sessions WHERE json_extract(agent, '$.id') = ? AND status = ? AND rowid < (SELECT rowid FROM sessions WHERE id = ?) ORDER BY rowid DESC LIMIT ?",
			[]any{"a1", "open", "s9", 5}},
		{"sessions, postgres", func() (string, []any) { return SessionsQuery(pg, "c", f) },
			"SELECT c FROM sessions WHERE agent_id = $1 AND status = $2 AND ord < (SELECT ord FROM sessions WHERE id = $3) ORDER BY ord DESC LIMIT $4",
			[]any{"a1", "open", "s9", 5}},
		{"decisions of a tree, postgres", func() (string, []any) {
			return DecisionsQuery(pg, store.DecisionFilter{Tree: "r", AgentID: "a1", Effect: "deny", Limit: 7})
		},
			"WITH RECURSIVE tree(id) AS (SELECT CAST($1 AS TEXT) UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_id = t.id) " +
				"SELECT " + DecisionCols + ", " + Bound("decisions") + " FROM decisions WHERE session_id IN (SELECT id FROM tree) AND session_id IN (SELECT id FROM sessions WHERE agent_id = $2) AND effect = $3 ORDER BY ord DESC LIMIT $4",
			[]any{"r", "a1", "deny", 7}},
		{"decisions of a tree, sqlite", func() (string, []any) {
			return DecisionsQuery(sqlite, store.DecisionFilter{Tree: "r", Limit: 7})
		},
			"WITH RECURSIVE tree(id) AS (SELECT CAST(? AS TEXT) UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_id = t.id) " +
				"SELECT " + DecisionCols + ", " + Bound("decisions") + " FROM decisions WHERE session_id IN (SELECT id FROM tree) ORDER BY rowid DESC LIMIT ?",
			[]any{"r", 7}},
		{"approvals, postgres, no filter", func() (string, []any) { return ApprovalsQuery(pg, "c", store.ApprovalFilter{}) },
			"SELECT c FROM approvals ORDER BY id DESC LIMIT $1",
			[]any{100}},
		{"approvals, sqlite", func() (string, []any) {
			return ApprovalsQuery(sqlite, "c", store.ApprovalFilter{SessionID: "s1", Before: "x", Limit: 2})
		},
			"SELECT c FROM approvals WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
			[]any{"s1", "x", 2}},
		{"decisions of a session, postgres", func() (string, []any) {
			return DecisionsQuery(pg, store.DecisionFilter{SessionID: "s1", AfterSeq: 3, Effect: "deny"})
		},
			"SELECT " + DecisionCols + ", " + Bound("decisions") + " FROM decisions WHERE session_id = $1 AND seq > $2 AND effect = $3 ORDER BY seq LIMIT $4",
			[]any{"s1", 3, "deny", 100}},
		{"decisions of all sessions, sqlite", func() (string, []any) { return DecisionsQuery(sqlite, store.DecisionFilter{Limit: 7}) },
			"SELECT " + DecisionCols + ", " + Bound("decisions") + " FROM decisions ORDER BY rowid DESC LIMIT ?",
			[]any{7}},
		{"gaps of a session, postgres", func() (string, []any) { return GapsQuery(pg, store.GapFilter{SessionID: "s1", Limit: 4}) },
			"SELECT " + ObservationCols + ", " + Bound("observations") + " FROM observations WHERE gap AND session_id = $1 ORDER BY ord DESC LIMIT $2",
			[]any{"s1", 4}},
		{"gaps, sqlite", func() (string, []any) { return GapsQuery(sqlite, store.GapFilter{}) },
			"SELECT " + ObservationCols + ", " + Bound("observations") + " FROM observations WHERE gap = 1 ORDER BY rowid DESC LIMIT ?",
			[]any{100}},
	} {
		q, args := tc.run()
		if q != tc.wantQ {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, q, tc.wantQ)
		}
		if !slices.Equal(args, tc.wantArgs) {
			t.Errorf("%s: args %v, want %v", tc.name, args, tc.wantArgs)
		}
	}
}

// VerifyRows reads every bound table, each in its store's order, with the
// leaf once more after the row's columns.
func TestBoundTables(t *testing.T) {
	order := func(table string) string {
		if table == "mandates" {
			return "session_id, version"
		}
		return "ord"
	}
	nop := func(Scanner) error { return nil }
	var names []string
	for _, tb := range BoundTables(order, "a, b", nop, nop) {
		names = append(names, tb.Name)
		want := "SELECT a, b, approvals.leaf FROM approvals ORDER BY ord"
		if tb.Name != "approvals" {
			cols := map[string]string{"sessions": SessionCols, "mandates": MandateCols, "decisions": DecisionCols, "observations": ObservationCols,
				"tool_pins": ToolPinCols, "tool_changes": ToolChangeCols}[tb.Name]
			want = "SELECT " + cols + ", " + Bound(tb.Name) + ", leaf FROM " + tb.Name + " ORDER BY " + order(tb.Name)
		}
		if tb.Query != want {
			t.Errorf("%s:\n got %s\nwant %s", tb.Name, tb.Query, want)
		}
		if tb.Scan == nil {
			t.Errorf("%s: no scan", tb.Name)
		}
	}
	tables := RecordTables()
	for _, n := range names {
		found := n == "approvals"
		for _, tn := range tables {
			found = found || tn == n
		}
		if !found {
			t.Errorf("table %s has no record type in RecordTables", n)
		}
	}
	if len(names) != 7 || len(tables) != 6 {
		t.Errorf("tables %v, record tables %v", names, tables)
	}
}
