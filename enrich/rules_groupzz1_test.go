package enrich

import (
	"testing"

	"github.com/netintel/netintel/ingest"
)

// TestRules_GroupZZ1 checks group ZZ1's class change (docs/rules-sources.md,
// "Group ZZ1"): NetScaler's integrated-cache Via header names Citrix, but its
// number names the caching component, not the firmware train (10.0 on units
// of the 2020s, 9.3 in 14.1's documentation), so no version and no band may
// come from it, whatever the number and form.
func TestRules_GroupZZ1(t *testing.T) {
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	via := func(v string) *ingest.Service {
		return tcpService(443, httpProbe("GET", "/", 200, "", "Via", v))
	}
	tests := []struct {
		name string
		svc  *ingest.Service
		want wantMatch
	}{
		{"via 9.3 without count", via("NS-CACHE-9.3"), wantMatch{Vendor: "Citrix", StrictVersion: true, StrictBand: true}},
		{"via 9.3 with count", via("NS-CACHE-9.3:  12"), wantMatch{Vendor: "Citrix", StrictVersion: true, StrictBand: true}},
		{"via 9.2 behind a proxy", via("1.1 varnish, NS-CACHE-9.2: 3"), wantMatch{Vendor: "Citrix", StrictVersion: true, StrictBand: true}},
		{"via 10.0", via("NS-CACHE-10.0:  4"), wantMatch{Vendor: "Citrix", StrictVersion: true, StrictBand: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
