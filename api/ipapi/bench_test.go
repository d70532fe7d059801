package ipapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/internal/testutil/loadtest"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// benchSizeEnv overrides the snapshot size (default 1,000,000 addresses).
const benchSizeEnv = "IPAPI_BENCH_N"

// runLoad keeps conns keep-alive connections busy for d, each sending the
// request next builds (loadtest.Closed).
func runLoad(tb testing.TB, conns int, d time.Duration, next func(rng *rand.Rand) *http.Request) loadtest.Result {
	tb.Helper()
	return loadtest.Closed(tb, conns, d, func(_ int, rng *rand.Rand) *http.Request { return next(rng) })
}

// openRun is what one fixed-rate run measured.
type openRun struct {
	lat     []time.Duration // answered requests, each from when it was due
	lag     []time.Duration // how late each request left the generator
	elapsed time.Duration   // from the first due time to the last answer
	errs    int
	unsent  int     // due within the run but not sent by the drain limit
	gcs     uint32  // garbage collections during the run
	others  float64 // CPUs that other processes kept busy, on average
	self    float64 // CPUs this process (generator and servers) kept busy
}

// openDrain bounds how long a fixed-rate run may take past its duration to
// send what fell due: an overloaded server shows as unsent requests.
const openDrain = 10 * time.Second

// runOpenLoop offers rate requests per second for d over conns keep-alive
// connections, as wrk2 does: request k is due at start + k/rate, on
// connection k mod conns. A connection sends each due request as soon as
// its previous one has been answered, and the latency is counted from when
// the request was due, not from when it left. A stall then shows in every
// request it held up, as a user would see it, rather than as one slow
// sample followed by a pause in sending (coordinated omission, which the
// closed loop of runLoad suffers). The generator's own delays (waking late
// on a busy CPU) count too. lag reports how late requests left, whatever
// held them: the connection's previous answer, or the generator itself.
func runOpenLoop(tb testing.TB, conns int, rate float64, d time.Duration, next func(rng *rand.Rand) *http.Request) openRun {
	tb.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	total := int(rate * d.Seconds())
	interval := float64(time.Second) / rate
	var mu sync.Mutex
	var out openRun
	var wg sync.WaitGroup
	start := time.Now().Add(50 * time.Millisecond) // every goroutine started
	giveUp := start.Add(d + openDrain)
	var last time.Time
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := readCPU()
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			mine := make([]time.Duration, 0, total/conns+1)
			lags := make([]time.Duration, 0, total/conns+1)
			bad, unsent := 0, 0
			var done time.Time
			for k := c; k < total; k += conns {
				due := start.Add(time.Duration(float64(k) * interval))
				now := time.Now()
				if now.After(giveUp) {
					unsent++
					continue
				}
				if wait := due.Sub(now); wait > 0 {
					time.Sleep(wait)
				}
				req := next(rng)
				lags = append(lags, time.Since(due))
				status, err := loadtest.Send(client, req)
				if err != nil {
					bad++
					continue
				}
				done = time.Now()
				if status != 200 {
					bad++
					continue
				}
				mine = append(mine, done.Sub(due))
			}
			mu.Lock()
			out.lat = append(out.lat, mine...)
			out.lag = append(out.lag, lags...)
			out.errs += bad
			out.unsent += unsent
			if done.After(last) {
				last = done
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	out.elapsed = max(last.Sub(start), d)
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	out.gcs = ms1.NumGC - ms0.NumGC
	cpu1 := readCPU()
	out.others, out.self = cpu1.othersSince(cpu0), cpu1.selfSince(cpu0)
	return out
}

// openResult summarises fixed-rate runs of one handler at one rate.
type openResult struct {
	offered, achieved   float64 // requests per second
	n, errs, unsent     int
	p50, p99, p999, max time.Duration
	lagP99              time.Duration
	runP99              []time.Duration // each run's own p99
	medianRunP99        time.Duration   // their median (the upper one of an even count)
	gcs                 uint32          // garbage collections during the runs
	others              []float64       // each run's CPUs busy with other processes
	self                []float64       // each run's CPUs busy with this process
}

func summarize(offered float64, runs ...openRun) openResult {
	r := openResult{offered: offered}
	var lat, lag []time.Duration
	var elapsed time.Duration
	for _, x := range runs {
		own := slices.Clone(x.lat)
		slices.Sort(own)
		r.runP99 = append(r.runP99, quantile(own, 0.99))
		r.gcs += x.gcs
		r.others = append(r.others, x.others)
		r.self = append(r.self, x.self)
		lat = append(lat, x.lat...)
		lag = append(lag, x.lag...)
		elapsed += x.elapsed
		r.errs += x.errs
		r.unsent += x.unsent
	}
	r.n = len(lat)
	r.achieved = float64(len(lat)) / elapsed.Seconds()
	slices.Sort(lat)
	slices.Sort(lag)
	r.p50, r.p99, r.p999, r.max = quantile(lat, 0.5), quantile(lat, 0.99), quantile(lat, 0.999), quantile(lat, 1)
	r.lagP99 = quantile(lag, 0.99)
	runs99 := slices.Clone(r.runP99)
	slices.Sort(runs99)
	r.medianRunP99 = runs99[len(runs99)/2]
	return r
}

// quantile returns the q-quantile of sorted (the value at index n*q, as
// runLoad reads p50 and p99); 0 for no samples.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(float64(len(sorted))*q), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// fmtCPUs formats CPU counts for the log.
func fmtCPUs(fs []float64) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = strconv.FormatFloat(f, 'f', 2, 64)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// runsMS formats durations in milliseconds for the log.
func runsMS(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = strconv.FormatFloat(ms(d), 'f', 2, 64)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// BenchmarkIPAPI publishes a generated snapshot of 1,000,000 addresses with
// the real publisher, loads it as the API does, and measures over HTTP on
// loopback: single lookups at 50 keep-alive connections beside a bare
// net/http handler returning a fixed body of the same size (same run),
// twice over:
//
//   - saturation (closed loop, runLoad): each connection sends its next
//     request when the last is answered. It gives the most each can serve
//     and their ratio (lookups/s, bare/s, ratio), and the latency at that
//     load (p50-ms, p99-ms, bare-p99-ms), which is the queue at saturation
//     and, the stalls being omitted, still an optimistic one.
//   - fixed rate (open loop, runOpenLoop): openRate requests per second
//     ("fixed-"), and half the bare handler's saturation rate of the same
//     run ("half-"), latency counted from each request's due time: p50,
//     p99, p99.9 and max of each handler over all its runs, the median of
//     its runs' own p99s (one run hit by another process's burst moves the
//     pooled p99 a long way, the median hardly), the rate achieved, the
//     ratio of the lookup's p99 to the bare handler's (fixed-p99-ratio),
//     and how many CPUs other processes kept busy meanwhile (others-cpus).
//
// Then batches of 100 per second, and CSV export rows per second.
//
// The load generator runs in this process and shares the CPUs with both
// servers: on a small machine its own delays are part of every figure,
// the bare handler's included, which is what the bare handler is there
// to show.
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
	publishTime := time.Since(t0)
	t0 = time.Now()
	snap, err := Load(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	loadTime := time.Since(t0)

	svc := New(Options{InternalKey: testKey, Store: st})
	svc.Swap(snap)
	mux := http.NewServeMux()
	svc.Mount(mux)
	api := loadtest.ServeLoopback(b, mux)

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
	bare := loadtest.ServeLoopback(b, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(fixed)
	}))
	bareReq := func(*rand.Rand) *http.Request {
		req, _ := http.NewRequest("GET", bare+"/api/v1/shadow_vpn/lookup/198.51.100.7", nil)
		return req
	}

	const conns, dur = 50, 5 * time.Second
	// testing keeps 10 lines of a benchmark's log: 9 are written.
	b.Logf("published %d addresses in %s, loaded in %s (%d rows); load average at start %s",
		n, publishTime.Round(time.Millisecond), loadTime.Round(time.Millisecond), snap.Complete().Rows.Len(), loadAverage())
	b.ResetTimer()
	for range b.N {
		// Saturation. Warm both up, then alternate so that neither gets a
		// quieter machine.
		runLoad(b, conns, time.Second, lookupReq)
		runLoad(b, conns, time.Second, bareReq)
		satCPU := readCPU()
		l1 := runLoad(b, conns, dur, lookupReq)
		b1 := runLoad(b, conns, dur, bareReq)
		l2 := runLoad(b, conns, dur, lookupReq)
		b2 := runLoad(b, conns, dur, bareReq)
		satOthers := readCPU().othersSince(satCPU)
		look, base := l1, b1
		look.PerSec, base.PerSec = (l1.PerSec+l2.PerSec)/2, (b1.PerSec+b2.PerSec)/2
		look.P50, look.P99 = max(l1.P50, l2.P50), max(l1.P99, l2.P99)
		base.P50, base.P99 = max(b1.P50, b2.P50), max(b1.P99, b2.P99)
		if look.Errs+base.Errs+l2.Errs+b2.Errs > 0 {
			b.Fatalf("errors: lookup %d, bare %d", l1.Errs+l2.Errs, b1.Errs+b2.Errs)
		}

		// Fixed rates: openRounds rounds of lookup, bare, bare, lookup, so
		// that a drift of the machine's load weighs on both alike. Each
		// handler's runs are pooled, and their p99s also kept one by one.
		fixedRate := func(rate float64) (look, bare openResult) {
			var ls, bs []openRun
			for range openRounds {
				ls = append(ls, runOpenLoop(b, conns, rate, dur, lookupReq))
				bs = append(bs, runOpenLoop(b, conns, rate, dur, bareReq))
				bs = append(bs, runOpenLoop(b, conns, rate, dur, bareReq))
				ls = append(ls, runOpenLoop(b, conns, rate, dur, lookupReq))
			}
			look, bare = summarize(rate, ls...), summarize(rate, bs...)
			if look.errs+bare.errs > 0 {
				b.Fatalf("errors at %.0f/s: lookup %d, bare %d", rate, look.errs, bare.errs)
			}
			return look, bare
		}
		fixLook, fixBare := fixedRate(openRate)
		halfLook, halfBare := fixedRate(base.PerSec / 2)

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

		ratio := look.PerSec / base.PerSec
		b.ReportMetric(look.PerSec, "lookups/s")
		b.ReportMetric(base.PerSec, "bare/s")
		b.ReportMetric(ratio, "ratio")
		b.ReportMetric(ms(look.P50), "p50-ms")
		b.ReportMetric(ms(look.P99), "p99-ms")
		b.ReportMetric(ms(base.P99), "bare-p99-ms")
		reportOpen(b, "fixed-", fixLook, fixBare)
		reportOpen(b, "half-", halfLook, halfBare)
		b.ReportMetric(halfLook.offered, "half-offered/s")
		b.ReportMetric(batch.PerSec, "batches/s")
		b.ReportMetric(exportRate, "export-rows/s")
		b.ReportMetric(loadTime.Seconds(), "load-s")
		b.Logf("saturation, closed loop, %d conns, body %d B, tier pro: lookup %.0f/s, ms: p50 %.2f p99 %.2f max %.2f; bare %.0f/s, ms: p50 %.2f p99 %.2f max %.2f; ratio %.2f; CPUs used by other processes %.2f",
			conns, len(fixed), look.PerSec, ms(look.P50), ms(look.P99), ms(max(l1.Max, l2.Max)), base.PerSec, ms(base.P50), ms(base.P99), ms(max(b1.Max, b2.Max)), ratio, satOthers)
		for _, x := range []struct {
			name       string
			look, bare openResult
		}{{"fixed", fixLook, fixBare}, {"half", halfLook, halfBare}} {
			for _, h := range []struct {
				name string
				r    openResult
			}{{"lookup", x.look}, {"bare", x.bare}} {
				line := fmt.Sprintf("%s rate, open loop, %.0f/s offered, %s: %.0f/s achieved (%d answers, %d unsent), ms from due time: p50 %.2f p99 %.2f p99.9 %.2f max %.2f; p99 of each run %v (median %.2f); sent late p99 %.2f; %d GCs; CPUs used by this process %s, by others %s",
					x.name, x.look.offered, h.name, h.r.achieved, h.r.n, h.r.unsent, ms(h.r.p50), ms(h.r.p99), ms(h.r.p999), ms(h.r.max), runsMS(h.r.runP99), ms(h.r.medianRunP99), ms(h.r.lagP99), h.r.gcs, fmtCPUs(h.r.self), fmtCPUs(h.r.others))
				if h.name == "bare" {
					line += fmt.Sprintf("; lookup p99 / bare p99 %.2f", float64(x.look.p99)/float64(x.bare.p99))
				}
				b.Log(line)
			}
		}
		b.Logf("batch of 100: %.0f/s (%.0f addresses/s) p50 %s p99 %s, 8 conns, errors %d", batch.PerSec, batch.PerSec*100, batch.P50, batch.P99, batch.Errs)
		b.Logf("export: %d rows, %d bytes in %s (first byte %s): %.0f rows/s", rows, bytesN, exportTime.Round(time.Millisecond), firstByte, exportRate)
	}
	b.StopTimer()
	b.Logf("load average at end: %s", loadAverage())
}

// openRate is the fixed offered rate of BenchmarkIPAPI's open-loop runs:
// far above what one node would see from the per-key limits (enterprise,
// the highest, allows 10,000 requests a minute: this is 60 such keys at
// full speed), and below both handlers' saturation, where a latency target
// means something.
const openRate = 10_000

// openRounds is how many times BenchmarkIPAPI runs each fixed rate's
// lookup, bare, bare, lookup sequence.
const openRounds = 2

// reportOpen reports a pair of fixed-rate results under prefix.
func reportOpen(b *testing.B, prefix string, look, bare openResult) {
	for _, h := range []struct {
		name string
		r    openResult
	}{{"lookup", look}, {"bare", bare}} {
		b.ReportMetric(h.r.achieved, prefix+h.name+"/s")
		b.ReportMetric(ms(h.r.p50), prefix+h.name+"-p50-ms")
		b.ReportMetric(ms(h.r.p99), prefix+h.name+"-p99-ms")
		b.ReportMetric(ms(h.r.medianRunP99), prefix+h.name+"-run-p99-median-ms")
		b.ReportMetric(ms(h.r.p999), prefix+h.name+"-p99.9-ms")
		b.ReportMetric(ms(h.r.max), prefix+h.name+"-max-ms")
		b.ReportMetric(float64(h.r.unsent), prefix+h.name+"-unsent")
	}
	b.ReportMetric(float64(look.p99)/float64(bare.p99), prefix+"p99-ratio")
	var others float64
	for _, o := range append(slices.Clone(look.others), bare.others...) {
		others += o
	}
	b.ReportMetric(others/float64(len(look.others)+len(bare.others)), prefix+"others-cpus")
}

// cpuSample is the machine's busy CPU time and this process's, in clock
// ticks, where Linux's /proc tells them (zero elsewhere).
type cpuSample struct {
	at         time.Time
	busy, self uint64
}

func readCPU() cpuSample {
	s := cpuSample{at: time.Now()}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
		for i := 1; i < len(f); i++ {
			if i == 4 || i == 5 { // idle, iowait
				continue
			}
			v, _ := strconv.ParseUint(f[i], 10, 64)
			s.busy += v
		}
	}
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		// Fields after the command name (which may hold spaces): utime
		// and stime are the 12th and 13th.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 {
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 12 {
				u, _ := strconv.ParseUint(f[11], 10, 64)
				k, _ := strconv.ParseUint(f[12], 10, 64)
				s.self = u + k
			}
		}
	}
	return s
}

// othersSince returns how many CPUs other processes kept busy on average
// since s0 (the clock tick taken as 1/100 s, Linux's USER_HZ).
func (s cpuSample) othersSince(s0 cpuSample) float64 {
	wall := s.at.Sub(s0.at).Seconds()
	if wall <= 0 || s.busy < s0.busy {
		return 0
	}
	other := float64(s.busy-s0.busy) - float64(s.self-s0.self)
	return max(other, 0) / 100 / wall
}

// selfSince returns how many CPUs this process kept busy on average since s0.
func (s cpuSample) selfSince(s0 cpuSample) float64 {
	wall := s.at.Sub(s0.at).Seconds()
	if wall <= 0 || s.self < s0.self {
		return 0
	}
	return float64(s.self-s0.self) / 100 / wall
}

// loadAverage returns the 1, 5 and 15 minute load averages, where the
// system tells them.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
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
