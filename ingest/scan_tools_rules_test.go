package ingest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

// TestToolOutputs_Rules runs every real sample of the har, burp, nikto,
// zap, nuclei (text) and httpx (text) formats through its adapter and the
// built-in rules, as `netintel rules match --format FORMAT` does: the
// WatchGuard Firebox of the httpx run is named by its page title
// ("Fireware XTM User Authentication", read from httpx's text), and no
// other service of these samples (web sites, a Citrix Hypervisor, a
// WatchGuard Dimension log server whose Server column httpx's text leaves
// ambiguous) is given a vendor.
func TestToolOutputs_Rules(t *testing.T) {
	t.Parallel()
	rules, err := enrich.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"httpx/httpx-1.1.5-text.txt:7 10.1.205.1:443 WatchGuard/watchguard-firebox",
		"httpx/httpx-1.1.5-text.txt:8 10.1.205.1:443 WatchGuard/watchguard-firebox",
	}
	var got []string
	services := 0
	for _, format := range []string{"har", "burp", "nikto", "zap", "nuclei", "httpx"} {
		files, err := filepath.Glob(filepath.Join("testdata", format, "*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no samples (%v)", format, err)
		}
		for _, file := range files {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			err = ingest.Adapters()[format](f, ingest.Options{}, func(line int, o ingest.Observation) error {
				services++
				if fp, _ := rules.Match(o.Service, o.Flow); fp.Vendor != "" {
					rel, _ := filepath.Rel("testdata", file)
					got = append(got, fmt.Sprintf("%s:%d %s:%d %s/%s", filepath.ToSlash(rel), line, o.IP, o.Service.Port, fp.Vendor, fp.RuleID))
				}
				return nil
			}, func(ingest.LineError) {})
			f.Close()
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
		}
	}
	if !slices.Equal(got, want) || services < 50 {
		t.Errorf("%d services; vendors named:\n%q\nwant\n%q", services, got, want)
	}
}

// TestNucleiText_RulesAsJSON: a result of a version-detect or panel
// template read from nuclei's text line names the appliance and release
// the same result read from its JSON line names (the results of
// enrich's TestRules_NucleiExtractedVersions, printed as nuclei's
// format_screen.go prints them).
func TestNucleiText_RulesAsJSON(t *testing.T) {
	t.Parallel()
	rules, err := enrich.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id, port, extracted, vendor, version string
	}{
		{"pulse-secure-version", "443", "9.1.18.24467", "Ivanti", "9.1R18.2"},
		{"sophos-fw-version-detect", "4444", "17.5.13.692", "Sophos", "17.5.13.692"},
		{"cisco-asa-detect", "443", "9.16(3)19", "Cisco", "9.16(3)19"},
		{"fortinet-fortigate-panel", "443", "Release date: Sep 26, 2023", "Fortinet", "7.2.6"},
		{"mikrotik-routeros", "80", "v6.49.7", "MikroTik", "6.49.7"},
	}
	match := func(in string) string {
		var got []string
		err := ingest.Nuclei(strings.NewReader(in+"\n"), ingest.Options{}, func(_ int, o ingest.Observation) error {
			fp, _ := rules.Match(o.Service, o.Flow)
			got = append(got, fp.Vendor+" "+fp.ExactVersion)
			return nil
		}, func(le ingest.LineError) { t.Errorf("bad record %q: %v", in, le) })
		if err != nil || len(got) != 1 {
			t.Fatalf("%q: %v %q", in, err, got)
		}
		return got[0]
	}
	for _, tt := range tests {
		jsonLine := fmt.Sprintf(`{"template-id":%q,"info":{"severity":"info"},"type":"http","host":"192.0.2.7:%s","port":%q,"matched-at":"https://192.0.2.7:%s/","extracted-results":[%q],"ip":"192.0.2.7"}`,
			tt.id, tt.port, tt.port, tt.port, tt.extracted)
		textLine := fmt.Sprintf(`[%s] [http] [info] https://192.0.2.7:%s/ [%q]`, tt.id, tt.port, tt.extracted)
		want := tt.vendor + " " + tt.version
		if j, x := match(jsonLine), match(textLine); j != want || x != want {
			t.Errorf("%s: json %q text %q, want %q", tt.id, j, x, want)
		}
	}
}
