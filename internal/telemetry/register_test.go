package telemetry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func newCounterVec(labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_test_total", Help: "test"}, labels)
}

// TestRegister checks the three outcomes: registered, the existing copy
// returned (both parts then count into one series), and a real conflict
// returned as an error, never a silently unregistered collector.
func TestRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := Register(reg, newCounterVec("format"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := Register(reg, newCounterVec("format"))
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatal("the second registration did not return the registered collector")
	}
	second.WithLabelValues("csv").Inc()
	if got := testutil.ToFloat64(first.WithLabelValues("csv")); got != 1 {
		t.Fatalf("shared counter = %v, want 1", got)
	}
	if _, err := Register(reg, newCounterVec("kind")); err == nil || !strings.Contains(err.Error(), "register metric") {
		t.Fatalf("same name, other labels: err %v, want a registration error", err)
	}
	if c, err := Register[*prometheus.CounterVec](nil, newCounterVec("x")); err != nil || c == nil {
		t.Fatalf("nil registerer: %v %v", c, err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("MustRegister did not panic on a conflict")
		}
	}()
	MustRegister(reg, newCounterVec("other"))
}

// TestZero checks that every combination of label values exists at 0.
func TestZero(t *testing.T) {
	v := newCounterVec("kind", "outcome")
	Zero(v, []string{"rdap", "whois"}, []string{"ok", "fail", "transient"})
	if n := testutil.CollectAndCount(v); n != 6 {
		t.Fatalf("%d series, want 6", n)
	}
	if got := testutil.ToFloat64(v.WithLabelValues("whois", "transient")); got != 0 {
		t.Fatalf("whois/transient = %v", got)
	}
}
