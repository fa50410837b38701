package evidence_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/apptest"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/evidence/evidencetest"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

// history is a closed data directory with two sessions' records, and a
// checkpoint saved (outside the store) halfway through.
type history struct {
	dir   string
	saved []byte // the checkpoint note kept elsewhere
	size  uint64
	vkey  string
}

func makeHistory(t *testing.T) *history {
	t.Helper()
	dir := t.TempDir()
	in := open(t, dir)
	a := in.session("mailer", "Send the Q3 summary to alice@example.com")
	b := in.session("coder", "Fix the failing test in ./pkg/auth")
	in.calls(a, 6)
	in.calls(b, 6)
	cp, err := in.App.Evidence.Checkpoint(context.Background(), in.App.Evidence.Size())
	if err != nil {
		t.Fatal(err)
	}
	in.calls(a, 4)
	h := &history{dir: dir, saved: cp.Note, size: in.App.Evidence.Size(), vkey: in.App.Evidence.Key().VerifierKey()}
	in.Close()
	return h
}

// tamper copies the history and edits its database directly.
func (h *history) tamper(t *testing.T, edit func(db *sql.DB)) string {
	t.Helper()
	dir := apptest.CopyDir(t, h.dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, app.DatabaseFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	edit(db)
	return dir
}

func verifyDir(t *testing.T, dir, vkey string, since []byte) (*evidence.StoreReport, error) {
	t.Helper()
	st, err := sqlite.OpenReadOnly(context.Background(), filepath.Join(dir, app.DatabaseFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, err := evidence.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return evidence.VerifyStore(context.Background(), st, v, since)
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func body(t *testing.T, db *sql.DB, idx int) []byte {
	t.Helper()
	var b []byte
	if err := db.QueryRow(`SELECT body FROM evidence WHERE idx = ?`, idx).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

// firstOfType finds a record of a type.
func firstOfType(t *testing.T, db *sql.DB, typ string) int {
	t.Helper()
	var idx int
	if err := db.QueryRow(`SELECT idx FROM evidence WHERE type = ? ORDER BY idx LIMIT 1 OFFSET 2`, typ).Scan(&idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

// sqliteDB is the embedded store's database, for the tamper classes.
type sqliteDB struct{ db *sql.DB }

func (d sqliteDB) Exec(t *testing.T, q string, args ...any) { mustExec(t, d.db, q, args...) }
func (d sqliteDB) Body(t *testing.T, idx int64) []byte      { return body(t, d.db, int(idx)) }
func (d sqliteDB) Record(t *testing.T, typ string) int64    { return int64(firstOfType(t, d.db, typ)) }

func TestVerifyStoreIntact(t *testing.T) {
	h := makeHistory(t)
	rep, err := verifyDir(t, h.dir, h.vkey, h.saved)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Records != h.size || rep.Checkpoints < 2 || rep.Latest.Size != h.size || rep.Uncovered != 0 || rep.Since == nil || len(rep.Warnings) != 0 {
		t.Errorf("report %+v", rep)
	}
}

// TestVerifyStoreTamperClasses edits the SQLite file directly, one tamper
// class at a time, and expects verification to fail naming what happened.
func TestVerifyStoreTamperClasses(t *testing.T) {
	h := makeHistory(t)
	name := strings.SplitN(h.vkey, "+", 2)[0]
	for _, tc := range evidencetest.Classes(name, h.size, nil) {
		t.Run(tc.Name, func(t *testing.T) {
			dir := h.tamper(t, func(db *sql.DB) { tc.Edit(t, sqliteDB{db}) })
			var since []byte
			if tc.Since {
				since = h.saved
			}
			_, err := verifyDir(t, dir, h.vkey, since)
			evidencetest.Check(t, err, tc.Want)
		})
	}
}

// TestVerifyStoreRollbackAndExtend restores the store to an earlier state
// and lets it extend differently. The store is consistent in itself, so
// only the checkpoint saved outside it reveals the rewrite.
func TestVerifyStoreRollbackAndExtend(t *testing.T) {
	dir := t.TempDir()
	in := open(t, dir)
	s := in.session("mailer", "Send the Q3 summary to alice@example.com")
	in.calls(s, 3)
	in.Close()
	backup := apptest.CopyDir(t, dir) // the state the store will be rolled back to

	in = open(t, dir)
	in.calls(s, 5) // records the rollback will erase
	cp, err := in.App.Evidence.Checkpoint(context.Background(), in.App.Evidence.Size())
	if err != nil {
		t.Fatal(err)
	}
	saved, vkey := cp.Note, in.App.Evidence.Key().VerifierKey()
	in.Close()

	// Roll back (the key stays: it is the same instance) and extend.
	for _, f := range []string{app.DatabaseFile, app.DatabaseFile + "-wal", app.DatabaseFile + "-shm"} {
		os.Remove(filepath.Join(dir, f))
		if b, err := os.ReadFile(filepath.Join(backup, f)); err == nil {
			os.WriteFile(filepath.Join(dir, f), b, 0o600)
		}
	}
	in = open(t, dir)
	in.calls(s, 9) // a different history, longer than the erased one
	in.Close()

	if _, err := verifyDir(t, dir, vkey, nil); err != nil {
		t.Fatalf("without the saved checkpoint the rewritten store is consistent in itself, yet: %v", err)
	}
	_, err = verifyDir(t, dir, vkey, saved)
	if err == nil || !errors.Is(err, evidence.ErrTampered) || !strings.Contains(err.Error(), "history was rewritten") {
		t.Fatalf("with the saved checkpoint: err = %v", err)
	}
}

// TestOpenRefusesTamperedLog: the server does not start on a log that no
// longer matches its latest checkpoint, and says what to run.
func TestOpenRefusesTamperedLog(t *testing.T) {
	h := makeHistory(t)
	for name, edit := range map[string]func(db *sql.DB){
		"edited": func(db *sql.DB) {
			i := firstOfType(t, db, "decision")
			b := bytes.Replace(body(t, db, i), []byte(`"tool":"`), []byte(`"tool":"x`), 1)
			mustExec(t, db, `UPDATE evidence SET body = ?, leaf_hash = ? WHERE idx = ?`, b, evidence.LeafHash(b), i)
		},
		"truncated": func(db *sql.DB) { mustExec(t, db, `DELETE FROM evidence WHERE idx >= ?`, h.size-1) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := h.tamper(t, edit)
			a, err := app.Open(context.Background(), app.Config{DataDir: dir, Synchronous: "OFF"})
			if err == nil {
				a.Close()
				t.Fatal("opened a tampered store")
			}
			if !errors.Is(err, evidence.ErrTampered) || !strings.Contains(err.Error(), "mandate evidence verify") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// TestReadOnlyLog reads a data directory another process has open: a
// checkpoint it needs is signed, not stored, and a tampered log is refused
// as the server refuses it.
func TestReadOnlyLog(t *testing.T) {
	ctx := context.Background()
	h := makeHistory(t)
	in := open(t, h.dir) // the server, holding the directory
	s := in.session("late", "Read the README")
	in.calls(s, 2)

	st, err := sqlite.OpenReadOnly(ctx, filepath.Join(h.dir, app.DatabaseFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, err := evidence.LoadKey(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := evidence.Open(ctx, evidence.Options{Store: st, Key: key, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close(ctx)
	// The session's last records are not committed by a head, and a
	// read-only log cannot commit one.
	if _, err := lg.Export(ctx, s); !errors.Is(err, evidence.ErrHeadNotCommitted) {
		t.Fatalf("read-only export of a session without its head: %v", err)
	}
	// Once the server exported it, the read-only log exports it too.
	if _, err := in.App.Evidence.Export(ctx, s); err != nil {
		t.Fatal(err)
	}
	before, _ := st.ListCheckpoints(ctx, 0, 100000)
	b, err := lg.Export(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	b.WriteTo(&buf)
	if _, err := evidence.VerifyBundle(buf.Bytes(), key.Verifier()); err != nil {
		t.Fatal(err)
	}
	after, _ := st.ListCheckpoints(ctx, 0, 100000)
	if len(after) > len(before)+1 { // the server itself may have signed one
		t.Errorf("the read-only log stored checkpoints: %d → %d", len(before), len(after))
	}

	in.Close()
	dir := h.tamper(t, func(db *sql.DB) { mustExec(t, db, `DELETE FROM evidence WHERE idx >= ?`, h.size-2) })
	ro, err := sqlite.OpenReadOnly(ctx, filepath.Join(dir, app.DatabaseFile))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := evidence.Open(ctx, evidence.Options{Store: ro, Key: key, ReadOnly: true}); !errors.Is(err, evidence.ErrTampered) {
		t.Errorf("read-only open of a truncated log: %v", err)
	}
}
