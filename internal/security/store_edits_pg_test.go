package security

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/apptest"
	"github.com/mandate-dev/mandate/internal/cli"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
)

// The same class on the shared store: rows edited in PostgreSQL while the
// replicas are stopped. Each case has a schema of its own (pgtest.DSN),
// filled as makeEditedStore fills a data directory, then edited with SQL;
// `mandate evidence verify --store` must name the edit and a replica
// started on the schema must never act on it. One case per table and kind
// of edit (update, delete, rebinding, a record's body), the gateway's tool
// pins and tool changes included.
func TestSharedStoreEditsAreDetectedAndNeverActedOn(t *testing.T) {
	pgtest.Server(t) // skips (or fails in CI) without PostgreSQL
	const body = `convert_from(body, 'UTF8')`
	tests := []struct {
		name  string
		edit  func(es *editedStore) []any // SQL, then its arguments
		where string
		probe func(es *editedStore) *probe
	}{
		{"deny made allow", func(es *editedStore) []any {
			return []any{`UPDATE decisions SET effect = 'allow' WHERE id = $1`, es.denied}
		}, "column effect", func(es *editedStore) *probe { p := probe{sid: es.mailer}; return &p }},
		{"decision bound to another's record", func(es *editedStore) []any {
			return []any{`UPDATE decisions SET leaf = (SELECT leaf FROM decisions WHERE id = $1) WHERE id = $2`, es.allowed, es.denied}
		}, "decisions row ", func(es *editedStore) *probe { p := probe{sid: es.mailer}; return &p }},
		{"last decision deleted", func(es *editedStore) []any {
			return []any{`DELETE FROM decisions WHERE id = (SELECT id FROM decisions WHERE session_id = $1 ORDER BY seq DESC LIMIT 1)`, es.bystander}
		}, "decisions: evidence record", func(es *editedStore) *probe { p := probe{sid: es.bystander}; return &p }},
		{"mandate widened", func(es *editedStore) []any {
			return []any{`UPDATE mandates SET body = convert_to(jsonb_set(jsonb_set(` + body + `::jsonb, '{prohibit}', '[]'), '{allow}', '["read","write","send","execute","delete","fetch","pay"]')::text, 'UTF8') WHERE session_id = $1`, es.mailer}
		}, "column body", func(es *editedStore) *probe { p := probe{sid: es.mailer}; return &p }},
		{"terminated session reopened", func(es *editedStore) []any {
			return []any{`UPDATE sessions SET status = 'active' WHERE id = $1`, es.ended}
		}, "column status", func(es *editedStore) *probe { p := probe{sid: es.ended}; return &p }},
		{"observation deleted", func(es *editedStore) []any {
			return []any{`DELETE FROM observations WHERE decision_id = $1`, es.allowed}
		}, "observations: evidence record", func(es *editedStore) *probe { p := probe{sid: es.mailer}; return &p }},
		{"gap hidden", func(es *editedStore) []any {
			return []any{`UPDATE observations SET gap = false WHERE session_id = $1 AND gap`, es.mailer}
		}, "observations row", func(es *editedStore) *probe { p := probe{sid: es.mailer}; return &p }},
		{"approval approved in its body", func(es *editedStore) []any {
			return []any{`UPDATE approvals SET body = convert_to(jsonb_set(` + body + `::jsonb, '{state}', '"approved"')::text, 'UTF8'), state = 'approved' WHERE id = $1`, es.approval}
		}, "column state", func(es *editedStore) *probe { p := call(es.mailer, "send_email", toEve); return &p }},
		{"approval deleted", func(es *editedStore) []any {
			return []any{`DELETE FROM approvals WHERE id = $1`, es.approval}
		}, "approvals row of session", func(es *editedStore) *probe { p := probe{sid: es.mailer}; return &p }},
		{"changed tool re-pinned", func(es *editedStore) []any {
			// The change that refuses the tool deleted, its definition
			// made the pin: the rug pull would pass as unchanged.
			return []any{`WITH d AS (DELETE FROM tool_changes WHERE id = $1 RETURNING session_id, tool, hash, definition)
				UPDATE tool_pins p SET hash = d.hash, definition = d.definition FROM d WHERE p.session_id = d.session_id AND p.tool = d.tool`, es.toolChange}
		}, "tool_pins row ", func(es *editedStore) *probe { p := gateway(es.lister)(); return &p }},
		{"pin deleted", func(es *editedStore) []any {
			return []any{`DELETE FROM tool_pins WHERE session_id = $1 AND tool = 'search'`, es.lister}
		}, "tool_pins: evidence record", func(es *editedStore) *probe { p := gateway(es.lister)(); return &p }},
		{"tool change deleted", func(es *editedStore) []any {
			return []any{`DELETE FROM tool_changes WHERE id = $1`, es.toolChange}
		}, "tool_changes: evidence record", func(es *editedStore) *probe { p := gateway(es.lister)(); return &p }},
		{"tool change moved to another tool", func(es *editedStore) []any {
			return []any{`UPDATE tool_changes SET tool = 'weather' WHERE id = $1`, es.toolChange}
		}, "column tool", func(es *editedStore) *probe { p := gateway(es.lister)(); return &p }},
		{"record body edited", func(es *editedStore) []any {
			return []any{`UPDATE evidence SET body = convert_to(replace(` + body + `, '"effect":"deny"', '"effect":"allow"'), 'UTF8') WHERE type = 'decision' AND position($1 IN ` + body + `) > 0`, es.denied}
		}, "no longer hashes to its leaf hash", func(*editedStore) *probe { return nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dsn := pgtest.DSN(t)
			es := makeEditedStoreOn(t, dsn)
			edit := tc.edit(es)
			tag, err := pgtest.Conn(t, dsn).Exec(context.Background(), edit[0].(string), edit[1:]...)
			if err != nil || tag.RowsAffected() == 0 {
				t.Fatalf("%s: %v (%d rows)", edit[0], err, tag.RowsAffected())
			}
			var out, errb bytes.Buffer
			code := cli.Main(context.Background(), []string{"evidence", "verify", "--store", dsn, "--key", es.vkey},
				cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
			if text := out.String() + errb.String(); code == 0 || !strings.Contains(text, "NOT VERIFIED") || !strings.Contains(text, tc.where) {
				t.Errorf("verify --store: exit %d, want a failure naming %q:\n%s", code, tc.where, text)
			}
			p := tc.probe(es)
			if p == nil {
				a, err := app.Open(context.Background(), app.Config{DataDir: es.dir, Store: dsn})
				refusedAsEdited(t, a, err, "a replica")
				return
			}
			in := &instance{apptest.New(t, es.dir)}
			in.Store = dsn
			in.open()
			p.check(t, in)
			if p.sid != es.bystander {
				if _, eff := in.decide("admin", es.bystander, "Read", readDocs); eff != "allow" {
					t.Errorf("the untouched session's read: %s", eff)
				}
			}
		})
	}
}

// An untouched shared store verifies, rows included.
func TestUntouchedSharedRowsVerify(t *testing.T) {
	dsn := pgtest.DSN(t)
	es := makeEditedStoreOn(t, dsn)
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), []string{"evidence", "verify", "--store", dsn, "--key", es.vkey},
		cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code != 0 || !strings.Contains(out.String(), "rows:") {
		t.Fatalf("the untouched shared store: exit %d\n%s%s", code, out.String(), errb.String())
	}
}
