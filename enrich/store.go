package enrich

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
)

// Store is the current enriched state in JetStream KV buckets: one key
// per address (h.<ip>) holding its classification and every asset (one per
// port and protocol family, last value wins), and one key per range
// (r.<cidr>). The keys are spread over one or more shard buckets by the
// hash of the address or network (ShardOf); every read and write goes to
// the key's shard. It implements ipmodel.State by streaming the buckets
// (all shards at once), so it never holds the whole data set in memory.
type Store struct {
	js     jetstream.JetStream
	bucket string   // the declared state bucket (enrich.bucket)
	shards []*shard // by ShardOf
	stream string   // the first shard's stream (all of it, with one shard)

	// verify: check the layout recorded in the meta bucket
	// (CheckLayout) before the first use; layoutOK once it held.
	verify   bool
	layoutOK atomic.Bool

	batchGetFailed atomic.Bool // warned that batch reads fall back

	acksOnce sync.Once // state writes' acknowledgements (workers)
	ackInbox *bus.Acks
	acksErr  error

	// The CVE catalog records are scored against when read: the one set
	// last, else loaded from catCfg on first use (an empty catalog when
	// catCfg is nil).
	cat    atomic.Pointer[Catalog]
	catCfg *config.Catalog
	catMu  sync.Mutex
	now    func() time.Time

	// Set by tests: afterRecord is called with the walk consumer's name
	// after each record a state walk meets; stall replaces walkStall.
	afterRecord func(consumer string)
	stall       time.Duration
}

// shard is one bucket of the state.
type shard struct {
	bucket string
	stream string
	prefix string

	mu sync.Mutex
	st jetstream.Stream // the bucket's stream, looked up once
}

func newShard(bucket string) *shard {
	return &shard{bucket: bucket, stream: "KV_" + bucket, prefix: "$KV." + bucket + "."}
}

// kvStream returns the bucket's stream handle, looking it up on first use.
// The lock is not held while it looks: callers that meet an unavailable
// shard each wait for their own answer, not for each other's.
func (sh *shard) kvStream(ctx context.Context, js jetstream.JetStream) (jetstream.Stream, error) {
	sh.mu.Lock()
	st := sh.st
	sh.mu.Unlock()
	if st != nil {
		return st, nil
	}
	st, err := js.Stream(ctx, sh.stream)
	if err != nil {
		return nil, fmt.Errorf("state bucket %s: %w", sh.bucket, err)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.st == nil {
		sh.st = st
	}
	return sh.st, nil
}

// ShardOf returns the shard of state key (StateKey) among n: FNV-1a of
// the address or network (the key without its "h." or "r.", '_' read as
// ':') modulo n. It is the hash ingest partitions observations by
// (ingest.Observation.Partition), so with 4 shards an enrich partition
// writes to one shard, and with 8 to two.
func ShardOf(key string, n int) int {
	if n <= 1 {
		return 0
	}
	h := uint32(2166136261)
	for i := 2; i < len(key); i++ {
		c := key[i]
		if c == '_' {
			c = ':'
		}
		h ^= uint32(c)
		h *= 16777619
	}
	return int(h % uint32(n))
}

// shardOf returns the shard that holds key.
func (s *Store) shardOf(key string) *shard { return s.shards[ShardOf(key, len(s.shards))] }

// Shards returns the bucket names of the state's shards, by shard.
func (s *Store) Shards() []string {
	out := make([]string, len(s.shards))
	for i, sh := range s.shards {
		out[i] = sh.bucket
	}
	return out
}

var _ ipmodel.State = (*Store)(nil)

// NewState returns the state kept in bucket (the enrich.bucket, "ipstate")
// alone: one shard.
func NewState(js jetstream.JetStream, bucket string) *Store {
	return NewShardedState(js, bucket, 1)
}

// NewShardedState returns the state of bucket spread over n shard buckets
// (config.ShardBucket).
func NewShardedState(js jetstream.JetStream, bucket string, n int) *Store {
	if bucket == "" {
		bucket = "ipstate"
	}
	n = max(n, 1)
	s := &Store{js: js, bucket: bucket, now: time.Now}
	for i := range n {
		s.shards = append(s.shards, newShard(config.ShardBucket(bucket, i, n)))
	}
	s.stream = s.shards[0].stream
	return s
}

// acks returns the acknowledgement inbox of state writes, opened on first use.
func (s *Store) acks() (*bus.Acks, error) {
	s.acksOnce.Do(func() { s.ackInbox, s.acksErr = bus.NewAcks(s.js.Conn()) })
	return s.ackInbox, s.acksErr
}

// SetCatalog sets the CVE catalog records are scored against from now on.
func (s *Store) SetCatalog(c *Catalog) { s.cat.Store(c) }

// Catalog returns the catalog set or loaded last, nil if none yet.
func (s *Store) Catalog() *Catalog { return s.cat.Load() }

// scorer returns a scorer for the catalog in use at the current time,
// loading the catalog first if none is set. A catalog that cannot be
// loaded is an error: a snapshot is not published without CVE findings
// that the previous one had.
func (s *Store) scorer(ctx context.Context) (*scorer, error) {
	if c := s.cat.Load(); c != nil {
		return newScorer(c, s.now()), nil
	}
	s.catMu.Lock()
	defer s.catMu.Unlock()
	c := s.cat.Load()
	if c == nil {
		c = NewCatalog()
		if s.catCfg != nil {
			var err error
			if c, err = LoadCatalog(ctx, *s.catCfg); err != nil {
				return nil, fmt.Errorf("CVE catalog: %w", err)
			}
		}
		s.cat.Store(c)
	}
	return newScorer(c, s.now()), nil
}

const kvOperation = "KV-Operation"

// getRaw returns the stored record under key (nil when absent or
// deleted) and the revision to expect when writing it back (0 when the
// key never existed).
func (s *Store) getRaw(ctx context.Context, key string) ([]byte, uint64, error) {
	sh := s.shardOf(key)
	st, err := sh.kvStream(ctx, s.js)
	if err != nil {
		return nil, 0, err
	}
	m, err := st.GetLastMsgForSubject(ctx, sh.prefix+key)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("get state %s: %w", key, err)
	}
	if bus.KVOp(m.Header) != jetstream.KeyValuePut {
		return nil, m.Sequence, nil
	}
	return m.Data, m.Sequence, nil
}

// get returns the document under key (nil when absent or deleted) and the
// revision to expect when writing it back.
func (s *Store) get(ctx context.Context, key string) (*doc, uint64, error) {
	data, rev, err := s.getRaw(ctx, key)
	if err != nil || data == nil {
		return nil, rev, err
	}
	d, err := decodeState(key, data)
	return d, rev, err
}

// decodeState decodes the stored record of key.
func decodeState(key string, data []byte) (*doc, error) {
	var d doc
	if err := decodeDoc(data, &d); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrCorruptState, key, err)
	}
	return &d, nil
}

// Get returns the record of an address or range (as "1.2.3.0/24"), and
// false when there is none.
func (s *Store) Get(ctx context.Context, ipOrCIDR string) (ipmodel.Record, bool, error) {
	if err := s.checkLayout(ctx); err != nil {
		return ipmodel.Record{}, false, err
	}
	key := "h."
	if strings.Contains(ipOrCIDR, "/") {
		key = "r."
	}
	d, _, err := s.get(ctx, key+strings.ReplaceAll(ipOrCIDR, ":", "_"))
	if err != nil || d == nil {
		return ipmodel.Record{}, false, err
	}
	sc, err := s.scorer(ctx)
	if err != nil {
		return ipmodel.Record{}, false, err
	}
	return d.record(sc), true, nil
}

// Hosts calls fn once per address record: each shard in stream order,
// the shards walked at once (fn is never called concurrently). A shard
// that cannot be walked to its end fails the whole walk.
func (s *Store) Hosts(ctx context.Context, fn func(ipmodel.Record) error) error {
	return s.records(ctx, "h.>", fn)
}

// Ranges calls fn once per range record (Network set, IP its first address).
func (s *Store) Ranges(ctx context.Context, fn func(ipmodel.Record) error) error {
	return s.records(ctx, "r.>", fn)
}

func (s *Store) records(ctx context.Context, filter string, fn func(ipmodel.Record) error) error {
	if err := s.checkLayout(ctx); err != nil {
		return err
	}
	sc, err := s.scorer(ctx)
	if err != nil {
		return err
	}
	return s.each(ctx, filter, func(_ string, _ uint64, d *doc) error { return fn(d.record(sc)) })
}

// each walks every shard at once (eachShard) and calls fn, never
// concurrently, once per key under filter; the first shard to fail
// stops the others and is the walk's error.
func (s *Store) each(ctx context.Context, filter string, fn func(key string, rev uint64, d *doc) error) error {
	if len(s.shards) == 1 {
		return s.eachShard(ctx, s.shards[0], filter, fn)
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, sh := range s.shards {
		g.Go(func() error {
			err := s.eachShard(gctx, sh, filter, func(key string, rev uint64, d *doc) error {
				mu.Lock()
				defer mu.Unlock()
				if err := gctx.Err(); err != nil {
					return err
				}
				return fn(key, rev, d)
			})
			if err != nil {
				return fmt.Errorf("shard %s: %w", sh.bucket, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// eachBatch is how many records a state walk asks for at a time.
const eachBatch = 1000

// walkStall is how long a state walk waits for its next record, while the
// stream's leader holds records it has not seen, before it fails.
const walkStall = 15 * time.Second

// eachShard walks the newest value of every key under filter in one
// shard and calls fn once per key; deleted keys are skipped.
//
// One ordered consumer delivers the last record of each key as the walk
// starts, in stream order, then every record written since (the ordered
// consumer is recreated from where it stopped only if it fails). A key
// rewritten during the walk is therefore met again after its first
// delivery, or, if the rewrite came before the walk reached it, only at
// its new place; each key is passed to fn once, at its first meeting
// (see walkSeen). The walk ends when the consumer has nothing pending and
// has reached the last record the stream's leader held when the walk
// began: a consumer placed on a replica that is still catching up after
// a restart reports nothing pending early, and is waited for rather than
// taken for the whole state. A walk that stalls for walkStall is an error,
// never a short walk.
func (s *Store) eachShard(ctx context.Context, sh *shard, filter string, fn func(key string, rev uint64, d *doc) error) error {
	last, err := s.leaderLast(ctx, sh, filter)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil
	case err != nil && !errors.Is(err, jetstream.ErrKeyDeleted):
		return fmt.Errorf("walk state: %w", err)
	}
	st, err := sh.kvStream(ctx, s.js)
	if err != nil {
		return err
	}
	oc, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{sh.prefix + filter}, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		return fmt.Errorf("walk state: %w", err)
	}
	it, err := oc.Messages(jetstream.PullMaxMessages(eachBatch))
	if err != nil {
		return fmt.Errorf("walk state: %w", err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	stall := s.stall
	if stall == 0 {
		stall = walkStall
	}
	// Next's own wait does not cover a consumer that nats.go recreates
	// inside Next (after a reconnect, say), which it retries without end:
	// the watchdog stops the walk when a Next outlasts the stall time.
	var stalled atomic.Bool
	dog := time.AfterFunc(time.Hour, func() {
		stalled.Store(true)
		it.Stop()
	})
	defer dog.Stop()
	seen := walkSeen{seed: maphash.MakeSeed()}
	var at uint64 // stream sequence of the last record met
	for {
		dog.Reset(stall + time.Second)
		m, err := it.Next(jetstream.NextMaxWait(stall))
		dog.Stop()
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if errors.Is(err, nats.ErrTimeout) || stalled.Load() {
				return fmt.Errorf("walk state: no record for %s at stream sequence %d, before the leader's last %d", stall, at, last.Revision)
			}
			return fmt.Errorf("walk state: %w", err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("walk state: %w", err)
		}
		at = meta.Sequence.Stream
		key := strings.TrimPrefix(m.Subject(), sh.prefix)
		if seen.first(key, at, last.Revision) && bus.KVOp(m.Headers()) == jetstream.KeyValuePut {
			var d doc
			if err := decodeDoc(m.Data(), &d); err == nil { // a corrupt record is reported by the worker that meets it
				if err := fn(key, at, &d); err != nil {
					return err
				}
			}
		}
		if s.afterRecord != nil {
			s.afterRecord(oc.CachedInfo().Name)
		}
		if meta.NumPending == 0 && at >= last.Revision {
			return nil
		}
	}
}

// leaderLast reads the last record under filter of shard sh from its
// stream's leader, asking again while the answer is transient (an
// election) for up to the walk's stall time: a shard without a leader
// fails the walk then, whatever the caller's deadline. Each request may
// take what is left of that time, not only the connection's timeout: on a
// busy server a last-by-subject over millions of keys can take longer
// than 5 s (a 10M-address publish failed so, issue 33).
func (s *Store) leaderLast(ctx context.Context, sh *shard, filter string) (bus.KVRecord, error) {
	stall := cmp.Or(s.stall, walkStall)
	deadline := time.Now().Add(stall)
	for {
		rctx, cancel := context.WithTimeout(ctx, max(time.Until(deadline), time.Second))
		last, err := bus.LeaderGet(rctx, s.js, sh.bucket, filter)
		cancel()
		if err == nil || !bus.Transient(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return last, err
		}
		select {
		case <-ctx.Done():
			return last, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// walkSeen tells whether a state walk meets a key for the first time.
// Records up to the walk's start sequence are each key's last as the walk
// began, one per key, so they need no check; their keys are remembered as
// 64-bit hashes (8 bytes a key), sorted once the walk passes the start
// sequence. A record written during the walk is a first meeting only if
// its key is in neither that list nor the keys met since. Two keys with
// the same hash (about one chance in 10^7 for 10,000,000 keys with a key
// rewritten during the walk) would lose the later one from that walk.
type walkSeen struct {
	seed   maphash.Seed
	before []uint64 // hashes of keys met at or before the start
	sorted bool
	after  map[uint64]struct{} // hashes of keys first met after the start
}

func (w *walkSeen) first(key string, seq, start uint64) bool {
	h := maphash.String(w.seed, key)
	if seq <= start {
		w.before = append(w.before, h)
		return true
	}
	if !w.sorted {
		slices.Sort(w.before)
		w.sorted = true
		w.after = map[uint64]struct{}{}
	}
	if _, ok := slices.BinarySearch(w.before, h); ok {
		return false
	}
	if _, ok := w.after[h]; ok {
		return false
	}
	w.after[h] = struct{}{}
	return true
}

// put writes d under key if the key is still at rev.
func (s *Store) put(ctx context.Context, key string, rev uint64, d *doc) error {
	data, err := encodeDoc(d)
	if err != nil {
		return err
	}
	_, err = s.js.Publish(ctx, s.shardOf(key).prefix+key, data, jetstream.WithExpectLastSequencePerSubject(rev))
	return err
}

// purge removes key if it is still at rev.
func (s *Store) purge(ctx context.Context, key string, rev uint64) error {
	m := nats.NewMsg(s.shardOf(key).prefix + key)
	m.Header.Set(kvOperation, "PURGE")
	m.Header.Set("Nats-Rollup", "sub")
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
	_, err := s.js.PublishMsg(ctx, m)
	return err
}

// Sweep ages out what was not seen for retention: assets, signals and
// claims older than now-retention are dropped, and a record left empty is
// purged. A record a worker rewrote meanwhile is left for the next sweep.
func (s *Store) Sweep(ctx context.Context, now time.Time, retention time.Duration) (updated, removed int, err error) {
	if err := s.checkLayout(ctx); err != nil {
		return 0, 0, err
	}
	cutoff := ipmodel.FormatTime(now.Add(-retention))
	err = s.each(ctx, ">", func(key string, rev uint64, d *doc) error {
		if d.LastSeen >= cutoff && d.FirstSeen >= cutoff {
			return nil
		}
		before, _ := json.Marshal(d)
		if !d.prune(cutoff) {
			if err := s.purge(ctx, key, rev); err != nil && !isConflict(err) {
				return fmt.Errorf("purge %s: %w", key, err)
			}
			removed++
			return nil
		}
		if after, _ := json.Marshal(d); string(after) == string(before) {
			return nil
		}
		if err := s.put(ctx, key, rev, d); err != nil && !isConflict(err) {
			return fmt.Errorf("age %s: %w", key, err)
		}
		updated++
		return nil
	})
	return updated, removed, err
}

// WaitIdle returns once the enrich consumer and its partitions have
// nothing pending and nothing awaiting acknowledgement, polling every
// 50 ms, or when ctx ends.
//
// A consumer counts a stored message as pending only once the stream has
// signalled it, which the server does after it has acknowledged the
// publish: for a moment after a publish a consumer reports nothing
// pending. So each consumer must also have delivered the last message its
// filter matches.
func WaitIdle(ctx context.Context, js jetstream.JetStream) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		// Each round's requests have a timeout of their own: a reply lost
		// in an election costs a round, not the caller's whole wait.
		rctx, cancel := bus.RequestContext(ctx, js)
		idle := consumersIdle(rctx, js)
		cancel()
		if idle {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for enrich to finish: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// consumersIdle is one round of WaitIdle.
func consumersIdle(ctx context.Context, js jetstream.JetStream) bool {
	st, err := js.Stream(ctx, Stream)
	if err != nil {
		return false
	}
	for _, name := range ConsumerNames() {
		c, err := st.Consumer(ctx, name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) && name != ConsumerName {
			continue // an enrich consumer without partitions
		}
		if err != nil {
			return false
		}
		info, err := c.Info(ctx)
		if err != nil || info.NumPending != 0 || info.NumAckPending != 0 {
			return false
		}
		last, err := st.GetLastMsgForSubject(ctx, cmp.Or(info.Config.FilterSubject, ">"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil || info.Delivered.Stream < last.Sequence {
			return false
		}
	}
	return true
}

// ConsumerNames are the enrich consumer and its partitions.
func ConsumerNames() []string {
	names := []string{ConsumerName}
	for p := range config.ObservationPartitions {
		names = append(names, config.PartitionConsumer(ConsumerName, p))
	}
	return names
}
