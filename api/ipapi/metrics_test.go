package ipapi

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestService_RegisterMetrics checks the snapshot gauges: before a
// snapshot the timestamp is 0 and the age +Inf (a staleness alert fires);
// with one, the build time and the time since.
func TestService_RegisterMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	svc := New(Options{})
	if err := svc.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	value := func(name string) float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == name {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	if v := value("netintel_ip_snapshot_timestamp_seconds"); v != 0 {
		t.Errorf("timestamp before a snapshot = %v, want 0", v)
	}
	if v := value("netintel_ip_snapshot_age_seconds"); !math.IsInf(v, 1) {
		t.Errorf("age before a snapshot = %v, want +Inf", v)
	}
	f := newFixture(t, Options{})
	svc.Swap(f.svc.Current())
	built := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	if v := value("netintel_ip_snapshot_timestamp_seconds"); v != float64(built.Unix()) {
		t.Errorf("timestamp = %v, want %d", v, built.Unix())
	}
	if v, want := value("netintel_ip_snapshot_age_seconds"), time.Since(built).Seconds(); v < want-60 || v > want+60 {
		t.Errorf("age = %v, want about %v", v, want)
	}
	if n := testutil.CollectAndCount(reg); n != 2 {
		t.Errorf("%d series, want 2", n)
	}
}
