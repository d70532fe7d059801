package ingest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPcapDump(t *testing.T) {
	if os.Getenv("PCAP_DUMP") == "" {
		t.Skip()
	}
	files, _ := filepath.Glob("testdata/pcap/*")
	for _, f := range files {
		fh, _ := os.Open(f)
		n := 0
		err := Pcap(fh, Options{Warn: func(l int, m string) { t.Logf("%s warn %d %s", f, l, m) }, Skipped: func(l int, r string) {}}, func(line int, o Observation) error {
			n++
			b, _, _ := o.Encode()
			if len(b) > 6000 {
				b = append(b[:600], "..."...)
			}
			t.Logf("%s %d %s", filepath.Base(f), line, b)
			return nil
		}, func(e LineError) { t.Logf("%s bad %v", f, e) })
		fh.Close()
		t.Logf("%s: %d observations, err %v", f, n, err)
	}
}
