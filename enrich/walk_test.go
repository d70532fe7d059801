package enrich

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/ingest"
	tu "github.com/netintel/netintel/internal/testutil"
)

// putHosts stores a record for each of n addresses 10.1.x.y with source
// src, straight into the state bucket, and returns their keys.
func putHosts(t *testing.T, st *Store, n int, src string) []string {
	t.Helper()
	keys := make([]string, n)
	for i := range n {
		o := ingest.Observation{Type: ingest.TypeSignal, IP: "10.1." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256),
			Source: src, ObservedAt: "2026-11-20T00:00:00Z", Signal: &ingest.Signal{Kind: "tor_exit"}}
		d := newDoc(&o)
		d.apply(&o, "0123456789abcdef", nil)
		keys[i] = stateKey(&o)
		_, rev, err := st.getRaw(t.Context(), keys[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := st.put(t.Context(), keys[i], rev, d); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// walk runs a state walk of every host and returns how many times each
// key was passed to fn and the source its record named.
func walk(ctx context.Context, st *Store) (map[string]int, map[string]string, error) {
	times, src := map[string]int{}, map[string]string{}
	err := st.each(ctx, "h.>", func(key string, _ uint64, d *doc) error {
		times[key]++
		for _, s := range d.Signals {
			src[key] = s.Source
		}
		return nil
	})
	return times, src, err
}

// A state walk while workers write: a key rewritten after the walk met it
// is not passed again, and a key rewritten before the walk reached it
// (its old record gone from the stream) is still passed, once, with its
// new value. The rewrites happen inside the walk, after a third of it.
func TestStore_WalkMeetsEachKeyOnceDuringWrites(t *testing.T) {
	e := newEnv(t, 5*time.Second, 3)
	st := NewState(e.nats.JS, "ipstate")
	const n = 3 * eachBatch
	keys := putHosts(t, st, n, "before")
	met := 0
	st.afterRecord = func(string) {
		met++
		if met == n/3 {
			putHosts(t, st, n, "during") // every key, met or not
		}
	}
	times, src, err := walk(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != n {
		t.Errorf("walk passed %d keys, want %d", len(times), n)
	}
	during := 0
	for _, k := range keys {
		if times[k] != 1 {
			t.Errorf("key %s passed %d times", k, times[k])
		}
		if src[k] == "during" {
			during++
		}
	}
	// The first third were met before the rewrite, and up to a batch more
	// had reached the client already; the rest were only reachable at
	// their new records.
	if during < n-n/3-eachBatch || during == n {
		t.Errorf("%d of %d keys passed with their rewritten value, want %d to %d", during, n, n-n/3-eachBatch, n-n/3)
	}
}

// A state walk whose consumer stops delivering part-way (as one placed on
// a replica still catching up after a restart can) fails, naming where it
// stopped; it never ends short as if it had seen every record. The stall
// is real: the walk's consumer is paused on the server after a third of
// the records (and again if the ordered consumer is recreated).
func TestStore_WalkStallIsAnError(t *testing.T) {
	e := newEnv(t, 5*time.Second, 3)
	st := NewState(e.nats.JS, "ipstate")
	const n = 3 * eachBatch
	putHosts(t, st, n, "before")
	if times, _, err := walk(t.Context(), st); err != nil || len(times) != n {
		t.Fatalf("walk without a stall: %d keys, %v; want %d", len(times), err, n)
	}
	met := 0
	paused := map[string]bool{}
	st.stall = 2 * time.Second
	st.afterRecord = func(consumer string) {
		met++
		if met < n/3 || paused[consumer] {
			return
		}
		paused[consumer] = true
		if _, err := e.nats.JS.PauseConsumer(t.Context(), st.stream, consumer, time.Now().Add(time.Minute)); err != nil {
			t.Errorf("pause walk consumer: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	times, _, err := walk(ctx, st)
	if err == nil || !strings.Contains(err.Error(), "no record for 2s") {
		t.Fatalf("stalled walk after %d of %d keys: err %v, want a stall error", len(times), n, err)
	}
	if len(times) >= n {
		t.Errorf("stalled walk passed all %d keys", n)
	}
	t.Logf("stalled walk: %d of %d keys, then %v", len(times), n, err)
}

// A state walk whose consumer cannot be made again after its connection
// drops fails after the stall time too. On a reconnect nats.go recreates
// an ordered consumer inside Next, retrying without end, where Next's own
// wait does not reach. Here the walk's connection is cut after a third of
// the records, and the name the replacement consumer will take is already
// held by a consumer of another kind, so every attempt is refused.
func TestStore_WalkFailsWhenItsConsumerCannotBeRecreated(t *testing.T) {
	e := newEnv(t, 5*time.Second, 3)
	nc, js := tu.Connect(t, e.nats.URL, nats.ReconnectWait(100*time.Millisecond))
	st := NewState(js, "ipstate")
	const n = 3 * eachBatch
	putHosts(t, st, n, "before")
	st.stall = 2 * time.Second
	met := 0
	st.afterRecord = func(consumer string) {
		met++
		if met != n/3 {
			return
		}
		// An ordered consumer is named PREFIX_SERIAL, its replacement
		// PREFIX_SERIAL+1.
		i := strings.LastIndexByte(consumer, '_')
		serial, err := strconv.Atoi(consumer[i+1:])
		if err != nil {
			t.Errorf("walk consumer %q: not PREFIX_SERIAL", consumer)
			return
		}
		next := consumer[:i+1] + strconv.Itoa(serial+1)
		if _, err := e.nats.JS.CreateConsumer(t.Context(), st.stream, jetstream.ConsumerConfig{Durable: next, AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
			t.Errorf("hold the name %s: %v", next, err)
		}
		id, err := nc.GetClientID()
		if err != nil {
			t.Errorf("walk connection's id: %v", err)
			return
		}
		if err := e.nats.Server.DisconnectClientByID(id); err != nil {
			t.Errorf("cut the walk's connection: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start := time.Now()
	times, _, err := walk(ctx, st)
	if err == nil || !strings.Contains(err.Error(), "no record for 2s") {
		t.Fatalf("walk after %d of %d keys, its connection cut: err %v after %s, want a stall error", len(times), n, err, time.Since(start).Round(time.Millisecond))
	}
	if len(times) >= n {
		t.Errorf("walk passed all %d keys", n)
	}
	t.Logf("walk with its connection cut: %d of %d keys, then %v after %s", len(times), n, err, time.Since(start).Round(time.Millisecond))
}
