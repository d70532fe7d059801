package enrich

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
)

// Partitions. Ingest publishes each observation to one of
// config.ObservationPartitions partitions by its address
// (ingest.Observation.Partition), and each partition has a durable
// consumer of its own (enrich-00 ...). Every worker process announces
// itself in the members bucket and holds the partitions that the sorted
// list of live members gives it (partition p goes to member p mod n), so
// all observations of one address are enriched by one process, whose
// cache of that address's record stays current. Without that, two
// processes writing the same addresses each find the other's writes
// behind their cached revisions (a conflict, a read and a second write).
//
// The assignment needs no agreement: each process computes it from the
// members it reads. While two processes' views differ (one has just
// joined or died) a partition may be held by two of them for a moment, or
// by none; both are safe, since every state write is a compare-and-set on
// the record's revision, and a partition held by none waits in its
// consumer. A process that dies stops renewing its member key, which
// expires after the worker's memberTTL; the others then take its partitions, and what
// it had fetched without acknowledging is redelivered after the
// consumer's ack wait.
const (
	// MembersKV holds the member keys (with a per-key TTL where the
	// bucket allows one, and an expiry in the value in any case).
	MembersKV = "locks"
	// memberPrefix prefixes a member key; the process id follows.
	memberPrefix = "enrich.member."
)

// defaultMemberTTL is how long a member key lives unless renewed (the
// worker's memberTTL); it is renewed and the members are read every
// third of that.
const defaultMemberTTL = 9 * time.Second

type memberValue struct {
	Expires int64  `json:"expires_unix_ms"`
	Host    string `json:"host,omitempty"`
	PID     int    `json:"pid,omitempty"`
}

// members announces this process and reads the others.
type members struct {
	js    jetstream.JetStream
	kv    jetstream.KeyValue
	id    string
	ttl   time.Duration
	now   func() time.Time
	noTTL bool // the bucket refused a per-key TTL
}

func (m *members) subject(id string) string { return "$KV." + MembersKV + "." + memberPrefix + id }

// announce writes this process's member key with a fresh expiry.
func (m *members) announce(ctx context.Context) error {
	host, _ := os.Hostname()
	v, _ := json.Marshal(memberValue{Expires: m.now().Add(m.ttl).UnixMilli(), Host: host, PID: os.Getpid()})
	msg := &nats.Msg{Subject: m.subject(m.id), Data: v}
	if !m.noTTL {
		// Nats-TTL has a resolution of one second.
		_, err := m.js.PublishMsg(ctx, msg, jetstream.WithMsgTTL(max(m.ttl.Truncate(time.Second), time.Second)))
		var apiErr *jetstream.APIError
		if err == nil || !errors.As(err, &apiErr) {
			return err
		}
		// A bucket without per-key TTL: the expiry in the value serves.
		m.noTTL = true
	}
	_, err := m.js.PublishMsg(ctx, msg)
	return err
}

// list returns the ids of the live members, sorted; this process is
// always among them.
func (m *members) list(ctx context.Context) ([]string, error) {
	ids := []string{m.id}
	now := m.now().UnixMilli()
	var expired []string
	err := bus.DirectGetLast(ctx, m.js, "KV_"+MembersKV, []string{m.subject(">")}, func(subject string, _ uint64, op jetstream.KeyValueOp, data []byte) {
		id := strings.TrimPrefix(subject, m.subject(""))
		var v memberValue
		if op != jetstream.KeyValuePut || id == m.id || json.Unmarshal(data, &v) != nil {
			return
		}
		if v.Expires <= now {
			expired = append(expired, id)
			return
		}
		ids = append(ids, id)
	})
	if err != nil {
		return nil, fmt.Errorf("read enrich members: %w", err)
	}
	// Keys left by processes that died where the bucket has no per-key
	// TTL: removed once well past their expiry.
	for _, id := range expired {
		_ = m.kv.Delete(ctx, memberPrefix+id)
	}
	slices.Sort(ids)
	return ids, nil
}

// leave removes this process's member key, so the others take its
// partitions at once rather than after its expiry.
func (m *members) leave(ctx context.Context) {
	_ = m.kv.Purge(ctx, memberPrefix+m.id)
}

// assigned returns the partitions member self holds among ids (sorted):
// partition p goes to ids[p mod len(ids)].
func assigned(ids []string, self string, n int) []int {
	i := slices.Index(ids, self)
	if i < 0 {
		return nil
	}
	var out []int
	for p := i; p < n; p += len(ids) {
		out = append(out, p)
	}
	return out
}

// runPartitions runs cfg.Workers consumer loops on each partition this
// process holds and changes them as members come and go, until ctx ends.
// A loop whose partition passes to another process drains: it enriches
// what it has already fetched, then stops pulling.
func (w *Worker) runPartitions(ctx context.Context, name string, partitions int) error {
	kv, err := bus.OpenKV(ctx, w.js, w.log, MembersKV)
	if err != nil {
		return fmt.Errorf("enrich members: %w", err)
	}
	m := &members{js: w.js, kv: kv, id: w.id, ttl: w.memberTTL, now: time.Now}
	loops := map[int]chan struct{}{} // a held partition's release: closed to hand it back
	errs := make(chan error, partitions)
	// A partition loop's error ends every loop (they run under lctx), so
	// the wait below cannot hang on loops nothing stops.
	lctx, stopLoops := context.WithCancel(ctx)
	var running sync.WaitGroup
	defer func() {
		stopLoops()
		running.Wait() // held and draining loops alike
		leaveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		m.leave(leaveCtx)
	}()
	all := make([]int, partitions)
	for p := range all {
		all[p] = p
	}
	// A member that joins or leaves is seen at once through a watch of
	// the member keys; the tick renews this process's key and catches
	// members that expired (and everything, when the watch fails).
	var updates <-chan jetstream.KeyValueEntry
	if watch, err := kv.Watch(ctx, memberPrefix+">", jetstream.UpdatesOnly()); err != nil {
		w.log.Warn("watch enrich members", "err", err)
	} else {
		defer func() { _ = watch.Stop() }()
		updates = watch.Updates()
	}
	var mine []int
	tick := time.NewTicker(m.ttl / 3)
	defer tick.Stop()
	// Announced, this process waits memberSettle before it reads the
	// members and takes partitions: processes started together then see
	// each other before either pulls, and a process joining running ones
	// starts after they have let its partitions go. Without it, two
	// workers started at once both held every partition for a moment:
	// conflicting writes, and messages delivered to a loop after it let
	// its partition go, which wait out the consumer's ack wait.
	announce := false
	if err := w.announceAndSettle(ctx, m); err != nil {
		w.log.Warn("announce enrich member", "err", err)
		announce = true // again, with the members' first reading
	}
	for {
		want, err := w.ownPartitions(ctx, m, partitions, announce)
		switch {
		case err == nil:
		case mine == nil:
			// Nothing known yet: hold every partition rather than none.
			w.log.Warn("enrich members unknown, holding every partition", "err", err)
			want = all
		default:
			w.log.Warn("enrich members unknown, keeping the held partitions", "err", err)
			want = mine
		}
		if !slices.Equal(want, mine) {
			w.log.Info("enrich partitions", "held", want, "members", w.lastMembers)
			w.m.partitions.Set(float64(len(want)))
		}
		mine = want
		for p, release := range loops {
			if !slices.Contains(mine, p) {
				close(release) // it drains; the deferred wait covers it
				delete(loops, p)
			}
		}
		for _, p := range mine {
			if loops[p] != nil {
				continue
			}
			release := make(chan struct{})
			loops[p] = release
			running.Add(1)
			go func() {
				defer running.Done()
				cons, err := bus.OpenConsumer(lctx, w.js, w.log, Stream, config.PartitionConsumer(name, p))
				if err == nil {
					err = w.loops(lctx, cons, release)
				}
				if err != nil && lctx.Err() == nil {
					select {
					case errs <- fmt.Errorf("partition %d: %w", p, err):
					case <-lctx.Done():
					}
				}
			}()
		}
		var done bool
		if announce, done, err = waitMembers(ctx, tick.C, &updates, m.id, errs); done {
			return err
		}
	}
}

// waitMembers waits for the next tick (announce: renew the member key),
// for a change to another member's key (announce false), or for the end:
// ctx done or a partition loop's error.
func waitMembers(ctx context.Context, tick <-chan time.Time, updates *<-chan jetstream.KeyValueEntry, self string, errs <-chan error) (announce, done bool, err error) {
	for {
		select {
		case <-ctx.Done():
			return false, true, nil
		case err := <-errs:
			return false, true, err
		case <-tick:
			return true, false, nil
		case e, ok := <-*updates:
			if !ok {
				*updates = nil // the watch ended: the tick carries on alone
				continue
			}
			if e != nil && e.Key() != memberPrefix+self {
				return false, false, nil
			}
		}
	}
}

// memberSettle is how long a process waits after its first announcement
// before it takes partitions.
const memberSettle = 300 * time.Millisecond

// announceAndSettle announces this process, then waits w.settle
// (memberSettle).
func (w *Worker) announceAndSettle(ctx context.Context, m *members) error {
	actx, cancel := context.WithTimeout(ctx, m.ttl/3)
	err := m.announce(actx)
	cancel()
	select {
	case <-ctx.Done():
	case <-time.After(w.settle):
	}
	return err
}

// ownPartitions announces this process (when announce is set) and
// returns the partitions it holds among the live members.
func (w *Worker) ownPartitions(ctx context.Context, m *members, partitions int, announce bool) ([]int, error) {
	actx, cancel := context.WithTimeout(ctx, m.ttl/3)
	defer cancel()
	if announce {
		if err := m.announce(actx); err != nil {
			return nil, fmt.Errorf("announce enrich member: %w", err)
		}
	}
	ids, err := m.list(actx)
	if err != nil {
		return nil, err
	}
	w.lastMembers = len(ids)
	return assigned(ids, m.id, partitions), nil
}
