package enrich

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/netintel/netintel/internal/bus"
)

// writeEnv is what a group write needs besides the store and the cache:
// the rules that merge observations into a document, where to count, the
// log, and how long to wait for the state stream's acknowledgements. The
// worker hands one over (Worker.writeEnv); the write never sees the worker.
type writeEnv struct {
	rules     *Rules
	lookups   *prometheus.CounterVec // by how a key's record was found
	processed *prometheus.CounterVec // stored observations by type
	log       *slog.Logger
	ackWait   time.Duration
	// afterLoad, when set, is called with the keys of a write once their
	// records are read, before they are written (tests race it there).
	afterLoad func(ctx context.Context, keys []string)
}

// writeEnv returns the worker's part of a group write.
func (w *Worker) writeEnv() writeEnv {
	return writeEnv{rules: w.rules, lookups: w.m.lookups, processed: w.m.processed, log: w.log, ackWait: w.ackWait, afterLoad: w.afterLoad}
}

// record is what a write of one key starts from.
type record struct {
	rev     uint64
	data    []byte // nil: no value
	guessed bool   // not read: assumed new (see stateCache)
}

// writeBuffers hold the records a writeGroups call copies out of the cache
// and the records it encodes, so that a batch allocates neither.
type writeBuffers struct{ cached, encoded []byte }

var writeBufferPool = sync.Pool{New: func() any { return new(writeBuffers) }}

// pendingWrite is one key's write sent and not yet answered.
type pendingWrite struct {
	key      string
	from, to int // the record, in writeBuffers.encoded
	guessed  bool
	ticket   uint64
	answered bool
}

// writeGroups loads, merges and writes each key's document with an
// expected-revision check. It returns the keys that lost a race to
// another writer (to retry) and the keys that failed. On a retry (first
// false) every key not in the cache is read, never guessed.
//
// Three steps: load (loadRecords: the cache, else a guess, else a read),
// encode and publish (publishGroups), collect the acknowledgements
// (collectAcks), which is where the cache learns the new revisions and the
// observations are acknowledged.
func (s *Store) writeGroups(ctx context.Context, c *stateCache, keys []string, groups map[string][]*item, first bool, env writeEnv) (conflicts []string, failed map[string]error) {
	failed = map[string]error{}
	bufs := writeBufferPool.Get().(*writeBuffers)
	defer writeBufferPool.Put(bufs)
	recs := s.loadRecords(ctx, c, keys, first, bufs, failed, env)
	if env.afterLoad != nil {
		env.afterLoad(ctx, keys)
	}
	acks, err := s.acks()
	if err != nil {
		for _, k := range keys {
			failed[k] = err
		}
		return nil, failed
	}
	answers := make(chan bus.Ack, len(keys))
	pend := s.publishGroups(c, keys, groups, recs, bufs, acks, answers, failed, env)
	done := map[string]int{} // stored observations by type
	defer func() {
		for typ, n := range done {
			env.processed.WithLabelValues(typ).Add(float64(n))
		}
	}()
	return collectAcks(ctx, c, pend, answers, groups, bufs.encoded, acks, failed, done, env)
}

// loadRecords finds each key's current record: in the cache, else assumed
// absent (on a first try, while the cache finds most keys new), else read
// from the stream. Keys that could not be read are added to failed.
func (s *Store) loadRecords(ctx context.Context, c *stateCache, keys []string, first bool, bufs *writeBuffers, failed map[string]error, env writeEnv) map[string]record {
	recs := make(map[string]record, len(keys))
	guess := first && c.guessAbsent()
	// Cached records are copied one after the other into bufs.cached, each
	// noted by where it ends; the slices are taken once it stops growing.
	type hit struct {
		key string
		rev uint64
		end int
	}
	cached, hits := bufs.cached[:0], make([]hit, 0, len(keys))
	var unknown []string
	guessed := 0
	for _, k := range keys {
		var rev uint64
		var ok bool
		if cached, rev, ok = c.get(cached, k); ok {
			hits = append(hits, hit{k, rev, len(cached)})
		} else if guess {
			recs[k] = record{guessed: true}
			guessed++
		} else {
			unknown = append(unknown, k)
		}
	}
	bufs.cached = cached
	start := 0
	for _, h := range hits {
		recs[h.key] = record{rev: h.rev, data: cached[start:h.end:h.end]}
		start = h.end
	}
	env.lookups.WithLabelValues("cached").Add(float64(len(hits)))
	env.lookups.WithLabelValues("assumed_new").Add(float64(guessed))
	env.lookups.WithLabelValues("read").Add(float64(len(unknown)))
	for k, r := range s.readMany(ctx, unknown, failed, env.log) {
		c.learned(r.rev != 0)
		recs[k] = r
	}
	return recs
}

// publishGroups merges each key's items into its document, encodes it
// into bufs.encoded and publishes it with the revision it was read at. A
// key that cannot be decoded, encoded or sent goes to failed (and out of
// the cache); the others come back pending, answered on answers.
func (s *Store) publishGroups(c *stateCache, keys []string, groups map[string][]*item, recs map[string]record, bufs *writeBuffers, acks *bus.Acks, answers chan bus.Ack, failed map[string]error, env writeEnv) []pendingWrite {
	// One message and header serve every write (Publish keeps neither).
	// The header map is built directly: Header.Set would canonicalize the
	// name on every write.
	revs := []string{""}
	msg := nats.Msg{Header: nats.Header{jetstream.ExpectedLastSubjSeqHeader: revs}}
	pend := make([]pendingWrite, 0, len(keys))
	enc := bufs.encoded[:0]
	defer func() { bufs.encoded = enc }()
	for _, k := range keys {
		if _, bad := failed[k]; bad {
			continue
		}
		r := recs[k]
		items := groups[k]
		var d *doc
		if r.data == nil {
			d = newDoc(&items[0].obs)
		} else {
			var err error
			if d, err = decodeState(k, r.data); err != nil {
				failed[k] = err
				c.drop(k)
				continue
			}
		}
		for _, it := range items {
			d.apply(&it.obs, it.id, env.rules)
		}
		from := len(enc)
		var err error
		if enc, err = appendDoc(enc, d); err != nil {
			enc = enc[:from]
			failed[k] = err
			c.drop(k)
			continue
		}
		revs[0] = strconv.FormatUint(r.rev, 10)
		msg.Subject, msg.Data = s.shardOf(k).prefix+k, enc[from:]
		ticket, err := acks.Publish(&msg, len(pend), answers)
		if err != nil {
			failed[k] = fmt.Errorf("store state: %w", err)
			c.drop(k)
			continue
		}
		pend = append(pend, pendingWrite{key: k, from: from, to: len(enc), guessed: r.guessed, ticket: ticket})
	}
	return pend
}

// collectAcks waits for the answers to pend, for env.ackWait at most. A
// stored key's record goes into the cache and its observations are
// acknowledged and counted into done; a key that lost a race comes back in
// conflicts; any other outcome (an error, no answer in time) goes to
// failed, and an unknown outcome drops the key from the cache. When ctx
// ends, the unanswered writes are abandoned and nothing is returned.
func collectAcks(ctx context.Context, c *stateCache, pend []pendingWrite, answers chan bus.Ack, groups map[string][]*item, enc []byte, acks *bus.Acks, failed map[string]error, done map[string]int, env writeEnv) (conflicts []string, _ map[string]error) {
	giveUp := func(cause error) {
		for i := range pend {
			if p := &pend[i]; !p.answered {
				acks.Cancel(p.ticket)
				c.drop(p.key)
				if cause != nil {
					failed[p.key] = cause
				}
			}
		}
	}
	timeout := time.NewTimer(env.ackWait)
	defer timeout.Stop()
	for range pend {
		var a bus.Ack
		select {
		case a = <-answers:
		case <-timeout.C:
			giveUp(fmt.Errorf("store state: %w within %s", bus.ErrNoAck, env.ackWait))
			return conflicts, failed
		case <-ctx.Done():
			giveUp(nil)
			return nil, nil
		}
		p := &pend[a.Index]
		p.answered = true
		switch {
		case a.Err == nil:
			c.put(p.key, a.Seq, enc[p.from:p.to])
			if p.guessed {
				c.learned(false)
			}
			for _, it := range groups[p.key] {
				done[it.obs.Type]++
				_ = it.msg.Ack()
			}
		case isConflict(a.Err):
			c.drop(p.key)
			if p.guessed {
				c.learned(true)
				env.lookups.WithLabelValues("assumed_new_existed").Inc()
			}
			conflicts = append(conflicts, p.key)
		default:
			c.drop(p.key)
			failed[p.key] = fmt.Errorf("store state: %w", a.Err)
		}
	}
	return conflicts, failed
}
