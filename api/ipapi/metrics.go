package ipapi

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netintel/netintel/internal/telemetry"
)

// buildTime is when the snapshot's build started (its build_time), or the
// zero time when it does not parse.
func (s *Snapshot) buildTime() time.Time {
	t, err := time.Parse(time.RFC3339, s.Manifest.BuildTime)
	if err != nil {
		return time.Time{}
	}
	return t
}

// RegisterMetrics adds the served snapshot's gauges to reg, present from
// start: netintel_ip_snapshot_timestamp_seconds (the build time of the
// snapshot served, 0 before one is loaded) and
// netintel_ip_snapshot_age_seconds (the time since then, +Inf before one
// is loaded, so that a staleness alert fires on a process that never
// loaded one).
func (s *Service) RegisterMetrics(reg prometheus.Registerer) error {
	ts := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "netintel_ip_snapshot_timestamp_seconds",
		Help: "Unix time the build of the IP intelligence snapshot this process serves started (0: none loaded)."}, func() float64 {
		if snap := s.Current(); snap != nil {
			if t := snap.buildTime(); !t.IsZero() {
				return float64(t.Unix())
			}
		}
		return 0
	})
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "netintel_ip_snapshot_age_seconds",
		Help: "Seconds since the build of the IP intelligence snapshot this process serves started (+Inf: none loaded)."}, func() float64 {
		if snap := s.Current(); snap != nil {
			if t := snap.buildTime(); !t.IsZero() {
				return time.Since(t).Seconds()
			}
		}
		return math.Inf(1)
	})
	for _, c := range []prometheus.Collector{ts, age} {
		if _, err := telemetry.Register(reg, c); err != nil {
			return err
		}
	}
	return nil
}
