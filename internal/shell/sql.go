package shell

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// SQL is classified by the leading keyword of each statement, after comments
// and string literals are stripped so that neither can hide or fake a
// keyword. This is not a SQL parser: it only needs to tell reads from writes
// from destruction, and to err toward the more consequential.

type SQLResult struct {
	kinds       act.Set
	destructive bool
	notes       []string
	statements  int
	// cut is set when a statement had more than MaxSQLWords words: the
	// rest of it was not read.
	cut bool
}

// sqlKeywordKinds maps a statement's leading keyword to its kind.
var sqlKeywordKinds = map[string]act.Kind{
	"select": act.Read, "show": act.Read, "describe": act.Read, "desc": act.Read, "explain": act.Read, "values": act.Read,
	"table": act.Read, "pragma": act.Read, "begin": act.Read, "start": act.Read, "commit": act.Read, "rollback": act.Read,
	"end": act.Read, "savepoint": act.Read, "release": act.Read, "set": act.Read, "reset": act.Read, "use": act.Read,
	"listen": act.Read, "fetch": act.Read, "declare": act.Read, "close": act.Read, "with": act.Read,
	"insert": act.Write, "update": act.Write, "merge": act.Write, "upsert": act.Write, "replace": act.Write,
	"create": act.Write, "alter": act.Write, "comment": act.Write, "grant": act.Write, "revoke": act.Write,
	"rename": act.Write, "copy": act.Write, "load": act.Write, "import": act.Write, "analyze": act.Read, "vacuum": act.Write,
	"reindex": act.Write, "cluster": act.Write, "refresh": act.Write, "lock": act.Write, "notify": act.Write,
	"attach": act.Write, "detach": act.Write, "optimize": act.Write, "flush": act.Write,
	"delete": act.Delete, "drop": act.Delete, "truncate": act.Delete, "purge": act.Delete,
	"call": act.Execute, "exec": act.Execute, "execute": act.Execute, "do": act.Execute,
}

// ClassifySQL classifies a script of SQL statements.
func ClassifySQL(q string) SQLResult {
	var r SQLResult
	clean := stripSQL(q)
	for _, stmt := range strings.Split(clean, ";") {
		words := sqlWords(stmt, act.MaxSQLWords+1)
		if len(words) == 0 {
			continue
		}
		if len(words) > act.MaxSQLWords {
			words, r.cut = words[:act.MaxSQLWords], true
		}
		r.statements++
		r.statement(words)
	}
	return r
}

func (r *SQLResult) statement(words []string) {
	first := words[0]
	// WITH … AS (…) <verb>: the verb after the CTEs decides. Parentheses
	// were flattened by stripSQL, so look for the first data verb.
	if first == "with" || first == "explain" {
		for _, w := range words[1:] {
			if w == "analyze" && first == "explain" {
				// EXPLAIN ANALYZE runs the statement.
				continue
			}
			switch w {
			case "insert", "update", "delete", "merge":
				r.statement(words[slices.Index(words, w):])
				return
			}
		}
		r.kinds.Add(act.Read)
		if first == "with" && slices.Contains(words, "into") {
			r.kinds.Add(act.Write)
		}
		return
	}
	k, ok := sqlKeywordKinds[first]
	if !ok {
		r.kinds.Add(act.Execute)
		r.notes = append(r.notes, "SQL statement "+strings.ToUpper(first)+" not recognised")
		return
	}
	switch first {
	case "select":
		if slices.Contains(words, "into") {
			// SELECT … INTO creates a table, or writes a file with
			// INTO OUTFILE / DUMPFILE.
			k = act.Write
			if slices.Contains(words, "outfile") || slices.Contains(words, "dumpfile") {
				r.notes = append(r.notes, "SELECT … INTO OUTFILE writes a file on the database server")
			}
		}
	case "pragma":
		if strings.Contains(strings.Join(words, " "), "=") {
			k = act.Write
		}
	case "copy":
		if slices.Contains(words, "program") {
			k = act.Execute
			r.notes = append(r.notes, "COPY … PROGRAM runs a command on the database server")
		} else if slices.Contains(words, "to") && !slices.Contains(words, "stdout") {
			r.notes = append(r.notes, "COPY … TO writes a file on the database server")
		} else if slices.Contains(words, "to") {
			k = act.Read
		}
	case "delete":
		r.destructive = true
		if !slices.Contains(words, "where") {
			r.notes = append(r.notes, "DELETE without WHERE deletes every row")
		} else {
			r.notes = append(r.notes, "DELETE removes rows")
		}
	case "drop":
		r.destructive = true
		r.notes = append(r.notes, "DROP "+strings.ToUpper(strings.Join(words[1:min(len(words), 3)], " "))+" destroys it with its data")
	case "truncate":
		r.destructive = true
		r.notes = append(r.notes, "TRUNCATE deletes every row")
	case "update":
		if !slices.Contains(words, "where") {
			r.destructive = true
			r.notes = append(r.notes, "UPDATE without WHERE overwrites every row")
		}
	case "alter":
		if slices.Contains(words, "drop") {
			k = act.Delete
			r.destructive = true
			r.notes = append(r.notes, "ALTER … DROP destroys a column or constraint with its data")
		}
	case "flush":
		if len(words) > 1 && (words[1] == "all" || words[1] == "db") {
			k = act.Delete
			r.destructive = true
		}
	}
	r.kinds.Add(k)
}

// stripSQL removes comments and the contents of string literals, keeping
// quoted identifiers' text (they cannot be keywords where it matters).
func stripSQL(q string) string {
	var b strings.Builder
	b.Grow(len(q))
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '-' && i+1 < len(q) && q[i+1] == '-', c == '#':
			for i < len(q) && q[i] != '\n' {
				i++
			}
			b.WriteByte(' ')
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				i = len(q)
			} else {
				i += end + 3
			}
			b.WriteByte(' ')
			i--
		case c == '\'':
			// '…' with '' escapes; the content is dropped.
			i++
			for i < len(q) {
				if q[i] == '\'' {
					if i+1 < len(q) && q[i+1] == '\'' {
						i += 2
						continue
					}
					break
				}
				if q[i] == '\\' {
					i++
				}
				i++
			}
			b.WriteString(" '' ")
		case c == '$' && i+1 < len(q) && (q[i+1] == '$' || isIdentStart(q[i+1])):
			// PostgreSQL dollar quoting: $tag$ … $tag$.
			j := i + 1
			for j < len(q) && q[j] != '$' && (isIdentStart(q[j]) || isDigit(q[j])) {
				j++
			}
			if j < len(q) && q[j] == '$' {
				tag := q[i : j+1]
				end := strings.Index(q[j+1:], tag)
				if end < 0 {
					i = len(q)
				} else {
					i = j + 1 + end + len(tag) - 1
				}
				b.WriteString(" '' ")
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sqlWords returns the lower-case words of a statement (identifiers and
// keywords; punctuation and parentheses separate words).
func sqlWords(s string, limit int) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		var c byte = ' '
		if i < len(s) {
			c = s[i]
		}
		word := isIdentStart(c) || isDigit(c) || c == '=' || c == '$'
		if word && start < 0 {
			start = i
		}
		if !word && start >= 0 {
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
			if len(out) >= limit {
				break
			}
		}
	}
	return out
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// LooksLikeSQL reports whether free text (a "query" argument) is SQL rather
// than a search query: a statement keyword first and SQL structure after.
func LooksLikeSQL(s string) bool {
	words := sqlWords(stripSQL(s), 12)
	if len(words) < 2 {
		return false
	}
	if _, ok := sqlKeywordKinds[words[0]]; !ok {
		return false
	}
	switch words[0] {
	case "drop", "truncate", "create", "alter":
		return slices.Contains(words, "table") || slices.Contains(words, "database") || slices.Contains(words, "schema") ||
			slices.Contains(words, "index") || slices.Contains(words, "view") || slices.Contains(words, "collection")
	}
	for _, w := range []string{"from", "into", "set", "where", "table", "values"} {
		if slices.Contains(words, w) {
			return true
		}
	}
	return strings.HasSuffix(strings.TrimSpace(s), ";")
}

// apply adds the classification to the kinds, the destructive flag and
// the notes of what ran the SQL (a tool call's builder, a shell command's
// invocation), and tells cut of a statement not read to its end.
func (r SQLResult) Apply(ks *act.Set, destructive *bool, note, cut func(string)) {
	if r.statements == 0 {
		return
	}
	*ks |= r.kinds
	if r.destructive {
		*destructive = true
	}
	for _, n := range r.notes {
		note(n)
	}
	if r.cut {
		cut(fmt.Sprintf("a SQL statement has more than %d words (MaxSQLWords): the rest of it was not examined", act.MaxSQLWords))
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
