// Package evidencetest lists the ways of tampering with a store's evidence
// tables that verification ('mandate evidence verify') must catch. The
// tests of each store run the same list against their own database (the
// embedded SQLite store in internal/evidence, PostgreSQL in
// internal/store/postgres), so that a class added here is tried on both.
package evidencetest

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/mandate-dev/mandate/internal/evidence"
)

// DB is direct access to a store's database past the store: what someone
// able to write to it can do. Statements are written with ? placeholders;
// a store with numbered ones ($1, $2, …) rewrites them.
type DB interface {
	Exec(t *testing.T, q string, args ...any)
	// Body is the body of the record at idx.
	Body(t *testing.T, idx int64) []byte
	// Record is the index of a record of typ, neither the first nor the
	// last of its type.
	Record(t *testing.T, typ string) int64
}

// Class is one way of tampering and what the verification's error must
// say about it.
type Class struct {
	Name string
	Edit func(t *testing.T, db DB)
	// Since: the edit is consistent in itself, and only the checkpoint
	// saved outside the store reveals it.
	Since bool
	Want  []string
}

// Classes are the tamper classes for a log of size records whose key is
// named name. cut runs after the log and its checkpoints are cut back to 5
// records (a store that keeps its head apart resets it there), or is nil.
func Classes(name string, size uint64, cut func(t *testing.T, db DB)) []Class {
	return []Class{
		{"record edited", func(t *testing.T, db DB) {
			i := db.Record(t, "decision")
			b := bytes.Replace(db.Body(t, i), []byte(`"effect":"`), []byte(`"effect":"allow","was":"`), 1)
			db.Exec(t, `UPDATE evidence SET body = ? WHERE idx = ?`, b, i)
		}, false, []string{"no longer hashes to its leaf hash"}},
		{"record edited, leaf hash recomputed", func(t *testing.T, db DB) {
			i := db.Record(t, "observation")
			b := bytes.Replace(db.Body(t, i), []byte(`"ok":true`), []byte(`"ok":false`), 1)
			db.Exec(t, `UPDATE evidence SET body = ?, leaf_hash = ? WHERE idx = ?`, b, evidence.LeafHash(b), i)
		}, false, []string{"no longer hash to its root", "was changed, removed, inserted or reordered"}},
		{"record's session column edited", func(t *testing.T, db DB) {
			db.Exec(t, `UPDATE evidence SET session_id = 'elsewhere' WHERE idx = ?`, db.Record(t, "decision"))
		}, false, []string{"columns", "differ from its body"}},
		{"record deleted", func(t *testing.T, db DB) {
			db.Exec(t, `DELETE FROM evidence WHERE idx = ?`, db.Record(t, "decision"))
		}, false, []string{"is missing: deleted"}},
		{"record deleted, later ones renumbered", func(t *testing.T, db DB) {
			i := db.Record(t, "decision")
			db.Exec(t, `DELETE FROM evidence WHERE idx = ?`, i)
			shift(t, db, i+1, -1)
		}, false, []string{"no longer hash to its root"}},
		{"record inserted", func(t *testing.T, db DB) {
			i := db.Record(t, "decision")
			shift(t, db, i, 1)
			rec, err := evidence.NewRecord("decision", evidence.Observed, "s-forged", time.Now(), map[string]any{"decision_id": "forged", "effect": "allow"})
			if err != nil {
				t.Fatal(err)
			}
			db.Exec(t, `INSERT INTO evidence (idx, type, session_id, origin, body, leaf_hash, created_at) VALUES (?,?,?,?,?,?,?)`,
				i, rec.Type, rec.SessionID, rec.Origin, rec.Body, rec.LeafHash, rec.CreatedAt.UnixNano())
		}, false, []string{"no longer hash to its root"}},
		{"records reordered", func(t *testing.T, db DB) {
			i := db.Record(t, "decision")
			db.Exec(t, `UPDATE evidence SET idx = -1 WHERE idx = ?`, i)
			db.Exec(t, `UPDATE evidence SET idx = ? WHERE idx = ?`, i, i+1)
			db.Exec(t, `UPDATE evidence SET idx = ? WHERE idx = -1`, i+1)
		}, false, []string{"no longer hash to its root"}},
		{"log truncated", func(t *testing.T, db DB) {
			db.Exec(t, `DELETE FROM evidence WHERE idx >= ?`, int64(size)-3)
		}, false, []string{"the store holds only", "truncated"}},
		{"checkpoint forged with another key", func(t *testing.T, db DB) {
			// Edit a record, then sign a checkpoint over the edited log
			// with a key of the same name.
			i := db.Record(t, "decision")
			b := bytes.Replace(db.Body(t, i), []byte(`"seq":`), []byte(`"seq":1`), 1)
			db.Exec(t, `UPDATE evidence SET body = ?, leaf_hash = ? WHERE idx = ?`, b, evidence.LeafHash(b), i)
			db.Exec(t, `INSERT INTO checkpoints (size, root_hash, note, created_at) VALUES (?, ?, ?, ?)`,
				int64(size), make([]byte, 32), Forged(t, name, size, make([]byte, 32)), time.Now().UnixNano())
		}, false, []string{"not signed by key"}},
		{"checkpoints deleted and log truncated, caught by the saved checkpoint", func(t *testing.T, db DB) {
			db.Exec(t, `DELETE FROM evidence WHERE idx >= 5`)
			db.Exec(t, `DELETE FROM checkpoints WHERE size > 5`)
			if cut != nil {
				cut(t, db)
			}
		}, true, []string{"the saved checkpoint", "rolled back or truncated"}},
	}
}

// shift moves records idx >= from by delta without colliding keys.
func shift(t *testing.T, db DB, from, delta int64) {
	db.Exec(t, `UPDATE evidence SET idx = -idx - 1 WHERE idx >= ?`, from)
	db.Exec(t, `UPDATE evidence SET idx = -idx - 1 + ? WHERE idx < 0`, delta)
}

// Check fails the test unless err is evidence.ErrTampered saying all of
// want.
func Check(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatal("verified")
	}
	if !errors.Is(err, evidence.ErrTampered) {
		t.Errorf("not ErrTampered: %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\nlacks %q", err, w)
		}
	}
}

// Forged signs a checkpoint for a root with a key of the same name as the
// real one but another secret: what someone without the real key can do.
func Forged(t *testing.T, name string, size uint64, root []byte) []byte {
	t.Helper()
	skey, _, err := note.GenerateKey(nil, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("%s\n%d\n%s\ntime %s\n", name, size, base64.StdEncoding.EncodeToString(root), time.Now().UTC().Format(time.RFC3339Nano))
	msg, err := note.Sign(&note.Note{Text: text}, s)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}
