package ingest

import (
	"slices"
	"strings"
	"testing"
)

// TestNfdumpOutputs_Agree holds nfdump 1.7.1's text and JSON outputs of
// flowgen's flows (ingest/testdata/SOURCES.md) to its csv output, which
// TestFlowAdapters_RealSamples checks flow by flow: the same observations
// in the same order, the same flows skipped.
func TestNfdumpOutputs_Agree(t *testing.T) {
	t.Parallel()
	type seen struct {
		ip, protocol, basis, at string
		port                    int
	}
	read := func(t *testing.T, file string) ([]seen, int) {
		t.Helper()
		var out []seen
		skipped := 0
		r := runAdapter(t, NfdumpCSV, readFile(t, file), Options{Skipped: func(int, string) { skipped++ }})
		if len(r.bad) != 0 {
			t.Fatalf("%s: malformed %v", file, r.bad)
		}
		for _, o := range r.obs {
			out = append(out, seen{o.IP, o.Flow.Protocol, o.Flow.Basis, o.ObservedAt, o.Flow.Port})
		}
		return out, skipped
	}
	want, wantSkipped := read(t, "nfdump-1.7.1.csv")
	if len(want) < 14 {
		t.Fatalf("the csv gave %d observations", len(want))
	}
	for _, f := range []string{"nfdump-1.7.1-line.txt", "nfdump-1.7.1-long.txt", "nfdump-1.7.1-extended.txt", "nfdump-1.7.1.json"} {
		t.Run(f, func(t *testing.T) {
			got, skipped := read(t, f)
			if !slices.Equal(got, want) || skipped != wantSkipped {
				t.Errorf("got %d observations, %d skipped; want %d, %d\n got %v\nwant %v", len(got), skipped, len(want), wantSkipped, got, want)
			}
		})
	}
}

func TestNfdumpText_Forms(t *testing.T) {
	t.Parallel()
	head := "Date first seen          Duration Proto      Src IP Addr:Port          Dst IP Addr:Port   Packets    Bytes Flows\n"
	tests := []struct {
		name, in string
		ok       int
		bad      []int
		errHas   string
	}{
		{"1.6's seconds and scaled counts", head + "2026-11-20 09:59:02.000    38.000 UDP        192.0.2.10:43512 ->    198.51.100.20:51820    1.2 M    1.5 G     1\n", 1, nil, ""},
		{"an IPv6 address nfdump shortened", head + "2026-11-20 09:59:02.000    38.000 UDP     2001:db8:1..::12.51820 ->  2001:db8:2::22.51820   12  14916     1\n", 0, []int{2}, "-6"},
		{"a line cut short", head + "2026-11-20 09:59:02.000    38.000 UDP\n", 0, []int{2}, "columns"},
		{"a bad duration", head + "2026-11-20 09:59:02.000    x UDP        192.0.2.10:43512 ->    198.51.100.20:51820   12  14916     1\n", 0, []int{2}, "duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAdapter(t, NfdumpCSV, tt.in, Options{})
			if len(r.obs) != tt.ok || !slices.Equal(badLines(r.bad), tt.bad) {
				t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
			}
			if tt.errHas != "" && !strings.Contains(r.bad[0].Error(), tt.errHas) {
				t.Errorf("error %v lacks %q", r.bad[0], tt.errHas)
			}
			if tt.ok == 1 && (r.obs[0].Flow.Packets != 1_200_000 || r.obs[0].Flow.Bytes != 1_500_000_000 || r.obs[0].ObservedAt != "2026-11-20T09:59:40Z") {
				t.Errorf("flow %+v at %s", r.obs[0].Flow, r.obs[0].ObservedAt)
			}
		})
	}
}
