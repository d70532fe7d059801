package apigw_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netintel/netintel/api/apigw"
	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/testutil"
)

// inProcessBackend is a backend mux for the in-process path: lookups
// answer 200, dataset files 304 when If-None-Match names their ETag.
func inProcessBackend(t *testing.T, served *atomic.Int64) *http.ServeMux {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/ip/{ip}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(apigw.HeaderInternalKey) != internalKey || r.Header.Get("Authorization") != "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ip":"`+r.PathValue("ip")+`"}`)
	})
	mux.HandleFunc("GET /api/v1/export/dataset/{rest...}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"abc"`)
		if r.Header.Get("If-None-Match") == `"abc"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = io.WriteString(w, "file body")
	})
	return mux
}

// gatewayCopy is one gateway process: its own NATS connection, key cache
// and usage leases, and its own listener.
type gatewayCopy struct {
	keys  *gw.Keys
	usage *gw.Usage
	url   string
	stop  func() // ends its loops without giving its leases back (a crash)
}

func startCopy(t *testing.T, n *testutil.NATS, backend http.Handler, now func() time.Time, limits map[string]gw.Limits, opts ...option) *gatewayCopy {
	t.Helper()
	_, js := testutil.Connect(t, n.URL)
	keysKV, err := js.KeyValue(t.Context(), gw.KeysBucket)
	if err != nil {
		t.Fatal(err)
	}
	usageKV, err := js.KeyValue(t.Context(), gw.UsageBucket)
	if err != nil {
		t.Fatal(err)
	}
	c := &gatewayCopy{keys: gw.NewKeys(keysKV, gw.NewHasher("hash-key-for-tests"), testutil.Logger(t)), usage: gw.NewUsage(usageKV)}
	if now != nil {
		c.usage.SetNow(now)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = c.keys.Run(ctx, time.Minute) }()
	c.stop = func() { cancel(); wg.Wait() }
	t.Cleanup(c.stop)
	o := apigw.Options{Keys: c.keys, Usage: c.usage, BackendHandler: backend, InternalKey: internalKey, Log: testutil.Logger(t),
		Limits: func(tier string) gw.Limits { return limits[tier] }}
	for _, f := range opts {
		f(&o)
	}
	srv := httptest.NewServer(apigw.New(o))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

func get(t *testing.T, client *http.Client, u, key string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := client.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// hammer sends requests with key through every copy from workers
// goroutines each, until each worker has seen a 429; it returns the 200s.
func hammer(t *testing.T, copies []*gatewayCopy, key string, workers int) int64 {
	t.Helper()
	var ok atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for i, c := range copies {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ; k++ {
					switch code := get(t, client, fmt.Sprintf("%s/api/v1/vpn/ip/192.0.2.%d", c.url, (i*workers+w+k)%250+1), key); code {
					case 200:
						ok.Add(1)
					case 429:
						return
					default:
						t.Errorf("status %d", code)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	return ok.Load()
}

// drain gives back every copy's unspent leases (as each does when idle)
// and then spends what is left, one request at a time round the copies,
// until all four refuse; it returns the 200s.
func drain(t *testing.T, copies []*gatewayCopy, key string) int64 {
	t.Helper()
	for _, c := range copies {
		c.usage.Budgets().ReturnIdle(t.Context(), 0)
	}
	var ok int64
	for refused := 0; refused < len(copies); {
		for _, c := range copies {
			switch code := get(t, http.DefaultClient, c.url+"/api/v1/vpn/ip/192.0.2.1", key); code {
			case 200:
				ok++
				refused = 0
			case 429:
				refused++
			default:
				t.Fatalf("status %d", code)
			}
		}
	}
	return ok
}

// Four gateway copies on one nats-server, 8 concurrent clients on each,
// all with one key: together they never let through more than the rate
// window or the monthly quota, and refuse with at most copies × Cap(limit)
// of it unspent (docs/gateway.md); once the copies give their leases back
// the rest is served, exactly up to the limit. A revocation then reaches
// every copy within 2 s.
func TestHandler_FourCopiesShareLimits(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	var served atomic.Int64
	backend := inProcessBackend(t, &served)
	pinned := time.Date(2026, 11, 27, 12, 0, 20, 0, time.UTC) // one rate window for the whole test
	now := func() time.Time { return pinned }
	const rate, quota = 400, 1000
	limits := map[string]gw.Limits{
		"pro":   {RatePerMinute: rate},                         // the rate window binds
		"scale": {RatePerMinute: 1 << 20, MonthlyQuota: quota}, // the quota binds
	}
	var copies []*gatewayCopy
	for range 4 {
		copies = append(copies, startCopy(t, n, backend, now, limits))
	}
	rateKey, _, err := copies[0].keys.Create(t.Context(), "rate-user", "pro", nil)
	if err != nil {
		t.Fatal(err)
	}
	quotaKey, _, err := copies[0].keys.Create(t.Context(), "quota-user", "scale", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		key   string
		limit int64
	}{
		{"rate window", rateKey, rate},
		{"monthly quota", quotaKey, quota},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := served.Load()
			got := hammer(t, copies, tc.key, 8)
			bound := int64(len(copies)) * gw.DefaultLeaseConfig.Cap(tc.limit)
			if got > tc.limit || got < tc.limit-bound {
				t.Fatalf("under load the copies served %d; want %d - %d .. %d", got, tc.limit, bound, tc.limit)
			}
			rest := drain(t, copies, tc.key)
			if got+rest != tc.limit {
				t.Fatalf("served %d under load and %d after the leases came back: %d, want exactly %d", got, rest, got+rest, tc.limit)
			}
			if s := served.Load() - before; s != tc.limit {
				t.Fatalf("backend served %d, want %d", s, tc.limit)
			}
		})
	}
	if used, err := copies[1].usage.Used(t.Context(), "quota-user", pinned); err != nil || used != quota {
		t.Fatalf("stored credits %d (%v), want %d", used, err, quota)
	}

	// Revocation: every copy refuses the key within 2 s.
	fresh, rec, err := copies[0].keys.Create(t.Context(), "revoked-user", "scale", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range copies {
		if code := get(t, http.DefaultClient, c.url+"/api/v1/vpn/ip/192.0.2.1", fresh); code != 200 {
			t.Fatalf("before revocation: %d", code)
		}
	}
	if _, err := copies[0].keys.Revoke(t.Context(), rec.ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for i, c := range copies {
		for {
			code := get(t, http.DefaultClient, c.url+"/api/v1/vpn/ip/192.0.2.1", fresh)
			if code == 401 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("copy %d still answers %d 2 s after the revocation", i, code)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// A copy that dies holding a lease loses at most that lease: the others
// serve the rest of the quota.
func TestHandler_DeadCopyLosesAtMostItsLease(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	var served atomic.Int64
	backend := inProcessBackend(t, &served)
	const quota = 2000
	limits := map[string]gw.Limits{"scale": {RatePerMinute: 1 << 20, MonthlyQuota: quota}}
	var copies []*gatewayCopy
	for range 3 {
		copies = append(copies, startCopy(t, n, backend, nil, limits))
	}
	key, _, err := copies[0].keys.Create(t.Context(), "crash-user", "scale", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The copy about to die takes leases (they double while spent fast).
	var first int64
	for range 30 {
		if get(t, http.DefaultClient, copies[0].url+"/api/v1/vpn/ip/192.0.2.1", key) == 200 {
			first++
		}
	}
	copies[0].stop() // no clean stop: its unspent lease is not given back
	rest := drain(t, copies[1:], key)
	lost := quota - first - rest
	if c := gw.DefaultLeaseConfig.Cap(quota); lost < 0 || lost > c {
		t.Fatalf("served %d + %d of %d: lost %d, want 0..%d (one lease)", first, rest, quota, lost, c)
	}
}

// A 304 on a dataset file costs no credit, through the proxy and in-process.
func TestHandler_NotModifiedCostsNoCredit(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		t.Run(fmt.Sprintf("in-process=%v", inProcess), func(t *testing.T) {
			var served atomic.Int64
			mux := inProcessBackend(t, &served)
			var opts []option
			if !inProcess {
				srv := httptest.NewServer(mux)
				t.Cleanup(srv.Close)
				u := mustURL(t, srv.URL)
				opts = append(opts, func(o *apigw.Options) { o.BackendHandler, o.Backend = nil, u })
			}
			n := testutil.StartNATS(t)
			n.Ensure(t)
			c := startCopy(t, n, mux, nil, map[string]gw.Limits{"business": {RatePerMinute: 1000}}, opts...)
			key, _, err := c.keys.Create(t.Context(), "etag-user", "business", nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, tc := range []struct {
				etag string
				code int
				used int64
			}{{"", 200, 1}, {`"abc"`, 304, 1}, {`"abc"`, 304, 1}, {`"old"`, 200, 2}} {
				req, _ := http.NewRequestWithContext(t.Context(), "GET", c.url+"/api/v1/vpn/export/dataset/2026-11-22/ipintel.ndjson.gz", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				if tc.etag != "" {
					req.Header.Set("If-None-Match", tc.etag)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				used, err := c.usage.Used(t.Context(), "etag-user", time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if res.StatusCode != tc.code || used != tc.used || res.Header.Get("X-Quota-Used") != fmt.Sprint(tc.used) {
					t.Fatalf("request %d: %d, used %d, X-Quota-Used %q; want %d, %d", i, res.StatusCode, used, res.Header.Get("X-Quota-Used"), tc.code, tc.used)
				}
			}
		})
	}
}

// NATS gone: a copy spends what its lease still holds, and then, needing
// a fresh budget, fails closed with 503 within the state timeout.
func TestHandler_NATSDownAfterLease(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	var served atomic.Int64
	limits := map[string]gw.Limits{"scale": {RatePerMinute: 1 << 20, MonthlyQuota: 1 << 30}}
	c := startCopy(t, n, inProcessBackend(t, &served), nil, limits, func(o *apigw.Options) { o.StateTimeout = 500 * time.Millisecond })
	key, _, err := c.keys.Create(t.Context(), "down-user", "scale", nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 { // leases grow: the last ones hold more than one request
		if code := get(t, http.DefaultClient, c.url+"/api/v1/vpn/ip/192.0.2.1", key); code != 200 {
			t.Fatalf("status %d", code)
		}
	}
	n.Server.Shutdown()
	n.Server.WaitForShutdown()
	var ok int
	for i := 0; ; i++ {
		start := time.Now()
		code := get(t, http.DefaultClient, c.url+"/api/v1/vpn/ip/192.0.2.1", key)
		if code == 200 {
			ok++
			if i > 2000 {
				t.Fatal("still serving without NATS after 2000 requests: leases are not bounded")
			}
			continue
		}
		if code != 503 {
			t.Fatalf("status %d, want 503", code)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("503 after %s; the state timeout is 500ms", d)
		}
		break
	}
	if ok == 0 {
		t.Fatal("the lease left in memory served nothing")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// In-process, the backend gets the request the proxy would send: no
// customer credentials, each internal header once with the gateway's
// value, the mapped path and query; a backend 401 (it refused the internal
// key) reaches the customer as 502, refunded.
func TestHandler_InProcessRequest(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	var seen http.Header
	var seenURL string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/shadow_vpn/lookup/{ip}", func(w http.ResponseWriter, r *http.Request) {
		seen, seenURL = r.Header.Clone(), r.URL.String()
		w.Header().Set(apigw.HeaderInternalKey, "leak")
		_, _ = io.WriteString(w, `{}`)
	})
	mux.HandleFunc("GET /api/v1/ip/{ip}", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"code":"unauthorized","message":"backend body"}}`)
	})
	c := startCopy(t, n, mux, nil, map[string]gw.Limits{"pro": {RatePerMinute: 100, MonthlyQuota: 100}})
	key, rec, err := c.keys.Create(t.Context(), "inproc-user", "pro", nil)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", c.url+"/api/v1/vpn/shadow_vpn/lookup/192.0.2.7?include=cves&apiKey=x", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Cookie", "session=1")
	req.Header.Set(apigw.HeaderTier, "enterprise")
	req.Header.Set(apigw.HeaderInternalKey, "spoofed")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get(apigw.HeaderInternalKey) != "" || res.Header.Get("X-Quota-Used") != "1" {
		t.Fatalf("status %d, headers %v", res.StatusCode, res.Header)
	}
	for _, h := range []string{"Authorization", "Cookie"} {
		if v := seen.Values(h); len(v) != 0 {
			t.Errorf("backend got %s %v", h, v)
		}
	}
	for h, want := range map[string]string{apigw.HeaderInternalKey: internalKey, apigw.HeaderTier: "pro", apigw.HeaderUserID: rec.User, apigw.HeaderQuotaUsed: "1", "X-Forwarded-For": "127.0.0.1"} {
		if v := seen.Values(h); len(v) != 1 || v[0] != want {
			t.Errorf("backend got %s %v, want [%s]", h, v, want)
		}
	}
	if seenURL != "/api/v1/shadow_vpn/lookup/192.0.2.7?include=cves" {
		t.Errorf("backend URL %s", seenURL)
	}

	r := do(t, "GET", c.url+"/api/v1/vpn/ip/192.0.2.7", bearer(key), "")
	if r.code != 502 || r.errCode(t) != "backend_unavailable" || strings.Contains(r.body, "backend body") {
		t.Fatalf("backend 401: %d %s", r.code, r.body)
	}
	if used, err := c.usage.Used(t.Context(), "inproc-user", time.Now()); err != nil || used != 1 {
		t.Fatalf("used %d (%v), want 1: the 502 is refunded", used, err)
	}
}
