package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

// onceDecisions are storetest.OnceDecisions with their records.
func onceDecisions() []*store.Change {
	var out []*store.Change
	for _, d := range storetest.OnceDecisions() {
		out = append(out, recorded(&store.Change{Decision: d}))
	}
	return out
}

func asReadBefore(d *store.Decision) *store.Decision { return storetest.AsReadBefore(d) }

// TestDecisionStoredOnce: a decision's row keeps only what finds it, and
// args only when the caller's bytes are not the record's; every read gives
// back the decision as submitted, as when each field had its column.
func TestDecisionStoredOnce(t *testing.T) {
	ctx := context.Background()
	changes := onceDecisions()
	s, path := seeded(t, Options{}, append([]*store.Change{newSession("s1")}, changes...)...)
	got, err := s.ListDecisions(ctx, store.DecisionFilter{SessionID: "s1"})
	if err != nil || len(got) != 3 {
		t.Fatalf("list: %d %v", len(got), err)
	}
	for i, c := range changes {
		want := asReadBefore(c.Decision)
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("decision %s:\n got %+v\nwant %+v", want.ID, got[i], want)
		}
		one, err := s.GetDecision(ctx, want.ID)
		if err != nil || !reflect.DeepEqual(one, want) {
			t.Errorf("get %s: %v\n got %+v", want.ID, err, one)
		}
	}
	if d, err := s.DecisionByCall(ctx, "s1", "toolu_1"); err != nil || d.ID != "s1-d1" || d.Judge == nil {
		t.Errorf("by call: %+v %v", d, err)
	}
	if ds, err := s.ListDecisions(ctx, store.DecisionFilter{Effect: "deny"}); err != nil || len(ds) != 1 || ds[0].ID != "s1-d3" {
		t.Errorf("by effect: %v %v", ds, err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cols []string
	rows, err := db.Query(`SELECT name FROM pragma_table_info('decisions') ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		rows.Scan(&c)
		cols = append(cols, c)
	}
	rows.Close()
	if strings.Join(cols, ",") != "id,session_id,seq,effect,call_id,args,leaf" {
		t.Errorf("decisions columns: %v", cols)
	}
	args := map[string]sql.NullString{}
	rows, err = db.Query(`SELECT id, CAST(args AS TEXT) FROM decisions`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			id string
			a  sql.NullString
		)
		rows.Scan(&id, &a)
		args[id] = a
	}
	rows.Close()
	if a := args["s1-d1"]; a.String != string(changes[0].Decision.Args) {
		t.Errorf("non-canonical args kept as %v, want them as given", a)
	}
	if a := args["s1-d2"]; a.Valid {
		t.Errorf("canonical args stored twice: %v", a)
	}
	if a := args["s1-d3"]; a.String != "{}" {
		t.Errorf("empty args kept as %v, want {}", a)
	}
}

// TestDecisionStoredOnceRefusesEdits: what the row keeps is held against
// the record, column by column; what only the record holds cannot change
// without its body no longer hashing to the row's leaf.
func TestDecisionStoredOnceRefusesEdits(t *testing.T) {
	ctx := context.Background()
	_, path := seeded(t, Options{}, append([]*store.Change{newSession("s1")}, onceDecisions()...)...)
	for _, tc := range []struct {
		edit, column string
	}{
		{`UPDATE decisions SET effect = 'allow' WHERE id = 's1-d1'`, "effect"},
		{`UPDATE decisions SET seq = 9 WHERE id = 's1-d1'`, "seq"},
		{`UPDATE decisions SET call_id = 'toolu_9' WHERE id = 's1-d1'`, "call_id"},
		{`UPDATE decisions SET args = '{"to":"eve@example.com"}' WHERE id = 's1-d1'`, "args"},
		{`UPDATE decisions SET args = '{"file_path":"/etc/passwd"}' WHERE id = 's1-d2'`, "args"},
		{`UPDATE decisions SET leaf = NULL WHERE id = 's1-d1'`, "leaf"},
		{`UPDATE decisions SET leaf = (SELECT leaf FROM decisions WHERE id = 's1-d2') WHERE id = 's1-d1'`, "id"},
		{`UPDATE evidence SET body = CAST(replace(CAST(body AS TEXT), '"policy_hash":"ph"', '"policy_hash":"pX"') AS BLOB) WHERE type = 'decision' AND instr(CAST(body AS TEXT), '"s1-d1"') > 0`, "leaf"},
	} {
		t.Run(tc.edit, func(t *testing.T) {
			p := copyFile(t, path)
			db, err := sql.Open("sqlite", p)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := db.Exec(tc.edit); err != nil {
				t.Fatal(err)
			} else if n, _ := res.RowsAffected(); n != 1 {
				t.Fatalf("changed %d rows", n)
			}
			db.Close()
			s, err := OpenReadOnly(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var te *store.TamperError
			if _, err := s.GetDecision(ctx, "s1-d1"); !errors.As(err, &te) || te.Column != tc.column {
				if !strings.Contains(tc.edit, "s1-d2") {
					t.Errorf("edited decision read: %v, want a tamper error on column %s", err, tc.column)
				}
			}
			if _, err := s.ListDecisions(ctx, store.DecisionFilter{SessionID: "s1"}); !errors.As(err, &te) || te.Column != tc.column {
				t.Errorf("listing: %v, want a tamper error on column %s", err, tc.column)
			}
			var problems []string
			if err := s.VerifyRows(ctx, func(p string) { problems = append(problems, p) }); err != nil || len(problems) == 0 {
				t.Errorf("verify rows: %v, found %v", err, problems)
			}
		})
	}
}

// legacyDecisionsTable is the decisions table as schema version 13 had
// it: every field of a decision in a column of its own.
const legacyDecisionsTable = `CREATE TABLE decisions (
	id TEXT PRIMARY KEY,
	session_id TEXT NOT NULL REFERENCES sessions(id),
	seq INTEGER NOT NULL,
	surface TEXT NOT NULL,
	tool TEXT NOT NULL,
	args BLOB NOT NULL,
	action BLOB NOT NULL,
	mandate_version INTEGER NOT NULL,
	policy_hash TEXT NOT NULL,
	effect TEXT NOT NULL,
	rules BLOB NOT NULL,
	reasons BLOB NOT NULL,
	latency_us INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	call_id TEXT NOT NULL DEFAULT '',
	approval_id TEXT NOT NULL DEFAULT '',
	judge BLOB,
	signals BLOB,
	leaf BLOB,
	provenance BLOB,
	UNIQUE (session_id, seq)
);
CREATE INDEX decisions_call ON decisions(session_id, call_id) WHERE call_id != '';`

// toLegacyDecisions turns the database at path back to schema version 13:
// the decisions table rebuilt with every column, filled as that version's
// writer filled it from each submitted decision.
func toLegacyDecisions(t *testing.T, path string, submitted []*store.Decision) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	leaves := map[string][]byte{}
	rows, err := db.Query(`SELECT id, leaf FROM decisions`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			id   string
			leaf []byte
		)
		rows.Scan(&id, &leaf)
		leaves[id] = leaf
	}
	rows.Close()
	if _, err := db.Exec(`DROP TABLE decisions; ` + legacyDecisionsTable); err != nil {
		t.Fatal(err)
	}
	for _, d := range submitted {
		args := append([]any{d.ID, d.SessionID, d.Seq, d.Effect, d.CallID, leaves[d.ID]}, storetest.LegacyDecisionColumns(d)...)
		if _, err := db.Exec(`INSERT INTO decisions (id, session_id, seq, effect, call_id, leaf, surface, tool, args, action, mandate_version, policy_hash, rules, reasons, latency_us, created_at, approval_id, judge, signals, provenance)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`PRAGMA user_version = 13`); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeStoresDecisionsOnce: a store written with every field of a
// decision in its own column (schema version 13) is migrated to rows that
// reference their records, and reads exactly as before; its rows verify,
// and an edit after the upgrade is refused by name.
func TestUpgradeStoresDecisionsOnce(t *testing.T) {
	ctx := context.Background()
	changes := onceDecisions()
	s, path := seeded(t, Options{}, append([]*store.Change{newSession("s1")}, changes...)...)
	s.Close()
	var submitted []*store.Decision
	for _, c := range changes {
		submitted = append(submitted, c.Decision)
	}
	toLegacyDecisions(t, path, submitted)
	s = open(t, path, Options{})
	got, err := s.ListDecisions(ctx, store.DecisionFilter{SessionID: "s1"})
	if err != nil || len(got) != len(submitted) {
		t.Fatalf("decisions after the upgrade: %d %v", len(got), err)
	}
	for i, d := range submitted {
		if want := asReadBefore(d); !reflect.DeepEqual(got[i], want) {
			t.Errorf("decision %s after the upgrade:\n got %+v\nwant %+v", d.ID, got[i], want)
		}
	}
	// Commit order (the rowids) survives the table's rebuild.
	if all, err := s.ListDecisions(ctx, store.DecisionFilter{}); err != nil || len(all) != 3 || all[0].ID != "s1-d3" || all[2].ID != "s1-d1" {
		t.Errorf("newest first after the upgrade: %v %v", all, err)
	}
	storetest.Upgraded(t, s, "s1", 0, 0)
	// New decisions after it are stored once beside the old rows.
	applyAll(t, s, decision("s1", 4))
	if d, err := s.GetDecision(ctx, "s1-d4"); err != nil || d.Tool != "Read" {
		t.Fatalf("a decision after the upgrade: %+v %v", d, err)
	}
	s.Close()
	edit(t, path, `UPDATE decisions SET effect = 'allow' WHERE id = 's1-d3'`)
	s = open(t, path, Options{})
	var te *store.TamperError
	if _, err := s.GetDecision(ctx, "s1-d3"); !errors.As(err, &te) || te.Row != "s1-d3" || te.Column != "effect" {
		t.Fatalf("edited decision after the upgrade: %v", err)
	}
}

// copyFile copies a closed database file (and its WAL, if any) to a new
// directory and returns the copy's path.
func copyFile(t *testing.T, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "m.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
