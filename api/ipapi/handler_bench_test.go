package ipapi

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// mmdbFixture is a generated snapshot published with the real publisher
// and loaded as the service loads it (the MMDB index), shared by the
// benchmarks and tests of a package run: publishing takes a second or two.
type mmdbFixture struct {
	snap  *Snapshot
	n     int
	addrs []string // addresses with assets, so that every lookup is a 200
}

var (
	mmdbOnce sync.Once
	mmdbFix  mmdbFixture
	mmdbErr  error
)

// mmdbSnapshot publishes gen.New(20000, 42) once per process.
func mmdbSnapshot(tb testing.TB) mmdbFixture {
	tb.Helper()
	mmdbOnce.Do(func() {
		const n = 20000
		// The snapshot is held in memory once loaded: the folders may go
		// with the first caller.
		st, err := objstore.NewFolder(tb.TempDir())
		if err != nil {
			mmdbErr = err
			return
		}
		cfg := config.Default().Publish
		cfg.WorkDir = tb.TempDir()
		cfg.Formats = []string{"ndjson", "mmdb"}
		ctx := context.Background()
		if _, err := publish.New(cfg, st, nil, testutil.Logger(tb)).Run(ctx, gen.New(n, 42), "2026-11-22"); err != nil {
			mmdbErr = err
			return
		}
		snap, err := Load(ctx, st)
		if err != nil {
			mmdbErr = err
			return
		}
		g := gen.New(n, 42)
		var addrs []string
		for i := range n {
			if len(g.Host(i).Assets) > 0 {
				addrs = append(addrs, gen.HostAddr(i).String())
			}
		}
		mmdbFix = mmdbFixture{snap: snap, n: n, addrs: addrs}
	})
	if mmdbErr != nil {
		tb.Fatal(mmdbErr)
	}
	return mmdbFix
}

// BenchmarkLookupHandler measures one lookup through the service's mux
// (httptest: no network, no load generator) on the MMDB index, beside a
// bare handler writing a fixed body of the lookup's mean size, in the same
// run: the difference is what the lookup itself costs per request (tier
// pro, no query; lookup-decoded takes the decode, shape and encoding/json
// path instead of rendering from the MMDB; lookup-free and lookup-cves
// vary the tier and the query). Both pay for httptest's recorder alike.
func BenchmarkLookupHandler(b *testing.B) {
	testutil.Micro(b)
	fx := mmdbSnapshot(b)
	svc := New(Options{InternalKey: testKey})
	svc.Swap(fx.snap)
	mux := http.NewServeMux()
	svc.Mount(mux)
	newReq := func(ip, query, tier string) *http.Request {
		r := httptest.NewRequest("GET", "/api/v1/shadow_vpn/lookup/"+ip+query, nil)
		r.Header.Set("X-Internal-Key", testKey)
		r.Header.Set("X-Tier", tier)
		return r
	}
	// 1024 requests over the snapshot's addresses, built once.
	reqs := func(query, tier string) []*http.Request {
		out := make([]*http.Request, 1024)
		for i := range out {
			out[i] = newReq(fx.addrs[(i*7919)%len(fx.addrs)], query, tier)
		}
		return out
	}
	var total int
	plain := reqs("", "pro")
	for _, r := range plain {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("%s: %d %s", r.URL, w.Code, w.Body)
		}
		total += w.Body.Len()
	}
	fixed := bytes.Repeat([]byte("x"), total/len(plain))
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(fixed)
	})
	run := func(h http.Handler, rs []*http.Request) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			var bytesOut int
			i := 0
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, rs[i%len(rs)])
				if w.Code != 200 {
					b.Fatalf("%s: %d %s", rs[i%len(rs)].URL, w.Code, w.Body)
				}
				bytesOut += w.Body.Len()
				i++
			}
			b.ReportMetric(float64(bytesOut)/float64(i), "body-B/op")
		}
	}
	// The same snapshot behind an Index that hides appendLookup: the
	// handler then decodes the record (reflection), shapes it and encodes
	// it with encoding/json, as every lookup did before render.go.
	decoded := New(Options{InternalKey: testKey})
	decoded.Swap(sameView(fx.snap.Manifest, struct{ Index }{fx.snap.Complete().Index}, fx.snap.Complete().Rows))
	decodedMux := http.NewServeMux()
	decoded.Mount(decodedMux)

	// The same snapshot with its MMDBs read onto the heap, as the loader
	// held them before mapped files: lookup / lookup-heap is the cost of
	// reading a map.
	onHeap := New(Options{InternalKey: testKey})
	onHeap.Swap(heapCopy(b, fx.snap))
	heapMux := http.NewServeMux()
	onHeap.Mount(heapMux)

	b.Run("bare", run(bare, plain))
	b.Run("lookup", run(mux, plain))
	b.Run("lookup-heap", run(heapMux, plain))
	b.Run("lookup-decoded", run(decodedMux, plain))
	b.Run("lookup-free", run(mux, reqs("", "free")))
	b.Run("lookup-cves", run(mux, reqs("?include=cves&min_severity=medium", "enterprise")))
}

// heapCopy returns snap with each view's mapped MMDB copied onto the heap.
func heapCopy(tb testing.TB, snap *Snapshot) *Snapshot {
	tb.Helper()
	out := &Snapshot{Manifest: snap.Manifest}
	for a, v := range snap.Views {
		idx, ok := v.Index.(mmdbIndex)
		if !ok || idx.owner == nil {
			tb.Fatalf("view %d: not a mapped MMDB", a)
		}
		heap, err := OpenMMDB(bytes.Clone(idx.owner.regions[0]))
		if err != nil {
			tb.Fatal(err)
		}
		out.Views[a] = View{Index: heap, Rows: v.Rows}
	}
	return out
}

// BenchmarkAppendLookup renders lookup bodies without HTTP, on the same
// addresses: from the MMDB in place (render, what the handler does), and
// through decoding, shapeLookup and encoding/json (decoded, what it did).
func BenchmarkAppendLookup(b *testing.B) {
	testutil.Micro(b)
	fx := mmdbSnapshot(b)
	idx := fx.snap.Complete().Index.(mmdbIndex)
	heapIdx := heapCopy(b, fx.snap).Complete().Index.(mmdbIndex)
	addrs := make([]netip.Addr, 1024)
	for i := range addrs {
		addrs[i] = netip.MustParseAddr(fx.addrs[(i*7919)%len(fx.addrs)])
	}
	for _, c := range []struct {
		name   string
		render func(dst []byte, a netip.Addr) ([]byte, int, error)
	}{
		{"render", func(dst []byte, a netip.Addr) ([]byte, int, error) {
			return idx.appendLookup(dst, a, defaultLookupParams, TierPro)
		}},
		{"render-heap", func(dst []byte, a netip.Addr) ([]byte, int, error) {
			return heapIdx.appendLookup(dst, a, defaultLookupParams, TierPro)
		}},
		{"decoded", func(dst []byte, a netip.Addr) ([]byte, int, error) {
			return appendLookupShaped(dst, idx, a, defaultLookupParams, TierPro)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 4<<10)
			i := 0
			for b.Loop() {
				var n int
				var err error
				if buf, n, err = c.render(buf[:0], addrs[i%len(addrs)]); err != nil || n == 0 {
					b.Fatalf("%s: %d assets, %v", addrs[i%len(addrs)], n, err)
				}
				i++
			}
		})
	}
}
