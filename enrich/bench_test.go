package enrich

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

// benchObs is the number of observations per run (NETINTEL_BENCH_OBS overrides).
func benchObs(b *testing.B) int {
	if s := os.Getenv("NETINTEL_BENCH_OBS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("NETINTEL_BENCH_OBS=%q", s)
		}
		return n
	}
	return 1_000_000
}

// BenchmarkPipeline measures observations per second from publish to
// stored state through an embedded nats-server, with 1 and 2 enrich
// workers, against the raw JetStream rate of publishing and consuming
// (with an ack each) the same messages on a plain stream. The machine is
// shared and its speed drifts over minutes, so each case is bracketed by
// a raw run just before and just after it, and its ratio is to the mean
// of the two (target >= 0.33); both raw rates are logged.
func BenchmarkPipeline(b *testing.B) {
	n := benchObs(b)
	g := newGenerator(b, n/5, n/50)
	var lastRatio, oneShard float64 // ratio_to_raw of the last case and of workers=1
	bracketed := func(b *testing.B, run func(*testing.B) float64) {
		var rate, raw, cpu, rawCPU float64
		// Each measurement starts with the previous one's server shut down
		// and its memory collected. Beside the rate it takes the process's
		// CPU time per message (user + system): what the machine's
		// neighbours take shows in the rates far more than in it.
		measure := func(f func() float64) (rate, cpuPerMsg float64) {
			runtime.GC()
			before := processCPU(b)
			rate = f()
			return rate, (processCPU(b) - before).Seconds() * 1e6 / float64(n)
		}
		for i := 0; i < b.N; i++ {
			before, cpuBefore := measure(func() float64 { return benchRaw(b, g, n) })
			rate, cpu = measure(func() float64 { return run(b) })
			after, cpuAfter := measure(func() float64 { return benchRaw(b, g, n) })
			raw, rawCPU = (before+after)/2, (cpuBefore+cpuAfter)/2
			b.Logf("raw before %.0f msgs/s, after %.0f msgs/s; this case %.0f obs/s, ratio %.3f; CPU per message: raw %.0f and %.0f us, this case %.0f us, ratio %.3f",
				before, after, rate, rate/raw, cpuBefore, cpuAfter, cpu, rawCPU/cpu)
		}
		b.ReportMetric(rate, "obs/s")
		b.ReportMetric(raw, "raw_msgs/s")
		b.ReportMetric(rate/raw, "ratio_to_raw")
		lastRatio = rate / raw
		b.ReportMetric(cpu, "cpu_us/obs")
		b.ReportMetric(rawCPU/cpu, "cpu_ratio_to_raw")
	}
	// The floor of any design that stores state per observation: consume
	// each observation (from the same consumers as a worker), write one
	// 64-byte record to the state bucket (over 200,000 keys, as many as
	// the addresses) and ack after the write is stored, with no decoding,
	// enrichment or read-back. Its ratio to raw
	// is the most the pipeline could reach on this machine.
	b.Run("floor", func(b *testing.B) {
		bracketed(b, func(b *testing.B) float64 { return benchFloor(b, g, n) })
	})
	for _, workers := range []int{1, 2} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			bracketed(b, func(b *testing.B) float64 { return benchPipeline(b, g, n, workers, 1) })
			if workers == 1 {
				oneShard = lastRatio
			}
		})
	}
	// One worker writing a state of 4 shard buckets (enrich.shards: 4):
	// its ratio to raw over workers=1's (ratio_to_1shard, when both ran)
	// is the cost or gain of sharding on one node.
	b.Run("workers=1,shards=4", func(b *testing.B) {
		bracketed(b, func(b *testing.B) float64 { return benchPipeline(b, g, n, 1, 4) })
		if oneShard > 0 {
			b.ReportMetric(lastRatio/oneShard, "ratio_to_1shard")
		}
	})
}

// processCPU is the CPU time (user + system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchRaw(b *testing.B, g *generator, n int) float64 {
	b.StopTimer()
	nt := testutil.StartNATS(b)
	defer nt.Stop()
	ctx := context.Background()
	if _, err := nt.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "RAW", Subjects: []string{"raw.>"}, Storage: jetstream.FileStorage}); err != nil {
		b.Fatal(err)
	}
	cons, err := nt.JS.CreateOrUpdateConsumer(ctx, "RAW", jetstream.ConsumerConfig{Durable: "raw", AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 10000})
	if err != nil {
		b.Fatal(err)
	}
	var got atomic.Int64
	done := make(chan struct{})
	b.StartTimer()
	start := time.Now()
	cc, err := cons.Consume(func(m jetstream.Msg) {
		_ = m.Ack()
		if got.Add(1) == int64(n) {
			close(done)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	pub := ingest.NewPublisher(nt.JS, 4096)
	for i := 0; i < n; i++ {
		o := g.obs(i)
		data, _, err := o.Encode()
		if err != nil {
			b.Fatal(err)
		}
		if err := pub.PublishRaw(ctx, "raw."+o.Type, "", data); err != nil {
			b.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		b.Fatalf("raw consumer got %d of %d", got.Load(), n)
	}
	// The last acks reach the server before the clock stops.
	waitAcked(b, cons)
	elapsed := time.Since(start)
	b.StopTimer()
	cc.Stop()
	return float64(n) / elapsed.Seconds()
}

func waitAcked(b *testing.B, cons jetstream.Consumer) {
	for {
		info, err := cons.Info(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if info.NumAckPending == 0 && info.NumPending == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func benchPipeline(b *testing.B, g *generator, n, workers, shards int) float64 {
	b.StopTimer()
	nt := testutil.StartNATS(b)
	defer nt.Stop()
	cfg := nt.Ensure(b)
	if shards > 1 {
		cfg.Enrich.Shards = shards
		if err := bus.Ensure(context.Background(), nt.JS, cfg, testutil.Logger(b)); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Enrich.Catalog = sampleCatalogConfig()
	cat := sampleCatalog(b)
	benchOverrides(&cfg.Enrich)
	errs := make(chan error, workers)
	reg := prometheus.NewRegistry() // shared: the counters add up over the workers
	var m *metrics
	for i := 0; i < workers; i++ {
		w, err := NewWorker(nt.JS, cfg.Enrich, nil, cat, testutil.Logger(b), reg)
		if err != nil {
			b.Fatal(err)
		}
		m = w.m
		go func() { errs <- w.Run(ctx) }()
	}
	stored, elapsed := publishAndWait(ctx, b, nt.JS, g, n)
	cancel()
	for i := 0; i < workers; i++ {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	count := func(c *prometheus.CounterVec, label string) int {
		return int(promtest.ToFloat64(c.WithLabelValues(label)))
	}
	b.Logf("%d workers, %d shard(s): %d observations stored in %s; state writes from cache %d, read %d, assumed new %d (existed %d); conflicts retried %d",
		workers, shards, stored, elapsed, count(m.lookups, "cached"), count(m.lookups, "read"), count(m.lookups, "assumed_new"),
		count(m.lookups, "assumed_new_existed"), count(m.retries, "conflict"))
	return float64(stored) / elapsed.Seconds()
}

// benchOverrides applies NETINTEL_BENCH_CACHE_MB, NETINTEL_BENCH_LOOPS and
// NETINTEL_BENCH_BATCH to cfg, for the worker and floor cases alike.
func benchOverrides(cfg *config.Enrich) {
	for env, v := range map[string]*int{"NETINTEL_BENCH_CACHE_MB": &cfg.CacheMB, "NETINTEL_BENCH_LOOPS": &cfg.Workers, "NETINTEL_BENCH_BATCH": &cfg.BatchSize} {
		if s := os.Getenv(env); s != "" {
			*v, _ = strconv.Atoi(s)
		}
	}
}

func benchFloor(b *testing.B, g *generator, n int) float64 {
	b.StopTimer()
	nt := testutil.StartNATS(b)
	defer nt.Stop()
	cfg := nt.Ensure(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prefix := "$KV." + cfg.Enrich.Bucket + "."
	value := make([]byte, 64)
	benchOverrides(&cfg.Enrich)
	// As a worker holding every partition: cfg.Workers loops on each
	// consumer, the partitions' and the enrich consumer's.
	batchSize, loops := cfg.Enrich.BatchSize, 0
	done := make(chan error, len(ConsumerNames())*cfg.Enrich.Workers)
	for _, name := range ConsumerNames() {
		cons, err := nt.JS.Consumer(ctx, Stream, name)
		if err != nil {
			b.Fatal(err)
		}
		for range cfg.Enrich.Workers {
			go floorLoop(ctx, nt.JS, cons, prefix, value, batchSize, testutil.Logger(b), done)
			loops++
		}
	}
	stored, elapsed := publishAndWait(ctx, b, nt.JS, g, n)
	cancel()
	for range loops {
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	return float64(stored) / elapsed.Seconds()
}

// floorLoop is one consumer loop of the floor case, batched like a worker
// loop: fetch, write one record per message, ack after the write.
func floorLoop(ctx context.Context, js jetstream.JetStream, cons jetstream.Consumer, prefix string, value []byte, batchSize int, log *slog.Logger, done chan<- error) {
	bs, err := consumeBatches(ctx, cons, batchSize, log)
	if err != nil {
		done <- err
		return
	}
	defer bs.stop()
	batch := make([]jetstream.Msg, 0, batchSize)
	futs := make([]jetstream.PubAckFuture, 0, batchSize)
	for {
		var err error
		if batch, err = bs.next(batch, batchSize); err != nil {
			done <- nil
			return
		}
		futs = futs[:0]
		for _, m := range batch {
			meta, _ := m.Metadata()
			f, err := js.PublishAsync(prefix+"h."+strconv.FormatUint(meta.Sequence.Stream%200000, 10), value)
			if err != nil {
				done <- err
				return
			}
			futs = append(futs, f)
		}
		for i, f := range futs {
			select {
			case <-f.Ok():
				_ = batch[i].Ack()
			case err := <-f.Err():
				done <- err
				return
			}
		}
	}
}

// publishAndWait times publishing n observations until the enrich consumer
// has nothing pending or unacknowledged; it returns how many were stored.
func publishAndWait(ctx context.Context, b *testing.B, js jetstream.JetStream, g *generator, n int) (int, time.Duration) {
	if dir := os.Getenv("NETINTEL_BENCH_CPUPROFILE"); dir != "" {
		// The case alone, without the raw runs around it.
		f, err := os.Create(filepath.Join(dir, strings.NewReplacer("/", "_", "=", "").Replace(b.Name())+".prof"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
		// Beside it, what the heap holds at the end of the case, with
		// the server still up.
		defer func() {
			h, err := os.Create(strings.TrimSuffix(f.Name(), ".prof") + ".heap")
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			runtime.GC()
			if err := pprof.Lookup("heap").WriteTo(h, 0); err != nil {
				b.Fatal(err)
			}
		}()
	}
	b.StartTimer()
	start := time.Now()
	stored := g.publish(ctx, b, ingest.NewPublisher(js, 4096), 0, n)
	if err := WaitIdle(ctx, js); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	return stored, elapsed
}

// BenchmarkDedupeWindow measures what the server keeps in memory per
// message id inside a stream's duplicate window (the OBSERVATIONS
// stream's `duplicates`): the same messages, with the same ids, go to two
// memory streams, one with a window of an hour and one of 100 ms (its ids
// gone when measured), and the difference of the in-process server's
// heap, over the ids, is the cost of one id in the window. It does not
// depend on how many messages the stream holds, only on how many ids the
// window spans.
func BenchmarkDedupeWindow(b *testing.B) {
	const n = 200_000
	heapAfter := func(window time.Duration) uint64 {
		nt := testutil.StartNATS(b)
		defer nt.Stop()
		ctx := context.Background()
		if _, err := nt.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "D", Subjects: []string{"d.>"}, Storage: jetstream.MemoryStorage, Duplicates: window}); err != nil {
			b.Fatal(err)
		}
		pub := ingest.NewPublisher(nt.JS, 4096)
		data := make([]byte, 64)
		for i := range n {
			// An id as ingest makes one: 128 bits in hex.
			id := fmt.Sprintf("%032x", mix64(uint64(i)))
			if err := pub.PublishRaw(ctx, "d.x", id, data); err != nil {
				b.Fatal(err)
			}
		}
		if err := pub.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		if window < time.Second {
			time.Sleep(time.Second) // the short window's ids expire
		}
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		info, err := nt.JS.Stream(ctx, "D")
		if err != nil || info.CachedInfo().State.Msgs != n {
			b.Fatalf("stream holds %v messages, %v; want %d", info, err, n)
		}
		return ms.HeapAlloc
	}
	var perID float64
	for i := 0; i < b.N; i++ {
		long := heapAfter(time.Hour)
		short := heapAfter(100 * time.Millisecond)
		perID = (float64(long) - float64(short)) / n
		b.Logf("heap with %d ids in the window %d B, without %d B: %.0f B per id", n, long, short, perID)
	}
	b.ReportMetric(perID, "B/id")
}
