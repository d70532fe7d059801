package ingest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
)

func TestPcapRulesDump(t *testing.T) {
	if os.Getenv("PCAP_DUMP") == "" {
		t.Skip()
	}
	rules, err := enrich.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/pcap/*")
	for _, f := range files {
		fh, _ := os.Open(f)
		_ = ingest.Pcap(fh, ingest.Options{}, func(line int, o ingest.Observation) error {
			fp, _ := rules.Match(o.Service, o.Flow)
			what := ""
			if o.Flow != nil {
				what = "flow " + o.Flow.Protocol
			} else {
				what = o.Service.Probes[0].Name
			}
			t.Logf("%s %d %s:%d? %s -> %s / %s / %s", filepath.Base(f), line, o.IP, 0, what, fp.Vendor, fp.Product, fp.RuleID)
			return nil
		}, func(e ingest.LineError) { t.Logf("bad %v", e) })
		fh.Close()
	}
}
