package enrich

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/netintel/netintel/ingest"
	tu "github.com/netintel/netintel/internal/testutil"
)

func TestStateCache_Budget(t *testing.T) {
	c := newStateCache(100 * (entryOverhead + 10 + 100))
	data := make([]byte, 100)
	for i := range 1000 {
		c.put("k"+strconv.Itoa(1000000 + i)[1:], uint64(i+1), data[:100:100])
		if c.bytes > c.budget {
			t.Fatalf("after %d puts the cache holds %d bytes over its %d budget", i+1, c.bytes, c.budget)
		}
	}
	if len(c.m) < 50 || len(c.m) > 100 {
		t.Fatalf("cache holds %d entries of 100 that fit", len(c.m))
	}
	// The newest entry survives its own eviction round.
	if e, ok := c.get("k000999"); !ok || e.rev != 1000 {
		t.Fatalf("newest entry: %+v %v", e, ok)
	}
	c.drop("k000999")
	if _, ok := c.get("k000999"); ok {
		t.Fatal("dropped entry still cached")
	}
	// A record larger than a quarter of the budget is not kept.
	c.put("big", 1, make([]byte, c.budget/2))
	if _, ok := c.get("big"); ok {
		t.Fatal("oversized record cached")
	}
	// No budget, no cache.
	off := newStateCache(0)
	off.put("k", 1, data)
	if _, ok := off.get("k"); ok {
		t.Fatal("cache of budget 0 kept a record")
	}
}

func TestStateCache_Guess(t *testing.T) {
	c := newStateCache(1 << 20)
	if c.guessAbsent() {
		t.Fatal("guesses before learning anything")
	}
	for range 100 {
		c.learned(false)
	}
	if !c.guessAbsent() {
		t.Fatal("100 absent keys in a row: still reading unknown keys")
	}
	for range 60 {
		c.learned(true)
	}
	if c.guessAbsent() {
		t.Fatal("60 of 160 unknown keys existed: still guessing")
	}
	// Old samples fade: a long run of absent keys wins back.
	for range 3 * decayEvery {
		c.learned(false)
	}
	if !c.guessAbsent() {
		t.Fatal("recent absent keys did not outweigh old found ones")
	}
}

// Two worker processes take turns on the same addresses: each one's cache
// goes stale while the other writes, and the first, having learned that
// unknown keys are new, writes blind over keys the second created. Every
// such write must fail its revision check and be redone from what is
// stored, so the state equals one uncached worker's.
func TestWorker_StaleCacheAndWrongGuesses(t *testing.T) {
	const n = 6000
	g := newGenerator(t, 500, 40)
	run := func(phases [][2]int, uncached bool) (map[string]string, float64, float64) {
		e := newEnv(t, time.Second, 5)
		pub := ingest.NewPublisher(e.nats.JS, 512)
		cfg := e.cfg.Enrich
		cfg.BatchSize = 64
		if uncached {
			cfg.CacheMB = 0
		}
		reg := prometheus.NewRegistry()
		a, err := NewWorker(e.nats.JS, cfg, nil, sampleCatalog(t), tu.Logger(t), reg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewWorker(e.nats.JS, cfg, nil, sampleCatalog(t), tu.Logger(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range phases {
			w := a
			if i%2 == 1 {
				w = b
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			if got := g.publish(t.Context(), t, pub, p[0], p[1]); got != p[1]-p[0] {
				t.Fatalf("stored %d of %d", got, p[1]-p[0])
			}
			e.waitIdle(t)
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		m := a.m.lookups
		return dump(t, NewState(e.nats.JS, "ipstate")), promtest.ToFloat64(m.WithLabelValues("assumed_new_existed")),
			promtest.ToFloat64(a.m.retries.WithLabelValues("conflict"))
	}
	want, _, _ := run([][2]int{{0, n}}, true)
	// a: the first 600 (all new: it learns to write unknown keys unread);
	// b: the next 2,400 (new keys a never saw, updates of keys a cached);
	// a again: the rest.
	got, wrongGuesses, conflicts := run([][2]int{{0, 600}, {600, 3000}, {3000, n}}, false)
	if len(want) < 500 {
		t.Fatalf("reference run stored only %d records", len(want))
	}
	if wrongGuesses == 0 || conflicts == 0 {
		t.Fatalf("wrong guesses %v, conflicts %v: the stale paths were not taken", wrongGuesses, conflicts)
	}
	t.Logf("worker a: %v blind writes over existing keys, %v conflicts retried", wrongGuesses, conflicts)
	sameState(t, got, want)
}

// readMany gives the same records with batch direct gets and, on a bucket
// that does not answer them, reading key by key.
func TestStore_ReadManyFallsBack(t *testing.T) {
	n := tu.StartNATS(t)
	ctx := t.Context()
	kv, err := n.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "rm"})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"h.10.0.0.1", "h.10.0.0.2", "h.10.0.0.3", "r.10.1.0.0/24"}
	want := map[string]uint64{keys[3]: 0}
	for _, k := range keys[:3] {
		if want[k], err = kv.Put(ctx, k, []byte("doc-"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := kv.Delete(ctx, keys[2]); err != nil {
		t.Fatal(err)
	}
	want[keys[2]]++
	check := func(direct bool) {
		t.Helper()
		s := NewState(n.JS, "rm")
		failed := map[string]error{}
		got := s.readMany(ctx, keys, failed, tu.Logger(t))
		if len(failed) > 0 || len(got) != len(keys) {
			t.Fatalf("direct %v: %d records, failed %v", direct, len(got), failed)
		}
		for _, k := range keys {
			r := got[k]
			hasData := k == keys[0] || k == keys[1]
			if r.rev != want[k] || (r.data != nil) != hasData || (hasData && string(r.data) != "doc-"+k) {
				t.Errorf("direct %v: %s = rev %d data %q, want rev %d", direct, k, r.rev, r.data, want[k])
			}
		}
		if s.batchGetFailed.Load() == direct {
			t.Errorf("direct gets allowed %v, batch read fell back %v", direct, s.batchGetFailed.Load())
		}
	}
	check(true)
	st, err := n.JS.Stream(ctx, "KV_rm")
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.AllowDirect = false
	if _, err := n.JS.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	check(false)
}

func TestStateCache_Claims(t *testing.T) {
	c := newStateCache(1 << 20)
	mine, busy, wait := c.claim([]string{"a", "b"})
	if len(mine) != 2 || len(busy) != 0 || len(wait) != 0 {
		t.Fatalf("first claim: mine %v busy %v", mine, busy)
	}
	mine, busy, wait = c.claim([]string{"b", "c"})
	if len(mine) != 1 || mine[0] != "c" || len(busy) != 1 || busy[0] != "b" || len(wait) != 1 {
		t.Fatalf("second claim: mine %v busy %v", mine, busy)
	}
	// A third loop waiting for b waits on the same answer.
	_, busy3, wait3 := c.claim([]string{"b"})
	if len(busy3) != 1 || len(wait3) != 1 || wait3[0] != wait[0] {
		t.Fatalf("third claim of b: busy %v, its wait the second's: %v", busy3, len(wait3) == 1 && wait3[0] == wait[0])
	}
	select {
	case <-wait[0]:
		t.Fatal("the wait for b ended before b was released")
	default:
	}
	c.release([]string{"a", "b"})
	for _, ch := range []chan struct{}{wait[0], wait3[0]} {
		select {
		case <-ch:
		case <-time.After(time.Second):
			t.Fatal("releasing b did not end a wait for it")
		}
	}
	if mine, busy, _ = c.claim([]string{"a", "b", "c"}); len(mine) != 2 || len(busy) != 1 || busy[0] != "c" {
		t.Fatalf("after release: mine %v busy %v", mine, busy)
	}
	c.release([]string{"a", "b", "c"})
	if len(c.writing) != 0 {
		t.Fatalf("claims left after every release: %v", c.writing)
	}
}

// Many loops of one process on observations of a few addresses write each
// key one after the other: no conflict, and the state of a single loop.
func TestWorker_LoopsShareKeysWithoutConflict(t *testing.T) {
	const n = 3000
	g := newGenerator(t, 20, 4)
	run := func(loops int) (map[string]string, float64) {
		e := newEnv(t, time.Second, 5)
		cfg := e.cfg.Enrich
		cfg.Workers, cfg.BatchSize = loops, 16
		var w *Worker
		stop := e.startWorkerWith(t, cfg, func(x *Worker) {
			x.m = newMetrics(prometheus.NewRegistry())
			w = x
		})
		if got := g.publish(t.Context(), t, ingest.NewPublisher(e.nats.JS, 512), 0, n); got != n {
			t.Fatalf("stored %d of %d", got, n)
		}
		e.waitIdle(t)
		stop()
		return dump(t, NewState(e.nats.JS, "ipstate")), promtest.ToFloat64(w.m.retries.WithLabelValues("conflict"))
	}
	want, _ := run(1)
	got, conflicts := run(8)
	if conflicts != 0 {
		t.Errorf("8 loops on 24 keys: %v conflicting writes; loops of one process must not race each other", conflicts)
	}
	sameState(t, got, want)
}
