package probe

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/testutil"
)

// What a stream leader election looks like to a client: a write goes
// unanswered ("no response from stream") whether or not the new leader
// stored it. These wrappers script that on a single server.

// lossyJS answers the first publish on every subject with "no response
// from stream": every other one was stored (only its acknowledgement is
// lost), the others never reached the stream. With never set, no publish is
// answered or stored at all. Publishing on the same subject again goes
// through.
type lossyJS struct {
	jetstream.JetStream
	never bool

	mu    sync.Mutex
	sends map[string]int
	// firstLost is closed once a publish went unanswered.
	firstLost chan struct{}
}

func newLossyJS(js jetstream.JetStream) *lossyJS {
	return &lossyJS{JetStream: js, sends: map[string]int{}, firstLost: make(chan struct{})}
}

func (j *lossyJS) PublishAsync(subject string, data []byte, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	return j.PublishMsgAsync(&nats.Msg{Subject: subject, Data: data}, opts...)
}

func (j *lossyJS) PublishMsgAsync(m *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	j.mu.Lock()
	j.sends[m.Subject]++
	first, nth := j.sends[m.Subject] == 1, len(j.sends)
	if first && nth == 1 {
		close(j.firstLost)
	}
	j.mu.Unlock()
	if !first && !j.never {
		return j.JetStream.PublishMsgAsync(m, opts...)
	}
	if nth%2 == 0 && !j.never {
		if _, err := j.JetStream.PublishMsg(context.Background(), m, opts...); err != nil {
			return nil, err
		}
	}
	f := noAck{msg: m, err: make(chan error, 1)}
	f.err <- jetstream.ErrNoStreamResponse
	return f, nil
}

func (j *lossyJS) resent() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, c := range j.sends {
		n += c - 1
	}
	return n
}

// noAck is an async publish that the stream never acknowledged.
type noAck struct {
	msg *nats.Msg
	err chan error
}

func (f noAck) Ok() <-chan *jetstream.PubAck { return nil }
func (f noAck) Err() <-chan error            { return f.err }
func (f noAck) Msg() *nats.Msg               { return f.msg }

// lossyKV scripts KV writes (Put and Update) per key: the next lose[key]
// writes are stored but answered with "no response from stream", the next
// drop[key] after them are answered so without being stored.
type lossyKV struct {
	jetstream.KeyValue

	mu         sync.Mutex
	lose, drop map[string]int
	lost       int // writes whose acknowledgement was lost
	acked      map[string]int
}

func newLossyKV(kv jetstream.KeyValue) *lossyKV {
	return &lossyKV{KeyValue: kv, lose: map[string]int{}, drop: map[string]int{}, acked: map[string]int{}}
}

func (k *lossyKV) script(key string, lose, drop int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lose[key], k.drop[key] = lose, drop
}

func (k *lossyKV) write(key string, do func() (uint64, error)) (uint64, error) {
	k.mu.Lock()
	lose, drop := k.lose[key] > 0, k.lose[key] == 0 && k.drop[key] > 0
	switch {
	case lose:
		k.lose[key]--
		k.lost++
	case drop:
		k.drop[key]--
	}
	k.mu.Unlock()
	if drop {
		return 0, jetstream.ErrNoStreamResponse
	}
	rev, err := do()
	if lose && err == nil {
		return 0, jetstream.ErrNoStreamResponse
	}
	if err == nil {
		k.mu.Lock()
		k.acked[key]++
		k.mu.Unlock()
	}
	return rev, err
}

func (k *lossyKV) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	return k.write(key, func() (uint64, error) { return k.KeyValue.Put(ctx, key, value) })
}

func (k *lossyKV) Update(ctx context.Context, key string, value []byte, last uint64) (uint64, error) {
	return k.write(key, func() (uint64, error) { return k.KeyValue.Update(ctx, key, value, last) })
}

func (k *lossyKV) counts(key string) (lost, acked int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lost, k.acked[key]
}

// storedLease reads the lease from the stream leader.
func storedLease(t *testing.T, js jetstream.JetStream, key string) (leaseValue, uint64) {
	t.Helper()
	rec, err := bus.LeaderGet(t.Context(), js, LocksKV, key)
	if err != nil {
		t.Fatalf("read lease: %v", err)
	}
	var lv leaseValue
	if err := json.Unmarshal(rec.Value, &lv); err != nil {
		t.Fatal(err)
	}
	return lv, rec.Revision
}

// A renewal whose acknowledgement is lost was stored all the same: the
// lease is still ours (at the newer revision), not lost. One that was not
// stored is sent again. Only another owner's record loses it.
func TestLease_RenewSettlesLostAcknowledgement(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	real, err := n.JS.KeyValue(t.Context(), LocksKV)
	if err != nil {
		t.Fatal(err)
	}
	kv := newLossyKV(real)
	now := time.Now()
	clock := func() time.Time { return now }
	a := &lease{kv: kv, js: n.JS, key: "k", owner: "a", ttl: time.Minute, now: clock}
	b := &lease{kv: real, js: n.JS, key: "k", owner: "b", ttl: time.Minute, now: clock}
	if err := a.acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		lose, drop int
	}{
		{"stored, acknowledgement lost", 1, 0},
		{"stored twice, both acknowledgements lost", 2, 0},
		{"not stored, no response", 0, 3},
		{"lost, then not stored", 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv.script("k", tt.lose, tt.drop)
			before := a.rev
			if err := a.renew(t.Context(), time.Minute); err != nil {
				t.Fatalf("renew: %v", err)
			}
			lv, rev := storedLease(t, n.JS, "k")
			if lv.Owner != "a" || rev != a.rev || rev <= before {
				t.Fatalf("stored owner %q at revision %d; lease at %d (was %d)", lv.Owner, rev, a.rev, before)
			}
			// The next renewal works from the adopted revision.
			if err := a.renew(t.Context(), time.Minute); err != nil {
				t.Fatalf("renew after: %v", err)
			}
			if err := b.acquire(t.Context()); !errors.Is(err, ErrBusy) {
				t.Fatalf("other owner: %v, want ErrBusy", err)
			}
		})
	}

	// Unanswered for the whole budget: an error, but not "lost", and the
	// stored lease is untouched.
	kv.script("k", 0, 1<<30)
	if err := a.renew(t.Context(), 200*time.Millisecond); err == nil || errors.Is(err, errLeaseLost) {
		t.Fatalf("renewal never answered: %v, want an error other than errLeaseLost", err)
	}
	kv.script("k", 0, 0)
	if lv, _ := storedLease(t, n.JS, "k"); lv.Owner != "a" {
		t.Fatalf("owner %q after unanswered renewals", lv.Owner)
	}

	// Taken over after expiry while a's acknowledgement is lost: lost.
	now = now.Add(2 * time.Minute)
	if err := b.acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	kv.script("k", 0, 1)
	if err := a.renew(t.Context(), time.Minute); !errors.Is(err, errLeaseLost) {
		t.Fatalf("renewing a lease taken over: %v, want errLeaseLost", err)
	}
}

// Work items whose publish goes unanswered are sent again with the same
// message id: the queue succeeds and the stream holds each item once.
func TestService_QueueResendsUnacknowledgedWork(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	w := newWorld(t)
	cfg := w.config()
	s := newTestService(t, n, folderStore(t), cfg)
	js := newLossyJS(n.JS)
	s.js = js
	run := Run{ID: "r1", State: StatusRunning, TLDs: []string{"ta", "tb", "tc", "td", "te", "tf", "tg"}}
	queued, err := s.queue(t.Context(), run, plan{}, run.TLDs, "", false)
	if err != nil {
		t.Fatalf("queue: %v", err)
	}
	if queued != len(run.TLDs) || js.resent() != len(run.TLDs) {
		t.Fatalf("queued %d, resent %d; want %d each", queued, js.resent(), len(run.TLDs))
	}
	st, err := n.JS.Stream(t.Context(), Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context(), jetstream.WithSubjectFilter(SubjectPrefix+">"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tld := range run.TLDs {
		if c := info.State.Subjects[SubjectPrefix+run.ID+"."+tld]; c != 1 {
			t.Errorf("%s: %d work items, want 1", tld, c)
		}
	}
	if info.State.Msgs != uint64(len(run.TLDs)) {
		t.Errorf("stream holds %d work items, want %d", info.State.Msgs, len(run.TLDs))
	}
}

// A run whose coordinator sees acknowledgements lost on every kind of
// write (work items, its lease renewals, the run record and the published
// record) still completes, with every TLD checked once.
func TestService_RunSurvivesLostAcknowledgements(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	store := folderStore(t)
	w := newWorld(t)
	w.rdapHosts = map[string]string{"rdap.good.test": "good"}
	cfg := w.config()
	cfg.Stealth.Enabled = false
	cfg.StallTimeout = time.Hour // no re-queue covers a lost item here
	var tlds []string
	boot := map[string][]string{}
	for i := range 6 {
		tld := "l" + string(rune('a'+i))
		tlds = append(tlds, tld)
		boot[tld] = []string{"http://rdap.good.test/"}
	}
	writeInputs(t, &cfg, tlds, boot)
	coord := newTestService(t, n, store, cfg)
	js := newLossyJS(n.JS)
	coord.js = js
	locks := newLossyKV(coord.locks)
	locks.script(LockKey, 1, 2)
	coord.locks = locks
	state := newLossyKV(coord.kv)
	state.script(KeyRun, 1, 1)
	state.script(KeyPublished, 1, 1)
	coord.kv = state

	errc := make(chan error, 1)
	go func() { errc <- coord.coordinate(t.Context(), true) }()
	// Hold the work back until the lease was renewed through the lost
	// acknowledgement and twice after it.
	giveUp := time.After(time.Minute)
	for done := false; !done; {
		select {
		case err := <-errc:
			t.Fatalf("coordinator stopped before any work was done: %v", err)
		case <-giveUp:
			t.Fatal("the lease was not renewed through the lost acknowledgement")
		case <-time.After(20 * time.Millisecond):
		}
		lost, acked := locks.counts(LockKey)
		done = lost == 1 && acked >= 2
	}
	worker := newTestService(t, n, store, cfg)
	startWorker(t, worker)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not end")
	}
	p, err := worker.Progress(t.Context())
	if err != nil || p.Status != StatusCompleted || p.ProcessedTLDs != len(tlds) {
		t.Fatalf("progress %+v %v", p, err)
	}
	var res Results
	if err := json.Unmarshal(getObject(t, store, "tld/latest/results.json"), &res); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range res.Results {
		count[r.TLD]++
	}
	for _, tld := range tlds {
		if count[tld] != 1 || w.hit("rdap.good.test", "/domain/nic."+tld) != 1 {
			t.Errorf("%s: %d results, %d checks; want 1 and 1", tld, count[tld], w.hit("rdap.good.test", "/domain/nic."+tld))
		}
	}
	if js.resent() != len(tlds) {
		t.Errorf("%d work items resent, want %d", js.resent(), len(tlds))
	}
}

// A coordinator stopped while it queues (its lease lost, its process
// shutting down) leaves the run running for another to resume; it does not
// record it as failed.
func TestService_StoppedCoordinatorLeavesRunToResume(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	w := newWorld(t)
	cfg := w.config()
	cfg.Stealth.Enabled = false
	writeInputs(t, &cfg, []string{"sa", "sb"}, nil)
	s := newTestService(t, n, folderStore(t), cfg)
	js := newLossyJS(n.JS)
	js.never = true
	s.js = js
	ctx, stop := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- s.coordinate(ctx, true) }()
	select {
	case <-js.firstLost:
	case err := <-errc:
		t.Fatalf("coordinator ended before queueing: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("no work item was published")
	}
	stop()
	stopped := <-errc
	if stopped == nil {
		t.Fatal("stopped coordinator returned nil")
	}
	var run Run
	if err := s.getJSON(t.Context(), KeyRun, &run); err != nil || run.State != StatusRunning {
		t.Errorf("run record %+v %v, want running", run, err)
	}
	if p, err := s.Progress(t.Context()); err != nil || p.Status != StatusRunning {
		t.Errorf("progress %+v %v, want running", p, err)
	}
	if !strings.Contains(stopped.Error(), "interrupted") {
		t.Errorf("stopped coordinator: %v, want interrupted", stopped)
	}
}

// LiveProgress reads the latest record with its revision, which grows
// with every write.
func TestService_LiveProgress(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	w := newWorld(t)
	s := newTestService(t, n, folderStore(t), w.config())
	p, rev, err := s.LiveProgress(t.Context())
	if err != nil || p.Status != StatusIdle || rev != 0 {
		t.Fatalf("before any run: %+v rev %d %v", p, rev, err)
	}
	if _, ok, err := s.LivePublished(t.Context()); ok || err != nil {
		t.Fatalf("published before any run: %v %v", ok, err)
	}
	var last uint64
	for i := 1; i <= 3; i++ {
		s.setProgress(t.Context(), Progress{Status: StatusRunning, RunID: "r", TotalTLDs: 3, ProcessedTLDs: i})
		p, rev, err := s.LiveProgress(t.Context())
		if err != nil || p.ProcessedTLDs != i || rev <= last {
			t.Fatalf("after write %d: %+v rev %d (last %d) %v", i, p, rev, last, err)
		}
		last = rev
	}
	if err := s.putJSON(t.Context(), KeyPublished, Published{RunID: "r", ResultsAvailable: 3}); err != nil {
		t.Fatal(err)
	}
	if pub, ok, err := s.LivePublished(t.Context()); !ok || err != nil || pub.ResultsAvailable != 3 {
		t.Fatalf("published: %+v %v %v", pub, ok, err)
	}
}

// staleKV answers direct gets of one key with an older record, as a
// replica still catching up after a restart does.
type staleKV struct {
	jetstream.KeyValue
	key string
	old jetstream.KeyValueEntry
}

func (k staleKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if key == k.key {
		return k.old, nil
	}
	return k.KeyValue.Get(ctx, key)
}

// A worker whose direct get of the run record comes from a lagging replica
// (it shows the previous run, completed) does not drop the current run's
// work: it asks the stream leader, which has the run as running. A run that
// did end is still recognised.
func TestService_WorkerConfirmsEndedRunWithLeader(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	w := newWorld(t)
	s := newTestService(t, n, folderStore(t), w.config())
	ctx := t.Context()
	if err := s.putJSON(ctx, KeyRun, Run{ID: "old", State: StatusCompleted}); err != nil {
		t.Fatal(err)
	}
	old, err := s.kv.Get(ctx, KeyRun)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.putJSON(ctx, KeyRun, Run{ID: "new", State: StatusRunning}); err != nil {
		t.Fatal(err)
	}
	s.kv = staleKV{KeyValue: s.kv, key: KeyRun, old: old}
	if running, err := s.runIsRunning(ctx, "new"); err != nil || !running {
		t.Fatalf("current run read through a stale replica: running %v, %v", running, err)
	}
	if running, err := s.runIsRunning(ctx, "old"); err != nil || running {
		t.Fatalf("ended run: running %v, %v", running, err)
	}
}
