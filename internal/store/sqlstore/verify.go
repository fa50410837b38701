package sqlstore

import "github.com/mandate-dev/mandate/internal/store"

// BoundTable is a table whose every row is bound to an evidence record
// (store.Binding), as a store's VerifyRows reads it.
type BoundTable struct {
	Name string
	// Query selects each row's columns and then its leaf once more, so
	// that a row refused by its check still counts as present.
	Query string
	// Scan reads a row's columns (the leaf is the caller's); an error
	// wrapping store.ErrTampered is a finding, any other ends the run.
	Scan func(Scanner) error
}

// BoundTables are the bound tables in the order VerifyRows reads them.
// order gives the ORDER BY of a table's rows; session and decision scan
// those rows, which each store checks its own way; approvals are selected
// as approvalCols (their columns include their binding).
func BoundTables(order func(table string) string, approvalCols string, session, decision func(Scanner) error) []BoundTable {
	q := func(table, cols string) string {
		return `SELECT ` + cols + `, ` + Bound(table) + `, leaf FROM ` + table + ` ORDER BY ` + order(table)
	}
	return []BoundTable{
		{"sessions", q("sessions", SessionCols), session},
		{"mandates", q("mandates", MandateCols), discard(ScanMandate)},
		{"decisions", q("decisions", DecisionCols), decision},
		{"observations", q("observations", ObservationCols), discard(ScanObservation)},
		{"approvals", `SELECT ` + approvalCols + `, approvals.leaf FROM approvals ORDER BY ` + order("approvals"), discard(ScanApproval)},
		{"tool_pins", q("tool_pins", ToolPinCols), discard(ScanToolPin)},
		{"tool_changes", q("tool_changes", ToolChangeCols), discard(ScanToolChange)},
	}
}

func discard[T any](scan func(Scanner) (T, error)) func(Scanner) error {
	return func(r Scanner) error {
		_, err := scan(r)
		return err
	}
}

// RecordTables names the table of each record type whose row VerifyRows
// looks for. (An approval's row is bound to its last record; its deletion
// shows in its session's count of approvals.)
func RecordTables() map[string]string {
	return map[string]string{store.RecordSession: "sessions", store.RecordMandate: "mandates", store.RecordDecision: "decisions", store.RecordObservation: "observations",
		store.RecordToolPin: "tool_pins", store.RecordToolChange: "tool_changes"}
}

// BoundRecords is the condition on the evidence table that selects the
// records of RecordTables' types.
const BoundRecords = `type IN ('session', 'mandate', 'decision', 'observation', 'tool_pin', 'tool_change')`
