package ipapi

import (
	"bytes"
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// TestMMDBIndex_LegacyClassificationKey checks that an MMDB published
// before the files shared the name "classifications" (its key was
// "classification") still answers its classifications, decoded whole
// (include=cves) or light, and that the current key wins.
func TestMMDBIndex_LegacyClassificationKey(t *testing.T) {
	t.Parallel()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoIP2-Anonymous-IP", IPVersion: 6, RecordSize: 32, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	add := func(cidr, key string, classes ...string) {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		var list mmdbtype.Slice
		for _, c := range classes {
			list = append(list, mmdbtype.String(c))
		}
		if err := tree.Insert(n, mmdbtype.Map{mmdbtype.String(key): list, "confidence": mmdbtype.Float64(0.9),
			"first_seen": mmdbtype.String("2026-11-01T00:00:00Z"), "last_seen": mmdbtype.String("2026-11-20T00:00:00Z")}); err != nil {
			t.Fatal(err)
		}
	}
	add("192.0.2.1/32", "classification", "tor")
	add("192.0.2.2/32", "classifications", "vpn", "hosting")
	var buf bytes.Buffer
	if _, err := tree.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	idx, err := OpenMMDB(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ip   string
		want []string
	}{{"192.0.2.1", []string{"tor"}}, {"192.0.2.2", []string{"vpn", "hosting"}}} {
		for _, cves := range []bool{false, true} {
			rec, found, err := idx.Lookup(netip.MustParseAddr(tt.ip), cves)
			if err != nil || !found {
				t.Fatalf("%s: found %v, %v", tt.ip, found, err)
			}
			if !slices.Equal(rec.Classifications, tt.want) {
				t.Errorf("%s (cves %v): classifications %v, want %v", tt.ip, cves, rec.Classifications, tt.want)
			}
		}
	}
}
