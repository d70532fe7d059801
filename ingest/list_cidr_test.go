package ingest

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCIDRList_PublishedLists reads real lists as their publishers wrote
// them (ingest/testdata/SOURCES.md): every entry read, none reported bad.
func TestCIDRList_PublishedLists(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file        string
		n           int
		first, last string
		typ         string // of every observation
	}{
		{"list-spamhaus-drop.txt", 12, "1.4.0.0/17", "27.126.160.0/20", TypeRange},    // `CIDR ; SBL` after `;` comments
		{"list-spamhaus-edrop.txt", 8, "27.112.32.0/19", "41.71.188.0/23", TypeRange}, // the same
		{"list-dshield-block.txt", 9, "207.150.177.0/24", "222.186.56.0/24", TypeRange},
		{"list-alienvault-reputation.txt", 10, "114.143.191.19", "23.92.83.73", TypeSignal}, // IP#score#...
		{"list-bambenek-c2-ipv4.txt", 8, "52.4.209.250", "217.160.165.207", TypeSignal},     // IP,description,date,url
		{"list-packetmail.txt", 8, "114.33.197.113", "14.162.12.153", TypeSignal},           // IP; last_seen; context
		{"list-csirtg.csv", 1, "80.82.78.27", "80.82.78.27", TypeSignal},                    // quoted CSV, header row, commented rows
		{"list-csirtg-feed.txt", 6, "80.82.78.27", "93.174.93.94", TypeSignal},              // id,indicator,... without a header
		{"list-ransomware-tracker.csv", 5, "37.247.107.145", "103.27.87.88", TypeSignal},    // the address in the 8th column
		{"list-ipsum.txt", 23, "77.90.185.20", "195.178.110.137", TypeSignal},               // IP<TAB>count
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := runAdapter(t, CIDRList, readFile(t, tt.file), Options{Kind: "proxy", ObservedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
			if len(r.bad) != 0 {
				t.Errorf("bad = %v", r.bad)
			}
			if len(r.obs) != tt.n {
				t.Fatalf("%d observations, want %d", len(r.obs), tt.n)
			}
			if got := r.obs[0].Key(); got != tt.first {
				t.Errorf("first = %s, want %s", got, tt.first)
			}
			if got := r.obs[len(r.obs)-1].Key(); got != tt.last {
				t.Errorf("last = %s, want %s", got, tt.last)
			}
			for _, o := range r.obs {
				if o.Type != tt.typ {
					t.Fatalf("%s is a %s, want %s", o.Key(), o.Type, tt.typ)
				}
			}
		})
	}
}

// TestCIDRList_Forms holds the other shapes lists come in, each line to
// the keys it must give, and the lines that must be reported.
func TestCIDRList_Forms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []string
		bad      []int
	}{
		{"Spamhaus drop_v4.json lines and their metadata line",
			`{"cidr":"1.10.16.0/20","sblid":"SBL256894","rir":"apnic"}` + "\n" + `{"cidr":"2001:678:254::/48","sblid":"SBL697648","rir":"ripencc"}` + "\n" +
				`{"type":"metadata","timestamp":1790775842,"size":103312,"records":2,"copyright":"(c) 2026 The Spamhaus Project SLU","terms":"https://www.spamhaus.org/drop/terms/"}` + "\n" + `{"sblid":"SBL1"}` + "\n",
			[]string{"1.10.16.0/20", "2001:678:254::/48"}, []int{4}},
		{"ranges: dash, spaced dash, two columns",
			"192.0.2.0-192.0.2.255\n192.0.2.1 - 192.0.2.6\n198.51.100.0\t198.51.100.127\t25\n",
			[]string{"192.0.2.0/24", "192.0.2.1", "192.0.2.2/31", "192.0.2.4/31", "192.0.2.6", "198.51.100.0/25"}, nil},
		{"a range that ends before it starts, or mixes families",
			"192.0.2.9-192.0.2.1\n192.0.2.1-2001:db8::1\n", nil, []int{1, 2}},
		{"ipset save",
			"create blacklist hash:net family inet hashsize 1024 maxelem 65536\nadd blacklist 203.0.113.0/24\nadd blacklist 198.51.100.7 timeout 300\n",
			[]string{"203.0.113.0/24", "198.51.100.7"}, nil},
		{"a header naming the address column; host bits of a CIDR cleared",
			"first_seen,ip_address,port\n2026-01-01,203.0.113.9,443\n2026-01-02,198.51.100.0/23,80\n2026-01-03,nothing,1\n",
			[]string{"203.0.113.9", "198.51.100.0/23"}, []int{4}},
		{"abuse.ch's commented header",
			`# "first_seen_utc","dst_ip","dst_port","c2_status","last_online","malware"` + "\n" + `"2021-01-17 07:44:46","203.0.113.5","447","online","2026-11-01","TrickBot"` + "\n",
			[]string{"203.0.113.5"}, nil},
		{"a header naming a range's columns (decimal numbers, IP2Location's layout)",
			"ip_from,ip_to,country\n16777216,16777471,AU\n3221225985,3221225985,US\n",
			[]string{"1.0.0.0/24", "192.0.2.1"}, nil},
		{"decimal FROM,TO without a header, IPv4-mapped IPv6 read as IPv4",
			`"16777216","16777471","AU"` + "\n" + `"281470698520576","281470698520831","AU"` + "\n",
			[]string{"1.0.0.0/24", "1.0.0.0/24"}, nil},
		{"trailing comments; a ; with no space before it separates values",
			"203.0.113.1 ; SBL1\n203.0.113.2 // note\n203.0.113.3;5\n203.0.113.4 # x\n",
			[]string{"203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"}, nil},
		{"an address with a port, a byte-order mark, an IPv4-mapped address",
			"\ufeff203.0.113.1:8080\n[2001:db8::1]:443\n::ffff:192.0.2.1\n",
			[]string{"203.0.113.1", "2001:db8::1", "192.0.2.1"}, nil},
		{"pipe-separated (ASN | name | address | time | category)",
			"701  |  UUNET - MCI Communications Ser  |   96.242.156.153  |  2016-03-17 11:02:29  |  sshpwauth\n",
			[]string{"96.242.156.153"}, nil},
		{"garbage is reported with its line", "not-an-ip\n10.0.0.300\nfoo bar\n", nil, []int{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runAdapter(t, CIDRList, tt.in, Options{Kind: "proxy"})
			var keys []string
			for _, o := range r.obs {
				keys = append(keys, o.Key())
			}
			if !slices.Equal(keys, tt.want) {
				t.Errorf("keys = %v, want %v", keys, tt.want)
			}
			if got := badLines(r.bad); !slices.Equal(got, tt.bad) {
				t.Errorf("bad lines = %v (%v), want %v", got, r.bad, tt.bad)
			}
		})
	}
}

func TestAddrRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from, to string
		want     []string
		n        int // when want is nil: how many prefixes
	}{
		{"10.0.0.1", "10.0.1.0", []string{"10.0.0.1/32", "10.0.0.2/31", "10.0.0.4/30", "10.0.0.8/29", "10.0.0.16/28", "10.0.0.32/27", "10.0.0.64/26", "10.0.0.128/25", "10.0.1.0/32"}, 0},
		{"0.0.0.0", "255.255.255.255", []string{"0.0.0.0/0"}, 0},
		{"::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", []string{"::/0"}, 0},
		{"2001:470:24:6fe::", "2001:470:24:700:ffff:ffff:ffff:ffff", []string{"2001:470:24:6fe::/63", "2001:470:24:700::/64"}, 0},
		{"192.0.2.7", "192.0.2.7", []string{"192.0.2.7/32"}, 0},
		{"0.0.0.1", "255.255.255.254", nil, 62},
		{"::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", nil, 254},
	}
	for _, tt := range tests {
		ps, err := addrRange(netip.MustParseAddr(tt.from), netip.MustParseAddr(tt.to))
		if err != nil {
			t.Fatalf("%s-%s: %v", tt.from, tt.to, err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.String())
		}
		if tt.want != nil && !slices.Equal(got, tt.want) {
			t.Errorf("%s-%s = %v, want %v", tt.from, tt.to, got, tt.want)
		}
		if tt.want == nil && len(got) != tt.n {
			t.Errorf("%s-%s: %d prefixes, want %d", tt.from, tt.to, len(got), tt.n)
		}
	}
}

// TestIP2Proxy_Samples reads IP2Location's published samples (PX1, PX2,
// PX11, PX12; IPv4 and IPv6 files; decimal and .cidr.csv layouts).
func TestIP2Proxy_Samples(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	read := func(t *testing.T, file string, opt Options) (map[string]Observation, []string, []LineError) {
		t.Helper()
		opt.ObservedAt = at
		var skipped []string
		opt.Skipped = func(_ int, why string) { skipped = append(skipped, why) }
		r := runAdapter(t, IP2Proxy, readFile(t, file), opt)
		byKey := map[string]Observation{}
		for _, o := range r.obs {
			byKey[o.Key()] = o
		}
		return byKey, skipped, r.bad
	}
	t.Run("PX11 IPv4: kinds, providers, last_seen", func(t *testing.T) {
		obs, skipped, bad := read(t, "ip2proxy-px11.ipv4.csv", Options{})
		if len(bad) != 0 || !slices.Equal(skipped, []string{"search-engine robot (SES)", "search-engine robot (SES)"}) {
			t.Fatalf("bad %v skipped %v", bad, skipped)
		}
		checks := []struct{ key, kind, provider, at string }{
			{"1.0.0.0/24", "cdn", "APNIC and CloudFlare DNS Resolver Project", "2026-10-31T00:00:00Z"}, // DCH with usage CDN, seen 1 day before
			{"5.182.16.5", "vpn_exit", "NordVPN", "2026-10-31T00:00:00Z"},
			{"209.141.61.52", "tor_exit", "Tor", "2026-10-31T00:00:00Z"},
			{"104.28.35.68/31", "relay", "CloudFlare WARP", "2026-10-31T00:00:00Z"},    // CPN
			{"12.208.147.112/29", "relay", "Comcast Business", "2026-10-31T00:00:00Z"}, // EPN, 214995824-214995831
			{"1.2.188.68", "residential_proxy", "", "2026-10-15T00:00:00Z"},            // last_seen 17
			{"1.13.194.2", "open_proxy", "", "2026-10-02T00:00:00Z"},                   // PUB
		}
		for _, c := range checks {
			o, ok := obs[c.key]
			if !ok {
				t.Errorf("%s not read", c.key)
				continue
			}
			kind, provider := "", ""
			if o.Range != nil {
				kind, provider = o.Range.Kind, o.Range.Provider
			} else {
				kind, provider = o.Signal.Kind, o.Signal.Provider
			}
			if kind != c.kind || provider != c.provider || o.ObservedAt != c.at {
				t.Errorf("%s: kind %q provider %q at %s, want %q %q %s", c.key, kind, provider, o.ObservedAt, c.kind, c.provider, c.at)
			}
			if (provider == "") != (len(o.Claims) == 0) {
				t.Errorf("%s: claims %v with provider %q", c.key, o.Claims, provider)
			}
		}
		if o := obs["104.28.35.68/31"]; o.Range.Country != "US" || o.Range.City != "San Francisco" {
			t.Errorf("country/city %+v", o.Range)
		}
	})
	t.Run("PX12 IPv6 file: mapped IPv4 and IPv6 ranges", func(t *testing.T) {
		obs, _, bad := read(t, "ip2proxy-px12.ipv6.csv", Options{})
		if len(bad) != 0 {
			t.Fatal(bad)
		}
		for _, k := range []string{"1.0.0.0/24", "2001:2d8:e1af:d18a:8913:aa66:577:5eac", "2001:470:24:6fe::/63", "2001:470:24:700::/64", "2001:470:1b80::/46"} {
			if _, ok := obs[k]; !ok {
				t.Errorf("%s not read (got %d)", k, len(obs))
			}
		}
	})
	t.Run("PX11 .cidr.csv layout", func(t *testing.T) {
		obs, _, bad := read(t, "ip2proxy-px11.ipv4.cidr.csv", Options{})
		if len(bad) != 0 || len(obs) != 6 {
			t.Fatalf("%d observations, bad %v", len(obs), bad)
		}
		if o := obs["1.13.177.136/29"]; o.Range == nil || o.Range.Kind != "hosting" || o.Range.Provider != "Tencent Cloud Computing (Beijing) Co. Ltd." {
			t.Errorf("1.13.177.136/29 = %+v", o)
		}
		if o := obs["1.2.174.85"]; o.Signal == nil || o.Signal.Kind != "vpn_exit" || o.ObservedAt != "2026-10-27T00:00:00Z" {
			t.Errorf("1.2.174.85 = %+v", o)
		}
	})
	t.Run("PX2: the type without a provider", func(t *testing.T) {
		obs, _, bad := read(t, "ip2proxy-px2.ipv4.csv", Options{})
		if len(bad) != 0 || len(obs) != 16 {
			t.Fatalf("%d observations, bad %v", len(obs), bad)
		}
		if o := obs["2.56.236.192"]; o.Signal == nil || o.Signal.Kind != "vpn_exit" || len(o.Claims) != 0 {
			t.Errorf("2.56.236.192 = %+v", o)
		}
	})
	t.Run("PX1 carries no type: --kind, else a clear error", func(t *testing.T) {
		if err := IP2Proxy(strings.NewReader(readFile(t, "ip2proxy-px1.ipv4.csv")), Options{}, func(int, Observation) error { return nil }, func(LineError) {}); err == nil || !strings.Contains(err.Error(), "--kind") {
			t.Errorf("err = %v, want one naming --kind", err)
		}
		obs, _, bad := read(t, "ip2proxy-px1.ipv4.csv", Options{Kind: "vpn"})
		if len(bad) != 0 || len(obs) != 5 {
			t.Fatalf("%d observations, bad %v", len(obs), bad)
		}
	})
	t.Run("bad rows", func(t *testing.T) {
		in := `"16777216","16777471","XYZ","AU","Australia"` + "\n" + `"1","2","3"` + "\n" + `"9","1","VPN","AU","Australia"` + "\n" + `"16777216","16777216","VPN","AU","Australia","Q","B","I","d","DCH","1","A","soon"` + "\n"
		r := runAdapter(t, IP2Proxy, in, Options{})
		if got := badLines(r.bad); len(r.obs) != 0 || !slices.Equal(got, []int{1, 2, 3, 4}) {
			t.Errorf("obs %d, bad %v", len(r.obs), r.bad)
		}
		for i, want := range []string{"proxy_type", "fields", "ends before", "last_seen"} {
			if !strings.Contains(r.bad[i].Error(), want) {
				t.Errorf("bad[%d] = %v, want it to name %q", i, r.bad[i], want)
			}
		}
	})
}

func TestTorExits_BulkList(t *testing.T) {
	t.Parallel()
	in := readFile(t, "tor-bulk-exit-list.txt")
	r := runAdapter(t, TorExits, in, Options{ObservedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if want := strings.Count(in, "\n"); len(r.obs) != want || len(r.bad) != 0 {
		t.Fatalf("%d observations, bad %v; want %d", len(r.obs), r.bad, want)
	}
	for _, o := range r.obs {
		if o.Signal.Kind != "tor_exit" || o.Signal.Provider != "Tor" || o.ObservedAt != "2026-11-01T00:00:00Z" {
			t.Fatalf("%+v %+v", o, o.Signal)
		}
	}
	r = runAdapter(t, TorExits, "192.0.2.1\nfoo\n192.0.2.2 extra\n", Options{})
	if len(r.obs) != 1 || !slices.Equal(badLines(r.bad), []int{2, 3}) {
		t.Errorf("obs %d bad %v", len(r.obs), r.bad)
	}
}

// TestCIDRList_HeaderDate: the date a list's comment header gives is the
// time of its entries (observed_at), not the file's modification time:
// Spamhaus's "; Last-Modified:", DShield's "#    updated:", Bambenek's
// "## Feed generated at:", IPsum's "# Last update:" (its zone kept) and
// abuse.ch Feodo Tracker's "# Last updated: ... UTC   #" in its boxed
// header (the CSV as VAST's documentation quotes it, CRLF as Feodo
// serves it). A date in a comment after the first entry is not read.
func TestCIDRList_HeaderDate(t *testing.T) {
	t.Parallel()
	feodo := strings.Join([]string{
		"################################################################",
		"# abuse.ch Feodo Tracker Botnet C2 IP Blocklist (CSV)          #",
		"# Last updated: 2021-08-17 15:00:42 UTC                        #",
		"#                                                              #",
		"# Terms Of Use: https://feodotracker.abuse.ch/blocklist/       #",
		"# For questions please contact feodotracker [at] abuse.ch      #",
		"################################################################",
		"#",
		`"first_seen_utc","dst_ip","dst_port","c2_status","last_online","malware"`,
		`"2021-01-17 07:30:05","192.0.2.205","443","offline","2021-08-18","Dridex"`,
		`"2021-01-17 07:44:46","198.51.100.32","4643","online","2021-08-18","Dridex"`,
		"# Last updated: 2030-01-01 00:00:00 UTC",
		`"2021-01-17 07:44:50","203.0.113.197","3786","online","2021-08-18","Dridex"`,
	}, "\r\n") + "\r\n"
	for _, tt := range []struct{ name, in, want string }{
		{"spamhaus", readFile(t, "list-spamhaus-drop.txt"), "2015-09-25T17:35:27Z"},
		{"dshield", readFile(t, "list-dshield-block.txt"), "2015-09-29T11:18:10Z"},
		{"bambenek", readFile(t, "list-bambenek-c2-ipv4.txt"), "2016-06-05T12:18:00Z"},
		{"ipsum", readFile(t, "list-ipsum.txt"), "2026-08-22T01:00:29Z"},
		{"feodo", feodo, "2021-08-17T15:00:42Z"},
	} {
		r := runAdapter(t, CIDRList, tt.in, Options{Kind: "proxy", ObservedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
		if len(r.obs) == 0 || len(r.bad) != 0 {
			t.Errorf("%s: obs %d bad %v", tt.name, len(r.obs), r.bad)
			continue
		}
		for _, o := range r.obs {
			if o.ObservedAt != tt.want {
				t.Errorf("%s: %s observed at %s, want %s", tt.name, o.IP+o.Network, o.ObservedAt, tt.want)
				break
			}
		}
	}
}
