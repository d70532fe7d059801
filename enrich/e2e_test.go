package enrich

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// Every capture of the accuracy corpus, written as a user would feed it
// (its observation's JSON as the file has it, one line each, through
// `netintel ingest --format observations`), is stored by the enrich
// worker with the fingerprint the harness scores: the same vendor, exact
// version and band, or none where the harness names none. What the
// harness measures is what a lookup answers.
func TestPipeline_CorpusAsIngested(t *testing.T) {
	rules, caps := rulesAndCorpus(t)
	var lines bytes.Buffer
	ips := make([]string, len(caps))
	for i, c := range caps {
		raw, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Observation map[string]any `json:"observation"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		// One address each: the corpus reuses documentation addresses.
		ips[i] = fmt.Sprintf("2001:db8:c0::%x", i+1)
		doc.Observation["ip"] = ips[i]
		b, err := json.Marshal(doc.Observation)
		if err != nil {
			t.Fatal(err)
		}
		lines.Write(b)
		lines.WriteByte('\n')
	}
	file := filepath.Join(t.TempDir(), "corpus.ndjson")
	if err := os.WriteFile(file, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, 5*time.Second, 3)
	e.startWorker(t, e.cfg.Enrich)
	in := ingest.New(e.nats.JS, testutil.Logger(t), nil, 256, time.Minute)
	ctx := t.Context()
	sum, err := in.IngestFile(ctx, "observations", file, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Malformed) != 0 || sum.Read != len(caps) {
		t.Fatalf("ingest read %d of %d corpus observations, refused %v", sum.Read, len(caps), sum.Malformed)
	}
	e.waitIdle(t)
	st := NewState(e.nats.JS, "ipstate")
	st.SetCatalog(sampleCatalog(t))
	named := 0
	for i, c := range caps {
		fp, ok := rules.Match(c.Observation.Service, c.Observation.Flow)
		r, found, err := st.Get(ctx, ips[i])
		if err != nil || !found {
			t.Errorf("%s: not stored (%v)", c.ID, err)
			continue
		}
		var got *ipmodel.Asset
		for j := range r.Assets {
			if r.Assets[j].Vendor != nil {
				got = &r.Assets[j]
			}
		}
		switch {
		case !ok && got != nil:
			t.Errorf("%s: stored vendor %q, the harness names none", c.ID, *got.Vendor)
		case ok && got == nil:
			t.Errorf("%s: stored no vendor, the harness names %q", c.ID, fp.Vendor)
		case ok:
			named++
			if *got.Vendor != fp.Vendor || strOrEmpty(got.ExactVersion) != fp.ExactVersion || strOrEmpty(got.VersionBand) != fp.VersionBand {
				t.Errorf("%s: stored %q %q %q, the harness %q %q %q", c.ID, *got.Vendor, strOrEmpty(got.ExactVersion), strOrEmpty(got.VersionBand), fp.Vendor, fp.ExactVersion, fp.VersionBand)
			}
		}
	}
	if named < len(caps)/2 {
		t.Errorf("only %d of %d captures named", named, len(caps))
	}
}

func strOrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
