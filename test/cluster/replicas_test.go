package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

// TestCluster_ReplicaChangeApplied: objects created at R1 (a first start
// with the embedded defaults) are raised to R3 when a later start declares
// three replicas, and lowered again; the cluster reports each change.
func TestCluster_ReplicaChangeApplied(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	t.Parallel() // each test has a cluster of its own
	c := startCluster(t, 3)
	_, js := c.connect()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := testutil.Logger(t)

	check := func(cfg *config.Config, want int) {
		t.Helper()
		for _, s := range cfg.Streams {
			st, err := js.Stream(ctx, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.CachedInfo().Config.Replicas; got != want {
				t.Errorf("stream %s: replicas %d, want %d", s.Name, got, want)
			}
		}
		for _, k := range cfg.KV {
			// A bucket is the stream KV_<bucket>.
			st, err := js.Stream(ctx, "KV_"+k.Bucket)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.CachedInfo().Config.Replicas; got != want {
				t.Errorf("bucket %s: replicas %d, want %d", k.Bucket, got, want)
			}
		}
		for _, cc := range cfg.Consumers {
			cons, err := js.Consumer(ctx, cc.Stream, cc.Name)
			if err != nil {
				t.Fatal(err)
			}
			// A consumer's replicas follow its stream's (0) unless set.
			if got := cons.CachedInfo().Config.Replicas; got != 0 && got != want {
				t.Errorf("consumer %s: replicas %d, want %d", cc.Name, got, want)
			}
		}
	}

	r1 := config.Default()
	if err := bus.Ensure(ctx, js, r1, log); err != nil {
		t.Fatalf("ensure R1: %v", err)
	}
	check(r1, 1)
	r3 := clusterConfig()
	if err := bus.Ensure(ctx, js, r3, log); err != nil {
		t.Fatalf("ensure R3 over R1: %v", err)
	}
	check(r3, 3)
	// Idempotent: the same config again changes nothing and succeeds.
	if err := bus.Ensure(ctx, js, r3, log); err != nil {
		t.Fatalf("ensure R3 again: %v", err)
	}
	if err := bus.Ensure(ctx, js, r1, log); err != nil {
		t.Fatalf("ensure R1 over R3: %v", err)
	}
	check(r1, 1)
}
