package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/decompress"
)

var listTime = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func byKey(obs []Observation) map[string]Observation {
	m := map[string]Observation{}
	for _, o := range obs {
		m[o.Key()] = o
	}
	return m
}

// Every format has an adapter and a help line, and nothing else does.
func TestAdapters_MatchConfigFormats(t *testing.T) {
	t.Parallel()
	var names []string
	for n := range Adapters() {
		names = append(names, n)
		if config.IngestFormatHelp[n] == "" {
			t.Errorf("%s: no help line in config.IngestFormatHelp", n)
		}
	}
	slices.Sort(names)
	want := slices.Clone(config.IngestFormats)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("adapters %v, config.IngestFormats %v", names, want)
	}
	if len(config.IngestFormatHelp) != len(want) {
		t.Errorf("%d help lines for %d formats", len(config.IngestFormatHelp), len(want))
	}
}

// The real file repeats prefixes under AzureCloud, AzureCloud.<region>,
// Storage and Storage.EastUS: each comes out once, with the most specific
// tag's service and the region a regional tag gives.
func TestAzureServiceTags_RealSample(t *testing.T) {
	t.Parallel()
	r := runAdapter(t, AzureServiceTags, readFile(t, "azure-service-tags.json"), Options{ObservedAt: listTime})
	if len(r.bad) != 0 || len(r.obs) != 25 {
		t.Fatalf("obs %d (want 25 distinct prefixes), bad %v", len(r.obs), r.bad)
	}
	m := byKey(r.obs)
	if len(m) != len(r.obs) {
		t.Fatalf("%d observations for %d prefixes", len(r.obs), len(m))
	}
	tests := []struct{ network, kind, region, service string }{
		{"13.68.163.32/28", "hosting", "eastus", "AzureStorage"},   // Storage, then Storage.EastUS
		{"4.232.98.112/29", "cdn", "", "AzureFrontDoor.Frontend"},  // no systemService: the tag name
		{"4.156.0.0/15", "hosting", "eastus", "AzureCloud.eastus"}, // AzureCloud.eastus, then AzureCloud
		{"4.145.74.52/30", "hosting", "", "ActionGroup"},           // a global service tag
	}
	for _, tt := range tests {
		o, ok := m[tt.network]
		if !ok {
			t.Errorf("%s: missing", tt.network)
			continue
		}
		if o.Range.Kind != tt.kind || o.Range.Region != tt.region || o.Range.Service != tt.service || o.Range.Provider != "Microsoft Azure" || o.ObservedAt != "2026-11-01T00:00:00Z" {
			t.Errorf("%s = %+v at %s", tt.network, *o.Range, o.ObservedAt)
		}
	}
}

func TestAzureServiceTags_Malformed(t *testing.T) {
	t.Parallel()
	in := `{"changeNumber": 1,
"values": [
 {"name": "AzureCloud", "properties": {"addressPrefixes": ["10.0.0.0/8", "nonsense"]}},
 {"name": 7},
 {"name": "AzureFrontDoor.Backend", "properties": {"addressPrefixes": ["10.0.0.0/8"]}}
]}`
	r := runAdapter(t, AzureServiceTags, in, Options{ObservedAt: listTime})
	if got := badLines(r.bad); !slices.Equal(got, []int{3, 4}) {
		t.Errorf("bad lines %v, want [3 4]: %v", got, r.bad)
	}
	if len(r.obs) != 1 || r.obs[0].Range.Kind != "cdn" || r.obs[0].Range.Service != "AzureFrontDoor.Backend" {
		t.Errorf("obs = %+v", r.obs)
	}
}

func TestOracleRanges_RealSample(t *testing.T) {
	t.Parallel()
	in := readFile(t, "oracle-public-ip-ranges.json")
	r := runAdapter(t, OracleRanges, in, Options{})
	if len(r.bad) != 0 || len(r.obs) != strings.Count(in, `"cidr"`) {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[0]
	if o.Network != "129.80.0.0/16" || o.Range.Region != "us-ashburn-1" || o.Range.Service != "OCI" || o.Range.Kind != "hosting" || o.Range.Provider != "Oracle Cloud" || o.ObservedAt != "2025-07-21T07:13:25Z" {
		t.Errorf("first = %+v %+v", o, *o.Range)
	}
	multi := false
	for _, o := range r.obs {
		multi = multi || strings.Contains(o.Range.Service, ",")
	}
	if !multi {
		t.Error("no CIDR with several tags came through")
	}
	bad := `{"regions": [{"region": "x", "cidrs": [{"cidr": "1.2.3.0/24"}]}], "last_updated_timestamp": "2025-07-21T07:13:25.457838"}`
	if r := runAdapter(t, OracleRanges, bad, Options{}); len(r.obs) != 0 || len(r.bad) != 1 {
		t.Errorf("region before the timestamp: obs %d bad %v", len(r.obs), r.bad)
	}
}

func TestFastlyRanges_RealSample(t *testing.T) {
	t.Parallel()
	r := runAdapter(t, FastlyRanges, readFile(t, "fastly-ip-ranges.json"), Options{ObservedAt: listTime})
	if len(r.bad) != 0 || len(r.obs) != 21 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	m := byKey(r.obs)
	for _, n := range []string{"151.101.0.0/16", "2a04:4e42::/32"} {
		if o := m[n]; o.Range == nil || o.Range.Kind != "cdn" || o.Range.Provider != "Fastly" {
			t.Errorf("%s = %+v", n, o)
		}
	}
	r = runAdapter(t, FastlyRanges, "{\"addresses\": [\"1.2.3.0/24\",\n 7,\n \"1.2.3.999/24\"]}", Options{ObservedAt: listTime})
	if got := badLines(r.bad); len(r.obs) != 1 || !slices.Equal(got, []int{2, 3}) {
		t.Errorf("obs %d bad %v", len(r.obs), r.bad)
	}
}

func TestGeofeed_RealSamples(t *testing.T) {
	t.Parallel()
	opt := Options{Kind: "hosting", Provider: "Akamai (Linode)", ObservedAt: listTime}
	in := readFile(t, "geofeed-linode.csv")
	r := runAdapter(t, Geofeed, in, opt)
	rows := 0
	for _, l := range strings.Split(in, "\n") {
		if l != "" && l[0] != '#' {
			rows++
		}
	}
	if len(r.bad) != 0 || len(r.obs) != rows {
		t.Fatalf("obs %d of %d rows, bad %v", len(r.obs), rows, r.bad)
	}
	o := r.obs[0]
	if o.Network != "2600:3c00::/32" || o.Range.Country != "US" || o.Range.Region != "US-TX" || o.Range.City != "Richardson" || o.Range.Kind != "hosting" || o.Claims[0].OrgName != "Akamai (Linode)" {
		t.Errorf("first = %+v %+v", o, *o.Range)
	}
	r = runAdapter(t, Geofeed, readFile(t, "geofeed-digitalocean.csv"), Options{Kind: "hosting", Provider: "DigitalOcean", ObservedAt: listTime})
	if len(r.bad) != 0 || len(r.obs) != 30 || r.obs[0].Range.City != "Amsterdam" {
		t.Fatalf("digitalocean: obs %d bad %v", len(r.obs), r.bad)
	}
	in = "# c\n192.0.2.0/24,US,US-CA,\"San Jose, CA\",95141\n192.0.2.300/32,US,,,\n198.51.100.7,de,de-be,Berlin,\n203.0.113.0/24,USA,,,\n203.0.113.0/24,US,DE-BE,,\n2001:db8::/32\n"
	r = runAdapter(t, Geofeed, in, opt)
	if got := badLines(r.bad); !slices.Equal(got, []int{3, 5, 6}) {
		t.Errorf("bad lines %v, want [3 5 6]: %v", got, r.bad)
	}
	if len(r.obs) != 3 || r.obs[0].Range.City != "San Jose, CA" || r.obs[1].Network != "198.51.100.7/32" || r.obs[1].Range.Country != "DE" || r.obs[2].Range.Country != "" {
		t.Errorf("obs = %+v", r.obs)
	}
	for _, o := range []Options{{Provider: "x"}, {Kind: "vpn"}} {
		if err := Geofeed(strings.NewReader(in), o, func(int, Observation) error { return nil }, func(LineError) {}); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestPrivateRelay_RealSample(t *testing.T) {
	t.Parallel()
	r := runAdapter(t, PrivateRelay, readFile(t, "private-relay-egress.csv"), Options{ObservedAt: listTime})
	if len(r.bad) != 0 || len(r.obs) != 15 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[14]
	if o.Network != "172.224.226.58/31" || o.Range.Kind != "relay" || o.Range.Provider != "iCloud Private Relay" || o.Range.Country != "GB" || o.Range.Region != "GB-EN" || o.Range.City != "Egg Buckland" || len(o.Claims) != 0 {
		t.Errorf("last = %+v %+v", o, *o.Range)
	}
}

func TestProxyList(t *testing.T) {
	t.Parallel()
	in := readFile(t, "proxy-list-http.txt")
	r := runAdapter(t, ProxyList, in, Options{Kind: "http", ObservedAt: listTime})
	if len(r.bad) != 0 || len(r.obs) != strings.Count(in, "\n") {
		t.Fatalf("real sample: obs %d bad %v", len(r.obs), r.bad)
	}
	if s := r.obs[0].Signal; r.obs[0].IP != "188.226.89.87" || s.Kind != "open_proxy" || s.Port != 8080 || s.ProtocolFamily != "http-proxy" {
		t.Errorf("first = %+v %+v", r.obs[0], *s)
	}
	tests := []struct {
		line, ip string
		port     int
		family   string
	}{
		{"1.2.3.4:3128", "1.2.3.4", 3128, ""},
		{"socks5://1.2.3.4:1080", "1.2.3.4", 1080, "socks5"},
		{"SOCKS4://1.2.3.4:1080/", "1.2.3.4", 1080, "socks4"},
		{"https://user:pw@1.2.3.4:8443", "1.2.3.4", 8443, "https-proxy"},
		{"1.2.3.4:8080:user:pass", "1.2.3.4", 8080, ""},
		{"[2001:db8::1]:8080", "2001:db8::1", 8080, ""},
		{"http://[2001:db8::1]:80 # checked 2026-11-01", "2001:db8::1", 80, "http-proxy"},
		{"::ffff:1.2.3.4:80", "", 0, ""},
		{"proxy.example.com:8080", "", 0, ""},
		{"1.2.3.4:0", "", 0, ""},
		{"1.2.3.4", "", 0, ""},
		{"ftp://1.2.3.4:21", "", 0, ""},
	}
	for _, tt := range tests {
		r := runAdapter(t, ProxyList, tt.line+"\n", Options{ObservedAt: listTime})
		if tt.ip == "" {
			if len(r.obs) != 0 || len(r.bad) != 1 || r.bad[0].Line != 1 {
				t.Errorf("%q: obs %+v bad %v, want one bad line", tt.line, r.obs, r.bad)
			}
			continue
		}
		if len(r.obs) != 1 || r.obs[0].IP != tt.ip || r.obs[0].Signal.Port != tt.port || r.obs[0].Signal.ProtocolFamily != tt.family {
			t.Errorf("%q: obs %+v bad %v", tt.line, r.obs, r.bad)
		}
	}
	if err := ProxyList(strings.NewReader(""), Options{Kind: "vpn"}, nil, nil); err == nil {
		t.Error("--kind vpn accepted")
	}
}

func TestMullvadRelays_RealRows(t *testing.T) {
	t.Parallel()
	r := runAdapter(t, MullvadRelays, readFile(t, "mullvad-relays.json"), Options{ObservedAt: listTime})
	if len(r.bad) != 0 || len(r.obs) != 4 {
		t.Fatalf("obs %d (want 2 relays x 2 addresses, the bridge skipped) bad %v", len(r.obs), r.bad)
	}
	want := []struct{ ip, ref, family string }{
		{"103.124.165.2", "al-tia-wg-001.relays.mullvad.net", "wireguard"},
		{"2a04:27c0:0:e::f001", "al-tia-wg-001.relays.mullvad.net", "wireguard"},
		{"31.171.154.50", "al-tia-ovpn-001", "openvpn"},
		{"2a04:27c0:0:4::a01f", "al-tia-ovpn-001", "openvpn"},
	}
	for i, w := range want {
		o := r.obs[i]
		if o.IP != w.ip || o.Signal.Kind != "vpn_exit" || o.Signal.Ref != w.ref || o.Signal.ProtocolFamily != w.family || o.Signal.Provider != "Mullvad VPN" {
			t.Errorf("obs[%d] = %+v %+v", i, o, *o.Signal)
		}
	}
	in := "[\n{\"hostname\":\"x-wg-1\",\"type\":\"wireguard\",\"ipv4_addr_in\":\"1.2.3.4\",\"ipv6_addr_in\":null},\n{\"hostname\":\"x-wg-2\",\"type\":\"wireguard\",\"ipv4_addr_in\":\"kaputt\"},\n{\"type\":\"wireguard\"},\n{\"hostname\":\"x-1\",\"type\":\"pptp\",\"ipv4_addr_in\":\"1.2.3.5\"},\n[]\n]"
	r = runAdapter(t, MullvadRelays, in, Options{ObservedAt: listTime})
	if got := badLines(r.bad); len(r.obs) != 1 || !slices.Equal(got, []int{3, 4, 5, 6}) {
		t.Errorf("obs %d bad lines %v: %v", len(r.obs), got, r.bad)
	}
}

// A gzipped feed cut short publishes the records before the cut, then
// fails with one error saying the input is truncated.
func TestIngest_TruncatedGzip(t *testing.T) {
	t.Parallel()
	plain := readFile(t, "proxy-list-http.txt")
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression) // stored blocks: a cut keeps whole lines before it
	w.Write([]byte(plain))
	w.Close()
	cut := buf.Bytes()[:buf.Len()/2]
	dr, err := decompress.Reader(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var bad []LineError
	err = ProxyList(dr, Options{ObservedAt: listTime}, func(int, Observation) error { n++; return nil }, func(le LineError) { bad = append(bad, le) })
	if !errors.Is(err, decompress.ErrTruncated) || !strings.Contains(err.Error(), "gzip") {
		t.Fatalf("err = %v, want a gzip truncation error", err)
	}
	if whole := strings.Count(plain, "\n"); n < whole/3 || n >= whole || len(bad) != 0 {
		t.Errorf("%d of %d records read before the cut, bad %v", n, whole, bad)
	}
}
