package ingest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
