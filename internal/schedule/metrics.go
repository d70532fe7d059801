package schedule

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netintel/netintel/internal/telemetry"
)

// metrics are the scheduler's series, by job name; a nil *metrics records
// nothing.
type metrics struct {
	runs        *prometheus.CounterVec
	lastSuccess *prometheus.GaugeVec
	lastFailure *prometheus.GaugeVec
	duration    *prometheus.GaugeVec
	interval    *prometheus.GaugeVec
}

// RegisterMetrics adds the per-job series to reg and shows every job at
// once: runs at 0, last success and last failure at 0 (never, in this
// process), and the interval between two ticks of its schedule, so that an
// alert can compare the time since the last success with it
// (docs/metrics.md, deploy/prometheus/alerts.yml).
func (s *Scheduler) RegisterMetrics(reg prometheus.Registerer) error {
	m := &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_job_runs_total",
			Help: "Runs of a scheduled job in this process, by job and outcome (ok, failed); a retry within a tick is a run."}, []string{"name", "outcome"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "netintel_job_last_success_timestamp_seconds",
			Help: "Unix time the job last finished without error in this process (0: not since the process started); take the max over processes."}, []string{"name"}),
		lastFailure: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "netintel_job_last_failure_timestamp_seconds",
			Help: "Unix time a run of the job last failed in this process (0: not since the process started)."}, []string{"name"}),
		duration: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "netintel_job_last_duration_seconds",
			Help: "How long the job's last run in this process took, failed or not (0: no run yet)."}, []string{"name"}),
		interval: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "netintel_job_interval_seconds",
			Help: "Time between two ticks of the job's schedule (the shortest, for a cron expression with uneven gaps)."}, []string{"name"}),
	}
	var err error
	if m.runs, err = telemetry.Register(reg, m.runs); err != nil {
		return err
	}
	for _, g := range []**prometheus.GaugeVec{&m.lastSuccess, &m.lastFailure, &m.duration, &m.interval} {
		if *g, err = telemetry.Register(reg, *g); err != nil {
			return err
		}
	}
	now := s.now()
	for _, j := range s.jobs {
		telemetry.Zero(m.runs, []string{j.Name}, []string{"ok", "failed"})
		m.lastSuccess.WithLabelValues(j.Name)
		m.lastFailure.WithLabelValues(j.Name)
		m.duration.WithLabelValues(j.Name)
		m.interval.WithLabelValues(j.Name).Set(Interval(j.Spec, now).Seconds())
	}
	s.m = m
	return nil
}

// Interval is the shortest time between two of spec's next eight ticks
// after now (0 for a spec that does not parse).
func Interval(spec string, now time.Time) time.Duration {
	sched, err := Parse(spec)
	if err != nil {
		return 0
	}
	var best time.Duration
	t := sched.Next(now)
	for range 8 {
		n := sched.Next(t)
		if d := n.Sub(t); d > 0 && (best == 0 || d < best) {
			best = d
		}
		t = n
	}
	return best
}

// ran records one run of job that started at start and ended at end.
func (m *metrics) ran(job string, start, end time.Time, err error) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(job).Set(end.Sub(start).Seconds())
	if err != nil {
		m.runs.WithLabelValues(job, "failed").Inc()
		m.lastFailure.WithLabelValues(job).Set(float64(end.UnixNano()) / 1e9)
		return
	}
	m.runs.WithLabelValues(job, "ok").Inc()
	m.lastSuccess.WithLabelValues(job).Set(float64(end.UnixNano()) / 1e9)
}
