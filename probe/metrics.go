package probe

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netintel/netintel/internal/telemetry"
)

// metrics are the probe's Prometheus series; a nil *metrics records nothing.
type metrics struct {
	requests *prometheus.CounterVec
	checks   prometheus.Counter
	duration prometheus.Histogram
}

// RegisterMetrics adds the probe's series to reg: requests by kind (rdap,
// whois) and outcome (ok, transient, fail), TLD checks, and check duration.
func (s *Service) RegisterMetrics(reg prometheus.Registerer) error {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_tld_probe_requests_total", Help: "TLD probe requests by kind (rdap, whois) and outcome (ok, transient, fail)."}, []string{"kind", "outcome"}),
		checks:   prometheus.NewCounter(prometheus.CounterOpts{Name: "netintel_tld_probe_checks_total", Help: "TLDs checked by this process."}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "netintel_tld_probe_check_seconds", Help: "Time to check one TLD.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 10)}),
	}
	var err error
	if m.requests, err = telemetry.Register(reg, m.requests); err != nil {
		return err
	}
	if m.checks, err = telemetry.Register(reg, m.checks); err != nil {
		return err
	}
	if m.duration, err = telemetry.Register(reg, m.duration); err != nil {
		return err
	}
	telemetry.Zero(m.requests, []string{"rdap", "whois"}, []string{"ok", "transient", "fail"})
	s.checker.m = m
	return nil
}

func (m *metrics) request(kind string, err error) {
	if m == nil {
		return
	}
	outcome := "ok"
	switch {
	case errors.Is(err, errTransient):
		outcome = "transient"
	case err != nil:
		outcome = "fail"
	}
	m.requests.WithLabelValues(kind, outcome).Inc()
}

func (m *metrics) checked(start time.Time) {
	if m == nil {
		return
	}
	m.checks.Inc()
	m.duration.Observe(time.Since(start).Seconds())
}
