package app

import (
	"context"

	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mandate-dev/mandate/internal/cputime"
	"github.com/mandate-dev/mandate/internal/evidence"
)

// benchRecords is the evidence log's size in the large-store benchmarks:
// 100,000 by default (generating a million records takes minutes on a
// small machine); MANDATE_BENCH_RECORDS=1000000 measures a million.
func benchRecords(b *testing.B) int {
	if v := os.Getenv("MANDATE_BENCH_RECORDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("MANDATE_BENCH_RECORDS=%q: want a positive count", v)
		}
		return n
	}
	return 100_000
}

// largeStore makes a data directory whose evidence log holds n records
// (written straight into the table: their bodies are filler, their leaf
// hashes distinct), with no checkpoint yet; the first open signs one.
func largeStore(b testing.TB, n int) string {
	b.Helper()
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "data")
	a, err := Open(ctx, Config{DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	a.Close()
	db, err := sql.Open("sqlite", filepath.Join(dir, DatabaseFile))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	st, err := tx.Prepare(`INSERT INTO evidence (idx, type, session_id, origin, body, leaf_hash, created_at) VALUES (?,?,?,?,?,?,?)`)
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 600) // about a decision record's size
	now := time.Now().UnixNano()
	for i := range n {
		binary.BigEndian.PutUint64(body, uint64(i))
		// The leaf hash of the body, as the open checks every body.
		h := evidence.LeafHash(body)
		if _, err := st.Exec(i, "decision", fmt.Sprintf("s%d", i%1000), "engine", body, h, now); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	// The first open rebuilds the tree and signs the first checkpoint.
	if a, err = Open(ctx, Config{DataDir: dir}); err != nil {
		b.Fatal(err)
	}
	a.Close()
	return dir
}

// TestOpenRefusesEvidenceGap: a record deleted from the middle of the log
// stops the instance from opening (the tree's rebuild reads every leaf),
// though the store no longer counts its rows at open.
func TestOpenRefusesEvidenceGap(t *testing.T) {
	dir := largeStore(t, 50)
	db, err := sql.Open("sqlite", filepath.Join(dir, DatabaseFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM evidence WHERE idx = 20`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	a, err := Open(context.Background(), Config{DataDir: dir})
	if err == nil {
		a.Close()
		t.Fatal("opened a store whose evidence log has a gap")
	}
	if !strings.Contains(err.Error(), "evidence record 20") {
		t.Errorf("the error does not name the missing record: %v", err)
	}
}

// BenchmarkOpenLargeStore is `mandate serve`'s start on a store with a
// large evidence log: open the database, rebuild the log's tree, check it
// against the latest checkpoint, compile the policy. It reports CPU per
// open and per thousand records.
func BenchmarkOpenLargeStore(b *testing.B) {
	n := benchRecords(b)
	dir := largeStore(b, n)
	ctx := context.Background()
	cpu0 := cputime.Total()
	b.ResetTimer()
	for b.Loop() {
		a, err := Open(ctx, Config{DataDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
	b.StopTimer()
	cpu := float64((cputime.Total() - cpu0).Microseconds()) / float64(b.N)
	b.ReportMetric(cpu/1000, "cpu-ms/op")
	b.ReportMetric(float64(n), "records")
}

// BenchmarkStoreHealth is /healthz's store check on a large store.
func BenchmarkStoreHealth(b *testing.B) {
	n := benchRecords(b)
	dir := largeStore(b, n)
	ctx := context.Background()
	a, err := Open(ctx, Config{DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	cpu0 := cputime.Total()
	b.ResetTimer()
	for b.Loop() {
		h, err := a.StoreHealth(ctx)
		if err != nil || h.EvidenceIntegrated != uint64(n) {
			b.Fatalf("%+v %v", h, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cputime.Total()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(n), "records")
}
