package enrich

import (
	"os"
	"testing"
)

// The real EPSS file (first chunk, unchanged): its #model_version comment
// line, header and every row load.
func TestCatalog_RealEPSS(t *testing.T) {
	f, err := os.Open("testdata/epss_scores-first-chunk.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := NewCatalog()
	if err := c.LoadEPSS(f); err != nil {
		t.Fatal(err)
	}
	if c.EPSSModel != "model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z" {
		t.Errorf("model = %q", c.EPSSModel)
	}
	if len(c.epss) != 534 {
		t.Errorf("%d rows, want 534", len(c.epss))
	}
	for id, want := range map[string][2]float64{"CVE-1999-0001": {0.03351, 0.88255}, "CVE-1999-0549": {0.0179, 0.77491}} {
		if c.epss[id] != want {
			t.Errorf("%s = %v, want %v", id, c.epss[id], want)
		}
	}
}

// The real KEV and NVD records of the samples (copied unchanged, see
// samples/SOURCES.md) load completely: every NVD record is indexed and
// every KEV entry dated.
func TestCatalog_RealSamplesLoad(t *testing.T) {
	c := sampleCatalog(t)
	entries, err := os.ReadDir("../samples/cve/nvd")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.cves) != len(entries) || len(c.cves) < 15 {
		t.Errorf("%d NVD records indexed from %d files", len(c.cves), len(entries))
	}
	for id, info := range c.cves {
		if len(info.products) == 0 || info.score == nil || info.cvssVer == nil {
			t.Errorf("%s: products %v score %v cvss %v", id, info.products, info.score, info.cvssVer)
		}
		if _, ok := c.kev[id]; !ok {
			t.Errorf("%s: not in the KEV sample", id)
		}
	}
	if len(c.kev) != 20 {
		t.Errorf("%d KEV entries, want 20", len(c.kev))
	}
}
