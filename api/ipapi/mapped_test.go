package ipapi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// mappedFiles counts this process's maps of files of dir (unlinked ones
// included: /proc/self/maps names them "path (deleted)").
func mappedFiles(t testing.TB, dir string) int {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), " "+dir+"/") {
			n++
		}
	}
	return n
}

// waitUnmapped runs the GC until at most want maps of dir are left (the
// cleanups run after a collection, on their own goroutine).
func waitUnmapped(t *testing.T, dir string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for mappedFiles(t, dir) > want {
		if time.Now().After(deadline) {
			t.Fatalf("%d maps of %s left, want %d", mappedFiles(t, dir), dir, want)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLoadManifestDir_Mapped(t *testing.T) {
	t.Parallel()
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := publishSnapshot(t, st, nil, 3000, 7, "2026-11-22")
	dir := t.TempDir()
	snap, err := LoadManifestDir(t.Context(), st, m, dir)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 0 {
		t.Fatalf("cache folder holds %d names (%v), want none: the files are unlinked once open", len(ents), err)
	}
	// Every distinct MMDB and the export tables' columns (the free build
	// exports nothing).
	if got, want := mappedFiles(t, dir), wantMaps(m); got != want {
		t.Fatalf("%d maps of the cache folder, want %d", got, want)
	}
	// The mapped table exports what the heap table of the same NDJSON
	// exports, for every filter and cap.
	for _, a := range []ipmodel.Audience{ipmodel.AudiencePro, ipmodel.AudienceEnterprise} {
		nf, _ := m.FileFor(publish.FormatNDJSON, a)
		var tb TableBuilder
		if err := readTable(t.Context(), st, nf, &tb); err != nil {
			t.Fatal(err)
		}
		heap, _ := tb.Table()
		mapped := snap.Views[a].Rows
		if heap.Len() != mapped.Len() || heap.Example() != mapped.Example() {
			t.Fatalf("%s: %d rows (example %s), heap %d (%s)", a, mapped.Len(), mapped.Example(), heap.Len(), heap.Example())
		}
		for _, f := range []struct {
			f     Filter
			limit int
		}{
			{Filter{}, MaxRowLimit}, {Filter{}, 10}, {Filter{Class: classBit("vpn")}, MaxRowLimit},
			{Filter{MinConfidence: 0.8}, 500}, {Filter{LastSeenFrom: 1_700_000_000, HasLastSeen: true}, MaxRowLimit},
		} {
			var want, got bytes.Buffer
			nw, err1 := heap.WriteCSV(t.Context(), &want, f.f, f.limit)
			ng, err2 := mapped.WriteCSV(t.Context(), &got, f.f, f.limit)
			if err1 != nil || err2 != nil || nw != ng || !bytes.Equal(want.Bytes(), got.Bytes()) {
				t.Fatalf("%s %+v limit %d: mapped %d rows (%v), heap %d (%v); bodies equal %v", a, f.f, f.limit, ng, err2, nw, err1, bytes.Equal(want.Bytes(), got.Bytes()))
			}
		}
	}
	// Lookups read the mapped MMDB.
	got, ok, err := snap.Complete().Index.Lookup(gen.HostAddr(12), true)
	if err != nil || !ok || got.IP != gen.HostAddr(12).String() {
		t.Fatalf("lookup: %+v %v %v", got, ok, err)
	}
	// Once nothing holds the snapshot, its maps go.
	snap = nil
	_ = snap
	waitUnmapped(t, dir, 0)
}

func TestFileTableBuilder_SameAsHeap(t *testing.T) {
	t.Parallel()
	recs := testRecords(t)
	dir := t.TempDir()
	fb, err := newFileTableBuilder(dir)
	if err != nil {
		t.Fatal(err)
	}
	var hb TableBuilder
	for i := range recs {
		hb.Add(&recs[i])
		r := &recs[i]
		fb.add(r.IP, r.Network, r.Classifications, r.Provider, r.Confidence, r.FirstSeen, r.LastSeen, len(r.Assets))
	}
	heap, _ := hb.Table()
	mapped, err := fb.table()
	if err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	if _, err := heap.WriteCSV(t.Context(), &want, Filter{}, MaxRowLimit); err != nil {
		t.Fatal(err)
	}
	if _, err := mapped.WriteCSV(t.Context(), &got, Filter{}, MaxRowLimit); err != nil {
		t.Fatal(err)
	}
	if want.String() != got.String() {
		t.Fatalf("mapped export\n%s\nheap export\n%s", got.String(), want.String())
	}
	// An empty table maps nothing and exports the header.
	eb, err := newFileTableBuilder(dir)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := eb.table()
	if err != nil || empty.Len() != 0 || empty.Example() != "" {
		t.Fatalf("empty table: %d rows, %v", empty.Len(), err)
	}
	got.Reset()
	if n, err := empty.WriteCSV(t.Context(), &got, Filter{}, 10); n != 0 || err != nil || got.String() != CSVHeader {
		t.Fatalf("empty export %q %d %v", got.String(), n, err)
	}
}

// TestService_RefusesBadCacheFile loads a snapshot, then a second one whose
// MMDB is cut short or changed on the local disk after download: the load
// is refused and the first snapshot stays served.
func TestService_RefusesBadCacheFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		tamper func(*os.File) error
	}{
		{"truncated", func(f *os.File) error {
			st, err := f.Stat()
			if err != nil {
				return err
			}
			return f.Truncate(st.Size() / 2)
		}},
		{"corrupted", func(f *os.File) error {
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, 100); err != nil {
				return err
			}
			b[0] ^= 0xff
			_, err := f.WriteAt(b, 100)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, err := objstore.NewFolder(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			svc := New(Options{InternalKey: testKey, Store: st, CacheDir: dir, Log: testutil.Logger(t)})
			t.Cleanup(svc.stopBuilds)
			publishSnapshot(t, st, nil, 300, 1, "2026-11-21")
			svc.refresh(t.Context())
			first := svc.Current()
			if first == nil || first.Manifest.SnapshotDate != "2026-11-21" {
				t.Fatalf("first snapshot not loaded: %+v", first)
			}
			publishSnapshot(t, st, nil, 400, 2, "2026-11-22")
			svc.tamper = tt.tamper
			svc.refresh(t.Context())
			if svc.Current() != first {
				t.Fatalf("snapshot %s served after a bad cache file, want 2026-11-21 kept", svc.Current().Manifest.SnapshotDate)
			}
			m, err := publish.Latest(t.Context(), st)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := (loader{dir: dir, tamper: tt.tamper}).load(t.Context(), st, m); !errors.Is(err, publish.ErrChecksum) {
				t.Fatalf("load: %v, want ErrChecksum", err)
			}
			if r, ok, err := first.Complete().Index.Lookup(gen.HostAddr(5), false); err != nil || !ok || r.IP != gen.HostAddr(5).String() {
				t.Fatalf("first snapshot after the refusal: %v %v", ok, err)
			}
			svc.tamper = nil
			svc.refresh(t.Context())
			if svc.Current().Manifest.SnapshotDate != "2026-11-22" {
				t.Fatalf("good file: %s served", svc.Current().Manifest.SnapshotDate)
			}
		})
	}
}

// TestService_SwapUnderLoad swaps between mapped snapshots several times
// (every other one before its export table is built, as Service.refresh
// does) while clients look up, batch and export, and the GC runs all along (it
// is what releases an old snapshot's maps): no request fails, and a
// request still on an old snapshot reads it after the swap (a map released
// early would crash the test with SIGSEGV). In the end only the current
// snapshot's maps are left.
func TestService_SwapUnderLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var mans []*publish.Manifest
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i, date := range []string{"2026-11-20", "2026-11-21"} {
		mans = append(mans, publishSnapshot(t, st, nil, 1000+500*i, uint64(i+1), date))
	}
	svc := New(Options{InternalKey: testKey, Store: st, CacheDir: dir, Log: testutil.Logger(t)})
	mux := http.NewServeMux()
	svc.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	var ok, bad atomic.Int64
	var firstBad atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	fail := func(what string) {
		bad.Add(1)
		firstBad.CompareAndSwap(nil, what)
	}
	load := func(i int) *Snapshot {
		t.Helper()
		if i%2 == 0 {
			snap, err := LoadManifestDir(t.Context(), st, mans[i%len(mans)], dir)
			if err != nil {
				t.Fatal(err)
			}
			return snap
		}
		// Odd swaps as the service's loader does them: before the export
		// table is built (exports meanwhile wait for it).
		snap, build, err := loader{dir: dir}.start(t.Context(), st, mans[i%len(mans)])
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := build(t.Context()); err != nil {
				fail("table build: " + err.Error())
			}
		})
		return snap
	}
	svc.Swap(load(0))

	for w := range 6 {
		wg.Go(func() {
			for i := w; ; i += 6 {
				select {
				case <-stop:
					return
				default:
				}
				path := "/api/v1/shadow_vpn/lookup/" + gen.HostAddr(i%1000).String() + "?include=cves"
				switch i % 6 {
				case 0:
					path = PathCSV + "?limit=2000"
				case 1:
					path = "/api/v1/ip/" + gen.HostAddr(i%1000).String()
				}
				req, _ := http.NewRequest("GET", srv.URL+path, nil)
				req.Header.Set("X-Internal-Key", testKey)
				req.Header.Set("X-Tier", "enterprise")
				res, err := client.Do(req)
				if err != nil {
					fail(fmt.Sprintf("%s: %v", path, err))
					continue
				}
				var body bytes.Buffer
				_, err = body.ReadFrom(res.Body)
				res.Body.Close()
				switch {
				case err != nil || (res.StatusCode != 200 && res.StatusCode != 404):
					fail(fmt.Sprintf("%s: %d %v %s", path, res.StatusCode, err, body.String()))
				case i%6 == 0 && !strings.HasPrefix(body.String(), CSVHeader):
					fail(path + ": export without its header")
				default:
					ok.Add(1)
				}
			}
		})
	}
	// The GC all along: it is what releases the old maps.
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
				runtime.GC()
			}
		}
	})
	// A request that began on the first snapshot and is still reading it
	// after every swap.
	held := svc.Current().Complete()
	for i := 1; i <= 6; i++ {
		before := ok.Load()
		svc.Swap(load(i))
		for ok.Load() < before+100 && bad.Load() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		runtime.GC()
		if r, found, err := held.Index.Lookup(gen.HostAddr(3), true); err != nil || !found || r.IP != gen.HostAddr(3).String() {
			t.Fatalf("the held snapshot after swap %d: %v %v", i, found, err)
		}
		var buf bytes.Buffer
		if n, err := held.Rows.WriteCSV(t.Context(), &buf, Filter{}, MaxRowLimit); err != nil || n != held.Rows.Len() {
			t.Fatalf("the held export after swap %d: %d of %d rows, %v", i, n, held.Rows.Len(), err)
		}
	}
	close(stop)
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d of %d requests failed across the swaps; first: %v", bad.Load(), bad.Load()+ok.Load(), firstBad.Load())
	}
	// Released: only the current snapshot's maps remain (the held one is
	// let go here).
	held = View{}
	_ = held
	want := wantMaps(mans[6%len(mans)])
	if cur := mappedFiles(t, dir); cur < want {
		t.Fatalf("%d maps, fewer than the current snapshot's %d", cur, want)
	}
	waitUnmapped(t, dir, want)
	if svc.Current().Manifest.SnapshotDate != mans[6%len(mans)].SnapshotDate {
		t.Fatalf("serving %s", svc.Current().Manifest.SnapshotDate)
	}
}

// wantMaps is how many maps a loaded snapshot of m holds: one per distinct
// MMDB, tableColumns per distinct export table (pro and enterprise).
func wantMaps(m *publish.Manifest) int {
	mmdbs, tables := map[string]bool{}, map[string]bool{}
	for _, a := range ipmodel.Audiences {
		f, _ := m.FileFor(publish.FormatMMDB, a)
		mmdbs[f.SHA256] = true
		if nf, ok := m.FileFor(publish.FormatNDJSON, a); ok && a >= ipmodel.AudiencePro {
			tables[nf.SHA256] = true
		}
	}
	return len(mmdbs) + tableColumns*len(tables)
}

// TestFileTableBuilder_HeapFlat builds the same 200,000 rows into a mapped
// table and a heap table: the mapped one leaves the heap about where it
// was, the heap one grows it by their size (which shows the measure works).
func TestFileTableBuilder_HeapFlat(t *testing.T) {
	const n = 200_000
	p := "Acme Cloud"
	fill := func(s rowSink) {
		for i := range n {
			s.add(fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255), "", []string{"vpn", "hosting"}, &p, 0.9, "2026-10-01T00:00:00Z", "2026-11-20T12:00:00Z", i%3)
		}
	}
	heapInUse := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapInuse)
	}
	h0 := heapInUse()
	fb, err := newFileTableBuilder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fill(fb)
	mapped, err := fb.table()
	if err != nil {
		t.Fatal(err)
	}
	h1 := heapInUse()
	var hb TableBuilder
	fill(&hb)
	heap, _ := hb.Table()
	h2 := heapInUse()
	if mapped.Len() != n || heap.Len() != n {
		t.Fatalf("rows: mapped %d, heap %d", mapped.Len(), heap.Len())
	}
	if grew := h1 - h0; grew > 4<<20 {
		t.Errorf("the mapped table grew the heap by %d bytes (%d rows)", grew, n)
	}
	if grew := h2 - h1; grew < 10<<20 {
		t.Errorf("the heap table grew the heap by only %d bytes: the measure does not see rows", grew)
	}
	runtime.KeepAlive(mapped)
	runtime.KeepAlive(heap)
}
