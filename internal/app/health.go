package app

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres"
)

// StoreHealth describes the store and this process's role in it, for
// /healthz and /metrics. An error means the store does not answer.
func (a *App) StoreHealth(ctx context.Context) (*api.StoreHealth, error) {
	start := time.Now()
	var h *api.StoreHealth
	if st, ok := a.Store.(*postgres.Store); ok {
		r, err := st.Replication(ctx)
		if err != nil {
			return nil, err
		}
		h = &api.StoreHealth{Backend: "postgres", Database: st.Where(), Replica: r.ReplicaID, Integrator: r.Integrator, Replicas: r.Replicas,
			EvidenceIntegrated: r.Integrated, EvidencePending: r.Pending, EvidenceUnsigned: r.Unsigned}
	} else {
		n, err := a.Store.EvidenceSize(ctx)
		if err != nil {
			return nil, err
		}
		h = &api.StoreHealth{Backend: "sqlite", Integrator: true, EvidenceIntegrated: n}
		if cp, err := a.Store.LatestCheckpoint(ctx); err == nil && cp.Size < n {
			h.EvidenceUnsigned = n - cp.Size
		} else if errors.Is(err, store.ErrNotFound) {
			h.EvidenceUnsigned = n
		}
	}
	h.LatencyMillis = float64(time.Since(start).Microseconds()) / 1000
	return h, nil
}

// storeCollector exports the store's health as gauges at each scrape.
type storeCollector struct {
	a                                                          *App
	up, latency, integrator, replicas, pending, unsigned, size *prometheus.Desc
}

func newStoreCollector(a *App) *storeCollector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &storeCollector{a: a,
		up:         d("mandate_store_up", "1 if the store answered the scrape's health check"),
		latency:    d("mandate_store_health_seconds", "How long the scrape's health check round trip to the store took"),
		integrator: d("mandate_evidence_integrator", "1 if this process integrates the evidence log and signs its checkpoints"),
		replicas:   d("mandate_store_replicas", "Replicas that announced themselves to the shared store in the last few seconds (1 for the embedded store)"),
		pending:    d("mandate_evidence_pending_records", "Evidence records committed but not yet given their index by the integrator"),
		unsigned:   d("mandate_evidence_integrator_lag_records", "Evidence records acknowledged but not yet covered by a signed checkpoint"),
		size:       d("mandate_evidence_records", "Evidence records in the integrated log"),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.latency, c.integrator, c.replicas, c.pending, c.unsigned, c.size} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	h, err := c.a.StoreHealth(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	replicas := h.Replicas
	if h.Backend == "sqlite" {
		replicas = 1
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(c.latency, prometheus.GaugeValue, h.LatencyMillis/1000)
	ch <- prometheus.MustNewConstMetric(c.integrator, prometheus.GaugeValue, b(h.Integrator))
	ch <- prometheus.MustNewConstMetric(c.replicas, prometheus.GaugeValue, float64(replicas))
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(h.EvidencePending))
	ch <- prometheus.MustNewConstMetric(c.unsigned, prometheus.GaugeValue, float64(h.EvidenceUnsigned))
	ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(h.EvidenceIntegrated))
}

// commitHistogram is the shared store's commit latency: one observation per
// batch round trip.
func commitHistogram(reg *prometheus.Registry) func(time.Duration, int) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "mandate_store_commit_seconds",
		Help:    "Round trip of one batch of changes committed to the shared store (the part of a decision's latency the database adds)",
		Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 10},
	})
	reg.MustRegister(h)
	return func(d time.Duration, _ int) { h.Observe(d.Seconds()) }
}
