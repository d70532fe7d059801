package publish

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oschwald/geoip2-golang"
	"github.com/oschwald/maxminddb-golang"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/publish/gen"
)

// buildMMDB writes the MMDB of g (ranges first, then hosts, or the other
// way round) into a temp file and returns its path.
func buildMMDB(t *testing.T, g *gen.State, hostsFirst bool) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := newMMDBWriter(&buf, t.TempDir(), time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	insert := func(isRange bool) func(ipmodel.Record) error {
		return func(r ipmodel.Record) error {
			p, err := recordPrefix(&r, isRange)
			if err != nil {
				return err
			}
			return w.Write(&r, p)
		}
	}
	steps := []func() error{
		func() error { return g.Ranges(t.Context(), insert(true)) },
		func() error { return g.Hosts(t.Context(), insert(false)) },
	}
	if hostsFirst {
		slices.Reverse(steps)
	}
	for _, s := range steps {
		if err := s(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), FileMMDB)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// expectMerged is what the MMDB holds for host h inside range rg, per the
// merge rules documented in docs/snapshot.md.
func expectMerged(h, rg ipmodel.Record) ipmodel.Record {
	out := h
	out.Network = rg.Network
	var cls []string
	for _, c := range ipmodel.Classes {
		if h.Has(c) || rg.Has(c) {
			cls = append(cls, c)
		}
	}
	out.Classifications = cls
	if out.Provider == nil {
		out.Provider = rg.Provider
	}
	out.Confidence = max(h.Confidence, rg.Confidence)
	out.FirstSeen = min(h.FirstSeen, rg.FirstSeen)
	out.LastSeen = max(h.LastSeen, rg.LastSeen)
	src := slices.Concat(h.Sources, rg.Sources)
	slices.Sort(src)
	out.Sources = slices.Compact(src)
	return out
}

// canon renders a record as JSON with the ip dropped and empty slices
// normalised, for comparing what a reader decoded with what was written.
func canon(t *testing.T, r ipmodel.Record) string {
	t.Helper()
	r.IP = ""
	if r.Classifications == nil {
		r.Classifications = []string{}
	}
	if r.Assets == nil {
		r.Assets = []ipmodel.Asset{}
	}
	for i := range r.Assets {
		a := &r.Assets[i]
		if a.Attributions == nil {
			a.Attributions = []ipmodel.Attribution{}
		}
		if len(a.Cves) == 0 {
			a.Cves = nil
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMMDB_ReadersAgree(t *testing.T) {
	t.Parallel()
	g := gen.New(2000, 7)
	for _, hostsFirst := range []bool{false, true} {
		name := "ranges-first"
		if hostsFirst {
			name = "hosts-first"
		}
		t.Run(name, func(t *testing.T) {
			path := buildMMDB(t, g, hostsFirst)
			db, err := maxminddb.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Verify(); err != nil {
				t.Fatalf("maxminddb Verify: %v", err)
			}
			if db.Metadata.DatabaseType != DatabaseType || db.Metadata.IPVersion != 6 {
				t.Fatalf("metadata = %q v%d", db.Metadata.DatabaseType, db.Metadata.IPVersion)
			}
			if out, err := exec.Command("mmdblookup", "--file", path, "--ip", "1.0.0.1", "--verbose").CombinedOutput(); err != nil || !strings.Contains(string(out), DatabaseType) {
				t.Fatalf("mmdblookup --verbose: %v\n%s", err, out)
			}
			geo, err := geoip2.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer geo.Close()

			rangeOnly := func(j int) (string, ipmodel.Record) {
				// The last address of the range's /22 or /44 holds no host.
				p := gen.RangePrefix(j)
				a := p.Addr().AsSlice()
				a[p.Bits()/8] |= byte(0xff >> (p.Bits() % 8))
				for k := p.Bits()/8 + 1; k < len(a); k++ {
					a[k] = 0xff
				}
				return net.IP(a).String(), g.Range(j)
			}
			type tc struct {
				name string
				ip   string
				want ipmodel.Record
			}
			var cases []tc
			for _, i := range []int{gen.BlockSize + 1, 5 * gen.BlockSize, 4*gen.BlockSize + 3, 9*gen.BlockSize + 63, 1999} {
				if _, in := g.InRange(i); in {
					t.Fatalf("host %d unexpectedly in a range", i)
				}
				cases = append(cases, tc{"host", gen.HostAddr(i).String(), g.Host(i)})
			}
			for _, i := range []int{0, 7*gen.BlockSize + 2, 14*gen.BlockSize + 10, 28 * gen.BlockSize} {
				j, in := g.InRange(i)
				if !in {
					t.Fatalf("host %d not in a range", i)
				}
				cases = append(cases, tc{"host-in-range", gen.HostAddr(i).String(), expectMerged(g.Host(i), g.Range(j))})
			}
			for _, j := range []int{0, 1, 2, 4} {
				ip, want := rangeOnly(j)
				cases = append(cases, tc{"range", ip, want})
			}
			v6 := 0
			for _, c := range cases {
				t.Run(c.name+"/"+c.ip, func(t *testing.T) {
					ip := net.ParseIP(c.ip)
					if ip.To4() == nil {
						v6++
					}
					var got ipmodel.Record
					if err := db.Lookup(ip, &got); err != nil {
						t.Fatal(err)
					}
					if g, w := canon(t, got), canon(t, c.want); g != w {
						t.Fatalf("maxminddb record\n got %s\nwant %s", g, w)
					}
					anon, err := geo.AnonymousIP(ip)
					if err != nil {
						t.Fatal(err)
					}
					f := Flags(&c.want)
					gotFlags := [flagCount]bool{anon.IsAnonymous, anon.IsAnonymousVPN, anon.IsHostingProvider, anon.IsPublicProxy, anon.IsResidentialProxy, anon.IsTorExitNode}
					if gotFlags != f {
						t.Fatalf("geoip2 flags = %v, want %v (classifications %v)", gotFlags, f, c.want.Classifications)
					}
					checkMMDBLookup(t, path, c.ip, &c.want)
				})
			}
			if v6 == 0 {
				t.Fatal("no IPv6 case")
			}
		})
	}
}

// mmdbLookup runs Debian's mmdblookup for one key path and returns the
// value it prints (without the type annotation), or ok=false when the path
// does not exist.
func mmdbLookup(t *testing.T, file, ip string, path ...string) (string, bool) {
	t.Helper()
	out, err := exec.Command("mmdblookup", append([]string{"--file", file, "--ip", ip}, path...)...).CombinedOutput()
	s := strings.TrimSpace(string(out))
	if err != nil {
		if strings.Contains(s, "does not match") || strings.Contains(s, "not found") || strings.Contains(s, "Could not find") {
			return "", false
		}
		t.Fatalf("mmdblookup %s %v: %v: %s", ip, path, err, s)
	}
	if s == "" {
		return "", false
	}
	if i := strings.LastIndex(s, " <"); i >= 0 {
		s = s[:i]
	}
	// Strings are printed between quotes, unescaped.
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	return s, true
}

func checkMMDBLookup(t *testing.T, file, ip string, want *ipmodel.Record) {
	t.Helper()
	for i, name := range FlagNames {
		v, ok := mmdbLookup(t, file, ip, name)
		if Flags(want)[i] {
			if !ok || v != "true" {
				t.Errorf("mmdblookup %s %s = %q %v, want true", ip, name, v, ok)
			}
		} else if ok {
			t.Errorf("mmdblookup %s %s = %q, want absent", ip, name, v)
		}
	}
	if v, ok := mmdbLookup(t, file, ip, "network"); ok != (want.Network != "") || v != want.Network {
		t.Errorf("mmdblookup %s network = %q %v, want %q", ip, v, ok, want.Network)
	}
	if v, _ := mmdbLookup(t, file, ip, "last_seen"); v != want.LastSeen {
		t.Errorf("mmdblookup %s last_seen = %q, want %q", ip, v, want.LastSeen)
	}
	if len(want.Classifications) > 0 {
		if v, _ := mmdbLookup(t, file, ip, "classifications", "0"); v != want.Classifications[0] {
			t.Errorf("mmdblookup %s classification/0 = %q, want %q", ip, v, want.Classifications[0])
		}
	}
	if v, ok := mmdbLookup(t, file, ip, "provider"); ok != (want.Provider != nil) || (ok && v != *want.Provider) {
		t.Errorf("mmdblookup %s provider = %q %v, want %v", ip, v, ok, want.Provider)
	}
	for k, a := range want.Assets {
		if v, _ := mmdbLookup(t, file, ip, "assets", itoa(k), "port"); v != itoa(a.Port) {
			t.Errorf("mmdblookup %s assets/%d/port = %q, want %d", ip, k, v, a.Port)
		}
		if len(a.Cves) > 0 {
			if v, _ := mmdbLookup(t, file, ip, "assets", itoa(k), "cves", "0", "cve_id"); v != a.Cves[0].CveID {
				t.Errorf("mmdblookup %s assets/%d/cves/0/cve_id = %q, want %s", ip, k, v, a.Cves[0].CveID)
			}
			if v, _ := mmdbLookup(t, file, ip, "assets", itoa(k), "cve_summary", "total_count"); v != itoa(a.CveSummary.TotalCount) {
				t.Errorf("mmdblookup %s cve_summary/total_count = %q, want %d", ip, v, a.CveSummary.TotalCount)
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSpool_RoundTrip(t *testing.T) {
	t.Parallel()
	g := gen.New(2000, 21)
	var buf []byte
	for i := 0; i < g.NHosts; i += 7 {
		h := g.Host(i)
		buf = appendRecord(buf[:0], &h)
		got, err := decodeRecord(buf)
		if err != nil {
			t.Fatal(err)
		}
		if got.IP != h.IP || canon(t, got) != canon(t, h) {
			t.Fatalf("host %d\n got %s\nwant %s", i, canon(t, got), canon(t, h))
		}
		for _, cut := range []int{1, len(buf) / 2, len(buf) - 1} {
			if _, err := decodeRecord(buf[:cut]); err == nil {
				t.Fatalf("host %d cut at %d decoded", i, cut)
			}
		}
	}
	r := g.Range(3)
	buf = appendRecord(buf[:0], &r)
	if got, err := decodeRecord(buf); err != nil || got.Network != r.Network || canon(t, got) != canon(t, r) {
		t.Fatalf("range: %v %s", err, canon(t, got))
	}
}

// Issue 31 item 8: only IPv4-mapped addresses (::ffff:0:0/96) are the IPv4
// they embed. A Teredo address (2001::/32, which embeds its server's IPv4)
// and a 6to4 address (2002::/16) are IPv6 addresses of their own: answered
// with their own record or not at all, never with the embedded IPv4's.
func TestMMDB_OnlyIPv4MappedIsIPv4(t *testing.T) {
	t.Parallel()
	g := gen.New(10, 3)
	v4 := g.Host(1)
	v4.IP = "198.51.100.5"
	teredo := g.Host(2)
	teredo.IP = "2001:0:4136:e378:8000:63bf:3fff:fdd2"
	sixToFour := g.Host(3)
	sixToFour.IP = "2002:cb00:7105::1"
	var buf bytes.Buffer
	w, err := newMMDBWriter(&buf, t.TempDir(), time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	// An IPv4-compatible record (::198.51.100.5) would land on the IPv4's
	// place in the tree and be merged into its record: it stays out.
	compat := g.Host(4)
	compat.IP = "::c633:6405"
	for _, r := range []ipmodel.Record{v4, teredo, sixToFour, compat} {
		p, err := recordPrefix(&r, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&r, p); err != nil {
			t.Fatalf("insert %s: %v", r.IP, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), FileMMDB)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := maxminddb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Verify(); err != nil {
		t.Fatalf("maxminddb Verify: %v", err)
	}
	tests := []struct {
		name string
		ip   string
		want *ipmodel.Record // nil: not found
	}{
		{"ipv4", "198.51.100.5", &v4},
		{"ipv4-mapped", "::ffff:198.51.100.5", &v4},
		{"ipv4 neighbour", "198.51.100.6", nil},
		{"teredo with the ipv4 as its server", "2001:0:c633:6405::1", nil},
		{"teredo with the ipv4 as its client", "2001:0:4136:e378:8000:ffff:39cd:9bfa", nil},
		{"6to4 of the ipv4", "2002:c633:6405::1", nil},
		{"teredo record", teredo.IP, &teredo},
		{"6to4 record", sixToFour.IP, &sixToFour},
		{"ipv4-compatible is not mapped", "::c633:6405", &v4}, // ::/96 is where IPv4 lives in an IPv6 tree
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got ipmodel.Record
			_, found, err := db.LookupNetwork(net.ParseIP(tc.ip), &got)
			if err != nil {
				t.Fatal(err)
			}
			if found != (tc.want != nil) {
				t.Fatalf("maxminddb %s: found %v, want %v (record %s)", tc.ip, found, tc.want != nil, got.LastSeen)
			}
			if tc.want != nil && canon(t, got) != canon(t, *tc.want) {
				t.Fatalf("maxminddb %s: another record", tc.ip)
			}
			v, ok := mmdbLookup(t, path, tc.ip, "last_seen")
			if ok != (tc.want != nil) || (ok && v != tc.want.LastSeen) {
				t.Fatalf("mmdblookup %s last_seen = %q %v, want %v", tc.ip, v, ok, tc.want != nil)
			}
		})
	}
	// Iterating without aliases lists each record once: the alias of
	// ::ffff:0:0/96 is seen as one (it points at the IPv4 tree itself).
	var nets []string
	it := db.Networks(maxminddb.SkipAliasedNetworks)
	for it.Next() {
		var r ipmodel.Record
		n, err := it.Network(&r)
		if err != nil {
			t.Fatal(err)
		}
		nets = append(nets, n.String())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(nets)
	want := []string{"198.51.100.5/32", sixToFour.IP + "/128", teredo.IP + "/128"}
	slices.Sort(want)
	if !slices.Equal(nets, want) {
		t.Fatalf("networks = %v, want %v", nets, want)
	}
}
