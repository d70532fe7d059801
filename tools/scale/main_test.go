package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

// TestGenerate_EveryLineIngested checks that the generated observations
// are what the observations adapter takes: every one stored, none
// malformed or skipped, one per address.
func TestGenerate_EveryLineIngested(t *testing.T) {
	const n = 2000
	var buf bytes.Buffer
	if err := generate(t.Context(), &buf, n); err != nil {
		t.Fatal(err)
	}
	ips := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		i := strings.Index(line, `"ip":"`)
		ips[line[i+6:i+6+strings.IndexByte(line[i+6:], '"')]] = true
	}
	if len(ips) != n {
		t.Fatalf("%d distinct addresses in %d lines, want one each", len(ips), n)
	}
	js := testutil.StartNATS(t).JS
	if err := bus.Ensure(t.Context(), js, config.Default(), testutil.Logger(t)); err != nil {
		t.Fatal(err)
	}
	st, err := ingest.New(js, testutil.Logger(t), nil, 0, time.Minute).Ingest(t.Context(), "observations", &buf, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Published != n || len(st.Malformed) > 0 || len(st.Skipped) > 0 {
		t.Fatalf("%s; first malformed: %s", st, firstMalformed(st))
	}
}

// TestStatusKiB reads the fields of /proc/PID/status the harness samples.
func TestStatusKiB(t *testing.T) {
	status := "Name:\tnats-server\nVmPeak:\t 2000 kB\nVmHWM:\t  5808123 kB\nVmRSS:\t  5075000 kB\n"
	for _, tc := range []struct {
		field string
		want  int64
	}{{"VmHWM:", 5808123}, {"VmRSS:", 5075000}, {"VmSwap:", 0}} {
		if got := statusKiB(status, tc.field); got != tc.want {
			t.Errorf("statusKiB(%s) = %d, want %d", tc.field, got, tc.want)
		}
	}
}
