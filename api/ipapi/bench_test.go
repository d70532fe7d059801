package ipapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// benchSizeEnv overrides the snapshot size (default 1,000,000 addresses).
const benchSizeEnv = "IPAPI_BENCH_N"

// loadResult is what one load run measured.
type loadResult struct {
	reqs          int
	errs          int
	perSec        float64
	p50, p99, max time.Duration
}

// runLoad keeps conns keep-alive connections busy for d, each sending the
// request next builds, and measures throughput and latency.
func runLoad(tb testing.TB, conns int, d time.Duration, next func(rng *rand.Rand) *http.Request) loadResult {
	tb.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	var lat []time.Duration
	var errs, reqs int
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 99))
			mine := make([]time.Duration, 0, 1<<16)
			bad := 0
			for time.Now().Before(deadline) {
				req := next(rng)
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					bad++
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mine = append(mine, time.Since(t0))
				if res.StatusCode != 200 {
					bad++
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			reqs += len(mine)
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	slices.Sort(lat)
	r := loadResult{reqs: reqs, errs: errs, perSec: float64(reqs) / el.Seconds()}
	if len(lat) > 0 {
		r.p50, r.p99, r.max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	return r
}

func serveLoopback(tb testing.TB, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// BenchmarkIPAPI publishes a generated snapshot of 1,000,000 addresses with
// the real publisher, loads it as the API does, and measures over HTTP on
// loopback: single lookups at 50 keep-alive connections beside a bare
// net/http handler returning a fixed body of the same size (same run), the
// ratio and p50/p99; batches of 100 per second; CSV export rows per second.
func BenchmarkIPAPI(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv(benchSizeEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	st, err := objstore.NewFolder(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cfg := config.Default().Publish
	cfg.WorkDir = b.TempDir()
	cfg.Formats = []string{"ndjson", "mmdb"}
	t0 := time.Now()
	if _, err := publish.New(cfg, st, nil, testutil.Logger(b)).Run(ctx, gen.New(n, 42), "2026-11-22"); err != nil {
		b.Fatal(err)
	}
	b.Logf("published %d addresses in %s", n, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	snap, err := Load(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	loadTime := time.Since(t0)
	b.Logf("loaded in %s: %d rows", loadTime.Round(time.Millisecond), snap.Rows.Len())

	svc := New(Options{InternalKey: testKey, Store: st})
	svc.Swap(snap)
	mux := http.NewServeMux()
	svc.Mount(mux)
	api := serveLoopback(b, mux)

	// Addresses with assets, so that every lookup is a 200 with a body.
	g := gen.New(n, 42)
	var addrs []string
	for i := 0; len(addrs) < 20000 && i < n; i += 1 + i%7 {
		if len(g.Host(i).Assets) > 0 {
			addrs = append(addrs, gen.HostAddr(i).String())
		}
	}
	lookupReq := func(rng *rand.Rand) *http.Request {
		req, _ := http.NewRequest("GET", api+"/api/v1/shadow_vpn/lookup/"+addrs[rng.IntN(len(addrs))], nil)
		req.Header.Set("X-Internal-Key", testKey)
		req.Header.Set("X-Tier", "pro")
		return req
	}
	// The bare handler's body: the mean lookup body size.
	var total int
	for i := range 200 {
		req := lookupReq(rand.New(rand.NewPCG(uint64(i), 1)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("lookup %s: %d %s", req.URL, res.StatusCode, body)
		}
		total += len(body)
	}
	fixed := bytes.Repeat([]byte("x"), total/200)
	bare := serveLoopback(b, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(fixed)
	}))
	bareReq := func(*rand.Rand) *http.Request {
		req, _ := http.NewRequest("GET", bare+"/api/v1/shadow_vpn/lookup/198.51.100.7", nil)
		return req
	}

	const conns, dur = 50, 5 * time.Second
	b.ResetTimer()
	for range b.N {
		// Warm both up, then alternate so that neither gets a quieter machine.
		runLoad(b, conns, time.Second, lookupReq)
		runLoad(b, conns, time.Second, bareReq)
		l1 := runLoad(b, conns, dur, lookupReq)
		b1 := runLoad(b, conns, dur, bareReq)
		l2 := runLoad(b, conns, dur, lookupReq)
		b2 := runLoad(b, conns, dur, bareReq)
		look, base := l1, b1
		look.perSec, base.perSec = (l1.perSec+l2.perSec)/2, (b1.perSec+b2.perSec)/2
		look.p50, look.p99 = max(l1.p50, l2.p50), max(l1.p99, l2.p99)
		if look.errs+base.errs+l2.errs+b2.errs > 0 {
			b.Fatalf("errors: lookup %d, bare %d", l1.errs+l2.errs, b1.errs+b2.errs)
		}

		batchBody := func(rng *rand.Rand) []byte {
			ips := make([]string, 100)
			for i := range ips {
				ips[i] = gen.HostAddr(rng.IntN(n)).String()
			}
			body, _ := json.Marshal(map[string][]string{"ips": ips})
			return body
		}
		batch := runLoad(b, 8, dur, func(rng *rand.Rand) *http.Request {
			req, _ := http.NewRequest("POST", api+PathBatch, bytes.NewReader(batchBody(rng)))
			req.Header.Set("X-Internal-Key", testKey)
			req.Header.Set("X-Tier", "pro")
			req.Header.Set("Content-Type", "application/json")
			return req
		})

		req, _ := http.NewRequest("GET", api+PathCSV+"?limit=1000000", nil)
		req.Header.Set("X-Internal-Key", testKey)
		req.Header.Set("X-Tier", "enterprise")
		t0 := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		firstByte := time.Since(t0)
		rows, bytesN := countLines(b, res.Body)
		res.Body.Close()
		exportTime := time.Since(t0)
		rows-- // header
		exportRate := float64(rows) / exportTime.Seconds()

		ratio := look.perSec / base.perSec
		b.ReportMetric(look.perSec, "lookups/s")
		b.ReportMetric(base.perSec, "bare/s")
		b.ReportMetric(ratio, "ratio")
		b.ReportMetric(float64(look.p50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(look.p99.Microseconds())/1000, "p99-ms")
		b.ReportMetric(batch.perSec, "batches/s")
		b.ReportMetric(exportRate, "export-rows/s")
		b.ReportMetric(loadTime.Seconds(), "load-s")
		b.Logf("snapshot %d addresses (%d rows), loaded in %s", n, snap.Rows.Len(), loadTime.Round(time.Millisecond))
		b.Logf("lookup: %.0f/s p50 %s p99 %s max %s (body %d B, %d conns, tier pro)", look.perSec, look.p50, look.p99, max(l1.max, l2.max), len(fixed), conns)
		b.Logf("bare:   %.0f/s p50 %s p99 %s; ratio %.2f", base.perSec, base.p50, max(b1.p99, b2.p99), ratio)
		b.Logf("batch of 100: %.0f/s (%.0f addresses/s) p50 %s p99 %s, 8 conns, errors %d", batch.perSec, batch.perSec*100, batch.p50, batch.p99, batch.errs)
		b.Logf("export: %d rows, %d bytes in %s (first byte %s): %.0f rows/s", rows, bytesN, exportTime.Round(time.Millisecond), firstByte, exportRate)
	}
}

func countLines(tb testing.TB, r io.Reader) (lines, n int) {
	tb.Helper()
	buf := make([]byte, 256<<10)
	for {
		k, err := r.Read(buf)
		n += k
		lines += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return lines, n
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}
