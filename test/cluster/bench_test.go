package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/testutil"
)

// BenchmarkClusterPipeline measures observations per second from the
// first publish to every observation applied to the state, with 1 and 2
// enrich worker processes (`netintel worker enrich`), on the 3-node R3
// cluster and, in the same run, on one embedded single-node server with
// R1. It reports each rate and the ratio cluster/embedded for the same
// number of workers. NETINTEL_BENCH_OBS sets the observation count
// (default 100,000: 25,000 addresses, 4 observations each).
func BenchmarkClusterPipeline(b *testing.B) {
	n := 100_000
	if v := os.Getenv("NETINTEL_BENCH_OBS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 4 {
			b.Fatalf("NETINTEL_BENCH_OBS=%q", v)
		}
	}
	netintelBin(b)
	feed := writeObservations(b, filepath.Join(b.TempDir(), "bench.ndjson"), 0, n/4, time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
	embedded := map[int]float64{}
	for _, setup := range []string{"embedded-R1", "cluster-R3"} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", setup, workers), func(b *testing.B) {
				var rate float64
				for i := 0; i < b.N; i++ {
					rate = benchClusterRun(b, setup, workers, feed, (n/4)*4)
				}
				b.ReportMetric(rate, "obs/s")
				if setup == "embedded-R1" {
					embedded[workers] = rate
				} else if embedded[workers] > 0 {
					b.ReportMetric(rate/embedded[workers], "ratio_to_embedded")
				}
			})
		}
	}
}

func benchClusterRun(b *testing.B, setup string, workers int, feed string, n int) float64 {
	b.StopTimer()
	dir := b.TempDir()
	var urls string
	var js jetstream.JetStream
	if setup == "cluster-R3" {
		c := startCluster(b, 3)
		urls = c.URLs()
		_, js = c.connect()
	} else {
		nt := testutil.StartNATS(b)
		urls = nt.URL
		nc, err := nats.Connect(urls)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(nc.Close)
		if js, err = jetstream.New(nc); err != nil {
			b.Fatal(err)
		}
	}
	cfgPath := writeClusterConfig(b, dir, urls, "http://127.0.0.1:1", []string{"zqaa"})
	if setup == "embedded-R1" {
		cfg, err := os.ReadFile(cfgPath)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(cfgPath, []byte(strings.ReplaceAll(string(cfg), "replicas: 3", "replicas: 1")), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	s3 := testutil.StartS3(b)
	env := []string{"S3_ENDPOINT=" + s3.Endpoint, "S3_BUCKET=" + s3.Bucket, "S3_ACCESS_KEY=" + s3.AccessKey,
		"S3_SECRET_KEY=" + s3.SecretKey, "S3_REGION=us-east-1", "NETINTEL_INTERNAL_KEY=" + internalKey,
		"NETINTEL_GATEWAY_HASH_KEY=" + hashKey}
	var roles []*role
	for i := 0; i < workers; i++ {
		roles = append(roles, startRoleEnv(b, fmt.Sprintf("enrich-%d", i+1), env, false, "worker", "--config", cfgPath, "--nats", urls, "enrich"))
	}
	// The workers create the streams and the consumer; wait for them.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for {
		if _, err := js.Consumer(ctx, enrich.Stream, enrich.ConsumerName); err == nil {
			break
		}
		for _, r := range roles {
			select {
			case <-r.done:
				b.Fatalf("%s exited:\n%s", r.name, r.output())
			default:
			}
		}
		if ctx.Err() != nil {
			b.Fatal("the enrich workers never created their consumer")
		}
		time.Sleep(100 * time.Millisecond)
	}
	in := ingest.New(js, testutil.Logger(b), nil, 0, 0)
	b.StartTimer()
	start := time.Now()
	st, err := in.IngestFile(ctx, "observations", feed, ingest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if st.Published != n {
		b.Fatalf("stored %d observations, want %d", st.Published, n)
	}
	if err := enrich.WaitIdle(ctx, js); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.Logf("%s, %d workers: %d observations applied in %s", setup, workers, n, elapsed.Round(time.Millisecond))
	return float64(n) / elapsed.Seconds()
}
