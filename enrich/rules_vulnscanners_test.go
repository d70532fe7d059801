package enrich

import (
	"os"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// The nessus and openvas ingest formats give a report's identification as
// detected: a real Nessus export of a Cisco PIX (DefectDojo's fixture,
// ingest/testdata/nessus-dd-many-vuln.xml) is named the ASA lineage
// (72-vulnscanners.yaml) on both its ports, the 7.0 band from the OS
// identification's CPE; Greenbone's FortiOS detection as the openvas
// adapter gives it is named by 70-detected.yaml with its version.
func TestRules_VulnScanners(t *testing.T) {
	t.Parallel()
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../ingest/testdata/nessus-dd-many-vuln.xml")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var svcs []*ingest.Service
	err = ingest.Nessus(f, ingest.Options{}, func(_ int, o ingest.Observation) error {
		svcs = append(svcs, o.Service)
		return nil
	}, func(le ingest.LineError) { t.Errorf("malformed: %v", le) })
	if err != nil || len(svcs) != 2 {
		t.Fatalf("read %d services, %v; want 2", len(svcs), err)
	}
	for _, s := range svcs {
		fp := checkMatch(t, rules, s, wantMatch{Vendor: "Cisco", Rule: "vulnscanner-cisco-pix", Product: "ASA", Band: "7.0.x", StrictBand: true})
		if fp.Vendor == "" {
			t.Errorf("port %d: nothing named", s.Port)
		}
	}
	tests := []struct {
		name          string
		d             ingest.Detected
		vendor, rule  string
		version, band string
	}{
		{"openvas fortios detection", ingest.Detected{By: "openvas", Product: "Fortinet FortiOS", Version: "7.2.4", CPE: []string{"cpe:/o:fortinet:fortios:7.2.4"}, Info: "os: Fortinet FortiOS 7.2.4"},
			"Fortinet", "detected-fortinet-fortigate", "7.2.4", ""},
		{"nessus pix os only", ingest.Detected{By: "nessus", Service: "https", Info: "os: CISCO PIX 7.0"}, "Cisco", "vulnscanner-cisco-pix", "", "7.0.x"},
		{"nessus pix release cpe", ingest.Detected{By: "nessus", CPE: []string{"cpe:/o:cisco:pix_firewall:6.3(5)"}}, "Cisco", "vulnscanner-cisco-pix", "6.3(5)", ""},
		{"nessus windows names nothing", ingest.Detected{By: "nessus", Service: "www", Info: "os: Microsoft Windows", CPE: []string{"cpe:/o:microsoft:windows"}}, "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.d
			checkMatch(t, rules, &ingest.Service{Port: 443, Transport: "tcp", Detected: &d},
				wantMatch{Vendor: tt.vendor, Rule: tt.rule, Version: tt.version, StrictVersion: tt.version != "", Band: tt.band, StrictBand: tt.band != ""})
		})
	}
}
