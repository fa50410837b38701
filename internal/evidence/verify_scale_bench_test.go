package evidence_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/mandate-dev/mandate/internal/cputime"
	"github.com/mandate-dev/mandate/internal/evidence"
)

// BenchmarkVerifyStoreScale is `mandate evidence verify --data` on a store
// of MANDATE_BENCH_RECORDS records (default 20,000; engine-shaped decisions
// and observations): it reports CPU per record and the CPU a million
// records would take at that rate, for a machine where making a million
// records takes too long to do each time.
func BenchmarkVerifyStoreScale(b *testing.B) {
	n := 20_000
	if v := os.Getenv("MANDATE_BENCH_RECORDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 2 {
			b.Fatalf("MANDATE_BENCH_RECORDS=%q: want a count", v)
		}
	}
	in := open(b, b.TempDir())
	bigSession(b, in, n)
	ctx := context.Background()
	size, err := in.App.Store.EvidenceSize(ctx)
	if err != nil {
		b.Fatal(err)
	}
	v := in.App.Evidence.Key().Verifier()
	cpu0 := cputime.Total()
	b.ResetTimer()
	for b.Loop() {
		if _, err := evidence.VerifyStore(ctx, in.App.Store, v, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perRecord := float64((cputime.Total() - cpu0).Nanoseconds()) / float64(b.N) / float64(size)
	b.ReportMetric(perRecord/1000, "cpu-µs/record")
	b.ReportMetric(perRecord*1e6/1e9, "cpu-s/1M-records")
	b.ReportMetric(float64(size), "records")
}
