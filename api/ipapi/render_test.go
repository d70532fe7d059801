package ipapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// recordState serves records as an ipmodel.State: hosts have IP set,
// ranges Network.
type recordState []ipmodel.Record

func (s recordState) Hosts(_ context.Context, fn func(ipmodel.Record) error) error {
	for _, r := range s {
		if r.Network == "" {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s recordState) Ranges(_ context.Context, fn func(ipmodel.Record) error) error {
	for _, r := range s {
		if r.Network != "" {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildMMDB writes records to an MMDB with the real publisher and opens it.
func buildMMDB(t testing.TB, state ipmodel.State) mmdbIndex {
	t.Helper()
	dir := t.TempDir()
	var m publish.Manifest
	files, err := publish.Build(t.Context(), state, dir, publish.BuildOptions{Formats: []string{publish.FormatMMDB}, BuildTime: time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)}, &m)
	// One MMDB per audience; the renderer is compared on the complete one.
	if err != nil || len(files) != 3 || files[2].Audience != "enterprise" {
		t.Fatalf("build mmdb: %v (%d files)", err, len(files))
	}
	b, err := os.ReadFile(filepath.Join(dir, files[2].Name))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := OpenMMDB(b)
	if err != nil {
		t.Fatal(err)
	}
	return idx.(mmdbIndex)
}

// lookupQueries cover every filter of the lookup, alone and combined.
var lookupQueries = []string{"", "min_confidence=0.5", "min_confidence=1", "include=cves",
	"include=cves&min_severity=high", "include=cves&min_severity=low", "include=cves&kev_only=true",
	"include=cves&cve_min_confidence=medium", "include=cves&cve_min_confidence=high&min_severity=critical&kev_only=1&min_confidence=0.3",
	"kev_only=true&min_severity=high"}

var allTiers = []Tier{TierFree, TierStarter, TierPro, TierScale, TierBusiness, TierEnterprise}

func lookupParamsOf(t testing.TB, q string) lookupParams {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	p, errs := parseLookupQuery(v)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", q, errs)
	}
	return p
}

// compareRenderers checks that the MMDB renderer gives byte for byte the
// body that decoding, shapeLookup and encoding/json give, for addrs in
// every tier and query.
func compareRenderers(t *testing.T, idx mmdbIndex, addrs []netip.Addr) (bodies int) {
	t.Helper()
	for _, q := range lookupQueries {
		p := lookupParamsOf(t, q)
		for _, tier := range allTiers {
			for _, a := range addrs {
				want, wn, werr := appendLookupShaped(nil, idx, a, p, tier)
				got, gn, gerr := idx.appendLookup(nil, a, p, tier)
				if werr != nil || gerr != nil {
					t.Fatalf("%s %s %s: errors %v and %v", a, tier, q, werr, gerr)
				}
				if gn != wn {
					t.Fatalf("%s %s %s: %d assets, want %d", a, tier, q, gn, wn)
				}
				if wn > 0 && !bytes.Equal(got, want) {
					t.Fatalf("%s %s %q:\n got %s\nwant %s", a, tier, q, got, want)
				}
				if wn > 0 {
					bodies++
				}
			}
		}
	}
	return bodies
}

// TestAppendLookup_MatchesEncodingJSON renders the hand-written records of
// testdata (quotes, commas, nulls, netflow-only and residential evidence,
// findings without ratings) and a generated snapshot both ways.
func TestAppendLookup_MatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	t.Run("testdata", func(t *testing.T) {
		recs := testRecords(t)
		idx := buildMMDB(t, recordState(recs))
		var addrs []netip.Addr
		for _, r := range recs {
			if r.IP != "" {
				addrs = append(addrs, netip.MustParseAddr(r.IP))
			}
		}
		addrs = append(addrs, netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("192.0.2.250"), netip.MustParseAddr("2001:db8::99"))
		if n := compareRenderers(t, idx, addrs); n == 0 {
			t.Fatal("no body compared")
		}
	})
	t.Run("generated", func(t *testing.T) {
		fx := mmdbSnapshot(t)
		idx := fx.snap.Complete().Index.(mmdbIndex)
		var addrs []netip.Addr
		for i := 0; i < fx.n; i += 23 {
			addrs = append(addrs, gen.HostAddr(i))
		}
		if n := compareRenderers(t, idx, addrs); n < len(addrs) {
			t.Fatalf("only %d bodies compared", n)
		}
	})
}

// TestLookup_MMDBMatchesMemIndex serves the testdata records from an MMDB
// and from the in-memory index the other tests use, and checks that every
// lookup answers the same status and bytes through the handler.
func TestLookup_MMDBMatchesMemIndex(t *testing.T) {
	t.Parallel()
	recs := testRecords(t)
	mem, err := newMemSnapshot(Manifest{SnapshotDate: "2026-11-23"}, recs)
	if err != nil {
		t.Fatal(err)
	}
	serveWith := func(idx Index) http.Handler {
		svc := New(Options{InternalKey: testKey})
		svc.Swap(sameView(mem.Manifest, idx, mem.Complete().Rows))
		mux := http.NewServeMux()
		svc.Mount(mux)
		return mux
	}
	a, b := serveWith(mem.Complete().Index), serveWith(buildMMDB(t, recordState(recs)))
	ips := []string{"203.0.113.10", "192.0.2.250", "2001:0db8::5", "::ffff:198.51.100.7", "not-an-ip"}
	for _, r := range recs {
		if r.IP != "" {
			ips = append(ips, r.IP)
		}
	}
	for _, ip := range ips {
		for _, q := range append(lookupQueries, "min_confidence=2") {
			for _, tier := range allTiers {
				ra := serve(a, "GET", "/api/v1/shadow_vpn/lookup/"+ip, q, nil, tier.String())
				rb := serve(b, "GET", "/api/v1/shadow_vpn/lookup/"+ip, q, nil, tier.String())
				if ra.Code != rb.Code || !bytes.Equal(ra.Body.Bytes(), rb.Body.Bytes()) || ra.Header().Get("Content-Type") != rb.Header().Get("Content-Type") {
					t.Fatalf("%s?%s %s:\nmem  %d %s\nmmdb %d %s", ip, q, tier, ra.Code, ra.Body, rb.Code, rb.Body)
				}
			}
		}
	}
}

// TestWriteBody_ContentLength checks that a body past net/http's chunking
// buffer carries its length.
func TestWriteBody_ContentLength(t *testing.T) {
	t.Parallel()
	for _, n := range []int{10, 2048, 2049, 100_000} {
		w := httptest.NewRecorder()
		writeBody(w, 200, bytes.Repeat([]byte("x"), n))
		got := w.Header().Get("Content-Length")
		if want := n > 2048; (got != "") != want || (want && got != strconv.Itoa(n)) {
			t.Errorf("%d bytes: Content-Length %q", n, got)
		}
		if w.Body.Len() != n || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%d bytes: body %d, type %q", n, w.Body.Len(), w.Header().Get("Content-Type"))
		}
	}
}

// FuzzRenderMMDB renders lookups from arbitrary data sections: a corrupt
// snapshot may give an error, never a panic or an endless loop.
func FuzzRenderMMDB(f *testing.F) {
	idx := buildMMDB(f, recordState(testRecords(f)))
	for _, ip := range []string{"198.51.100.7", "2001:db8::5", "192.0.2.80"} {
		res := idx.r.Lookup(netip.MustParseAddr(ip))
		f.Add([]byte(idx.data), uint(res.Offset()), byte(0))
		f.Add([]byte(idx.data), uint(res.Offset()), byte(0xff))
	}
	// Sizes 29, 285 and 65821 and up; a pointer to a pointer; a map key
	// that is a number; an array of 2^24 elements in 4 bytes.
	f.Add([]byte{0xe1, 0x5d, 0x01, 'a', 'b'}, uint(0), byte(0))
	f.Add([]byte{0xe1, 0x20, 0x03, 0x20, 0x00}, uint(0), byte(1))
	f.Add([]byte{0xe1, 0xa2, 0x00, 0x01}, uint(0), byte(2))
	f.Add([]byte{0x1f, 0x04, 0xff, 0xff, 0xff}, uint(0), byte(3))
	f.Fuzz(func(t *testing.T, data []byte, off uint, opts byte) {
		p := defaultLookupParams
		p.cves = opts&1 != 0
		if opts&2 != 0 {
			p.minSeverity, p.minDetection, p.kevOnly, p.minConfidence = 1, 1, true, 0.5
		}
		r := renderer{d: mmdbData(data), p: p, tier: Tier(opts >> 4 % 6)}
		r.lookup(off, netip.MustParseAddr("192.0.2.1"))
		if r.err == nil && !json.Valid(r.buf) {
			t.Fatalf("no error, but not JSON: %s", r.buf)
		}
	})
}

// TestMMDBData_Head decodes control bytes of every size form and pointer
// size (MaxMind DB format 2.0, "Output Data Section").
func TestMMDBData_Head(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		in         []byte
		kind       mmdbKind
		size, next uint
	}{
		{"short string", []byte{0x43}, kindString, 3, 1},
		{"size 29+n", []byte{0x5d, 0x05}, kindString, 34, 2},
		{"size 285+n", []byte{0x5e, 0x01, 0x02}, kindString, 285 + 0x102, 3},
		{"size 65821+n", []byte{0x5f, 0x01, 0x02, 0x03}, kindString, 65821 + 0x10203, 4},
		{"extended uint64", []byte{0x08, 0x02}, kindUint64, 8, 2},
		{"extended array", []byte{0x03, 0x04}, kindSlice, 3, 2},
		{"bool true", []byte{0x01, 0x07}, kindBool, 1, 2},
		{"pointer 1 byte", []byte{0x25, 0x10}, kindPointer, 0x510, 2},
		{"pointer 2 bytes", []byte{0x2d, 0x10, 0x20}, kindPointer, 0x51020 + 2048, 3},
		{"pointer 3 bytes", []byte{0x35, 0x10, 0x20, 0x30}, kindPointer, 0x5102030 + 526336, 4},
		{"pointer 4 bytes", []byte{0x3f, 0x10, 0x20, 0x30, 0x40}, kindPointer, 0x10203040, 5},
	}
	for _, tt := range cases {
		k, size, next, err := mmdbData(tt.in).head(0)
		if err != nil || k != tt.kind || size != tt.size || next != tt.next {
			t.Errorf("%s: kind %d size %d next %d err %v, want %d %d %d", tt.name, k, size, next, err, tt.kind, tt.size, tt.next)
		}
	}
	for _, bad := range [][]byte{{}, {0x5d}, {0x5f, 0x01}, {0x3f, 0x10}, {0x00}, {0x00, 0x00}, {0x00, 0x09}} {
		if _, _, _, err := mmdbData(bad).head(0); err == nil {
			t.Errorf("head(% x): no error", bad)
		}
	}
}

// Issue 31 item 8: only IPv4-mapped addresses are the IPv4 they embed. The
// Teredo (2001::/32) and 6to4 (2002::/16) addresses that embed
// 198.51.100.7, and the IPv4-compatible ::198.51.100.7, are IPv6 addresses
// the snapshot does not know: 404 from the MMDB as from the in-memory index.
func TestLookup_OnlyIPv4MappedIsIPv4(t *testing.T) {
	t.Parallel()
	recs := testRecords(t)
	mem, err := newMemSnapshot(Manifest{SnapshotDate: "2026-11-23"}, recs)
	if err != nil {
		t.Fatal(err)
	}
	for name, idx := range map[string]Index{"mem": mem.Complete().Index, "mmdb": buildMMDB(t, recordState(recs))} {
		t.Run(name, func(t *testing.T) {
			svc := New(Options{InternalKey: testKey})
			snap := &Snapshot{Manifest: mem.Manifest}
			snap.Views[ipmodel.AudienceEnterprise] = View{Index: idx, Rows: mem.Complete().Rows}
			svc.Swap(snap)
			mux := http.NewServeMux()
			svc.Mount(mux)
			tests := []struct {
				ip     string
				status int
			}{
				{"198.51.100.7", 200},
				{"::ffff:198.51.100.7", 200},
				{"::ffff:c633:6407", 200},
				{"2001:0:c633:6407::1", 404},                  // Teredo, server 198.51.100.7
				{"2001:0:4136:e378:8000:ffff:39cd:9bf8", 404}, // Teredo, client 198.51.100.7 (obfuscated)
				{"2002:c633:6407::1", 404},                    // 6to4 of 198.51.100.7
				{"2002:c633:6407:1:2:3:4:5", 404},             // 6to4, another host behind it
				{"::c633:6407", 404},                          // IPv4-compatible
				{"64:ff9b::c633:6407", 404},                   // NAT64 well-known prefix
			}
			for _, tc := range tests {
				r := serve(mux, "GET", "/api/v1/shadow_vpn/lookup/"+tc.ip, "", nil, TierEnterprise.String())
				if r.Code != tc.status {
					t.Errorf("%s: %d, want %d: %s", tc.ip, r.Code, tc.status, r.Body)
					continue
				}
				if tc.status == 200 && !bytes.Contains(r.Body.Bytes(), []byte(`"ip":"198.51.100.7"`)) {
					t.Errorf("%s: body %s, want the IPv4 record as 198.51.100.7", tc.ip, r.Body)
				}
			}
		})
	}
}
