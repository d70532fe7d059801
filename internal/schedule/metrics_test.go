package schedule_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/netintel/netintel/internal/schedule"
	ntest "github.com/netintel/netintel/internal/testutil"
)

// TestScheduler_RegisterMetrics checks the per-job series: present at 0
// from registration with the schedule's interval, then runs counted by
// outcome and the last success and failure stamped.
func TestScheduler_RegisterMetrics(t *testing.T) {
	fail := true
	jobs := []schedule.Job{
		{Name: "snapshot", Spec: "@every 24h", Retries: 1, RetryWait: time.Millisecond, Run: func(context.Context) error {
			if fail {
				fail = false
				return errors.New("store unavailable")
			}
			return nil
		}},
		{Name: "enrich-age", Spec: "0 * * * *", Run: func(context.Context) error { return nil }},
	}
	s, err := schedule.New(nil, ntest.Logger(t), jobs)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := s.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	gauge := func(name, job string) float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				if len(m.GetLabel()) > 0 && m.GetLabel()[0].GetValue() == job {
					if m.GetGauge() != nil {
						return m.GetGauge().GetValue()
					}
					return m.GetCounter().GetValue()
				}
			}
		}
		t.Fatalf("no %s{name=%q}", name, job)
		return 0
	}
	for _, tt := range []struct {
		job      string
		interval float64
	}{{"snapshot", 86400}, {"enrich-age", 3600}} {
		if got := gauge("netintel_job_interval_seconds", tt.job); got != tt.interval {
			t.Errorf("%s interval %v, want %v", tt.job, got, tt.interval)
		}
		if got := gauge("netintel_job_last_success_timestamp_seconds", tt.job); got != 0 {
			t.Errorf("%s last success %v before any run", tt.job, got)
		}
	}
	if n := testutil.CollectAndCount(reg, "netintel_job_runs_total"); n != 4 {
		t.Fatalf("%d run series, want 4 (2 jobs x ok, failed)", n)
	}
	before := float64(time.Now().Unix())
	s.Fire(t.Context(), jobs[0], time.Now().Truncate(24*time.Hour))
	if got := gauge("netintel_job_last_failure_timestamp_seconds", "snapshot"); got < before {
		t.Errorf("last failure %v, want >= %v", got, before)
	}
	if got := gauge("netintel_job_last_success_timestamp_seconds", "snapshot"); got < before {
		t.Errorf("last success %v after the retry succeeded, want >= %v", got, before)
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "netintel_job_runs_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var job, outcome string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "name":
					job = l.GetValue()
				case "outcome":
					outcome = l.GetValue()
				}
			}
			want := 0.0
			if job == "snapshot" {
				want = 1 // one failed run, one ok retry
			}
			if got := m.GetCounter().GetValue(); got != want {
				t.Errorf("runs{%s,%s} = %v, want %v", job, outcome, got, want)
			}
		}
	}
}
