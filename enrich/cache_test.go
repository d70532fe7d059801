package enrich

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"runtime"
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
	const recSize = 1 + 7 + 8 + 1 + 100 // key length, key, revision, data length, data
	c := newStateCache(100 * recSize)
	if len(c.slabs) != minSlabs || c.slabSize != 100*recSize/minSlabs {
		t.Fatalf("%d slabs of %d bytes for a budget of %d", len(c.slabs), c.slabSize, 100*recSize)
	}
	data := make([]byte, 100)
	key := func(i int) string { return "k" + strconv.Itoa(1000000 + i)[1:] }
	c.put("early", 7, data)
	for i := range 1000 {
		data[0] = byte(i)
		c.put(key(i), uint64(i+1), data)
		if i == 500 {
			c.put("early", 8, data) // written again: its first record is dead
		}
		held := 0
		for _, s := range c.slabs {
			held += len(s)
		}
		if held > 100*recSize {
			t.Fatalf("after %d puts the cache holds %d bytes over its %d budget", i+1, held, 100*recSize)
		}
	}
	// The newest keys are held, the oldest are not, and each key's newest
	// record is the one read.
	perSlab := c.slabSize / recSize
	if n := len(c.index); n < 100-perSlab-1 || n > 100 {
		t.Fatalf("cache holds %d entries of 100 that fit", n)
	}
	for i := 1000 - (100 - perSlab - 1); i < 1000; i++ {
		got, rev, ok := c.get([]byte("before"), key(i))
		if !ok || rev != uint64(i+1) || string(got[:6]) != "before" || len(got) != 106 || got[6] != byte(i) {
			t.Fatalf("%s: rev %d ok %v, %d bytes", key(i), rev, ok, len(got))
		}
	}
	for _, k := range []string{key(0), key(850), "early"} {
		if _, _, ok := c.get(nil, k); ok {
			t.Fatalf("%s: still cached after 1,000 later records", k)
		}
	}
	// A key whose old record leaves with its slab keeps its newer one.
	c.put("twice", 1, data)
	oldSlab := c.next - 1 // the number of the slab it went to
	for i := range perSlab {
		c.put(key(2000+i), 1, data)
	}
	c.put("twice", 2, data)
	for i := 0; c.oldest() <= oldSlab; i++ {
		c.put(key(3000+i), 1, data)
	}
	if _, rev, ok := c.get(nil, "twice"); !ok || rev != 2 {
		t.Fatalf("rewritten key: rev %d ok %v", rev, ok)
	}
	// Records are copies: changing what was put or got changes nothing.
	data[5] = 42
	c.put("copy", 3, data)
	data[5] = 0
	got, _, _ := c.get(nil, "copy")
	got[6] = 1
	if again, _, _ := c.get(nil, "copy"); again[5] != 42 || again[6] != 0 {
		t.Fatal("cached record shares memory with its caller")
	}
	c.drop("copy")
	if _, _, ok := c.get(nil, "copy"); ok {
		t.Fatal("dropped entry still cached")
	}
	// Another key with the same hash is not taken for the key.
	c.put("this", 4, data)
	c.index[maphash.String(c.seed, "that")] = c.index[maphash.String(c.seed, "this")]
	if _, _, ok := c.get(nil, "that"); ok {
		t.Fatal("a colliding key read another key's record")
	}
	c.drop("that")
	if _, _, ok := c.get(nil, "this"); !ok {
		t.Fatal("dropping a colliding key dropped another key's record")
	}
	// A record larger than a slab is not kept; putting one drops the key.
	c.put("big", 1, make([]byte, c.slabSize))
	if _, _, ok := c.get(nil, "big"); ok {
		t.Fatal("oversized record cached")
	}
	// No budget, no cache.
	off := newStateCache(0)
	off.put("k", 1, data)
	if _, _, ok := off.get(nil, "k"); ok {
		t.Fatal("cache of budget 0 kept a record")
	}
}

// Keys written once stay cached while others are rewritten many times,
// as long as the newest records fit: dead records make the room.
func TestStateCache_KeepsLiveRecords(t *testing.T) {
	const recSize = 1 + 4 + 8 + 1 + 100
	c := newStateCache(100 * recSize)
	data := make([]byte, 100)
	// Each cold record follows a hot one that is soon dead, so a cold
	// record moves to a lower offset when its slab is reused.
	for i := range 30 {
		c.put("hot"+strconv.Itoa(i%20), 0, data)
		c.put("cold"+strconv.Itoa(i), uint64(i+1), data)
	}
	for r := range 200 {
		for i := range 20 {
			c.put("hot"+strconv.Itoa(i), uint64(r+1), data)
		}
		if held := c.live; held > 100*recSize {
			t.Fatalf("round %d: %d bytes of records over the %d budget", r, held, 100*recSize)
		}
	}
	for i := range 30 {
		if _, rev, ok := c.get(nil, "cold"+strconv.Itoa(i)); !ok || rev != uint64(i+1) {
			t.Fatalf("cold%d: rev %d ok %v after 4,000 writes of other keys", i, rev, ok)
		}
	}
	for i := range 20 {
		if _, rev, ok := c.get(nil, "hot"+strconv.Itoa(i)); !ok || rev != 200 {
			t.Fatalf("hot%d: rev %d ok %v", i, rev, ok)
		}
	}
	// live counts exactly the records the index points to.
	sum := 0
	for _, at := range c.index {
		_, _, _, end := c.record(at)
		sum += end - int(uint32(at))
	}
	if sum != c.live || len(c.index) != 50 {
		t.Fatalf("%d keys, records of %d bytes counted as %d", len(c.index), sum, c.live)
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

// BenchmarkStateCache measures what a cache of 200,000 records costs the
// garbage collector (one forced collection, the cache alive) and what a
// record costs to store and read back, against the map of key strings to
// byte slices the cache replaced, in the same run.
func BenchmarkStateCache(b *testing.B) {
	tu.Micro(b)
	const n = 200_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("h.10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	}
	data := make([]byte, 450)
	for i := range data {
		data[i] = byte(i * 7)
	}
	type store struct {
		put func(k string, rev uint64, v []byte)
		get func(dst []byte, k string) []byte
	}
	stores := []struct {
		name string
		make func() store
	}{
		{"slab log", func() store {
			c := newStateCache(256 << 20)
			return store{c.put, func(dst []byte, k string) []byte { dst, _, _ = c.get(dst, k); return dst }}
		}},
		{"map baseline", func() store {
			m := map[string][]byte{}
			return store{
				func(k string, _ uint64, v []byte) { m[k] = bytes.Clone(v) },
				func(dst []byte, k string) []byte { return append(dst, m[k]...) },
			}
		}},
	}
	for _, s := range stores {
		b.Run("gc/"+s.name, func(b *testing.B) {
			st := s.make()
			for i, k := range keys {
				st.put(k, uint64(i+1), data)
			}
			runtime.GC()
			for b.Loop() {
				runtime.GC()
			}
			runtime.KeepAlive(st)
		})
		b.Run("put+get/"+s.name, func(b *testing.B) {
			st := s.make()
			b.ReportAllocs()
			var buf []byte
			for i := 0; b.Loop(); i++ {
				k := keys[i%n]
				st.put(k, uint64(i+1), data)
				buf = st.get(buf[:0], k)
			}
		})
	}
}
