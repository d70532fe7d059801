package enrich

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	tu "github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
)

// shardedEnv is newEnv with the state spread over shards buckets.
func shardedEnv(t *testing.T, shards int) *testEnv {
	t.Helper()
	e := newEnv(t, time.Second, 5)
	e.cfg.Enrich.Shards = shards
	if err := ensureAgain(t.Context(), e.nats, e.cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

// runSharded enriches the killN generated observations into a state of
// shards buckets and returns it as dump gives it.
func runSharded(t *testing.T, shards int) (map[string]string, *testEnv) {
	t.Helper()
	e := shardedEnv(t, shards)
	g := newGenerator(t, 500, 40)
	if n := g.publish(t.Context(), t, ingest.NewPublisher(e.nats.JS, 512), 0, killN); n != killN {
		t.Fatalf("stored %d of %d", n, killN)
	}
	cfg := e.cfg.Enrich
	cfg.BatchSize, cfg.Workers = 64, 2
	e.startWorker(t, cfg)
	e.waitIdle(t)
	return dump(t, NewShardedState(e.nats.JS, "ipstate", shards)), e
}

// shardRecords is how many messages each shard bucket's stream holds.
func shardRecords(t *testing.T, js jetstream.JetStream, st *Store) []uint64 {
	t.Helper()
	var out []uint64
	for _, b := range st.Shards() {
		n, err := bucketRecords(t.Context(), js, b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// The shard of an address is its enrich partition's with 4 shards, and
// one of two shards per partition with 8: a worker's partition writes to
// few shards.
func TestShardOf_FollowsPartitions(t *testing.T) {
	g := newGenerator(t, 5000, 400)
	for i := range 5000 {
		o := g.obs(i)
		k := stateKey(&o)
		if got, want := ShardOf(k, 4), o.Partition(); got != want {
			t.Fatalf("%s: shard %d of 4, partition %d", k, got, want)
		}
		if got := ShardOf(k, 8); got%4 != o.Partition() {
			t.Fatalf("%s: shard %d of 8 is not partition %d's", k, got, o.Partition())
		}
	}
	for _, tc := range []struct {
		key  string
		n    int
		want int
	}{{"h.10.0.0.1", 1, 0}, {"h.2001_db8__1", 1, 0}} {
		if got := ShardOf(tc.key, tc.n); got != tc.want {
			t.Errorf("ShardOf(%q, %d) = %d, want %d", tc.key, tc.n, got, tc.want)
		}
	}
	o := ingest.Observation{Type: ingest.TypeSignal, IP: "2001:db8::1"}
	if ShardOf(stateKey(&o), 4) != o.Partition() {
		t.Error("an IPv6 key's shard is not its partition")
	}
}

// A state in 4 shards holds exactly the records of the same observations
// enriched into one bucket, each shard about a quarter, every key in the
// shard of its hash.
func TestStore_ShardedSameState(t *testing.T) {
	want, _ := runPipeline(t, false)
	got, e := runSharded(t, 4)
	sameState(t, got, want)
	st := NewShardedState(e.nats.JS, "ipstate", 4)
	counts := shardRecords(t, e.nats.JS, st)
	for i, n := range counts {
		if share := float64(n) / float64(len(want)); share < 0.15 || share > 0.35 {
			t.Errorf("shard %d holds %d of %d records (%.2f)", i, n, len(want), share)
		}
	}
	for i, sh := range st.shards {
		err := st.eachShard(t.Context(), sh, ">", func(key string, _ uint64, _ *doc) error {
			if ShardOf(key, 4) != i {
				t.Errorf("key %s in shard %d, hash says %d", key, i, ShardOf(key, 4))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The layout is recorded: a worker configured for one bucket refuses.
	cfg := e.cfg.Enrich
	cfg.Shards = 1
	w, err := NewWorker(e.nats.JS, cfg, nil, sampleCatalog(t), tu.Logger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = w.Run(t.Context())
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "enrich.shards is 1") || !strings.Contains(err.Error(), "netintel state reshard --to 1") {
		t.Errorf("worker of 1 shard on a 4-shard state: %v", err)
	}
	t.Logf("records per shard: %v", counts)
}

// Resharding 1 -> 4 (killed once after a checkpoint and run again) and
// 4 -> 2 keeps exactly the records; while a reshard is unfinished nothing
// uses the state, and afterwards only the new enrich.shards is accepted.
func TestReshard_KillResume(t *testing.T) {
	want, e := runPipeline(t, false)
	ctx := t.Context()
	js := e.nats.JS
	errKilled := errors.New("killed")
	checkpoints := 0
	// runPipeline's worker is idle, and announced: Force.
	opt := ReshardOptions{Log: tu.Logger(t), Force: true, batch: 50, checkpoint: func(p ReshardProgress) error {
		if checkpoints++; checkpoints == 3 {
			return errKilled
		}
		return nil
	}}
	if _, err := Reshard(ctx, js, e.cfg, 4, opt); !errors.Is(err, errKilled) {
		t.Fatalf("first run: %v, want killed", err)
	}
	l, err := ReadLayout(ctx, js, "ipstate")
	if err != nil || l.Shards != 1 || l.Reshard == nil || l.Reshard.Sources[0].Seq == 0 || l.Reshard.Sources[0].Done {
		t.Fatalf("after the kill: layout %+v, %v; want 1 shard, a copy part-way", l, err)
	}
	copiedAtKill := l.Reshard.Sources[0].Copied
	for _, n := range []int{1, 4} {
		st := NewShardedState(js, "ipstate", n)
		if err := st.CheckLayout(ctx); !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "reshard --to 4") {
			t.Errorf("%d shard(s) during the reshard: %v, want refused naming the command", n, err)
		}
	}
	if _, err := Reshard(ctx, js, e.cfg, 2, ReshardOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "--to 4") {
		t.Errorf("another target during the reshard: %v", err)
	}
	opt.checkpoint = nil
	res, err := Reshard(ctx, js, e.cfg, 4, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || res.From != 1 || res.To != 4 || res.Copied != int64(len(want)) {
		t.Errorf("resumed run: %+v, want resumed 1 -> 4 with %d records", res, len(want))
	}
	t.Logf("killed after %d records copied; resumed: %+v", copiedAtKill, res)
	st4 := NewShardedState(js, "ipstate", 4)
	if err := st4.CheckLayout(ctx); err != nil {
		t.Fatal(err)
	}
	sameState(t, dump(t, st4), want)
	if _, err := js.KeyValue(ctx, "ipstate"); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("the old bucket: %v, want deleted", err)
	}
	err = NewShardedState(js, "ipstate", 1).CheckLayout(ctx)
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "enrich.shards is 1") {
		t.Errorf("1 shard after the reshard: %v", err)
	}

	cfg := *e.cfg
	cfg.Enrich.Shards = 4
	if res, err = Reshard(ctx, js, &cfg, 2, ReshardOptions{Force: true}); err != nil || res.Resumed || res.Copied != int64(len(want)) {
		t.Fatalf("4 -> 2: %+v, %v", res, err)
	}
	st2 := NewShardedState(js, "ipstate", 2)
	if err := st2.CheckLayout(ctx); err != nil {
		t.Fatal(err)
	}
	sameState(t, dump(t, st2), want)
	for _, b := range st4.Shards() {
		if _, err := js.KeyValue(ctx, b); !errors.Is(err, jetstream.ErrBucketNotFound) {
			t.Errorf("old shard %s: %v, want deleted", b, err)
		}
	}
	// Resharding to the layout it has does nothing.
	if res, err := Reshard(ctx, js, &cfg, 2, ReshardOptions{Force: true}); err != nil || res.Copied != 0 {
		t.Errorf("2 -> 2: %+v, %v", res, err)
	}
}

// An unfinished reshard is undone by AbortReshard: the state stays as it
// was, and a running enrich worker keeps a reshard from starting.
func TestReshard_AbortAndRunningWorkers(t *testing.T) {
	want, e := runPipeline(t, false)
	ctx := t.Context()
	js := e.nats.JS
	stop := errors.New("stop")
	_, err := Reshard(ctx, js, e.cfg, 3, ReshardOptions{Force: true, batch: 20, checkpoint: func(ReshardProgress) error { return stop }})
	if !errors.Is(err, stop) {
		t.Fatal(err)
	}
	p, err := AbortReshard(ctx, js, e.cfg)
	if err != nil || p == nil || p.To != 3 {
		t.Fatalf("abort: %+v, %v", p, err)
	}
	for _, k := range e.cfg.StateShards(3) {
		if _, err := js.KeyValue(ctx, k.Bucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
			t.Errorf("%s after abort: %v, want deleted", k.Bucket, err)
		}
	}
	st := NewState(js, "ipstate")
	if err := st.CheckLayout(ctx); err != nil {
		t.Fatal(err)
	}
	sameState(t, dump(t, st), want)

	// runPipeline's worker is still running.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := liveMembers(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never announced itself")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := Reshard(ctx, js, e.cfg, 2, ReshardOptions{}); err == nil || !strings.Contains(err.Error(), "worker(s) are running") {
		t.Errorf("reshard beside a worker: %v", err)
	}
}

// A new state with enrich.shards above 1 records its layout at the first
// start; the one bucket of an unsharded state with records is never taken
// for a new state.
func TestStore_CheckLayoutNewState(t *testing.T) {
	e := shardedEnv(t, 3)
	ctx := t.Context()
	st := NewShardedState(e.nats.JS, "ipstate", 3)
	if err := st.CheckLayout(ctx); err != nil {
		t.Fatal(err)
	}
	if l, err := ReadLayout(ctx, e.nats.JS, "ipstate"); err != nil || l.Shards != 3 {
		t.Fatalf("layout %+v, %v; want 3 recorded", l, err)
	}
	if err := NewState(e.nats.JS, "ipstate").CheckLayout(ctx); !errors.Is(err, ErrLayout) {
		t.Errorf("1 shard on a recorded 3: %v", err)
	}

	e2 := newEnv(t, time.Second, 5)
	putHosts(t, NewState(e2.nats.JS, "ipstate"), 10, "src")
	err := NewShardedState(e2.nats.JS, "ipstate", 4).CheckLayout(ctx)
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "kept in 1 shard(s) but enrich.shards is 4") {
		t.Errorf("4 shards on an unsharded state with records: %v", err)
	}
}

// A shard whose stream is missing fails a walk (and so a snapshot): never
// a walk of the other shards alone.
func TestStore_WalkFailsWithAShardMissing(t *testing.T) {
	e := shardedEnv(t, 3)
	ctx := t.Context()
	st := NewShardedState(e.nats.JS, "ipstate", 3)
	putHosts(t, st, 300, "src")
	n := 0
	if err := st.Hosts(ctx, func(ipmodel.Record) error { n++; return nil }); err != nil || n != 300 {
		t.Fatalf("walk of 3 shards: %d records, %v", n, err)
	}
	// A snapshot of the whole state is published first; the one tried with
	// a shard missing must fail and leave it latest.
	objs, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pcfg := config.Default().Publish
	pcfg.WorkDir = t.TempDir()
	pub := publish.New(pcfg, objs, nil, tu.Logger(t))
	if _, err := pub.Run(ctx, st, "2026-11-20"); err != nil {
		t.Fatalf("publish of 3 shards: %v", err)
	}
	if err := e.nats.JS.DeleteKeyValue(ctx, config.ShardBucket("ipstate", 1, 3)); err != nil {
		t.Fatal(err)
	}
	st = NewShardedState(e.nats.JS, "ipstate", 3)
	n = 0
	err = st.Hosts(ctx, func(ipmodel.Record) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "ipstate-1of3") {
		t.Errorf("walk with shard 1 missing: %d records, err %v; want an error naming it", n, err)
	}
	if err := st.Ranges(ctx, func(ipmodel.Record) error { return nil }); err == nil {
		t.Error("ranges walk with shard 1 missing: no error")
	}
	if _, err := pub.Run(ctx, st, "2026-11-21"); err == nil || !strings.Contains(err.Error(), "ipstate-1of3") {
		t.Errorf("publish with shard 1 missing: %v; want a failure naming it", err)
	}
	m, err := publish.Latest(ctx, objs)
	if err != nil || m.SnapshotDate != "2026-11-20" || m.Hosts != 300 {
		t.Errorf("latest after the failed publish: %+v, %v; want the 2026-11-20 snapshot of 300 hosts", m, err)
	}
}

// While one shard's stream takes writes without acknowledging them, the
// addresses of the other shards are stored all the same, and nothing is
// dead-lettered; once it answers again the state is an undisturbed run's.
func TestWorker_ShardUnavailableOthersGoOn(t *testing.T) {
	want, _ := runPipeline(t, false)
	// The consumers' ack wait is long, as production's (30 s) is: with
	// the 1 s of the other tests, the messages a loop has fetched ahead
	// (PullMaxMessages) outlive it while batches of shard 1 wait for their
	// writes, are redelivered, and on a busy machine crowd out the other
	// shards' writes. (Parked messages themselves are kept in progress:
	// TestWorker_ParkedKeptInProgress.)
	e := newEnv(t, 2*unavailableMaxWait, 5)
	e.cfg.Enrich.Shards = 3
	if err := ensureAgain(t.Context(), e.nats, e.cfg); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	js := e.nats.JS
	setNoAck := noAckSwitch(t, js, "KV_"+config.ShardBucket("ipstate", 1, 3))
	setNoAck(true)
	cfg := e.cfg.Enrich
	cfg.BatchSize, cfg.Workers = 64, 2
	var worker *Worker
	e.startWorkerWith(t, cfg, func(w *Worker) { w.ackWait = 200 * time.Millisecond; worker = w })
	g := newGenerator(t, 500, 40)
	if n := g.publish(ctx, t, ingest.NewPublisher(js, 512), 0, killN); n != killN {
		t.Fatalf("stored %d of %d", n, killN)
	}
	// Every record of shards 0 and 2 is stored while shard 1 is out.
	wantIn := make([]uint64, 3)
	for k := range want {
		key := "h." + strings.ReplaceAll(k, ":", "_")
		if strings.Contains(k, "/") {
			key = "r." + strings.ReplaceAll(k, ":", "_")
		}
		wantIn[ShardOf(key, 3)]++
	}
	st := NewShardedState(js, "ipstate", 3)
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := shardRecords(t, js, st)
		if got[0] == wantIn[0] && got[2] == wantIn[2] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("shards 0 and 2 hold %d and %d records, want %d and %d, while shard 1 is out", got[0], got[2], wantIn[0], wantIn[2])
		}
		time.Sleep(50 * time.Millisecond)
	}
	cons := enrichConsumers(t, js)
	if _, _, pending := consumerTotals(t, cons); pending == 0 {
		t.Fatal("nothing awaits shard 1: the outage was not met")
	}
	setNoAck(false)
	e.waitIdle(t)
	sameState(t, dump(t, st), want)
	if n := promtest.ToFloat64(worker.m.dead.WithLabelValues("failed")); n != 0 {
		t.Errorf("%v observations dead-lettered", n)
	}
}

// Messages whose state write is parked (the shard unavailable) are kept in
// progress however long the pauses between writes grow: with a consumer
// ack wait of 1 s and pauses growing past it, none is redelivered, and
// once the shard answers their state is stored.
func TestWorker_ParkedKeptInProgress(t *testing.T) {
	e := newEnv(t, time.Second, 5)
	ctx := t.Context()
	js := e.nats.JS
	setNoAck := noAckSwitch(t, js, "KV_ipstate")
	setNoAck(true)
	cfg := e.cfg.Enrich
	cfg.BatchSize, cfg.Workers = 64, 1
	e.startWorkerWith(t, cfg, func(w *Worker) { w.ackWait = 200 * time.Millisecond })
	g := newGenerator(t, 4, 0)
	if n := g.publish(ctx, t, ingest.NewPublisher(js, 16), 0, 6); n != 6 {
		t.Fatalf("stored %d of 6", n)
	}
	// The pauses between writes (100 ms doubling, each write waiting
	// 200 ms) pass the ack wait of 1 s after about 2.5 s.
	time.Sleep(5 * time.Second)
	cons := enrichConsumers(t, js)
	redelivered := 0
	for _, c := range cons {
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		redelivered += info.NumRedelivered
	}
	if _, _, pending := consumerTotals(t, cons); pending == 0 {
		t.Fatal("nothing awaits the state bucket: the outage was not met")
	}
	if redelivered != 0 {
		t.Errorf("%d parked messages were redelivered during the outage: not kept in progress", redelivered)
	}
	setNoAck(false)
	e.waitIdle(t)
	if got := dump(t, NewState(js, "ipstate")); len(got) == 0 {
		t.Error("nothing stored after the outage")
	}
}
