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

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/testutil"
)

// startTaggedCluster is startCluster with server tags: node i (n1, n2,
// ...) carries the tag shard:<i>.
func startTaggedCluster(t *testing.T, n int) *natsCluster {
	t.Helper()
	return launchCluster(t, n, "nt-shard", startTagged)
}

// startTagged starts node i with its tag (a config file: nats-server has
// no flag for tags) and the flags startCluster gives.
func startTagged(c *natsCluster, i int) {
	conf := filepath.Join(c.nodes[i].dir, "tags.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("server_tags: [\"shard:%d\"]\n", i)), 0o600); err != nil {
		c.t.Fatal(err)
	}
	c.run(i, "-c", conf)
}

// shardHosts publishes a tor-exit signal for addresses 10.9.x.y, i in
// [from, to).
func shardHosts(ctx context.Context, t *testing.T, js jetstream.JetStream, from, to int) {
	t.Helper()
	pub := ingest.NewPublisher(js, 512)
	for i := from; i < to; i++ {
		o := ingest.Observation{Type: ingest.TypeSignal, IP: fmt.Sprintf("10.9.%d.%d", i/256, i%256), Source: "tor-exits",
			ObservedAt: "2026-11-20T00:00:00Z", Signal: &ingest.Signal{Kind: "tor_exit"}}
		if err := o.Normalize(); err != nil {
			t.Fatal(err)
		}
		if err := pub.Publish(ctx, &o); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCluster_ShardsSpreadOverNodes: on three nodes tagged shard:0..2, a
// state of 3 R1 shards placed by enrich.shard_placement puts one shard on
// each node, each holding about a third of the records. With the node of
// shard 1 stopped, the enrich worker goes on storing the addresses of
// shards 0 and 2, and a walk of the state (what a snapshot reads) fails
// rather than returning two thirds of it; once the node is back, every
// record is there.
func TestCluster_ShardsSpreadOverNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	c := startTaggedCluster(t, 3)
	_, js := c.connect()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := testutil.Logger(t)
	cfg := config.Default()
	// Everything else at R3, so that one node down stops nothing but its
	// shard.
	for i := range cfg.Streams {
		cfg.Streams[i].Replicas = 3
	}
	for i := range cfg.KV {
		if cfg.KV[i].Bucket != cfg.Enrich.Bucket {
			cfg.KV[i].Replicas = 3
		}
	}
	cfg.Enrich.Shards = 3
	cfg.Enrich.ShardPlacement = []config.Placement{{Tags: []string{"shard:0"}}, {Tags: []string{"shard:1"}}, {Tags: []string{"shard:2"}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := bus.Ensure(ctx, js, cfg, log); err != nil {
		t.Fatal(err)
	}
	shards := cfg.StateShards(3)
	nodeOf := map[string]int{} // shard bucket -> node index
	for i, k := range shards {
		n := c.leaderOf(js, "KV_"+k.Bucket)
		st, err := js.Stream(ctx, "KV_"+k.Bucket)
		if err != nil {
			t.Fatal(err)
		}
		info := st.CachedInfo()
		if n != i || len(info.Cluster.Replicas) != 0 {
			t.Errorf("shard %s: on %s with replicas %v, want only %s", k.Bucket, info.Cluster.Leader, info.Cluster.Replicas, c.nodes[i].name)
		}
		nodeOf[k.Bucket] = n
	}

	const first, second = 3000, 6000
	shardHosts(ctx, t, js, 0, first)
	w, err := enrich.NewWorker(js, cfg.Enrich, nil, enrich.NewCatalog(), log, nil)
	if err != nil {
		t.Fatal(err)
	}
	// As in a worker process, its context has no deadline: each request
	// to an unavailable shard ends after the connection's default timeout.
	wctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()
	if err := enrich.WaitIdle(ctx, js); err != nil {
		t.Fatal(err)
	}
	counts := func() []uint64 {
		out := make([]uint64, len(shards))
		for i, k := range shards {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			st, err := js.Stream(rctx, "KV_"+k.Bucket)
			cancel()
			if err == nil {
				out[i] = st.CachedInfo().State.Msgs
			}
		}
		return out
	}
	got := counts()
	var sum uint64
	for i, n := range got {
		sum += n
		if share := float64(n) / first; share < 0.25 || share > 0.42 {
			t.Errorf("node %s holds %d of %d state records (%.2f), want about a third", c.nodes[i].name, n, first, share)
		}
	}
	if sum != first {
		t.Fatalf("the shards hold %d records, want %d", sum, first)
	}
	t.Logf("state records per node after %d addresses: %v", first, got)

	// Shard 1's node stops; the next 3,000 addresses are enriched.
	want := make([]uint64, len(shards))
	for i := range second {
		want[enrich.ShardOf("h.10.9."+strconv.Itoa(i/256)+"."+strconv.Itoa(i%256), 3)]++
	}
	c.kill(nodeOf[shards[1].Bucket])
	shardHosts(ctx, t, js, first, second)
	for deadline := time.Now().Add(45 * time.Second); ; {
		got = counts()
		if got[0] == want[0] && got[2] == want[2] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with shard 1's node down, shards 0 and 2 hold %d and %d records, want %d and %d", got[0], got[2], want[0], want[2])
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("with shard 1's node down: shards 0 and 2 complete (%d, %d)", got[0], got[2])
	st := enrich.NewShardedState(js, cfg.Enrich.Bucket, 3)
	n := 0
	wctx2, cancel2 := context.WithTimeout(ctx, 45*time.Second)
	err = st.Hosts(wctx2, func(ipmodel.Record) error { n++; return nil })
	hung := wctx2.Err() != nil
	cancel2()
	// The walk fails naming the shard without a leader, by its own stall
	// limit, within the 45 s given here; the other shards' walks are
	// stopped then, so how many records passed before depends on the
	// timing.
	if err == nil || hung || !strings.Contains(err.Error(), shards[1].Bucket) {
		t.Fatalf("walk with shard 1 down: %d records, err %v, still running at 45 s: %v; want the error of shard %s", n, err, hung, shards[1].Bucket)
	}
	t.Logf("walk with shard 1 down: %d records passed, then %v", n, err)

	startTagged(c, nodeOf[shards[1].Bucket])
	back := time.Now()
	if err := enrich.WaitIdle(ctx, js); err != nil {
		t.Fatal(err)
	}
	n = 0
	if err := st.Hosts(ctx, func(ipmodel.Record) error { n++; return nil }); err != nil || n != second {
		t.Fatalf("walk after the node came back: %d records, %v; want %d", n, err, second)
	}
	t.Logf("every record stored %s after the node came back", time.Since(back).Round(time.Millisecond))
	if got := counts(); got[1] != want[1] {
		t.Errorf("shard 1 holds %d records, want %d", got[1], want[1])
	}
}
