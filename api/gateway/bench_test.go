package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apigw "github.com/netintel/netintel/api/gateway"
	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/testutil"
)

// lookupBody is a LookupResult of typical size (two assets).
var lookupBody = `{"ip":"192.0.2.1","assets":[` + strings.TrimSuffix(strings.Repeat(`{"port":443,"protocol_family":"ssl-vpn","vendor":"Fortinet","product":"FortiGate","version_band":"7.2","version_precision":"minor","exact_version":null,"confidence_band":"high","evidence_sources":["banner","tls"],"first_seen":"2026-11-01T00:00:00Z","last_seen":"2026-11-22T00:00:00Z","attributions":[{"org_name":"Example Org","signal_source":"whois","signal_confidence":0.9,"observed_at":"2026-11-22T00:00:00Z"}]},`, 2), ",") + `]}`

// BenchmarkGateway measures requests through gateway + backend against the
// same backend alone, in the same run: sequential latency (p50, p99) and
// throughput with 8 concurrent clients (8 users, one key each).
func BenchmarkGateway(b *testing.B) {
	n := testutil.StartNATS(b)
	n.Ensure(b)
	keysKV, _ := n.JS.KeyValue(context.Background(), gw.KeysBucket)
	usageKV, _ := n.JS.KeyValue(context.Background(), gw.UsageBucket)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Internal-Key") != internalKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, lookupBody)
	}))
	defer backend.Close()
	keys := gw.NewKeys(keysKV, gw.NewHasher("bench"), testutil.Logger(b))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = keys.Run(ctx, time.Minute) }()
	bu, _ := url.Parse(backend.URL)
	h := apigw.New(apigw.Options{Keys: keys, Usage: gw.NewUsage(usageKV), Backend: bu, InternalKey: internalKey,
		// Limits far above the load, so that every request takes the full path.
		Limits: func(string) gw.Limits { return gw.Limits{RatePerMinute: 1 << 30, MonthlyQuota: 1 << 40} }})
	gwSrv := httptest.NewServer(h)
	defer gwSrv.Close()
	var whole []string
	for i := range 8 {
		k, _, err := keys.Create(ctx, fmt.Sprintf("bench-%d", i), "enterprise", nil)
		if err != nil {
			b.Fatal(err)
		}
		whole = append(whole, k)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	get := func(u, key string) {
		req, _ := http.NewRequest("GET", u, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		} else {
			req.Header.Set("X-Internal-Key", internalKey)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d from %s", resp.StatusCode, u)
		}
	}
	direct := backend.URL + "/api/v1/ip/192.0.2.1"
	via := gwSrv.URL + "/api/v1/vpn/ip/192.0.2.1"
	const seq, conc, workers = 2000, 8000, 8
	for range b.N {
		// Warm both paths (connections, caches).
		for range 200 {
			get(direct, "")
			get(via, whole[0])
		}
		// Sequential latency, interleaved so both paths see the same machine.
		var dLat, gLat []time.Duration
		for range seq {
			t0 := time.Now()
			get(direct, "")
			t1 := time.Now()
			get(via, whole[0])
			dLat, gLat = append(dLat, t1.Sub(t0)), append(gLat, time.Since(t1))
		}
		rps := func(u string, useKey bool) float64 {
			var wg sync.WaitGroup
			start := time.Now()
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key := ""
					if useKey {
						key = whole[w]
					}
					for range conc / workers {
						get(u, key)
					}
				}()
			}
			wg.Wait()
			return conc / time.Since(start).Seconds()
		}
		dRPS, gRPS := rps(direct, false), rps(via, true)
		dp50, dp99 := pct(dLat, 50), pct(dLat, 99)
		gp50, gp99 := pct(gLat, 50), pct(gLat, 99)
		b.ReportMetric(us(dp50), "backend_p50_us")
		b.ReportMetric(us(gp50), "gateway_p50_us")
		b.ReportMetric(us(gp50-dp50), "added_p50_us")
		b.ReportMetric(us(dp99), "backend_p99_us")
		b.ReportMetric(us(gp99), "gateway_p99_us")
		b.ReportMetric(dRPS, "backend_req/s")
		b.ReportMetric(gRPS, "gateway_req/s")
		b.ReportMetric(gRPS/dRPS, "rps_ratio")
		if gp50-dp50 > time.Millisecond {
			b.Logf("added p50 %s is above the 1 ms target", gp50-dp50)
		}
	}
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
