package publish

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/oschwald/geoip2-golang"
	"github.com/oschwald/maxminddb-golang"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/publish/gen"
)

var mmdbTestTime = time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)

// writeMMDBFile writes items through w (an MMDB writer) into a file in
// dir and returns its path.
func writeMMDBItems(tb testing.TB, w formatWriter, out *bytes.Buffer, items []item, dir, name string) string {
	tb.Helper()
	for i := range items {
		if err := w.Write(&items[i].rec, items[i].pfx); err != nil {
			tb.Fatalf("write %s: %v", items[i].pfx, err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// buildBoth writes items with the streaming writer (sort chunks of chunk
// entries, so that small inputs are sorted on disk too) in the order
// given, and with mmdbwriter's (the reference) in refOrder.
func buildBoth(tb testing.TB, items, refOrder []item, chunk, recordSize int) (got, want string) {
	tb.Helper()
	dir := tb.TempDir()
	var gb, wb bytes.Buffer
	gw, err := newMMDBWriter(&gb, tb.TempDir(), mmdbTestTime)
	if err != nil {
		tb.Fatal(err)
	}
	gw.sorter = newNetSorter(gw.dir, chunk)
	gw.minRecordSize = recordSize
	got = writeMMDBItems(tb, gw, &gb, items, dir, "got.mmdb")
	ww, err := newRefMMDBWriter(&wb, tb.TempDir(), mmdbTestTime)
	if err != nil {
		tb.Fatal(err)
	}
	want = writeMMDBItems(tb, ww, &wb, refOrder, dir, "want.mmdb")
	return got, want
}

// randomItems returns n records at random networks: ranges nested in one
// another, hosts inside and outside them, IPv4 and IPv6, reserved space,
// Teredo and 6to4, IPv4-mapped and IPv4-compatible forms, a network
// written twice, a range around the ::ffff:0:0/96 alias. Each goes
// through recordPrefix as Build's records do; those it refuses are left
// out.
func randomItems(rng *rand.Rand, n int) []item {
	g := gen.New(n, rng.Uint64())
	bases := []netip.Prefix{
		netip.MustParsePrefix("3.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("224.0.0.0/4"),
		netip.MustParsePrefix("255.255.255.0/24"), netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("128.0.0.0/1"),
		netip.MustParsePrefix("2001::/32"), netip.MustParsePrefix("2002::/16"), netip.MustParsePrefix("2001:db8::/32"),
		netip.MustParsePrefix("fe80::/10"), netip.MustParsePrefix("fc00::/7"), netip.MustParsePrefix("2a00::/12"),
		netip.MustParsePrefix("::fffe:0:0/95"), netip.MustParsePrefix("ff00::/8"), netip.MustParsePrefix("::/0"),
	}
	randIn := func(p netip.Prefix) netip.Addr {
		a := p.Addr().As16()
		off := 0
		if p.Addr().Is4() {
			off = 96
		}
		for bit := off + p.Bits(); bit < 128; bit++ {
			if rng.IntN(2) == 1 {
				a[bit/8] |= 0x80 >> (bit % 8)
			}
		}
		if p.Addr().Is4() {
			return netip.AddrFrom4([4]byte(a[12:]))
		}
		return netip.AddrFrom16(a)
	}
	var items []item
	var ranges []netip.Prefix
	add := func(rec ipmodel.Record, isRange bool) {
		pfx, err := recordPrefix(&rec, isRange)
		if err != nil {
			panic(err)
		}
		if isRange {
			rec.Network = pfx.String()
			rec.IP = pfx.Addr().String()
		} else {
			rec.Network = ""
			rec.IP = pfx.Addr().String()
		}
		items = append(items, item{rec, pfx})
	}
	for i := 0; i < n; i++ {
		base := bases[rng.IntN(len(bases))]
		switch k := rng.IntN(100); {
		case k < 25: // a range
			bits := base.Bits() + rng.IntN(base.Addr().BitLen()-base.Bits()+1)
			if base.Addr().Is4() {
				bits = min(bits, 30)
			} else {
				bits = min(bits, 120)
			}
			p := netip.PrefixFrom(randIn(base), bits).Masked()
			if len(ranges) > 0 && rng.IntN(4) == 0 { // inside another range
				outer := ranges[rng.IntN(len(ranges))]
				if outer.Bits() < outer.Addr().BitLen() {
					p = netip.PrefixFrom(randIn(outer), outer.Bits()+1+rng.IntN(outer.Addr().BitLen()-outer.Bits())).Masked()
				}
			}
			ranges = append(ranges, p)
			r := g.Range(i % max(g.NRanges, 1))
			r.Network = p.String()
			add(r, true)
		case k < 30 && len(items) > 0: // a network written twice
			prev := items[rng.IntN(len(items))]
			r := g.Host(i)
			r.IP, r.Network = prev.rec.IP, prev.rec.Network
			add(r, prev.rec.Network != "")
		default: // a host, mostly inside a range
			var a netip.Addr
			if len(ranges) > 0 && rng.IntN(10) < 6 {
				a = randIn(ranges[rng.IntN(len(ranges))])
			} else {
				a = randIn(base)
			}
			ip := a.String()
			switch rng.IntN(20) {
			case 0:
				if a.Is4() {
					ip = netip.AddrFrom16(a.As16()).String() // ::ffff:a.b.c.d
				}
			case 1:
				if a.Is4() {
					var c [16]byte
					a4 := a.As4()
					copy(c[12:], a4[:])
					ip = netip.AddrFrom16(c).String() // ::a.b.c.d: left out
				}
			}
			r := g.Host(i)
			r.IP = ip
			add(r, false)
		}
	}
	return items
}

// mmdbProbes returns addresses to look up: for each item its first and
// last address and one at random, their IPv4-mapped, IPv4-compatible,
// Teredo and 6to4 forms for IPv4, and addresses at random.
func mmdbProbes(rng *rand.Rand, items []item, random int) []netip.Addr {
	var out []netip.Addr
	for _, it := range items {
		p := it.pfx
		first := p.Addr()
		a := first.AsSlice()
		bits := p.Bits()
		for b := bits; b < len(a)*8; b++ {
			a[b/8] |= 0x80 >> (b % 8)
		}
		last, _ := netip.AddrFromSlice(a)
		mid := first.AsSlice()
		for b := bits; b < len(mid)*8; b++ {
			if rng.IntN(2) == 1 {
				mid[b/8] |= 0x80 >> (b % 8)
			}
		}
		m, _ := netip.AddrFromSlice(mid)
		for _, x := range []netip.Addr{first, last, m} {
			out = append(out, x)
			if x.Is4() {
				v4 := x.As4()
				var compat, teredo, six [16]byte
				copy(compat[12:], v4[:])
				teredo[0], teredo[1] = 0x20, 0x01
				copy(teredo[4:], v4[:])
				teredo[15] = 1
				six[0], six[1] = 0x20, 0x02
				copy(six[2:], v4[:])
				six[15] = 1
				out = append(out, netip.AddrFrom16(x.As16()), netip.AddrFrom16(compat), netip.AddrFrom16(teredo), netip.AddrFrom16(six))
			}
		}
	}
	for range random {
		var a [16]byte
		for k := range a {
			a[k] = byte(rng.Uint32())
		}
		if rng.IntN(2) == 0 {
			out = append(out, netip.AddrFrom4([4]byte(a[:4])))
		} else {
			out = append(out, netip.AddrFrom16(a))
		}
	}
	return out
}

// compareMMDBs checks that the MMDB at got answers exactly as the one at
// want does: metadata, every network maxminddb iterates (with and without
// the aliased ones) with its record, and each probe's lookup.
func compareMMDBs(tb testing.TB, got, want string, probes []netip.Addr, minRecordSize uint) {
	tb.Helper()
	g, err := maxminddb.Open(got)
	if err != nil {
		tb.Fatal(err)
	}
	defer g.Close()
	w, err := maxminddb.Open(want)
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Close()
	if err := g.Verify(); err != nil {
		tb.Fatalf("maxminddb Verify: %v", err)
	}
	gm, wm := g.Metadata, w.Metadata
	if want := max(wantRecordSize(gm.NodeCount, got), minRecordSize); gm.RecordSize != want {
		tb.Fatalf("record size %d, want %d", gm.RecordSize, want)
	}
	gm.RecordSize, wm.RecordSize = 0, 0
	if !reflect.DeepEqual(gm, wm) {
		tb.Fatalf("metadata\n got %+v\nwant %+v", gm, wm)
	}
	for _, opts := range [][]maxminddb.NetworksOption{nil, {maxminddb.SkipAliasedNetworks}} {
		gi, wi := g.Networks(opts...), w.Networks(opts...)
		n := 0
		for {
			gn, wn := gi.Next(), wi.Next()
			if gn != wn {
				tb.Fatalf("after %d networks: got has more %v, want has more %v", n, gn, wn)
			}
			if !gn {
				break
			}
			var gr, wr any
			gnet, err := gi.Network(&gr)
			if err != nil {
				tb.Fatal(err)
			}
			wnet, err := wi.Network(&wr)
			if err != nil {
				tb.Fatal(err)
			}
			if gnet.String() != wnet.String() || !reflect.DeepEqual(gr, wr) {
				tb.Fatalf("network %d: got %s %v\nwant %s %v", n, gnet, gr, wnet, wr)
			}
			n++
		}
		if err := gi.Err(); err != nil {
			tb.Fatal(err)
		}
		if err := wi.Err(); err != nil {
			tb.Fatal(err)
		}
		if n == 0 {
			tb.Fatal("no networks")
		}
	}
	for _, a := range probes {
		ip := net.IP(a.AsSlice())
		var gr, wr any
		gnet, gok, err := g.LookupNetwork(ip, &gr)
		if err != nil {
			tb.Fatal(err)
		}
		wnet, wok, err := w.LookupNetwork(ip, &wr)
		if err != nil {
			tb.Fatal(err)
		}
		if gok != wok || gnet.String() != wnet.String() || !reflect.DeepEqual(gr, wr) {
			tb.Fatalf("lookup %s: got %s %v %v\nwant %s %v %v", a, gnet, gok, gr, wnet, wok, wr)
		}
	}
}

// wantRecordSize is the record size of an MMDB of nodes nodes at path, if
// the writer picked the smallest: the file's size less its tree, separator
// and metadata is its data section.
func wantRecordSize(nodes uint, path string) uint {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	meta := bytes.LastIndex(raw, metadataMarker)
	for _, size := range []uint{24, 28, 32} {
		tree := nodes * size / 4
		if meta < int(tree)+16 {
			continue
		}
		data := uint(meta) - tree - 16
		if nodes+16+data < 1<<size {
			return size
		}
	}
	return 0
}

// compareWithTools looks each probe up in both files with mmdblookup
// (the whole record as it prints it) and geoip2-golang (AnonymousIP).
func compareWithTools(t *testing.T, got, want string, probes []netip.Addr) {
	t.Helper()
	gg, err := geoip2.Open(got)
	if err != nil {
		t.Fatal(err)
	}
	defer gg.Close()
	wg, err := geoip2.Open(want)
	if err != nil {
		t.Fatal(err)
	}
	defer wg.Close()
	found := 0
	for _, a := range probes {
		ga, err := gg.AnonymousIP(net.IP(a.AsSlice()))
		if err != nil {
			t.Fatal(err)
		}
		wa, err := wg.AnonymousIP(net.IP(a.AsSlice()))
		if err != nil {
			t.Fatal(err)
		}
		if *ga != *wa {
			t.Fatalf("geoip2 AnonymousIP %s: got %+v, want %+v", a, *ga, *wa)
		}
		gout, gerr := exec.Command("mmdblookup", "--file", got, "--ip", a.String()).CombinedOutput()
		wout, werr := exec.Command("mmdblookup", "--file", want, "--ip", a.String()).CombinedOutput()
		if (gerr == nil) != (werr == nil) || !bytes.Equal(gout, wout) {
			t.Fatalf("mmdblookup %s: got %v\n%s\nwant %v\n%s", a, gerr, gout, werr, wout)
		}
		if gerr == nil && bytes.Contains(gout, []byte("last_seen")) {
			found++
		}
	}
	if found == 0 {
		t.Fatal("mmdblookup found no probe")
	}
}

func TestMMDBWriter_MatchesMMDBWriter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		seed       uint64
		n          int
		chunk      int // sort chunk: small ones sort on disk
		recordSize int // at least; 0: the smallest that fits (24 here)
	}{
		{"few", 1, 12, 1 << 18, 0},
		{"random", 2, 400, 1 << 18, 0},
		{"random, sorted on disk", 3, 1500, 97, 0},
		{"random, two-entry chunks", 4, 200, 2, 0},
		{"28-bit records", 5, 300, 1 << 18, 28},
		{"32-bit records", 6, 300, 64, 32},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 9))
			items := randomItems(rng, tc.n)
			// The streaming writer gets the records shuffled, the
			// reference the same records ranges first, widest first, then
			// hosts. A network written twice is merged in the order of
			// the writes (mergeRecords keeps the first's provider and
			// asset order), so the sort keeps the shuffled order of equal
			// networks.
			shuffled := slices.Clone(items)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			ref := slices.Clone(shuffled)
			slices.SortStableFunc(ref, func(a, b item) int {
				ah, bh := a.rec.Network == "", b.rec.Network == ""
				switch {
				case ah != bh && ah:
					return 1
				case ah != bh:
					return -1
				}
				return a.pfx.Bits() - b.pfx.Bits()
			})
			got, want := buildBoth(t, shuffled, ref, tc.chunk, tc.recordSize)
			probes := mmdbProbes(rng, items, 200)
			compareMMDBs(t, got, want, probes, uint(tc.recordSize))
			sample := probes
			if len(sample) > 150 {
				rng.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
				sample = sample[:150]
			}
			compareWithTools(t, got, want, sample)
		})
	}
}

// TestMMDBWriter_Gen compares the writers on a generated state (the
// benchmark's records; NETINTEL_MMDB_COMPARE_ADDRESSES sets the size,
// 10,000 by default and 2,000 under -short; BenchmarkMMDBWriter_Compare
// runs 1,000,000).
func TestMMDBWriter_Gen(t *testing.T) {
	t.Parallel()
	n := 10_000
	if testing.Short() {
		n = 2_000
	}
	if v := os.Getenv("NETINTEL_MMDB_COMPARE_ADDRESSES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	compareGen(t, n, 1<<12)
}

// compareGen builds gen.New(n)'s MMDB (ranges, then hosts, as Build
// reads the state, straight from the generator: nothing held) with both
// writers and compares them.
func compareGen(tb testing.TB, n, chunk int) {
	g := gen.New(n, 11)
	dir := tb.TempDir()
	var paths [2]string
	for k := range paths {
		var buf bytes.Buffer
		var w formatWriter
		var err error
		if k == 0 {
			var mw *mmdbWriter
			if mw, err = newMMDBWriter(&buf, tb.TempDir(), mmdbTestTime); err == nil {
				mw.sorter = newNetSorter(mw.dir, chunk)
				w = mw
			}
		} else {
			w, err = newRefMMDBWriter(&buf, tb.TempDir(), mmdbTestTime)
		}
		if err != nil {
			tb.Fatal(err)
		}
		write := func(isRange bool) func(ipmodel.Record) error {
			return func(r ipmodel.Record) error {
				p, err := recordPrefix(&r, isRange)
				if err != nil {
					return err
				}
				return w.Write(&r, p)
			}
		}
		if err := g.Ranges(tb.Context(), write(true)); err != nil {
			tb.Fatal(err)
		}
		if err := g.Hosts(tb.Context(), write(false)); err != nil {
			tb.Fatal(err)
		}
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
		paths[k] = filepath.Join(dir, fmt.Sprintf("%d.mmdb", k))
		if err := os.WriteFile(paths[k], buf.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(5, 5))
	sample := make([]item, 0, 2000)
	for range cap(sample) {
		var r ipmodel.Record
		isRange := rng.IntN(8) == 0 && g.NRanges > 0
		if isRange {
			r = g.Range(rng.IntN(g.NRanges))
		} else {
			r = g.Host(rng.IntN(g.NHosts))
		}
		p, err := recordPrefix(&r, isRange)
		if err != nil {
			tb.Fatal(err)
		}
		sample = append(sample, item{r, p})
	}
	compareMMDBs(tb, paths[0], paths[1], mmdbProbes(rng, sample, 20_000), 0)
	if t, ok := tb.(*testing.T); ok {
		compareWithTools(t, paths[0], paths[1], mmdbProbes(rng, sample[:20], 20))
	}
}

// BenchmarkMMDBWriter_Compare builds the MMDB of 1,000,000 generated
// addresses with both writers and compares them record by record (every
// network, 20,000 random lookups and the IPv4 ones' mapped, Teredo and
// 6to4 forms). Speed and memory are BenchmarkSnapshot's (mmdb and
// mmdb-ref jobs); this checks that the files answer alike.
func BenchmarkMMDBWriter_Compare(b *testing.B) {
	for range b.N {
		compareGen(b, 1_000_000, netSortChunk)
	}
}

// An MMDB of no record is valid and answers nothing, as mmdbwriter's.
func TestMMDBWriter_Empty(t *testing.T) {
	t.Parallel()
	got, want := buildBoth(t, nil, nil, 4, 0)
	db, err := maxminddb.Open(got)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
	ref, err := maxminddb.Open(want)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if db.Metadata.NodeCount != ref.Metadata.NodeCount {
		t.Fatalf("node count %d, mmdbwriter's %d", db.Metadata.NodeCount, ref.Metadata.NodeCount)
	}
	for _, ip := range []string{"1.2.3.4", "::ffff:1.2.3.4", "2001:db8::1"} {
		var r any
		if _, ok, err := db.LookupNetwork(net.ParseIP(ip), &r); err != nil || ok {
			t.Fatalf("lookup %s: found %v, err %v", ip, ok, err)
		}
		if out, err := exec.Command("mmdblookup", "--file", got, "--ip", ip).CombinedOutput(); err == nil || !bytes.Contains(out, []byte("Could not find")) {
			t.Fatalf("mmdblookup %s: %v\n%s", ip, err, out)
		}
	}
}

func TestNetSorter_Order(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for _, chunk := range []int{2, 5, 1000} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			s := newNetSorter(t.TempDir(), chunk)
			t.Cleanup(s.remove)
			var want []netEntry
			for i := range 300 {
				var e netEntry
				e.addr[15] = byte(rng.IntN(8))
				e.addr[3] = byte(rng.IntN(3))
				e.bits = uint8(rng.IntN(129))
				e.off, e.n, e.host = int64(i*10), int32(rng.IntN(1000)), rng.IntN(2) == 0
				want = append(want, e)
				if err := s.add(e); err != nil {
					t.Fatal(err)
				}
			}
			// 150 runs of two: merged into level-1 runs on the way.
			if len(s.runs) >= maxNetRuns {
				t.Fatalf("%d runs kept", len(s.runs))
			}
			slices.SortFunc(want, compareEntries)
			st, err := s.stream()
			if err != nil {
				t.Fatal(err)
			}
			var got []netEntry
			for {
				e, ok, err := st.next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				got = append(got, e)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("sorted %d entries, got %d, not in order", len(want), len(got))
			}
		})
	}
}
