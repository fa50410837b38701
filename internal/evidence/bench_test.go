package evidence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// bigSession fills a store with a session of n records (decisions and their
// observations, as the engine records them) interleaved with another
// session's, and returns the session's id.
func bigSession(t testing.TB, in *instance, n int) string {
	t.Helper()
	s, _ := bigSessions(t, in, n)
	return s
}

// bigSessions is bigSession that also returns the other session's id (n/4
// records).
func bigSessions(t testing.TB, in *instance, n int) (string, string) {
	t.Helper()
	ctx := context.Background()
	s := in.session("coder", "Fix the failing test in ./pkg/auth and run the tests")
	other := in.session("mailer", "Send the Q3 summary to alice@example.com")
	rec := evidence.NewRecorder(nil)
	var pending []<-chan error
	submit := func(c *store.Change) {
		recs, err := rec.Record(c)
		if err != nil {
			t.Fatal(err)
		}
		c.Evidence = recs
		pending = append(pending, in.App.Store.Submit(c))
	}
	now := time.Now().UTC()
	seq := map[string]int{}
	for i := 1; i <= n/2; i++ {
		for _, sess := range []string{s, other} {
			if sess == other && i%4 != 0 {
				continue // the other session is a quarter as busy
			}
			seq[sess]++ // each session's decisions are numbered 1, 2, … as the engine numbers them
			id := fmt.Sprintf("%s-d%d", sess, seq[sess])
			submit(&store.Change{Decision: &store.Decision{
				ID: id, SessionID: sess, Seq: seq[sess], Surface: "api", Tool: "Bash",
				Args: json.RawMessage(`{"command":"go test ./pkg/auth/... 2>&1 | tail -20","description":"run tests"}`),
				Action: &action.Action{Tool: "Bash", Kind: action.Execute, Kinds: []action.Kind{action.Execute, action.Read}, Source: "catalog",
					Paths:    []action.PathRef{{Path: "/home/dev/project/pkg/auth", Access: action.Read}},
					Commands: []action.Command{{Argv: []string{"go", "test", "./pkg/auth/..."}, Name: "go", Kind: action.Execute}, {Argv: []string{"tail", "-20"}, Name: "tail", Kind: action.Read, ReadOnly: true}},
					Notes:    []string{"shell: 2 commands"}},
				MandateVersion: 1, PolicyHash: "9f2c", Effect: "allow", Rules: []string{"builtin.granted"}, Reasons: []string{"the task asked for it"},
				LatencyMicros: 150, CreatedAt: now,
			}})
			submit(&store.Change{Observation: &store.Observation{ID: id + "-o", DecisionID: id, SessionID: sess, Origin: "observed", CreatedAt: now,
				Output: json.RawMessage(`{"stdout":"ok  \tgithub.com/acme/app/pkg/auth\t0.412s\n","exit_code":0}`)}})
		}
	}
	for _, ch := range pending {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := in.App.Evidence.Checkpoint(ctx, in.App.Evidence.Size()); err != nil {
		t.Fatal(err)
	}
	return s, other
}

func exportVerify(t testing.TB, in *instance, s string) (*evidence.BundleReport, int) {
	b, err := in.App.Evidence.Export(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.Grow(2000 * len(b.Entries)) // as a file would take it, without regrowing
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	rep, err := evidence.VerifyBundle(buf.Bytes(), in.App.Evidence.Key().Verifier())
	if err != nil {
		t.Fatal(err)
	}
	return rep, buf.Len()
}

// TestExportVerify10k exports a session of 10,000 records from a log of
// 12,500 and verifies the bundle. The issue asks for under a second on the
// project's 2-core machine; BenchmarkExportVerify10k measures that. What the
// test holds is the algorithm, which a busy machine does not change: the
// other session of the same log has a quarter of the records (2,503), and
// exporting and verifying four times the records may take at most twice
// four times as long (linear work is 4x; work that grows with the square of
// the session, 16x, fails). Each side is the fastest of three runs, interleaved, so that load
// weighs on both alike.
func TestExportVerify10k(t *testing.T) {
	testpeer.Slow(t)
	n := 10000
	if raceEnabled {
		n = 1000 // the race detector checks correctness, not speed
	}
	in := open(t, t.TempDir())
	s, other := bigSessions(t, in, n)
	best := func(d *time.Duration, f func()) {
		start := time.Now()
		f()
		*d = min(*d, time.Since(start))
	}
	var rep, orep *evidence.BundleReport
	var size int
	took, otook := time.Duration(1<<63-1), time.Duration(1<<63-1)
	for range 3 {
		best(&took, func() { rep, size = exportVerify(t, in, s) })
		best(&otook, func() { orep, _ = exportVerify(t, in, other) })
	}
	if rep.Records != n+3 || rep.Decisions != n/2 { // with the session, its mandate and its head
		t.Fatalf("report %+v", rep)
	}
	t.Logf("export and verify of %d records (%d bytes) in a log of %d: %v; of the other session's %d: %v",
		rep.Records, size, in.App.Evidence.Size(), took, orep.Records, otook)
	// The race detector's slowdown is not even across the two sizes (5.4x
	// for 4x the records under it, 4.1x without): it checks correctness
	// there, not the algorithm's growth.
	if ratio := float64(took) / float64(otook); !raceEnabled && ratio > 2*float64(rep.Records)/float64(orep.Records) {
		t.Errorf("%d records took %.1fx as long as %d (%v vs %v): more than twice linear", rep.Records, ratio, orep.Records, took, otook)
	}
}

func BenchmarkExportVerify10k(b *testing.B) {
	in := open(b, b.TempDir())
	s := bigSession(b, in, 10000)
	for b.Loop() {
		exportVerify(b, in, s)
	}
}

func BenchmarkExport10k(b *testing.B) {
	in := open(b, b.TempDir())
	s := bigSession(b, in, 10000)
	for b.Loop() {
		bu, err := in.App.Evidence.Export(context.Background(), s)
		if err != nil {
			b.Fatal(err)
		}
		// Written out as to a file or an HTTP response.
		if _, err := bu.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBundleVerify10k(b *testing.B) {
	in := open(b, b.TempDir())
	s := bigSession(b, in, 10000)
	bu, err := in.App.Evidence.Export(context.Background(), s)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	bu.WriteTo(&buf)
	v := in.App.Evidence.Key().Verifier()
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := evidence.VerifyBundle(buf.Bytes(), v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyStore(b *testing.B) {
	in := open(b, b.TempDir())
	bigSession(b, in, 10000)
	v := in.App.Evidence.Key().Verifier()
	for b.Loop() {
		if _, err := evidence.VerifyStore(context.Background(), in.App.Store, v, nil); err != nil {
			b.Fatal(err)
		}
	}
}
