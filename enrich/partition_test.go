package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

func TestAssigned(t *testing.T) {
	for _, tc := range []struct {
		ids  []string
		self string
		want []int
	}{
		{[]string{"a"}, "a", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		{[]string{"a", "b"}, "a", []int{0, 2, 4, 6, 8, 10, 12, 14}},
		{[]string{"a", "b"}, "b", []int{1, 3, 5, 7, 9, 11, 13, 15}},
		{[]string{"a", "b", "c"}, "c", []int{2, 5, 8, 11, 14}},
		{[]string{"a", "b"}, "z", nil},
	} {
		if got := assigned(tc.ids, tc.self, 16); !slices.Equal(got, tc.want) {
			t.Errorf("assigned(%v, %q) = %v, want %v", tc.ids, tc.self, got, tc.want)
		}
	}
	// Every partition has exactly one holder, however many members.
	for n := 1; n <= 20; n++ {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = string(rune('a' + i))
		}
		seen := make([]int, 16)
		for _, id := range ids {
			for _, p := range assigned(ids, id, 16) {
				seen[p]++
			}
		}
		for p, c := range seen {
			if c != 1 {
				t.Errorf("%d members: partition %d held %d times", n, p, c)
			}
		}
	}
}

// heldBy waits until each worker holds want[i] partitions.
func heldBy(t *testing.T, ws []*Worker, want ...int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := make([]int, len(ws))
		for i, w := range ws {
			got[i] = int(promtest.ToFloat64(w.m.partitions))
		}
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("partitions held: %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Two worker processes share the partitions: each address is enriched by
// one of them, so no state write conflicts, and the state is what one
// worker alone makes. When one stops, the other takes every partition at
// once; a member that dies without leaving holds its share until its key
// expires, then the share passes to the living.
func TestWorker_PartitionsShared(t *testing.T) {
	const memberTTL = 3 * time.Second
	const n = 4000
	g := newGenerator(t, 400, 30)

	ref := newEnv(t, time.Second, 5)
	g.publish(t.Context(), t, ingest.NewPublisher(ref.nats.JS, 512), 0, n)
	ref.startWorker(t, ref.cfg.Enrich)
	ref.waitIdle(t)
	want := dump(t, NewState(ref.nats.JS, "ipstate"))

	e := newEnv(t, time.Second, 5)
	var ws []*Worker
	var stops []func()
	for range 2 {
		stops = append(stops, e.startWorkerWith(t, e.cfg.Enrich, func(w *Worker) {
			w.m = newMetrics(prometheus.NewRegistry())
			w.memberTTL = memberTTL
			ws = append(ws, w)
		}))
	}
	heldBy(t, ws, config.ObservationPartitions/2, config.ObservationPartitions/2)
	g.publish(t.Context(), t, ingest.NewPublisher(e.nats.JS, 512), 0, n)
	e.waitIdle(t)
	sameState(t, dump(t, NewState(e.nats.JS, "ipstate")), want)
	for i, w := range ws {
		if c := promtest.ToFloat64(w.m.retries.WithLabelValues("conflict")); c != 0 {
			t.Errorf("worker %d: %v conflicting state writes; the other worker wrote its addresses", i, c)
		}
		if s := promtest.ToFloat64(w.m.processed.WithLabelValues(ingest.TypeService)); s < n/5 {
			t.Errorf("worker %d enriched %v services of about %d: the partitions are not shared", i, s, n*55/200)
		}
	}

	// A stopped worker leaves: the other holds everything at once.
	stops[1]()
	start := time.Now()
	heldBy(t, ws[:1], config.ObservationPartitions)
	if d := time.Since(start); d > memberTTL/2 {
		t.Errorf("took %s to take over a worker that left", d)
	}

	// A member that died without leaving (a key written as a worker does,
	// never renewed) takes half the partitions until its key expires.
	ghost := memberValue{Expires: time.Now().Add(memberTTL).UnixMilli(), Host: "gone"}
	v, _ := json.Marshal(ghost)
	if _, err := e.nats.JS.Publish(t.Context(), "$KV."+MembersKV+"."+memberPrefix+"0000ghost", v); err != nil {
		t.Fatal(err)
	}
	heldBy(t, ws[:1], config.ObservationPartitions/2)
	start = time.Now()
	heldBy(t, ws[:1], config.ObservationPartitions)
	t.Logf("a dead member's partitions taken back after %s", time.Since(start))
}

// Two workers started together, with observations already waiting, hold
// no partition at the same time: no conflicting write, and no message
// delivered to a loop that had let its partition go (which would wait out
// the consumer's ack wait and count as redelivered).
func TestWorker_StartedTogether(t *testing.T) {
	const n = 4000
	g := newGenerator(t, 400, 30)
	// An ack wait of 5 s: a message held by a loop that let its partition
	// go is still redelivered within the test (and counted below), while
	// a batch slowed by the whole suite's load is not taken for one (1 s
	// was: 161 of 4,000 redelivered under a full parallel run).
	e := newEnv(t, 5*time.Second, 5)
	g.publish(t.Context(), t, ingest.NewPublisher(e.nats.JS, 512), 0, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// One right after the other, as a service manager starts them; each
	// one's log says which partitions it took.
	cat := sampleCatalog(t)
	var ws []*Worker
	var logs [2]testutil.LockedBuffer
	errs := make(chan error, 2)
	for i := range 2 {
		log := slog.New(slog.NewTextHandler(&logs[i], nil))
		w, err := NewWorker(e.nats.JS, e.cfg.Enrich, nil, cat, log, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.m = newMetrics(prometheus.NewRegistry())
		// Longer than production's settle: under a heavy load the second
		// process's first announcement can come more than 300 ms after
		// the first's (the whole suite under load failed so).
		w.settle = 2 * time.Second
		ws = append(ws, w)
		go func() { errs <- w.Run(ctx) }()
	}
	e.waitIdle(t)
	cancel()
	for range ws {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	every := make([]int, config.ObservationPartitions)
	for p := range every {
		every[p] = p
	}
	for i := range logs {
		if held := logs[i].String(); strings.Contains(held, fmt.Sprintf("held=%q", fmt.Sprint(every))) {
			t.Errorf("worker %d held every partition at some point:\n%s", i, held)
		}
	}
	stored := 0.0
	for i, w := range ws {
		if c := promtest.ToFloat64(w.m.retries.WithLabelValues("conflict")); c != 0 {
			t.Errorf("worker %d: %v conflicting state writes: both held a partition", i, c)
		}
		for _, typ := range []string{ingest.TypeService, ingest.TypeSignal, ingest.TypeRange, ingest.TypeFlow} {
			stored += promtest.ToFloat64(w.m.processed.WithLabelValues(typ))
		}
	}
	if stored != n {
		t.Errorf("%v observations stored, want %d", stored, n)
	}
	for _, name := range ConsumerNames() {
		cons, err := e.nats.JS.Consumer(t.Context(), Stream, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := cons.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if info.NumRedelivered != 0 {
			t.Errorf("consumer %s: %d messages redelivered", name, info.NumRedelivered)
		}
	}
}

// A worker given an enrich configuration with its loop count, batch size
// and failure limit left at zero runs with the configuration's defaults,
// not with values of its own.
func TestNewWorker_ZeroSettingsTakeTheDefaults(t *testing.T) {
	w, err := NewWorker(nil, config.Enrich{Bucket: "ipstate"}, nil, nil, testutil.Logger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	def := config.Default().Enrich
	if w.cfg.Workers != def.Workers || w.cfg.BatchSize != def.BatchSize || w.cfg.MaxFailures != def.MaxFailures {
		t.Fatalf("loops %d, batch %d, failures %d; want the defaults %d, %d, %d",
			w.cfg.Workers, w.cfg.BatchSize, w.cfg.MaxFailures, def.Workers, def.BatchSize, def.MaxFailures)
	}
}
