package ipapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/netintel/netintel/internal/ipmodel"
)

// An address inside a range with a place (a geofeed, the Private Relay
// list) is answered with the range's country, region and city, read from
// the MMDB the snapshot publishes, whether the address has a record of
// its own or not; an address outside any such range has nulls.
func TestIP_PlaceOfTheRange(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	recs := []ipmodel.Record{
		{IP: "172.224.226.0", Network: "172.224.226.0/27", Classifications: []string{"relay"}, Provider: str("iCloud Private Relay"),
			Confidence: 0.95, FirstSeen: "2026-11-20T00:00:00Z", LastSeen: "2026-11-26T00:00:00Z", Sources: []string{"private-relay"},
			Assets: []ipmodel.Asset{}, Country: str("GB"), Region: str("GB-EN"), City: str("London")},
		{IP: "172.224.226.5", Classifications: []string{"proxy"}, Confidence: 0.6, FirstSeen: "2026-11-20T00:00:00Z",
			LastSeen: "2026-11-26T00:00:00Z", Sources: []string{"proxy-list"}, Assets: []ipmodel.Asset{}},
		{IP: "198.51.100.7", Classifications: []string{"proxy"}, Confidence: 0.6, FirstSeen: "2026-11-20T00:00:00Z",
			LastSeen: "2026-11-26T00:00:00Z", Sources: []string{"proxy-list"}, Assets: []ipmodel.Asset{}},
	}
	idx := buildMMDB(t, recordState(recs))
	svc := New(Options{InternalKey: testKey})
	svc.Swap(sameView(Manifest{SnapshotDate: "2026-11-26"}, idx, &Table{}))
	mux := http.NewServeMux()
	svc.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		ip                    string
		country, region, city any
	}{
		{"172.224.226.5", "GB", "GB-EN", "London"},  // a host of its own inside the range
		{"172.224.226.30", "GB", "GB-EN", "London"}, // the range alone
		{"198.51.100.7", nil, nil, nil},
	} {
		r := call(t, srv.URL, "GET", "/api/v1/ip/"+tc.ip, "", key("free")...)
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.ip, r.status, r.body)
		}
		b := r.json(t)
		for k, want := range map[string]any{"country": tc.country, "region": tc.region, "city": tc.city} {
			got, ok := b[k]
			if !ok || got != want {
				t.Errorf("%s: %s = %v (present %v), want %v", tc.ip, k, got, ok, want)
			}
		}
	}
}
