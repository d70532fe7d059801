package enrich

import (
	"os"
	"testing"
	"time"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/testutil"
)

func TestPipeline_EndToEnd(t *testing.T) {
	e := newEnv(t, 5*time.Second, 3)
	e.startWorker(t, e.cfg.Enrich)
	in := ingest.New(e.nats.JS, testutil.Logger(t), nil, 256, time.Minute)
	ctx := t.Context()
	feeds := []struct {
		format, file string
		opt          ingest.Options
	}{
		{"observations", "../samples/observations.ndjson", ingest.Options{}},
		{"tor-exits", "../samples/tor-exit-addresses", ingest.Options{}},
		{"aws-ranges", "../samples/aws-ip-ranges.json", ingest.Options{}},
		{"cidr-list", "../samples/mullvad.txt", ingest.Options{Kind: "vpn", Provider: "Mullvad"}},
	}
	wantHosts, wantRanges := map[string]bool{}, map[string]bool{}
	for _, f := range feeds {
		if _, err := in.IngestFile(ctx, f.format, f.file, f.opt); err != nil {
			t.Fatal(err)
		}
		// What the stored state must hold, read independently of the worker.
		fh, err := os.Open(f.file)
		if err != nil {
			t.Fatal(err)
		}
		_ = ingest.Adapters()[f.format](fh, f.opt, func(_ int, o ingest.Observation) error {
			if o.Type == ingest.TypeRange {
				wantRanges[o.Network] = true
			} else {
				wantHosts[o.IP] = true
			}
			return nil
		}, func(ingest.LineError) {})
		fh.Close()
	}
	e.waitIdle(t)
	st := NewState(e.nats.JS, "ipstate")
	st.SetCatalog(sampleCatalog(t))
	get := func(ip string) ipmodel.Record {
		t.Helper()
		r, ok, err := st.Get(ctx, ip)
		if err != nil || !ok {
			t.Fatalf("get %s: %v %v", ip, ok, err)
		}
		return r
	}
	// The Cisco ASA with an exact version: CVEs with high confidence.
	asa := get("203.0.113.20")
	if len(asa.Assets) != 1 {
		t.Fatalf("asa assets = %+v", asa.Assets)
	}
	a := asa.Assets[0]
	if *a.Vendor != "Cisco" || a.ExactVersion == nil || *a.ExactVersion != "9.8(4)10" || a.ProtocolFamily != "ssl-vpn" || a.CveSummary == nil || a.CveSummary.TotalCount == 0 {
		t.Fatalf("asa asset = %+v", a)
	}
	if !asa.Has(ipmodel.ClassVPN) || len(a.Attributions) != 1 || a.Attributions[0].OrgName != "Example Logistics Ltd" {
		t.Errorf("asa record = %+v", asa)
	}
	// The FortiGate seen by two scanners: high confidence band, newest claim
	// per source; FortiOS shows no version a public table reads.
	fg := get("203.0.113.10").Assets[0]
	if fg.ConfidenceBand != "high" || len(fg.EvidenceSources) != 2 || fg.Vendor == nil || *fg.Vendor != "Fortinet" || fg.VersionBand != nil || fg.FirstSeen != "2026-11-20T10:00:00Z" || fg.LastSeen != "2026-11-21T09:30:00Z" {
		t.Errorf("fortigate = %+v", fg)
	}
	tor := get("185.241.208.232")
	if !tor.Has(ipmodel.ClassTor) || len(tor.Assets) != 0 || tor.Sources[0] != "tor-exits" {
		t.Errorf("tor record = %+v", tor)
	}
	wg := get("198.51.100.5")
	if !wg.Has(ipmodel.ClassVPN) || wg.Assets[0].ProtocolFamily != "wireguard" || *wg.Assets[0].Vendor != "WireGuard" {
		t.Errorf("wireguard record = %+v", wg)
	}
	hosts, ranges := 0, 0
	if err := st.Hosts(ctx, func(r ipmodel.Record) error {
		hosts++
		if r.Network != "" || r.IP == "" || r.FirstSeen == "" {
			t.Errorf("host record %+v", r)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.Ranges(ctx, func(r ipmodel.Record) error {
		ranges++
		if r.Network == "" || r.IP == "" {
			t.Errorf("range record %+v", r)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if ranges != len(wantRanges) || hosts != len(wantHosts) || hosts < 100 {
		t.Errorf("hosts=%d ranges=%d, want %d %d", hosts, ranges, len(wantHosts), len(wantRanges))
	}
}
