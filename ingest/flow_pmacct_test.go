package ingest

import (
	"fmt"
	"slices"
	"testing"
)

// TestPmacct_AgreesWithNfdump holds pmacct 1.7.7's json, csv and
// formatted outputs of flowgen's flows (ingest/testdata/SOURCES.md) to
// nfdump's csv of the same flows, which TestFlowAdapters_RealSamples
// checks flow by flow: the same observations (pmacct purges its cache in
// its own order), the same flows skipped.
func TestPmacct_AgreesWithNfdump(t *testing.T) {
	t.Parallel()
	read := func(t *testing.T, ad Adapter, file string) ([]string, int) {
		t.Helper()
		skipped := 0
		r := runAdapter(t, ad, readFile(t, file), Options{Skipped: func(int, string) { skipped++ }})
		if len(r.bad) != 0 {
			t.Fatalf("%s: malformed %v", file, r.bad)
		}
		var out []string
		for _, o := range r.obs {
			out = append(out, fmt.Sprintf("%s %d/%s %s %s %s", o.IP, o.Flow.Port, o.Flow.Transport, o.Flow.Protocol, o.Flow.Basis, o.ObservedAt))
		}
		slices.Sort(out)
		return out, skipped
	}
	want, wantSkipped := read(t, NfdumpCSV, "nfdump-1.7.1.csv")
	for _, f := range []string{"pmacct-1.7.7.json", "pmacct-1.7.7.csv", "pmacct-1.7.7-formatted.txt"} {
		t.Run(f, func(t *testing.T) {
			got, skipped := read(t, Pmacct, f)
			if !slices.Equal(got, want) || skipped != wantSkipped {
				t.Errorf("got %d observations, %d skipped; want %d, %d\n got %v\nwant %v", len(got), skipped, len(want), wantSkipped, got, want)
			}
		})
	}
	r := runAdapter(t, Pmacct, `{"event_type":"purge_init","writer_id":"default_print/1"}`+"\n"+`{"event_type":"purge","ip_src":"192.0.2.300","ip_dst":"192.0.2.1","ip_proto":"udp"}`+"\n", Options{})
	if len(r.obs) != 0 || len(r.bad) != 1 || r.bad[0].Line != 2 {
		t.Errorf("obs %d bad %v", len(r.obs), r.bad)
	}
}
