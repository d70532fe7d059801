package probe

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netintel/netintel/internal/testutil"
)

// BenchmarkRun checks 1,500 TLDs through the whole backbone (coordinator,
// JetStream work queue, worker, KV results, publish) against loopback
// servers that each add 100 ms to every answer, at concurrency 64. It
// reports the wall time beside the ideal (requests x latency / concurrency)
// and, measured in the same run, a direct baseline: the same checks from a
// plain pool of 64 goroutines without the backbone.
func BenchmarkRun(b *testing.B) {
	const (
		nTLDs       = 1500
		latency     = 100 * time.Millisecond
		concurrency = 64
	)
	n := testutil.StartNATS(b)
	n.Ensure(b)
	store := folderStore(b)
	w := newWorld(b)
	w.latency = latency
	cfg := w.config()
	cfg.Timeout = 5 * time.Second
	cfg.WhoisTimeout = 5 * time.Second
	cfg.Concurrency = concurrency
	cfg.PerHost = concurrency // whois.iana.test is one host for every TLD
	cfg.Rate = 0
	var tlds []string
	boot := map[string][]string{}
	for i := range nTLDs {
		tld := "b" + string(rune('a'+i/676)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
		tlds = append(tlds, tld)
		switch {
		case i%10 < 8: // 80% in the bootstrap, each on its own host
			w.rdapHosts["rdap."+tld+".bench"] = "good"
			boot[tld] = []string{"http://rdap." + tld + ".bench/"}
		case i%10 == 8: // 10% with a stealth server
			w.rdapHosts["rdap.nic."+tld] = "good"
		}
	}
	writeInputs(b, &cfg, tlds, boot)
	svc, err := New(context.Background(), cfg, n.JS, store, testutil.Logger(b))
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := svc.RegisterMetrics(reg); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); _ = svc.RunWorker(ctx) }()
	defer func() { cancel(); <-done }()

	for range b.N {
		// Direct baseline: the same checks, no backbone.
		w.requests.Store(0)
		start := time.Now()
		var wg sync.WaitGroup
		sem := make(chan struct{}, concurrency)
		for _, tld := range tlds {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				svc.checker.Check(ctx, Work{TLD: tld, RDAPURLs: boot[tld], Stealth: true})
			}()
		}
		wg.Wait()
		direct := time.Since(start)

		w.requests.Store(0)
		start = time.Now()
		sum0, n0 := checkSeconds(b, reg)
		err := svc.RunNow(ctx)
		if err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		reqs := w.requests.Load()
		ideal := time.Duration(reqs) * latency / concurrency
		p, _ := svc.Progress(ctx)
		if p.Status != StatusCompleted || p.ProcessedTLDs != nTLDs {
			b.Fatalf("run did not complete: %+v", p)
		}
		sum1, n1 := checkSeconds(b, reg)
		avgCheck := (sum1 - sum0) / float64(n1-n0)
		b.ReportMetric(avgCheck, "avg_check_s")
		b.ReportMetric(float64(reqs), "requests")
		b.ReportMetric(wall.Seconds(), "wall_s")
		b.ReportMetric(ideal.Seconds(), "ideal_s")
		b.ReportMetric(direct.Seconds(), "direct_s")
		b.ReportMetric(wall.Seconds()/ideal.Seconds(), "ratio_to_ideal")
		b.ReportMetric(wall.Seconds()/direct.Seconds(), "ratio_to_direct")
		b.Logf("%d TLDs, %d requests, wall %s, ideal %s (ratio %.2f), direct pool %s (ratio %.2f), one TLD check %.0f ms (ideal %.0f ms)",
			nTLDs, reqs, wall.Round(time.Millisecond), ideal.Round(time.Millisecond), wall.Seconds()/ideal.Seconds(),
			direct.Round(time.Millisecond), wall.Seconds()/direct.Seconds(), avgCheck*1000, float64(reqs)/nTLDs*latency.Seconds()*1000)
	}
}

// checkSeconds reads the sum and count of the check duration histogram.
func checkSeconds(b *testing.B, reg *prometheus.Registry) (float64, uint64) {
	b.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "netintel_tld_probe_check_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleSum(), h.GetSampleCount()
		}
	}
	return 0, 0
}
