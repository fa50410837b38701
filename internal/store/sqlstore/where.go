package sqlstore

import (
	"strconv"
	"strings"
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
