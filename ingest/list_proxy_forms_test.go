package ingest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestProxyList_PublishedForms reads proxy lists as their publishers
// write them (ingest/testdata/SOURCES.md).
func TestProxyList_PublishedForms(t *testing.T) {
	t.Parallel()
	type sig struct {
		ip     string
		port   int
		family string
	}
	tests := []struct {
		name, file string
		want       []sig
		skipped    int
	}{
		{"spys/clarketm text: a banner, then ip:port with its flags", "proxy-spys.txt", []sig{
			{"170.239.207.241", 999, ""}, {"42.2.156.79", 80, ""}, {"181.39.24.152", 999, ""}, {"165.154.236.174", 80, ""},
			{"171.6.155.76", 8000, ""}, {"23.144.56.65", 80, ""}, {"103.253.153.22", 32650, ""}, {"62.54.177.118", 3128, ""}}, 5},
		{"a status list keeps only what did not fail", "proxy-spys-status.txt", []sig{
			{"89.109.253.119", 80, ""}, {"45.185.162.203", 999, ""}, {"105.235.219.154", 8080, ""}}, 5},
		{"monosans proxies_pretty.json: protocol, and the exit address when it differs", "proxy-monosans.json", []sig{
			{"144.31.222.106", 7890, "socks4"}, {"104.28.230.247", 0, ""},
			{"85.8.47.198", 7080, "http-proxy"},
			{"85.8.47.209", 7080, "http-proxy"}, {"85.8.47.211", 0, ""}}, 0},
		{"fate0 proxy.list JSON lines: a private export address is dropped", "proxy-fate0.jsonl", []sig{
			{"64.40.228.50", 80, "http-proxy"}, {"64.40.228.49", 0, ""},
			{"23.234.252.229", 8080, "http-proxy"}, {"208.82.61.66", 3128, "http-proxy"}, {"75.126.253.8", 8080, "http-proxy"},
			{"72.170.220.17", 8080, "http-proxy"}, {"54.159.220.163", 80, "http-proxy"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			skipped := 0
			r := runAdapter(t, ProxyList, readFile(t, tt.file), Options{Skipped: func(int, string) { skipped++ }})
			var got []sig
			for _, o := range r.obs {
				if o.Signal.Kind != "open_proxy" {
					t.Fatalf("kind %q", o.Signal.Kind)
				}
				got = append(got, sig{o.IP, o.Signal.Port, o.Signal.ProtocolFamily})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
			if len(r.bad) != 0 || skipped != tt.skipped {
				t.Errorf("bad %v, skipped %d (want %d)", r.bad, skipped, tt.skipped)
			}
		})
	}
}

func TestProxyList_OtherForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []string // ip:port/family
		bad      []int
	}{
		{"address and port as columns", "203.0.113.1 8080\n203.0.113.2\t3128\n203.0.113.3,1080,US,elite\n",
			[]string{"203.0.113.1:8080/", "203.0.113.2:3128/", "203.0.113.3:1080/"}, nil},
		{"an API answer holding an array (geonode-style), protocols and a port as a string",
			`{"data":[{"ip":"203.0.113.4","port":"8080","protocols":["socks4","socks5"]},{"ip":"proxy.example","port":"1"}],"total":2}`,
			[]string{"203.0.113.4:8080/socks4"}, []int{1}},
		{"proxifly-style objects with a proxy URL", "[\n {\"proxy\": \"socks5://203.0.113.5:1080\", \"protocol\": \"socks5\", \"ip\": \"203.0.113.5\", \"port\": 1080},\n {\"proxy\": \"ftp://203.0.113.6:21\"}\n]\n",
			[]string{"203.0.113.5:1080/socks5"}, []int{3}},
		{"a text list whose first line is an IPv6 proxy", "[2001:db8::1]:8080\n", []string{"2001:db8::1:8080/"}, nil},
		{"a JSON object with no address", `{"port": 80}`, nil, []int{1}},
		{"a cut JSON list", "[{\"host\":\"203.0.113.7\",\"port\":80},\n{\"host\":", []string{"203.0.113.7:80/"}, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runAdapter(t, ProxyList, tt.in, Options{})
			var got []string
			for _, o := range r.obs {
				got = append(got, o.IP+":"+itoa(o.Signal.Port)+"/"+o.Signal.ProtocolFamily)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if b := badLines(r.bad); !slices.Equal(b, tt.bad) {
				t.Errorf("bad %v (%v), want lines %v", b, r.bad, tt.bad)
			}
			for _, le := range r.bad {
				if le.Line < 1 || le.Line > strings.Count(tt.in, "\n")+1 {
					t.Errorf("bad line %d outside the input", le.Line)
				}
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
