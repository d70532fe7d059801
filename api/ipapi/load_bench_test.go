package ipapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// benchStoreEnv names a folder store to publish the load benchmark's
// snapshot into once and reuse on later runs (a 10M snapshot takes many
// minutes to publish); unset, a temp folder is used.
const benchStoreEnv = "IPAPI_BENCH_STORE"

// benchNoHeapEnv, set to 1, skips BenchmarkSnapshotLoad's heap loader (at
// 10M addresses it needs several GiB and minutes; its figures are then the
// ones measured before, docs/benchmarks/ip-api.md).
const benchNoHeapEnv = "IPAPI_BENCH_NO_HEAP"

// loadHeap is the loader before mapped files (main at 92261b4), kept as
// BenchmarkSnapshotLoad's baseline: every distinct MMDB downloaded onto the
// heap and the export tables built on the heap, one file after another.
func loadHeap(ctx context.Context, st objstore.Store, m *publish.Manifest) (*Snapshot, error) {
	snap := &Snapshot{Manifest: fromPublish(m)}
	indexes := map[string]Index{}
	tables := map[string]*Table{}
	for _, a := range ipmodel.Audiences {
		mf, ok := m.FileFor(publish.FormatMMDB, a)
		if !ok {
			return nil, errors.New("no mmdb for " + a.String())
		}
		idx, ok := indexes[mf.SHA256]
		if !ok {
			var buf bytes.Buffer
			buf.Grow(int(mf.Size))
			if err := publish.Download(ctx, st, mf, &buf); err != nil {
				return nil, err
			}
			var err error
			if idx, err = OpenMMDB(buf.Bytes()); err != nil {
				return nil, err
			}
			indexes[mf.SHA256] = idx
		}
		rows := &Table{}
		if nf, ok := m.FileFor(publish.FormatNDJSON, a); ok && a >= ipmodel.AudiencePro {
			if rows, ok = tables[nf.SHA256]; !ok {
				var tb TableBuilder
				if err := readTable(ctx, st, nf, &tb); err != nil {
					return nil, err
				}
				rows, _ = tb.Table()
				tables[nf.SHA256] = rows
			}
		}
		snap.Views[a] = View{Index: idx, Rows: rows}
	}
	return snap, nil
}

// memFigures is what a load cost: time, heap in use after a collection
// and the process's resident memory (anonymous, and file pages mapped),
// each as the growth over the figure before the load.
type memFigures struct {
	took                  time.Duration
	heap, rss, anon, file int64 // bytes
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// memNow returns HeapInuse after a collection and VmRSS, RssAnon and
// RssFile from /proc/self/status (0 where unknown).
func memNow() (heap, rss, anon, file int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap = int64(ms.HeapInuse)
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return heap, 0, 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = kb << 10
		case "RssAnon":
			anon = kb << 10
		case "RssFile":
			file = kb << 10
		}
	}
	return heap, rss, anon, file
}

// measureLoad runs load and returns its figures and the snapshot.
func measureLoad(b *testing.B, load func() (*Snapshot, error)) (*Snapshot, memFigures) {
	b.Helper()
	debug.FreeOSMemory()
	h0, r0, a0, f0 := memNow()
	t0 := time.Now()
	snap, err := load()
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(t0)
	h1, r1, a1, f1 := memNow()
	runtime.KeepAlive(snap)
	return snap, memFigures{took: took, heap: h1 - h0, rss: r1 - r0, anon: a1 - a0, file: f1 - f0}
}

// lookupTime renders rounds × 100,000 lookups of addrs (tier pro, no
// query) from idx on one locked OS thread and returns the CPU time that
// thread used: on a shared machine the wall time mostly measures the wait
// for a CPU.
func lookupTime(b *testing.B, idx Index, addrs []netip.Addr, rounds int) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a := idx.(lookupAppender)
	buf := make([]byte, 0, 4<<10)
	t0 := threadCPU(b)
	for k := range rounds * 100_000 {
		addr := addrs[(k*7919)%len(addrs)]
		var got int
		var err error
		if buf, got, err = a.appendLookup(buf[:0], addr, defaultLookupParams, TierPro); err != nil || got == 0 {
			b.Fatalf("lookup %s: %d assets, %v", addr, got, err)
		}
	}
	return threadCPU(b) - t0
}

// exportTime writes the CSV export of up to MaxRowLimit rows of t to
// io.Discard on one locked OS thread, then one scan of every row with a
// filter that matches rarely (min_confidence 0.999), and returns the
// thread's CPU time.
func exportTime(b *testing.B, t *Table) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPU(b)
	for _, f := range []Filter{{}, {MinConfidence: 0.999}} {
		if _, err := t.WriteCSV(context.Background(), io.Discard, f, MaxRowLimit); err != nil {
			b.Fatal(err)
		}
	}
	return threadCPU(b) - t0
}

// threadCPU returns the CPU time (user and system) of the calling thread.
func threadCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportLoad reports a load's figures under prefix.
func reportLoad(b *testing.B, prefix string, f memFigures) {
	b.ReportMetric(f.took.Seconds(), prefix+"load-s")
	b.ReportMetric(mib(f.heap), prefix+"heap-MiB")
	b.ReportMetric(mib(f.rss), prefix+"rss-MiB")
	b.ReportMetric(mib(f.anon), prefix+"anon-MiB")
	b.ReportMetric(mib(f.file), prefix+"file-MiB")
}

// BenchmarkSnapshotLoad publishes a generated snapshot of 1,000,000
// addresses (IPAPI_BENCH_N; IPAPI_BENCH_STORE keeps it for later runs) with
// the real publisher, then loads it in the same run with the mapped loader
// (LoadManifestDir: MMDBs and export tables in mapped files) and with the
// heap loader it replaced (loadHeap), and reports for each the load time
// (load-s), the heap it left in use (heap-MiB, HeapInuse after a
// collection, over the figure before) and the resident memory it added
// (rss-MiB: anonymous anon-MiB and mapped file pages file-MiB, which the
// kernel may drop and read again). Before those, the load as Service.Watch
// does it: the time until the snapshot answers lookups (ready-s: its
// distinct MMDBs downloaded, checked and mapped; the heap it left then,
// ready-heap-MiB) and until its export tables are built after it
// (export-ready-s, from the same start), and ready-s over the whole mapped
// load (ready-ratio: the wait before a swap then and now). Then lookups (rendered from each
// snapshot's enterprise MMDB, no HTTP) in alternating rounds over the
// same addresses: CPU ns per lookup each (thread CPU time, which a busy
// machine disturbs far less than wall time) and the mapped/heap ratio; and
// the same for the CSV export (export-cpu-s: 1,000,000 rows, then a scan
// of every row with a filter that keeps almost none).
func BenchmarkSnapshotLoad(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv(benchSizeEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	dir := os.Getenv(benchStoreEnv)
	if dir == "" {
		dir = b.TempDir()
	}
	st, err := objstore.NewFolder(dir)
	if err != nil {
		b.Fatal(err)
	}
	m, err := publish.Latest(ctx, st)
	if err == nil && m.Hosts+m.Ranges < int64(n) {
		b.Fatalf("%s holds a snapshot of %d records, fewer than %d: empty it", dir, m.Hosts+m.Ranges, n)
	}
	if errors.Is(err, publish.ErrNoSnapshot) {
		cfg := config.Default().Publish
		cfg.WorkDir = b.TempDir()
		cfg.Formats = []string{"ndjson", "mmdb"}
		var res *publish.Result
		if res, err = publish.New(cfg, st, nil, testutil.Logger(b)).Run(ctx, gen.New(n, 42), "2026-11-22"); err == nil {
			m = res.Manifest
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	var mmdbBytes, ndjsonBytes int64
	for _, f := range m.Files {
		switch f.Format {
		case publish.FormatMMDB:
			mmdbBytes += f.Size
		case publish.FormatNDJSON:
			ndjsonBytes += f.Size
		}
	}
	// Addresses with assets, so that every lookup renders a body.
	g := gen.New(n, 42)
	var addrs []netip.Addr
	for i := 0; len(addrs) < 20000 && i < n; i += max(1, n/40000) {
		if len(g.Host(i).Assets) > 0 {
			addrs = append(addrs, gen.HostAddr(i))
		}
	}
	cache := b.TempDir()
	b.ResetTimer()
	for range b.N {
		// The loader of Service.Watch: the snapshot ready for lookups
		// once its MMDBs are mapped (ready-s, heap and RSS then), its
		// export tables built after (export-ready-s, from the same start).
		var build func(context.Context) error
		t0 := time.Now()
		lazy, lf := measureLoad(b, func() (*Snapshot, error) {
			snap, bld, err := loader{dir: cache}.start(ctx, st, m)
			build = bld
			return snap, err
		})
		ready := lf.took
		if err := build(ctx); err != nil {
			b.Fatal(err)
		}
		exportReady := time.Since(t0)
		b.ReportMetric(ready.Seconds(), "ready-s")
		b.ReportMetric(exportReady.Seconds(), "export-ready-s")
		b.ReportMetric(mib(lf.heap), "ready-heap-MiB")
		lazyRows := lazy.Complete().Rows.Len()
		// Then the whole load before a swap, as before (the baseline).
		mapped, mf := measureLoad(b, func() (*Snapshot, error) { return LoadManifestDir(ctx, st, m, cache) })
		if os.Getenv(benchNoHeapEnv) == "1" {
			nsM := float64(lookupTime(b, mapped.Complete().Index, addrs, 6).Nanoseconds()) / 6e5
			reportLoad(b, "mapped-", mf)
			b.ReportMetric(ready.Seconds()/mf.took.Seconds(), "ready-ratio")
			b.ReportMetric(nsM, "mapped-cpu-ns/lookup")
			b.Logf("%d addresses (%d rows), MMDBs %.0f MiB, NDJSON %.0f MiB; load average %s", n, mapped.Complete().Rows.Len(), mib(mmdbBytes), mib(ndjsonBytes), loadAverage())
			b.Logf("mapped: loaded in %s, heap +%.0f MiB, RSS +%.0f MiB (anonymous %.0f, file %.0f); lookups %.0f CPU ns",
				mf.took.Round(time.Millisecond), mib(mf.heap), mib(mf.rss), mib(mf.anon), mib(mf.file), nsM)
			b.Logf("swapped in before the export table: ready for lookups in %s (heap +%.1f MiB), export ready at %s (%d rows); ratio ready/whole load %.3f",
				ready.Round(time.Millisecond), mib(lf.heap), exportReady.Round(time.Millisecond), lazyRows, ready.Seconds()/mf.took.Seconds())
			runtime.KeepAlive(mapped)
			continue
		}
		heap, hf := measureLoad(b, func() (*Snapshot, error) { return loadHeap(ctx, st, m) })
		if mapped.Complete().Rows.Len() != heap.Complete().Rows.Len() {
			b.Fatalf("rows: mapped %d, heap %d", mapped.Complete().Rows.Len(), heap.Complete().Rows.Len())
		}
		var tm, th time.Duration
		for round := range 6 { // alternating, a warm-up round first
			var dm, dh time.Duration
			if round%2 == 0 {
				dm, dh = lookupTime(b, mapped.Complete().Index, addrs, 1), lookupTime(b, heap.Complete().Index, addrs, 1)
			} else {
				dh, dm = lookupTime(b, heap.Complete().Index, addrs, 1), lookupTime(b, mapped.Complete().Index, addrs, 1)
			}
			if round > 0 {
				tm, th = tm+dm, th+dh
			}
		}
		nsM, nsH := float64(tm.Nanoseconds())/5e5, float64(th.Nanoseconds())/5e5
		var em, eh time.Duration
		for round := range 4 { // alternating, a warm-up round first
			dm, dh := exportTime(b, mapped.Complete().Rows), exportTime(b, heap.Complete().Rows)
			if round > 0 {
				em, eh = em+dm, eh+dh
			}
		}
		b.ReportMetric(em.Seconds()/3, "mapped-export-cpu-s")
		b.ReportMetric(eh.Seconds()/3, "heap-export-cpu-s")
		b.ReportMetric(em.Seconds()/eh.Seconds(), "export-ratio")
		reportLoad(b, "mapped-", mf)
		reportLoad(b, "heap-", hf)
		b.ReportMetric(ready.Seconds()/mf.took.Seconds(), "ready-ratio")
		b.ReportMetric(nsM, "mapped-cpu-ns/lookup")
		b.ReportMetric(nsH, "heap-cpu-ns/lookup")
		b.ReportMetric(nsM/nsH, "lookup-ratio")
		b.Logf("%d addresses (%d rows), MMDBs %.0f MiB, NDJSON %.0f MiB; load average %s", n, mapped.Complete().Rows.Len(), mib(mmdbBytes), mib(ndjsonBytes), loadAverage())
		for _, x := range []struct {
			name string
			f    memFigures
		}{{"mapped", mf}, {"heap (before)", hf}} {
			b.Logf("%s: loaded in %s, heap +%.0f MiB, RSS +%.0f MiB (anonymous %.0f, file %.0f)", x.name, x.f.took.Round(time.Millisecond), mib(x.f.heap), mib(x.f.rss), mib(x.f.anon), mib(x.f.file))
		}
		b.Logf("swapped in before the export table: ready for lookups in %s (heap +%.1f MiB), export ready at %s (%d rows); ratio ready/whole load (mapped) %.3f",
			ready.Round(time.Millisecond), mib(lf.heap), exportReady.Round(time.Millisecond), lazyRows, ready.Seconds()/mf.took.Seconds())
		b.Logf("export (%d rows, then a scan of all; thread CPU time): mapped %.3f s, heap %.3f s, ratio %.3f", min(MaxRowLimit, mapped.Complete().Rows.Len()), em.Seconds()/3, eh.Seconds()/3, em.Seconds()/eh.Seconds())
		b.Logf("lookups (thread CPU time): mapped %.0f ns, heap %.0f ns, ratio %.3f", nsM, nsH, nsM/nsH)
		runtime.KeepAlive(mapped)
		runtime.KeepAlive(heap)
	}
}
