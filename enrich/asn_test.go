package enrich

import (
	"bytes"
	"compress/gzip"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
)

// The real slice of iptoasn's ip2asn-v4.tsv in samples/ (see
// samples/SOURCES.md), gzipped as the site serves it, plus crafted IPv6
// and unrouted lines in the combined file's form.
func TestASNTable_Lookup(t *testing.T) {
	raw, err := os.ReadFile("../samples/ip2asn-v4.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	dir := t.TempDir()
	v4 := filepath.Join(dir, "ip2asn-v4.tsv.gz")
	v6 := filepath.Join(dir, "ip2asn-v6.tsv")
	if err := os.WriteFile(v4, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	crafted := "2606:4700::\t2606:4700:ffff:ffff:ffff:ffff:ffff:ffff\t13335\tUS\tCLOUDFLARENET - Cloudflare, Inc.\n" +
		"2001:db8::\t2001:db8:ffff:ffff:ffff:ffff:ffff:ffff\t0\tNone\tNot routed\n" +
		"not a line\n"
	if err := os.WriteFile(v6, []byte(crafted), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := LoadCatalog(t.Context(), config.Catalog{ASN: []string{v4, v6}, FetchTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tb := cat.ASN()
	if n := strings.Count(string(raw), "\n") + 1; tb.Len() != n {
		t.Errorf("%d ranges, want %d (every v4 line and the routed v6 one)", tb.Len(), n)
	}
	tests := []struct {
		addr string
		asn  uint32
		org  string
	}{
		{"1.1.1.0", 13335, "CLOUDFLARENET - Cloudflare, Inc."},
		{"1.1.1.1", 7497, "CSTNET-AS-AP Computer Network Information Center"},
		{"1.1.1.2", 13335, "CLOUDFLARENET - Cloudflare, Inc."},
		{"::ffff:8.8.8.8", 15169, "GOOGLE - Google LLC"},
		{"216.239.59.255", 15169, "GOOGLE - Google LLC"},
		{"216.239.60.0", 0, ""}, // between two ranges
		{"0.0.0.1", 0, ""},
		{"255.255.255.255", 0, ""},
		{"2606:4700::1111", 13335, "CLOUDFLARENET - Cloudflare, Inc."},
		{"2001:db8::1", 0, ""}, // not routed
	}
	for _, tt := range tests {
		info, ok := tb.Lookup(netip.MustParseAddr(tt.addr))
		if ok != (tt.asn != 0) || info.ASN != tt.asn || info.Org != tt.org {
			t.Errorf("Lookup(%s) = %+v %v, want AS%d %q", tt.addr, info, ok, tt.asn, tt.org)
		}
	}
	if _, err := LoadCatalog(t.Context(), config.Catalog{ASN: []string{v6 + ".missing"}}); err == nil {
		t.Error("a missing table loaded")
	}
}

// Records carry their own attributions (claims, a range's provider where
// its source claimed nothing, the AS) and each asset the AS's.
func TestDoc_RecordAttributions(t *testing.T) {
	tb, _, err := LoadASN(strings.NewReader("104.16.0.0\t104.16.255.255\t13335\tUS\tCLOUDFLARENET - Cloudflare, Inc.\n"))
	if err != nil {
		t.Fatal(err)
	}
	tb.ObservedAt = "2026-11-26T00:00:00Z"
	cat := NewCatalog()
	cat.SetASN(tb)
	sc := newScorer(cat, time.Now())
	obs := []ingest.Observation{
		{Type: ingest.TypeRange, Network: "104.16.0.0/13", Source: "cloudflare", ObservedAt: "2026-11-20T00:00:00Z",
			Range: &ingest.Range{Kind: "cdn", Provider: "Cloudflare", Confidence: 0.8}},
		{Type: ingest.TypeSignal, IP: "104.16.1.1", Source: "proxies", ObservedAt: "2026-11-21T00:00:00Z",
			Signal: &ingest.Signal{Kind: "open_proxy", Provider: "Some Proxy", Port: 8080, Confidence: 0.6},
			Claims: []ingest.Claim{{OrgName: "Proxy Ops Ltd", SignalConfidence: 0.5}}},
	}
	for i := range obs {
		if err := obs[i].Normalize(); err != nil {
			t.Fatal(err)
		}
	}
	rng := newDoc(&obs[0])
	rng.apply(&obs[0], strings.Repeat("a", 32), nil)
	r := rng.record(sc)
	want := []ipmodel.Attribution{
		{OrgName: "Cloudflare", SignalSource: "cloudflare", SignalConfidence: 0.8, ObservedAt: "2026-11-20T00:00:00Z"},
		{OrgName: "CLOUDFLARENET - Cloudflare, Inc.", SignalSource: "ip2asn", SignalConfidence: ASNConfidence, ObservedAt: "2026-11-26T00:00:00Z"},
	}
	if r.ASN != 13335 || !equalAttrs(r.Attributions, want) {
		t.Errorf("range: asn %d attributions %+v", r.ASN, r.Attributions)
	}
	host := newDoc(&obs[1])
	host.apply(&obs[1], strings.Repeat("b", 32), nil)
	h := host.record(sc)
	if len(h.Assets) != 1 {
		t.Fatalf("host assets %+v", h.Assets)
	}
	// The claim wins over the provider of the same source.
	wantHost := []ipmodel.Attribution{
		want[1],
		{OrgName: "Proxy Ops Ltd", SignalSource: "proxies", SignalConfidence: 0.5, ObservedAt: "2026-11-21T00:00:00Z"},
	}
	if !equalAttrs(h.Attributions, wantHost) || !equalAttrs(h.Assets[0].Attributions, wantHost) {
		t.Errorf("host: %+v, asset %+v", h.Attributions, h.Assets[0].Attributions)
	}
	// Without a table: no ASN, no ip2asn attribution.
	if r := host.record(newScorer(NewCatalog(), time.Now())); r.ASN != 0 || len(r.Attributions) != 1 {
		t.Errorf("without a table: %+v", r)
	}
}

func equalAttrs(a, b []ipmodel.Attribution) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
