package sqlstore

import (
	"strconv"
	"strings"

	"github.com/mandate-dev/mandate/internal/store"
)

// Where builds a query's WHERE clause and its parameters. Conditions are
// written with a ? for each parameter; with Numbered set (PostgreSQL's
// placeholders) each becomes $1, $2, … in the order they were added.
type Where struct {
	Numbered bool
	conds    []string
	// Args are the parameters, in order.
	Args []any
}

// Add adds a condition and its parameters.
func (w *Where) Add(cond string, v ...any) {
	for _, x := range v {
		w.Args = append(w.Args, x)
		if w.Numbered {
			cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.Args)), 1)
		}
	}
	w.conds = append(w.conds, cond)
}

// Next adds a parameter outside the clause (a LIMIT, say) and returns its
// placeholder.
func (w *Where) Next(v any) string {
	w.Args = append(w.Args, v)
	if w.Numbered {
		return "$" + strconv.Itoa(len(w.Args))
	}
	return "?"
}

// Clause is " WHERE cond AND cond…", or "" without a condition.
func (w *Where) Clause() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// Dialect names what a listing query writes differently per database.
type Dialect struct {
	// Numbered: placeholders are $1, $2, … (PostgreSQL) instead of ?.
	Numbered bool
	// AgentID is the expression for a session's agent id.
	AgentID string
	// Order is the column that holds a row's insertion order.
	Order string
	// Gap is the condition that an observation is a gap (a flag column is
	// an integer in SQLite, a boolean in PostgreSQL).
	Gap string
	// LogOrder is the evidence column that holds a record's commit order.
	LogOrder string
	// GapRecord is the condition that an evidence record's body says its
	// observation is a gap (each database reads JSON its own way).
	GapRecord string
}

// SessionLogQuery reads what the log and the tables say about one session
// (the first parameter) for CheckSession, in one statement on the
// session's indexes, in the order CheckSession scans it.
func SessionLogQuery(d Dialect) string {
	id := "?1"
	if d.Numbered {
		id = "$1"
	}
	records := "FROM evidence WHERE session_id = " + id + " AND session_id <> '' AND type = "
	latest := func(typ string) string {
		return "(SELECT body " + records + "'" + typ + "' ORDER BY " + d.LogOrder + " DESC LIMIT 1)"
	}
	count := func(typ string) string { return "(SELECT COUNT(*) " + records + "'" + typ + "')" }
	rows := func(table string) string { return "(SELECT COUNT(*) FROM " + table + " WHERE session_id = " + id + ")" }
	return "SELECT\n\t" + strings.Join([]string{
		latest("session_status"), latest("mandate"),
		count("mandate"), count("decision"), count("observation"), count("approval"),
		rows("mandates"), rows("decisions"), rows("observations"), rows("approvals"),
		"(SELECT COUNT(*) " + records + "'observation' AND " + d.GapRecord + ")",
		"(SELECT COUNT(*) FROM observations WHERE session_id = " + id + " AND " + d.Gap + ")",
		count("tool_pin"), count("tool_change"),
		rows("tool_pins"), rows("tool_changes"),
	}, ",\n\t")
}

// SessionsQuery is the listing of sessions by f, newest first, with its
// parameters; cols is what each row selects.
func SessionsQuery(d Dialect, cols string, f store.SessionFilter) (string, []any) {
	w := Where{Numbered: d.Numbered}
	if f.AgentID != "" {
		w.Add(d.AgentID+" = ?", f.AgentID)
	}
	if f.Status != "" {
		w.Add("status = ?", f.Status)
	}
	if f.ParentID != "" {
		w.Add("parent_id = ?", f.ParentID)
	}
	if f.Before != "" {
		w.Add(d.Order+" < (SELECT "+d.Order+" FROM sessions WHERE id = ?)", f.Before)
	}
	q := `SELECT ` + cols + ` FROM sessions` + w.Clause() + ` ORDER BY ` + d.Order + ` DESC LIMIT ` + w.Next(Limit(f.Limit))
	return q, w.Args
}

// ApprovalsQuery is the listing of approvals by f, newest first (ids are
// UUIDv7, so id order is creation order), with its parameters.
func ApprovalsQuery(d Dialect, cols string, f store.ApprovalFilter) (string, []any) {
	w := Where{Numbered: d.Numbered}
	if f.SessionID != "" {
		w.Add("session_id = ?", f.SessionID)
	}
	if f.State != "" {
		w.Add("state = ?", f.State)
	}
	if f.Before != "" {
		w.Add("id < ?", f.Before)
	}
	q := `SELECT ` + cols + ` FROM approvals` + w.Clause() + ` ORDER BY id DESC LIMIT ` + w.Next(Limit(f.Limit))
	return q, w.Args
}

// DecisionsQuery is the listing of decisions by f: a session's in sequence
// order after f.AfterSeq, otherwise newest first in commit order across
// sessions. f.Tree walks the delegation tree down from its root with a
// recursive query (both dialects have WITH RECURSIVE); f.AgentID takes
// the agent's sessions.
func DecisionsQuery(d Dialect, f store.DecisionFilter) (string, []any) {
	w := Where{Numbered: d.Numbered}
	with := ""
	if f.Tree != "" {
		// The root is the first parameter: the WITH clause comes first in
		// the text, so its placeholder is the first in either dialect.
		w.Add("session_id IN (SELECT id FROM tree)", f.Tree)
		with = `WITH RECURSIVE tree(id) AS (SELECT CAST(` + firstPlaceholder(d) + ` AS TEXT) UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_id = t.id) `
	}
	if f.AgentID != "" {
		w.Add("session_id IN (SELECT id FROM sessions WHERE "+d.AgentID+" = ?)", f.AgentID)
	}
	order := " ORDER BY " + d.Order + " DESC"
	if f.SessionID != "" {
		w.Add("session_id = ?", f.SessionID)
		w.Add("seq > ?", f.AfterSeq)
		order = " ORDER BY seq"
	}
	if f.Effect != "" {
		w.Add("effect = ?", f.Effect)
	}
	q := with + `SELECT ` + DecisionCols + `, ` + Bound("decisions") + ` FROM decisions` + w.Clause() + order + ` LIMIT ` + w.Next(Limit(f.Limit))
	return q, w.Args
}

func firstPlaceholder(d Dialect) string {
	if d.Numbered {
		return "$1"
	}
	return "?"
}

// GapsQuery is the listing of the observations that are gaps, of one
// session or of all, newest first.
func GapsQuery(d Dialect, f store.GapFilter) (string, []any) {
	w := Where{Numbered: d.Numbered}
	w.Add(d.Gap)
	if f.SessionID != "" {
		w.Add("session_id = ?", f.SessionID)
	}
	q := `SELECT ` + ObservationCols + `, ` + Bound("observations") + ` FROM observations` + w.Clause() + ` ORDER BY ` + d.Order + ` DESC LIMIT ` + w.Next(Limit(f.Limit))
	return q, w.Args
}
