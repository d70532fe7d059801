package enrich

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/netintel/netintel/ingest"
	tu "github.com/netintel/netintel/internal/testutil"
)

const killN = 6000

// run publishes the generated observations and enriches them; kill stops
// the first worker part-way and starts two fresh ones.
func runPipeline(t *testing.T, kill bool) (map[string]string, *testEnv) {
	t.Helper()
	e := newEnv(t, time.Second, 5)
	ctx := t.Context()
	g := newGenerator(t, 500, 40)
	pub := ingest.NewPublisher(e.nats.JS, 512)
	cfg := e.cfg.Enrich
	cfg.BatchSize, cfg.Workers = 64, 2
	if !kill {
		if n := g.publish(ctx, t, pub, 0, killN); n != killN {
			t.Fatalf("stored %d of %d", n, killN)
		}
		e.startWorker(t, cfg)
		e.waitIdle(t)
		return dump(t, NewState(e.nats.JS, "ipstate")), e
	}
	// The worker is killed in the middle of the run, with batches in
	// hand: after it has stored a few, every loop stops before writing
	// its next batch, and the worker is stopped there. What it fetched
	// and did not ack comes back after the ack wait.
	stored := g.publish(ctx, t, pub, 0, killN/2)
	var batches atomic.Int64
	held := make(chan struct{}, 1)
	stop := e.startWorkerWith(t, cfg, func(w *Worker) {
		w.beforeStore = func(ctx context.Context) {
			if batches.Add(1) > 8 {
				select {
				case held <- struct{}{}:
				default:
				}
				<-ctx.Done()
			}
		}
	})
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("worker made no progress")
	}
	// The batches let through are stored meanwhile.
	cons := enrichConsumers(t, e.nats.JS)
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, delivered, pending := consumerTotals(t, cons)
		if delivered > uint64(pending) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing acknowledged: %d delivered, %d pending", delivered, pending)
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if _, delivered, pending := consumerTotals(t, cons); pending == 0 {
		t.Fatalf("killed with %d delivered and none pending: not in the middle of the run", delivered)
	}
	stored += g.publish(ctx, t, pub, killN/2, killN)
	if stored != killN {
		t.Fatalf("stored %d of %d", stored, killN)
	}
	e.startWorker(t, cfg)
	e.startWorker(t, cfg)
	e.waitIdle(t)
	// The killed worker left fetched, unacknowledged messages behind: they
	// were delivered again, and the final state must not show it.
	_, delivered, _ := consumerTotals(t, cons)
	if delivered <= uint64(killN) {
		t.Errorf("delivered %d for %d observations: the kill interrupted nothing", delivered, killN)
	}
	t.Logf("delivered %d for %d observations", delivered, killN)
	return dump(t, NewState(e.nats.JS, "ipstate")), e
}

func TestWorker_KillAndRestart(t *testing.T) {
	want, _ := runPipeline(t, false)
	got, e := runPipeline(t, true)
	if len(want) < 400 {
		t.Fatalf("reference run stored only %d records", len(want))
	}
	sameState(t, got, want)
	// Nothing was dead-lettered and the stream holds each observation once.
	ctx := t.Context()
	for stream, want := range map[string]uint64{"DEADLETTER": 0, "OBSERVATIONS": killN} {
		s, err := e.nats.JS.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs != want {
			t.Errorf("%s holds %d messages, want %d", stream, info.State.Msgs, want)
		}
	}
}

func TestWorker_DeadLetter(t *testing.T) {
	e := newEnv(t, time.Second, 3)
	ctx := t.Context()
	reg := prometheus.NewRegistry()
	w, err := NewWorker(e.nats.JS, e.cfg.Enrich, nil, sampleCatalog(t), tu.Logger(t), reg)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	t.Cleanup(func() { cancel(); <-done })

	// A state record that cannot be decoded makes every write to it fail.
	kv, err := e.nats.JS.KeyValue(ctx, "ipstate")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "h.192.0.2.99", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	publish := func(subject string, data []byte) {
		t.Helper()
		if _, err := e.nats.JS.Publish(ctx, subject, data); err != nil {
			t.Fatal(err)
		}
	}
	publish("obs.signal.test", []byte(`{"v":1,"type":"signal","ip":"192.0.2`))
	publish("obs.signal.test", []byte(`{"v":1,"type":"signal","ip":"192.0.2.99","source":"t","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"vpn_exit"}}`))
	publish("obs.signal.test", []byte(`{"v":1,"type":"signal","ip":"192.0.2.98","source":"t","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"vpn_exit"}}`))

	dlq, err := e.nats.JS.CreateOrUpdateConsumer(ctx, "DEADLETTER", jetstream.ConsumerConfig{Durable: "test", AckPolicy: jetstream.AckNonePolicy})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]nats.Header{}
	for deadline := time.Now().Add(30 * time.Second); len(got) < 2 && time.Now().Before(deadline); {
		b, err := dlq.Fetch(2, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			got[m.Headers().Get(SequenceHeader)] = m.Headers()
			if m.Subject() != DeadLetterSubject {
				t.Errorf("subject %s", m.Subject())
			}
		}
	}
	if len(got) != 2 {
		t.Fatalf("dead letters: %v", got)
	}
	if h := got["1"]; h == nil || !strings.Contains(h.Get(ErrorHeader), "decode observation") || h.Get(DeliveriesHeader) != "1" || h.Get(SubjectHeader) != "obs.signal.test" {
		t.Errorf("malformed message dead letter headers = %v", h)
	}
	if h := got["2"]; h == nil || !strings.Contains(h.Get(ErrorHeader), "corrupt state") || h.Get(DeliveriesHeader) != "3" {
		t.Errorf("failing message dead letter headers = %v", h)
	}
	// The worker carried on: the third observation is stored.
	e.waitIdle(t)
	if r, ok, err := NewState(e.nats.JS, "ipstate").Get(ctx, "192.0.2.98"); err != nil || !ok || r.Classifications[0] != "vpn" {
		t.Errorf("192.0.2.98 = %+v %v %v", r, ok, err)
	}
	if v := testutil.ToFloat64(w.m.dead.WithLabelValues("malformed")); v != 1 {
		t.Errorf("malformed counter = %v", v)
	}
	if v := testutil.ToFloat64(w.m.dead.WithLabelValues("failed")); v != 1 {
		t.Errorf("failed counter = %v", v)
	}
	if n, err := testutil.GatherAndCount(reg, "netintel_enrich_deadletter_total"); err != nil || n != 3 {
		t.Errorf("registered dead-letter series = %d %v", n, err)
	}
}

// While the state bucket takes writes without acknowledging them (as
// during a leader election, when writes go unanswered), the workers keep
// writing again, keep their observations from redelivery, and send none
// to the dead-letter subject, though the outage outlasts enrich.max_failures
// deliveries; once it answers again, the state is exactly an
// undisturbed run's.
func TestWorker_StateBucketUnavailable(t *testing.T) {
	want, _ := runPipeline(t, false)
	e := newEnv(t, time.Second, 5)
	ctx := t.Context()
	setNoAck := noAckSwitch(t, e.nats.JS, "KV_ipstate")
	setNoAck(true)
	reg := prometheus.NewRegistry()
	cfg := e.cfg.Enrich
	cfg.BatchSize, cfg.Workers = 64, 2
	w, err := NewWorker(e.nats.JS, cfg, nil, sampleCatalog(t), tu.Logger(t), reg)
	if err != nil {
		t.Fatal(err)
	}
	w.ackWait = 200 * time.Millisecond
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { cancel(); <-done }()
	g := newGenerator(t, 500, 40)
	if n := g.publish(ctx, t, ingest.NewPublisher(e.nats.JS, 512), 0, killN); n != killN {
		t.Fatalf("stored %d of %d", n, killN)
	}
	// Five deliveries with the ack wait of 1 s and the retry pauses would
	// be over well within 4 s.
	time.Sleep(4 * time.Second)
	setNoAck(false)
	e.waitIdle(t)
	// What was dead-lettered, and why, is reported before the state is
	// compared: a missing record is most often a dead-lettered one.
	for _, reason := range []string{"malformed", "failed", "unsettled"} {
		if n := testutil.ToFloat64(w.m.dead.WithLabelValues(reason)); n != 0 {
			t.Errorf("%v observations dead-lettered as %s", n, reason)
		}
	}
	got := dump(t, NewState(e.nats.JS, "ipstate"))
	explainMissing(t, e, got, want)
	sameState(t, got, want)
	if n := testutil.ToFloat64(w.m.retries.WithLabelValues("unavailable")); n == 0 {
		t.Error("no write was retried as unavailable: the outage was not met")
	}
	dl, err := e.nats.JS.Stream(ctx, "DEADLETTER")
	if err != nil {
		t.Fatal(err)
	}
	if msgs := dl.CachedInfo().State.Msgs; msgs != 0 {
		t.Errorf("DEADLETTER holds %d messages", msgs)
	}
}

// A worker slower than the ack wait gets every observation delivered again
// and again while it still holds the first copy. The consumers put no
// limit on deliveries (the server drops a message without a trace once
// max_deliver is reached, and the copy held is then lost if the worker
// stops), so nothing is lost: once the consumers are idle the state is an
// undisturbed run's. With max_deliver 5 here, 48 and 65 of 540 records
// differed in two runs.
func TestWorker_SlowerThanAckWaitLosesNothing(t *testing.T) {
	want, _ := runPipeline(t, false)
	// 50 ms ack wait, 200 ms per batch; max_failures high enough that no
	// copy is dead-lettered as unsettled (4 x 50 deliveries).
	e := newEnv(t, 50*time.Millisecond, 50)
	ctx := t.Context()
	cfg := e.cfg.Enrich
	cfg.BatchSize, cfg.Workers = 64, 2
	var w *Worker
	stop := e.startWorkerWith(t, cfg, func(x *Worker) {
		w = x
		w.beforeStore = func(context.Context) { time.Sleep(200 * time.Millisecond) }
	})
	g := newGenerator(t, 500, 40)
	if n := g.publish(ctx, t, ingest.NewPublisher(e.nats.JS, 512), 0, killN); n != killN {
		t.Fatalf("stored %d of %d", n, killN)
	}
	e.waitIdle(t)
	// Stopped as soon as the consumers are idle: what it still held and
	// had not stored would be lost here.
	stop()
	_, delivered, _ := consumerTotals(t, enrichConsumers(t, e.nats.JS))
	if delivered < 2*killN {
		t.Errorf("delivered %d for %d observations: the worker was not slower than the ack wait", delivered, killN)
	}
	t.Logf("delivered %d for %d observations", delivered, killN)
	sameState(t, dump(t, NewState(e.nats.JS, "ipstate")), want)
	for _, reason := range []string{"malformed", "failed", "unsettled"} {
		if n := testutil.ToFloat64(w.m.dead.WithLabelValues(reason)); n != 0 {
			t.Errorf("%v observations dead-lettered as %s", n, reason)
		}
	}
}

// A message delivered more than 4 x max_failures times without reaching
// an outcome (as one that kills every worker it reaches would) is
// dead-lettered on arrival as unsettled, with its deliveries, and not
// applied. Here a reader that never acknowledges takes it four times.
func TestWorker_DeadLettersUnsettled(t *testing.T) {
	// An ack wait of 1 s: short enough for four deliveries within the
	// test, long enough that the worker's dead-lettering is settled before
	// the server delivers again (at 100 ms, a loaded machine saw the 6th
	// and 7th delivery dead-lettered too).
	e := newEnv(t, time.Second, 1)
	ctx := t.Context()
	const ip = "192.0.2.77"
	o := ingest.Observation{Type: ingest.TypeSignal, IP: ip, Source: "t", ObservedAt: "2026-11-20T10:00:00Z", Signal: &ingest.Signal{Kind: "vpn_exit"}}
	pub := ingest.NewPublisher(e.nats.JS, 1)
	if err := pub.Publish(ctx, &o); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	taken := 0
	for deadline := time.Now().Add(30 * time.Second); taken < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("the observation was delivered %d times in 30 s, want 4", taken)
		}
		for _, c := range enrichConsumers(t, e.nats.JS) {
			b, err := c.Fetch(1, jetstream.FetchMaxWait(150*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			for range b.Messages() {
				taken++
			}
		}
	}
	var w *Worker
	e.startWorkerWith(t, e.cfg.Enrich, func(x *Worker) { w = x })
	dlq, err := e.nats.JS.CreateOrUpdateConsumer(ctx, "DEADLETTER", jetstream.ConsumerConfig{Durable: "test", AckPolicy: jetstream.AckNonePolicy})
	if err != nil {
		t.Fatal(err)
	}
	m, err := dlq.Next(jetstream.FetchMaxWait(30 * time.Second))
	if err != nil {
		t.Fatalf("no dead letter: %v", err)
	}
	if h := m.Headers(); h.Get(DeliveriesHeader) != "5" || !strings.Contains(h.Get(ErrorHeader), "delivered 5 times without being stored or failing") {
		t.Errorf("dead letter headers = %v", h)
	}
	e.waitIdle(t)
	if v := testutil.ToFloat64(w.m.dead.WithLabelValues("unsettled")); v != 1 {
		t.Errorf("unsettled counter = %v", v)
	}
	if _, ok, err := NewState(e.nats.JS, "ipstate").Get(ctx, ip); err != nil || ok {
		t.Errorf("%s stored (%v, %v): a dead-lettered observation was applied", ip, ok, err)
	}
}

// enrichConsumers returns the enrich consumer and its partitions.
func enrichConsumers(t testing.TB, js jetstream.JetStream) []jetstream.Consumer {
	t.Helper()
	var out []jetstream.Consumer
	for _, name := range ConsumerNames() {
		c, err := js.Consumer(t.Context(), Stream, name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// consumerTotals adds up, over cons, the messages acknowledged (the ack
// floors), delivered, and delivered awaiting acknowledgement.
func consumerTotals(t testing.TB, cons []jetstream.Consumer) (acked, delivered uint64, pending int) {
	t.Helper()
	for _, c := range cons {
		info, err := c.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		acked += info.AckFloor.Consumer
		delivered += info.Delivered.Consumer
		pending += info.NumAckPending
	}
	return acked, delivered, pending
}

// explainMissing logs, when got lacks records of want, what tells a lost
// observation from a short walk: whether each missing record can be read
// by its key, what the enrich consumers still hold, and what the
// dead-letter stream received (with each letter's error).
func explainMissing(t testing.TB, e *testEnv, got, want map[string]string) {
	t.Helper()
	var missing []string
	for k := range want {
		if _, ok := got[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return
	}
	slices.Sort(missing)
	st := NewState(e.nats.JS, "ipstate")
	for _, k := range missing[:min(len(missing), 5)] {
		r, ok, err := st.Get(t.Context(), k)
		t.Logf("missing %s: read by key: found %v, err %v, sources %v", k, ok, err, r.Sources)
	}
	acked, delivered, pending := consumerTotals(t, enrichConsumers(t, e.nats.JS))
	t.Logf("%d records missing; enrich consumers: acked %d, delivered %d, awaiting acknowledgement %d", len(missing), acked, delivered, pending)
	dl, err := e.nats.JS.Stream(t.Context(), "DEADLETTER")
	if err != nil {
		t.Logf("dead-letter stream: %v", err)
		return
	}
	info, err := dl.Info(t.Context())
	if err != nil {
		t.Logf("dead-letter stream: %v", err)
		return
	}
	t.Logf("dead-letter stream holds %d messages", info.State.Msgs)
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq < info.State.FirstSeq+5; seq++ {
		if m, err := dl.GetMsg(t.Context(), seq); err == nil {
			t.Logf("dead letter %d: %s (deliveries %s)", seq, m.Header.Get(ErrorHeader), m.Header.Get(DeliveriesHeader))
		}
	}
}

// A key whose write keeps losing races (another writer answers between
// each read and write of it) is written again beside the loop until it
// wins: its observation is stored, and never dead-lettered for the
// contention, though enrich.max_failures is 1 (any failure would send
// it there on its first delivery).
func TestWorker_KeptConflictingIsWrittenAgain(t *testing.T) {
	e := newEnv(t, 5*time.Second, 1)
	ctx := t.Context()
	const ip = "192.0.2.78"
	key := "h." + ip
	kv, err := e.nats.JS.KeyValue(ctx, "ipstate")
	if err != nil {
		t.Fatal(err)
	}
	var races atomic.Int32
	var w *Worker
	e.startWorkerWith(t, e.cfg.Enrich, func(x *Worker) {
		w = x
		x.afterLoad = func(ctx context.Context, keys []string) {
			if !slices.Contains(keys, key) || races.Load() >= 2*maxAttempts {
				return
			}
			// Another writer stores the record again between this
			// write's read and its write: the write conflicts.
			if cur, err := kv.Get(ctx, key); err == nil {
				if _, err := kv.Put(ctx, key, cur.Value()); err == nil {
					races.Add(1)
				}
			}
		}
	})
	pub := ingest.NewPublisher(e.nats.JS, 1)
	for i, kind := range []string{"vpn_exit", "open_proxy"} {
		o := ingest.Observation{Type: ingest.TypeSignal, IP: ip, Source: "t", ObservedAt: fmt.Sprintf("2026-11-20T10:0%d:00Z", i), Signal: &ingest.Signal{Kind: kind}}
		if err := pub.Publish(ctx, &o); err != nil {
			t.Fatal(err)
		}
		if err := pub.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		e.waitIdle(t)
	}
	if n := races.Load(); n < 2*maxAttempts {
		t.Fatalf("the other writer won %d races, want %d: the loop gave up early or never met it", n, 2*maxAttempts)
	}
	r, ok, err := NewState(e.nats.JS, "ipstate").Get(ctx, ip)
	if err != nil || !ok || !slices.Contains(r.Classifications, "proxy") {
		t.Errorf("%s = %+v %v %v: the contended observation was not stored", ip, r, ok, err)
	}
	for _, reason := range []string{"failed", "unsettled"} {
		if n := testutil.ToFloat64(w.m.dead.WithLabelValues(reason)); n != 0 {
			t.Errorf("%v observations dead-lettered as %s", n, reason)
		}
	}
	if n := testutil.ToFloat64(w.m.retries.WithLabelValues("conflict")); n < 2*maxAttempts {
		t.Errorf("%v conflicts retried, want at least %d", n, 2*maxAttempts)
	}
}
