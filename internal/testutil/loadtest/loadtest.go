// Package loadtest drives HTTP benchmarks over loopback: a closed-loop load
// of keep-alive connections with its rate and latency percentiles, and a
// server on a free loopback port. The IP API's and the gateway's
// benchmarks share it.
package loadtest

import (
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// Result is what one load run measured: requests answered, those that
// failed or were not 200, the rate, and the sorted latencies with their
// median, 99th percentile and maximum.
type Result struct {
	Reqs, Errs    int
	PerSec        float64
	Lat           []time.Duration
	P50, P99, Max time.Duration
}

// percentiles sets P50, P99 and Max from the sorted Lat.
func (r *Result) percentiles() {
	if n := len(r.Lat); n > 0 {
		r.P50, r.P99, r.Max = r.Lat[n/2], r.Lat[n*99/100], r.Lat[n-1]
	}
}

// Closed keeps conns keep-alive connections busy for d (closed loop), each
// sending the requests next(c, rng) builds for connection c, and measures
// throughput and latency.
func Closed(tb testing.TB, conns int, d time.Duration, next func(c int, rng *rand.Rand) *http.Request) Result {
	tb.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	var out Result
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 99))
			mine := make([]time.Duration, 0, 1<<14)
			bad := 0
			for time.Now().Before(deadline) {
				req := next(c, rng)
				t0 := time.Now()
				status, err := Send(client, req)
				if err != nil {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
				if status != http.StatusOK {
					bad++
				}
			}
			mu.Lock()
			out.Lat = append(out.Lat, mine...)
			out.Errs += bad
			out.Reqs += len(mine)
			mu.Unlock()
		}()
	}
	wg.Wait()
	out.PerSec = float64(out.Reqs) / time.Since(start).Seconds()
	slices.Sort(out.Lat)
	out.percentiles()
	return out
}

// Merge pools runs: the mean rate, the percentiles over every sample.
func Merge(rs []Result) Result {
	var out Result
	for _, r := range rs {
		out.Reqs += r.Reqs
		out.Errs += r.Errs
		out.PerSec += r.PerSec / float64(len(rs))
		out.Lat = append(out.Lat, r.Lat...)
	}
	slices.Sort(out.Lat)
	out.percentiles()
	return out
}

// Send makes one request, reads the whole answer and returns its status.
func Send(client *http.Client, req *http.Request) (int, error) {
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

// ServeLoopback serves h on a free loopback port until the test ends and
// returns its base URL.
func ServeLoopback(tb testing.TB, h http.Handler) string {
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
