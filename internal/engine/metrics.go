package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the engine's Prometheus metrics. A nil *Metrics observes
// nothing.
type Metrics struct {
	decisions *prometheus.CounterVec
	latency   prometheus.Histogram
	failures  prometheus.Counter
	sessions  prometheus.Counter
	stale     prometheus.Counter
}

// NewMetrics registers the engine's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mandate_decisions_total", Help: "Decisions made, by surface and effect.",
		}, []string{"surface", "effect"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "mandate_decision_seconds", Help: "Time from request to durable decision.",
			Buckets: []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3},
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mandate_decision_failures_total", Help: "Decisions that could not be persisted (the call was refused).",
		}),
		sessions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mandate_sessions_created_total", Help: "Sessions created.",
		}),
		stale: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mandate_stale_retries_total", Help: "Changes decided again because another replica had changed their session (store.ErrStale).",
		}),
	}
	reg.MustRegister(m.decisions, m.latency, m.failures, m.sessions, m.stale)
	return m
}

func (m *Metrics) decided(surface, effect string, d time.Duration) {
	if m == nil {
		return
	}
	m.decisions.WithLabelValues(surface, effect).Inc()
	m.latency.Observe(d.Seconds())
}

func (m *Metrics) failed() {
	if m != nil {
		m.failures.Inc()
	}
}

func (m *Metrics) sessionCreated() {
	if m != nil {
		m.sessions.Inc()
	}
}

func (m *Metrics) staleRetry() {
	if m != nil {
		m.stale.Inc()
	}
}
