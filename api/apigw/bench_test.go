package apigw_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/netintel/netintel/api/apigw"
	"github.com/netintel/netintel/api/ipapi"
	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/internal/testutil/loadtest"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// benchSizeEnv overrides the snapshot size of BenchmarkGateway.
const benchSizeEnv = "GATEWAY_BENCH_N"

// BenchmarkGateway publishes a generated snapshot of 200,000 addresses with
// the real publisher and serves it, in the same process and the same run,
// two ways over loopback HTTP with 50 keep-alive connections:
//
//   - the gateway path as `netintel run` wires it: key check, the shared
//     rate window and monthly credits (leases from a real nats-server's
//     usage bucket), the IP backend called in-process; each connection a
//     different customer (50 users, one key each: "keys50"), and all 50
//     connections on one key ("key1");
//   - the peer: the least a user would write to serve the same MMDB file,
//     github.com/oschwald/maxminddb-golang behind net/http answering the
//     record of the address as JSON.
//
// Runs alternate (peer, keys50, key1, twice) so that neither gets a
// quieter machine; it reports each one's requests/s and p50, the ratios
// gateway/peer, and the usage bucket writes per 1,000 gateway requests.
// The tiers' limits are set far above the load, so every request takes
// the whole path (a lease is spent on every one).
func BenchmarkGateway(b *testing.B) {
	n := 200_000
	if v := os.Getenv(benchSizeEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := b.TempDir()
	st, err := objstore.NewFolder(dir)
	if err != nil {
		b.Fatal(err)
	}
	pc := config.Default().Publish
	pc.WorkDir = b.TempDir()
	pc.Formats = []string{"ndjson", "mmdb"}
	if _, err := publish.New(pc, st, nil, testutil.Logger(b)).Run(ctx, gen.New(n, 42), "2026-11-22"); err != nil {
		b.Fatal(err)
	}
	snap, err := ipapi.Load(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	var mmdbPath string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == publish.FileMMDB {
			mmdbPath = p
		}
		return nil
	})
	if mmdbPath == "" {
		b.Fatal("no MMDB file published")
	}

	// The gateway path: backend and gateway on one mux, as `netintel run`.
	nt := testutil.StartNATS(b)
	nt.Ensure(b)
	keysKV, _ := nt.JS.KeyValue(ctx, gw.KeysBucket)
	usageKV, _ := nt.JS.KeyValue(ctx, gw.UsageBucket)
	keys := gw.NewKeys(keysKV, gw.NewHasher("bench"), testutil.Logger(b))
	go func() { _ = keys.Run(ctx, time.Minute) }()
	usage := gw.NewUsage(usageKV)
	go func() { _ = usage.Run(ctx) }()
	svc := ipapi.New(ipapi.Options{InternalKey: internalKey, Store: st})
	svc.Swap(snap)
	mux := http.NewServeMux()
	svc.Mount(mux)
	apigw.New(apigw.Options{Keys: keys, Usage: usage, Backend: nil, BackendHandler: mux, InternalKey: internalKey,
		Limits: func(string) gw.Limits { return gw.Limits{RatePerMinute: 1 << 30, MonthlyQuota: 1 << 40} }}).Mount(mux)
	gwURL := loadtest.ServeLoopback(b, mux)

	// The peer.
	db, err := maxminddb.Open(mmdbPath)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	peerURL := loadtest.ServeLoopback(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip, err := netip.ParseAddr(strings.TrimPrefix(r.URL.Path, "/ip/"))
		if err != nil {
			http.Error(w, `{"error":"bad address"}`, http.StatusBadRequest)
			return
		}
		var rec any
		res := db.Lookup(ip)
		if !res.Found() {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		if err := res.Decode(&rec); err != nil {
			http.Error(w, `{"error":"decode"}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rec)
	}))

	// Addresses with assets, so that every answer is a 200 with a body.
	g := gen.New(n, 42)
	var addrs []string
	for i := 0; len(addrs) < 20000 && i < n; i += 1 + i%7 {
		if len(g.Host(i).Assets) > 0 {
			addrs = append(addrs, gen.HostAddr(i).String())
		}
	}
	const conns = 50
	var whole []string
	for i := range conns {
		k, _, err := keys.Create(ctx, fmt.Sprintf("bench-%d", i), "enterprise", nil)
		if err != nil {
			b.Fatal(err)
		}
		whole = append(whole, k)
	}
	gwReq := func(oneKey bool) func(c int, rng *rand.Rand) *http.Request {
		return func(c int, rng *rand.Rand) *http.Request {
			req, _ := http.NewRequest("GET", gwURL+"/api/v1/vpn/ip/"+addrs[rng.IntN(len(addrs))], nil)
			k := whole[c]
			if oneKey {
				k = whole[0]
			}
			req.Header.Set("Authorization", "Bearer "+k)
			return req
		}
	}
	peerReq := func(_ int, rng *rand.Rand) *http.Request {
		req, _ := http.NewRequest("GET", peerURL+"/ip/"+addrs[rng.IntN(len(addrs))], nil)
		return req
	}
	// Both answer the same address with a body.
	for _, req := range []*http.Request{gwReq(false)(0, rand.New(rand.NewPCG(1, 1))), peerReq(0, rand.New(rand.NewPCG(1, 1)))} {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || len(body) < 20 {
			b.Fatalf("%s: %d %s", req.URL.Path, res.StatusCode, body)
		}
	}
	writes := func() uint64 {
		s, err := nt.JS.Stream(ctx, "KV_"+gw.UsageBucket)
		if err != nil {
			b.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return info.State.LastSeq
	}

	const dur = 4 * time.Second
	b.ResetTimer()
	for range b.N {
		loadtest.Closed(b, conns, time.Second, peerReq)
		loadtest.Closed(b, conns, time.Second, gwReq(false))
		loadtest.Closed(b, conns, time.Second, gwReq(true))
		var peer, k50, k1 []loadtest.Result
		w0 := writes()
		var gwReqs int
		for range 2 {
			peer = append(peer, loadtest.Closed(b, conns, dur, peerReq))
			r := loadtest.Closed(b, conns, dur, gwReq(false))
			k50 = append(k50, r)
			r1 := loadtest.Closed(b, conns, dur, gwReq(true))
			k1 = append(k1, r1)
			gwReqs += r.Reqs + r1.Reqs
		}
		w1 := writes()
		p, a, o := loadtest.Merge(peer), loadtest.Merge(k50), loadtest.Merge(k1)
		if p.Errs+a.Errs+o.Errs > 0 {
			b.Fatalf("errors: peer %d, keys50 %d, key1 %d", p.Errs, a.Errs, o.Errs)
		}
		b.ReportMetric(p.PerSec, "peer/s")
		b.ReportMetric(a.PerSec, "keys50/s")
		b.ReportMetric(o.PerSec, "key1/s")
		b.ReportMetric(a.PerSec/p.PerSec, "ratio-keys50")
		b.ReportMetric(o.PerSec/p.PerSec, "ratio-key1")
		b.ReportMetric(ms(p.P50), "peer-p50-ms")
		b.ReportMetric(ms(a.P50), "keys50-p50-ms")
		b.ReportMetric(ms(o.P50), "key1-p50-ms")
		b.ReportMetric(float64(w1-w0)*1000/float64(gwReqs), "kv-writes/1k-req")
		b.Logf("%d addresses, %d conns, %s a run: peer %.0f/s p50 %.2f ms p99 %.2f ms; keys50 %.0f/s p50 %.2f ms p99 %.2f ms (%.2fx); key1 %.0f/s p50 %.2f ms p99 %.2f ms (%.2fx); usage writes %d for %d gateway requests",
			n, conns, dur, p.PerSec, ms(p.P50), ms(p.P99), a.PerSec, ms(a.P50), ms(a.P99), a.PerSec/p.PerSec, o.PerSec, ms(o.P50), ms(o.P99), o.PerSec/p.PerSec, w1-w0, gwReqs)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
