package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/evidence/evidencetest"
	"github.com/mandate-dev/mandate/internal/store/postgres"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
	"github.com/mandate-dev/mandate/internal/store/storecopy"
)

var admin = auth.Principal{TokenID: "test", Role: auth.RoleAdmin, Name: "test"}

// history fills a store (shared when dsn is set, else embedded in dir) with
// two sessions' decisions and observations, saving a checkpoint halfway.
func history(t *testing.T, dir, dsn string) (saved []byte, size uint64, vkey string) {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DataDir: dir, Store: dsn})
	if err != nil {
		t.Fatal(err)
	}
	calls := func(sess string, n int) {
		for i := range n {
			d, err := a.Engine.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: sess, Tool: "Read", Args: map[string]any{"file_path": fmt.Sprintf("/repo/f%d", i)}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Engine.Observe(ctx, admin, engine.ObserveRequest{DecisionID: d.ID, Output: json.RawMessage(`{"ok":true}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range []string{"a", "b"} {
		if _, err := a.Engine.CreateSession(ctx, admin, engine.SessionRequest{ID: s, AgentID: "coder", Intent: "Read the files in /repo"}); err != nil {
			t.Fatal(err)
		}
	}
	calls("a", 6)
	calls("b", 6)
	sync := func() {
		if sy, ok := a.Store.(interface{ SyncEvidence(context.Context) error }); ok {
			if err := sy.SyncEvidence(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	sync()
	cp, err := a.Evidence.Checkpoint(ctx, a.Evidence.Size())
	if err != nil {
		t.Fatal(err)
	}
	calls("a", 4)
	sync()
	size, vkey = a.Evidence.Size(), a.Evidence.Key().VerifierKey()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return cp.Note, size, vkey
}

// clone copies every table of the schema dsn names into a new schema and
// returns its DSN.
func clone(t *testing.T, dsn string) (string, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	to := pgtest.DSN(t)
	c := pgtest.Conn(t, dsn)
	from, dst := searchPath(t, dsn), searchPath(t, to)
	for _, tbl := range []string{"mandate_schema", "sessions", "mandates", "decisions", "observations", "tokens", "tool_pins", "tool_changes", "approvals", "evidence", "evidence_head", "checkpoints", "replicas", "budgets"} {
		if _, err := c.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s.%s (LIKE %s.%s INCLUDING ALL); INSERT INTO %s.%s SELECT * FROM %s.%s`, dst, tbl, from, tbl, dst, tbl, from, tbl)); err != nil {
			t.Fatalf("clone %s: %v", tbl, err)
		}
	}
	return to, pgtest.Conn(t, to)
}

func searchPath(t *testing.T, dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.RuntimeParams["search_path"]
}

func verify(t *testing.T, dsn, vkey string, since []byte) (*evidence.StoreReport, error) {
	t.Helper()
	v, err := evidence.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	st, err := postgres.OpenReadOnly(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return evidence.VerifyStore(context.Background(), st, v, since)
}

func exec(t *testing.T, c *pgx.Conn, q string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func firstOfType(t *testing.T, c *pgx.Conn, typ string) int64 {
	t.Helper()
	var idx int64
	if err := c.QueryRow(context.Background(), `SELECT idx FROM evidence WHERE type = $1 ORDER BY idx LIMIT 1 OFFSET 2`, typ).Scan(&idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

func body(t *testing.T, c *pgx.Conn, idx int64) []byte {
	var b []byte
	if err := c.QueryRow(context.Background(), `SELECT body FROM evidence WHERE idx = $1`, idx).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

// pgDB is a PostgreSQL store's database, for the tamper classes: their
// ? placeholders become $1, $2, ….
type pgDB struct{ c *pgx.Conn }

func (d pgDB) Exec(t *testing.T, q string, args ...any) {
	t.Helper()
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	exec(t, d.c, b.String(), args...)
}

func (d pgDB) Body(t *testing.T, idx int64) []byte   { return body(t, d.c, idx) }
func (d pgDB) Record(t *testing.T, typ string) int64 { return firstOfType(t, d.c, typ) }

// TestTamperClasses: every tamper class the embedded store's verification
// detects, made by editing the PostgreSQL tables directly, is detected by
// 'evidence verify --store' too.
func TestTamperClasses(t *testing.T) {
	dsn := pgtest.DSN(t)
	saved, size, vkey := history(t, t.TempDir(), dsn)
	if rep, err := verify(t, dsn, vkey, saved); err != nil {
		t.Fatalf("the untouched log: %v", err)
	} else if rep.Records != size {
		t.Fatalf("verified %d records, want %d", rep.Records, size)
	}
	name := strings.SplitN(vkey, "+", 2)[0]
	// The shared store keeps its head in a row of its own.
	cut := func(t *testing.T, db evidencetest.DB) { db.Exec(t, `UPDATE evidence_head SET size = 5`) }
	for _, tc := range evidencetest.Classes(name, size, cut) {
		t.Run(tc.Name, func(t *testing.T) {
			to, c := clone(t, dsn)
			tc.Edit(t, pgDB{c})
			var since []byte
			if tc.Since {
				since = saved
			}
			_, err := verify(t, to, vkey, since)
			evidencetest.Check(t, err, tc.Want)
		})
	}
}

// TestCopyKeepsHistoryProvable: an embedded store copied into PostgreSQL
// verifies against its old checkpoints — also one saved before the move —
// and a replica carries on from it.
func TestCopyKeepsHistoryProvable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	saved, size, vkey := history(t, dir, "")
	dsn := pgtest.DSN(t)
	var heard int64
	rep, err := storecopy.Copy(ctx, filepath.Join(dir, app.DatabaseFile), dsn, storecopy.WithProgress(func(n int64) { heard += n }))
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, n := range rep.Rows {
		rows += n
	}
	if heard != rows {
		t.Errorf("progress heard of %d rows, the copy copied %d", heard, rows)
	}
	if rep.Evidence != int64(size) || rep.Rows["sessions"] != 2 || rep.Rows["decisions"] != 16 || rep.Rows["observations"] != 16 || rep.Checkpoints == 0 {
		t.Fatalf("copied %+v", rep)
	}
	if _, err := verify(t, dsn, vkey, saved); err != nil {
		t.Fatalf("the copied log against the old checkpoints: %v", err)
	}
	if _, err := storecopy.Copy(ctx, filepath.Join(dir, app.DatabaseFile), dsn); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a second copy into the same database: %v", err)
	}
	// A replica with the old directory's keys carries on.
	a, err := app.Open(ctx, app.Config{DataDir: dir, Store: dsn})
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.Engine.Evaluate(ctx, admin, engine.EvaluateRequest{SessionID: "a", Tool: "Read", Args: map[string]any{"file_path": "/repo/after"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Seq != 11 {
		t.Errorf("the first decision after the copy has seq %d, want 11", d.Seq)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := verify(t, dsn, vkey, saved)
	if err != nil {
		t.Fatalf("after carrying on: %v", err)
	}
	if r.Records != size+1 {
		t.Errorf("%d records, want %d", r.Records, size+1)
	}
}
