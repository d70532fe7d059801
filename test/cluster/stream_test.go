package cluster

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

// clusterConfig is the default config with every stream, consumer and
// bucket at three replicas.
func clusterConfig() *config.Config {
	cfg := config.Default()
	for i := range cfg.Streams {
		cfg.Streams[i].Replicas = 3
	}
	for i := range cfg.Consumers {
		cfg.Consumers[i].Replicas = 3
	}
	for i := range cfg.KV {
		cfg.KV[i].Replicas = 3
	}
	return cfg
}

// TestCluster_StreamSurvivesLeaderKill publishes 100,000 messages with
// message ids while the stream leader is killed with SIGKILL and restarted;
// a publisher that resends a failed publish with the same id ends with each
// message stored exactly once on R3.
func TestCluster_StreamSurvivesLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	t.Parallel() // each test has a cluster of its own
	c := startCluster(t, 3)
	_, js := c.connect()
	ctx := context.Background()
	if err := bus.Ensure(ctx, js, clusterConfig(), testutil.Logger(t)); err != nil {
		t.Fatal(err)
	}
	const total = 100_000
	leader := c.leaderOf(js, "OBSERVATIONS")
	var sent atomic.Int64
	killed := make(chan struct{})
	go func() {
		for sent.Load() < total/3 {
			time.Sleep(10 * time.Millisecond)
		}
		c.kill(leader)
		time.Sleep(2 * time.Second)
		c.start(leader)
		close(killed)
	}()
	payload := make([]byte, 200)
	var retries int
	for i := 0; i < total; {
		end := min(i+500, total)
		var futs []jetstream.PubAckFuture
		for j := i; j < end; j++ {
			f, err := js.PublishAsync(fmt.Sprintf("obs.test.%d", j%16), payload, jetstream.WithMsgID(fmt.Sprintf("m-%d", j)))
			if err != nil {
				futs = append(futs, nil)
				continue
			}
			futs = append(futs, f)
		}
		// Resend every message of the window whose ack did not come within
		// one shared deadline (acks lost in a leader change never come).
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		for k, f := range futs {
			j := i + k
			ok := false
			if f != nil {
				select {
				case <-f.Ok():
					ok = true
				case <-f.Err():
				case <-wctx.Done():
				}
			}
			for attempt := 0; !ok; attempt++ {
				if attempt > 100 {
					t.Fatalf("message %d not stored after 100 resends", j)
				}
				retries++
				pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err := js.Publish(pctx, fmt.Sprintf("obs.test.%d", j%16), payload, jetstream.WithMsgID(fmt.Sprintf("m-%d", j)))
				cancel()
				ok = err == nil
				if !ok {
					time.Sleep(100 * time.Millisecond)
				}
			}
		}
		wcancel()
		i = end
		sent.Store(int64(i))
	}
	<-killed
	deadline := time.Now().Add(60 * time.Second)
	var got uint64
	for time.Now().Before(deadline) {
		s, err := js.Stream(ctx, "OBSERVATIONS")
		if err == nil {
			got = s.CachedInfo().State.Msgs
			if got == total {
				break
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	if got != total {
		t.Fatalf("stream holds %d messages, want exactly %d", got, total)
	}
	t.Logf("100,000 stored once through a leader kill; %d resends", retries)
}
