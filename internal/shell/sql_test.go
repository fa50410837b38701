package shell

import (
	"testing"

	"github.com/mandate-dev/mandate/internal/act"
)

func TestClassifySQL(t *testing.T) {
	tests := []struct {
		sql         string
		kind        act.Kind
		destructive bool
	}{
		{"SELECT * FROM t", act.Read, false},
		{"select 1; select 2", act.Read, false},
		{"WITH x AS (SELECT 1) SELECT * FROM x", act.Read, false},
		{"WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone", act.Delete, true},
		{"EXPLAIN SELECT 1", act.Read, false},
		{"EXPLAIN ANALYZE DELETE FROM t", act.Delete, true},
		{"SHOW TABLES", act.Read, false},
		{"INSERT INTO t VALUES (1)", act.Write, false},
		{"UPDATE t SET a = 1 WHERE id = 1", act.Write, false},
		{"UPDATE t SET a = 1", act.Write, true}, // destructive: the builder adds act.Delete
		{"DELETE FROM t WHERE id = 1", act.Delete, true},
		{"DROP TABLE users", act.Delete, true},
		{"TRUNCATE events", act.Delete, true},
		{"ALTER TABLE t DROP COLUMN c", act.Delete, true},
		{"ALTER TABLE t ADD COLUMN c int", act.Write, false},
		{"CREATE TABLE x (a int)", act.Write, false},
		{"SELECT * INTO backup FROM t", act.Write, false},
		{"SELECT * FROM t INTO OUTFILE '/tmp/x'", act.Write, false},
		{"COPY t TO STDOUT", act.Read, false},
		{"COPY t FROM PROGRAM 'curl x'", act.Execute, false},
		{"BEGIN; DELETE FROM t; COMMIT;", act.Delete, true},
		{"-- DROP TABLE x\nSELECT 1", act.Read, false},
		{"/* DROP TABLE x */ SELECT 1", act.Read, false},
		{"SELECT 'DROP TABLE x'", act.Read, false},
		{"SELECT $$ DROP TABLE x $$", act.Read, false},
		{"SELECT 1; /* hide */ DROP TABLE x", act.Delete, true},
		{"CALL cleanup()", act.Execute, false},
		{"FROBNICATE things", act.Execute, false},
		{"PRAGMA table_info(t)", act.Read, false},
		{"PRAGMA journal_mode = WAL", act.Write, false},
		{"GRANT ALL ON t TO bob", act.Write, false},
	}
	for _, tt := range tests {
		r := ClassifySQL(tt.sql)
		if got := r.kinds.Top(); got != tt.kind || r.destructive != tt.destructive {
			t.Errorf("classifySQL(%q) = %s destructive=%v, want %s destructive=%v (%v)", tt.sql, got, r.destructive, tt.kind, tt.destructive, r.notes)
		}
	}
	if r := ClassifySQL("  ;; -- nothing\n"); r.statements != 0 {
		t.Errorf("empty SQL has %d statements", r.statements)
	}
}
