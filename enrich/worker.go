// Package enrich runs the enrich workers: a durable pull consumer on the
// OBSERVATIONS stream shared by any number of processes, which fingerprint,
// classify, attribute and CVE-match observations and keep the current state
// of every address and range in a JetStream KV bucket. It also implements
// ipmodel.State over that bucket for the snapshot writers.
package enrich

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/telemetry"
)

// Names of the stream, consumer and subjects the workers use.
const (
	Stream       = config.EnrichStream
	ConsumerName = config.EnrichConsumer
	// DeadLetterSubject receives observations that cannot be enriched,
	// with the reason in the ErrorHeader header.
	DeadLetterSubject = "dlq.enrich"
	// CatalogSubject announces a catalog refresh to every process.
	CatalogSubject = "netintel.enrich.catalog"
)

// Headers of a dead-lettered message.
const (
	ErrorHeader      = "Netintel-Error"
	SubjectHeader    = "Netintel-Subject"
	SequenceHeader   = "Netintel-Stream-Seq"
	DeliveriesHeader = "Netintel-Deliveries"
)

// Worker consumes observations and stores enriched state.
type Worker struct {
	js    jetstream.JetStream
	cfg   config.Enrich
	log   *slog.Logger
	rules *Rules
	m     *metrics
	store *Store
	cache *stateCache
	id    string
	now   func() time.Time
	// ackWait bounds the wait for a state write's acknowledgement
	// (stateAckWait; tests shorten it).
	ackWait time.Duration
	// consumerAckWait is the enrich consumer's ack wait, read when Run
	// opens it: parked messages are kept in progress within it.
	consumerAckWait time.Duration
	// memberTTL is how long this process's member key lives unless
	// renewed (defaultMemberTTL; tests shorten it).
	memberTTL time.Duration
	// settle is how long a process waits after announcing itself before
	// it takes partitions (memberSettle; a test on a starved machine
	// lengthens it).
	settle time.Duration
	loaded sync.Mutex
	follow sync.Once
	// lastMembers is the number of enrich processes last seen (logged).
	lastMembers int
	// beforeStore, when set, is called with each batch's context before
	// its state is written (tests stop a worker there).
	beforeStore func(context.Context)
	// afterLoad, when set, is called between the read and the write of a
	// batch's records (writeEnv.afterLoad).
	afterLoad func(ctx context.Context, keys []string)
	// parked tracks the goroutines writing keys of an unavailable shard
	// again (park); Run waits for them.
	parked sync.WaitGroup
	// layoutOK is closed once Run has checked the state's layout; the
	// loops consume only then.
	layoutOK chan struct{}
}

type metrics struct {
	processed  *prometheus.CounterVec
	dead       *prometheus.CounterVec
	retries    *prometheus.CounterVec
	lookups    *prometheus.CounterVec
	batch      prometheus.Histogram
	partitions prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		processed: telemetry.MustRegister(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_enrich_observations_total", Help: "Observations enriched and stored, by type."}, []string{"type"})),
		dead:      telemetry.MustRegister(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_enrich_deadletter_total", Help: "Observations sent to dlq.enrich, by reason (malformed; failed: failed enrich.max_failures deliveries; unsettled: delivered 4 x enrich.max_failures times without an outcome)."}, []string{"reason"})),
		retries:   telemetry.MustRegister(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_enrich_retries_total", Help: "State writes retried, by reason (conflict: another worker wrote first; unavailable: the state bucket did not take the write for a moment, as in a leader election; error: the observations were returned for redelivery)."}, []string{"reason"})),
		lookups: telemetry.MustRegister(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netintel_enrich_state_lookups_total",
			Help: "Where a state write started from: cached (the record in the process's cache), read (from NATS), assumed_new (written as new unread), assumed_new_existed (that write found the key taken and was retried)."}, []string{"outcome"})),
		partitions: telemetry.MustRegister(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: "netintel_enrich_partitions_held", Help: fmt.Sprintf("Observation partitions this process holds (of %d; the enrich processes share them).", config.ObservationPartitions)})),
		batch:      telemetry.MustRegister(reg, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "netintel_enrich_batch_seconds", Help: "Time to enrich and store one batch.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 8)})),
	}
	// Every documented label value shows at 0 from start.
	telemetry.Zero(m.dead, []string{"malformed", "failed", "unsettled"})
	telemetry.Zero(m.retries, []string{"conflict", "unavailable", "error"})
	telemetry.Zero(m.lookups, []string{"cached", "read", "assumed_new", "assumed_new_existed"})
	telemetry.Zero(m.processed, []string{ingest.TypeService, ingest.TypeSignal, ingest.TypeRange, ingest.TypeFlow})
	return m
}

// NewWorker returns a worker storing into the KV bucket cfg.Bucket. rules
// may be nil for the built-in rules. cat, when not nil, is the CVE catalog
// its State scores records against; when nil, the catalog cfg.Catalog
// names is loaded when a record is first read. reg may be nil.
func NewWorker(js jetstream.JetStream, cfg config.Enrich, rules *Rules, cat *Catalog, log *slog.Logger, reg prometheus.Registerer) (*Worker, error) {
	if rules == nil {
		var err error
		if rules, err = DefaultRules(); err != nil {
			return nil, err
		}
	}
	// Settings left at zero take the configuration's defaults.
	def := config.Default().Enrich
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = def.BatchSize
	}
	if cfg.Workers <= 0 {
		cfg.Workers = def.Workers
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = def.MaxFailures
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	w := &Worker{js: js, cfg: cfg, log: log.With("stage", "enrich"), rules: rules, m: newMetrics(reg),
		store: NewShardedState(js, cfg.Bucket, cfg.Shards), cache: newStateCache(cfg.CacheMB << 20), id: hex.EncodeToString(b[:]), now: time.Now, ackWait: stateAckWait, memberTTL: defaultMemberTTL, settle: memberSettle}
	w.store.catCfg = &w.cfg.Catalog
	w.store.verify = true
	if cat != nil {
		w.store.SetCatalog(cat)
	}
	return w, nil
}

// State returns the store the worker writes.
func (w *Worker) State() *Store { return w.store }

// RefreshCatalog reloads the configured catalogs and tells every other
// process to reload too. Nothing stored changes: CVE findings are computed
// from the catalog when records are read, so the next snapshot or lookup
// of the state is scored against the new catalog.
func (w *Worker) RefreshCatalog(ctx context.Context) error {
	cat, err := LoadCatalog(ctx, w.cfg.Catalog)
	if err != nil {
		return err
	}
	w.SetCatalog(cat)
	if nc := w.js.Conn(); nc != nil {
		if err := nc.Publish(CatalogSubject, []byte(w.id)); err != nil {
			w.log.Warn("announce catalog refresh", "err", err)
		}
	}
	w.log.Info("catalog refreshed", "cves", len(cat.cves), "kev", len(cat.kev), "epss", len(cat.epss))
	return nil
}

// FollowCatalog reloads the catalog whenever another process announces a
// refresh, in a process that has loaded one (one that reads the state);
// it keeps doing so for as long as the connection lives. Calling it again
// does nothing.
func (w *Worker) FollowCatalog() error {
	var err error
	w.follow.Do(func() {
		nc := w.js.Conn()
		if nc == nil {
			return
		}
		_, err = nc.Subscribe(CatalogSubject, func(m *nats.Msg) {
			if string(m.Data) == w.id || w.store.Catalog() == nil {
				return
			}
			go w.reloadCatalog(context.Background())
		})
	})
	return err
}

// Age drops what was not seen for cfg.RetentionDays.
func (w *Worker) Age(ctx context.Context) error {
	days := w.cfg.RetentionDays
	if days <= 0 {
		days = 30
	}
	up, rm, err := w.store.Sweep(ctx, w.now(), time.Duration(days)*24*time.Hour)
	if err != nil {
		return fmt.Errorf("age out: %w", err)
	}
	w.log.Info("aged out", "updated", up, "removed", rm)
	return nil
}

// Rules returns the worker's fingerprint rules.
func (w *Worker) Rules() *Rules { return w.rules }

// Catalog returns the catalog records are scored against, nil until one
// is set or loaded.
func (w *Worker) Catalog() *Catalog { return w.store.Catalog() }

// SetCatalog replaces the catalog records are scored against.
func (w *Worker) SetCatalog(c *Catalog) { w.store.SetCatalog(c) }

// Run consumes until ctx is cancelled: cfg.Workers loops on each
// partition this process holds (runPartitions) and on the enrich consumer
// itself, which takes observations published without a partition token.
//
// The state's layout is checked first (Store.CheckLayout): a layout that
// is not enrich.shards' ends Run with the error before anything is
// consumed. The check runs beside the announcement of this process to the
// others (runPartitions), which must not be delayed: processes started
// together see each other by it.
func (w *Worker) Run(ctx context.Context) error {
	defer w.parked.Wait()
	g, gctx := errgroup.WithContext(ctx)
	layoutOK := make(chan struct{})
	g.Go(func() error {
		if err := w.store.checkLayout(gctx); err != nil {
			return err
		}
		close(layoutOK)
		return nil
	})
	cons, err := bus.OpenConsumer(gctx, w.js, w.log, Stream, ConsumerName)
	if err != nil {
		if werr := g.Wait(); werr != nil {
			return werr
		}
		return fmt.Errorf("enrich consumer: %w", err)
	}
	info := cons.CachedInfo().Config
	partitions := info.FilterSubject == "obs.*.*"
	w.consumerAckWait = info.AckWait // the partition consumers share it
	w.layoutOK = layoutOK
	g.Go(func() error { return w.loops(gctx, cons, nil) })
	if partitions {
		g.Go(func() error { return w.runPartitions(gctx, ConsumerName, config.ObservationPartitions) })
	} else {
		w.log.Warn("the enrich consumer takes every observation (no filter_subject obs.*.*): partitions not used")
	}
	return g.Wait()
}

// loops runs cfg.Workers loops on cons until ctx ends or release is
// closed; the first loop's error ends the others and is returned.
func (w *Worker) loops(ctx context.Context, cons jetstream.Consumer, release <-chan struct{}) error {
	g, gctx := errgroup.WithContext(ctx)
	for range w.cfg.Workers {
		g.Go(func() error { return w.loop(gctx, cons, release) })
	}
	return g.Wait()
}

func (w *Worker) reloadCatalog(ctx context.Context) {
	if !w.loaded.TryLock() {
		return
	}
	defer w.loaded.Unlock()
	cat, err := LoadCatalog(ctx, w.cfg.Catalog)
	if err != nil {
		w.log.Error("reload catalog", "err", err)
		return
	}
	w.SetCatalog(cat)
	w.log.Info("catalog reloaded")
}

type item struct {
	msg jetstream.Msg
	obs ingest.Observation
	id  string
}

// loop enriches what cons delivers until ctx ends, or until release is
// closed: then it stops pulling and enriches what it has fetched before
// it returns, so that nothing waits for the ack wait to pass.
func (w *Worker) loop(ctx context.Context, cons jetstream.Consumer, release <-chan struct{}) error {
	if w.layoutOK != nil {
		select {
		case <-w.layoutOK:
		case <-ctx.Done():
			return nil
		}
	}
	b, err := consumeBatches(ctx, cons, w.cfg.BatchSize, w.log)
	if err != nil {
		return fmt.Errorf("enrich consume: %w", err)
	}
	defer b.stop()
	if release != nil {
		ended := make(chan struct{})
		defer close(ended)
		go func() {
			select {
			case <-release:
				b.drain()
			case <-ended:
			}
		}()
	}
	batch := make([]jetstream.Msg, 0, w.cfg.BatchSize)
	for {
		if batch, err = b.next(batch, w.cfg.BatchSize); err != nil {
			return nil
		}
		start := time.Now()
		w.process(ctx, batch)
		w.m.batch.Observe(time.Since(start).Seconds())
	}
}

// obsOptions decode an observation as strictly as `netintel ingest` reads
// one (unknown fields refused, names matched without regard to case,
// invalid UTF-8 replaced, the last of duplicate names kept), with the
// json/v2 decoder, which takes about half the time of encoding/json's.
var obsOptions = jsonv2.JoinOptions(jsonv2.RejectUnknownMembers(true), jsonv2.MatchCaseInsensitiveNames(true),
	jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// decode reads a message into a normalized observation and its id.
func decode(m jetstream.Msg) (ingest.Observation, string, error) {
	o, err := decodeObs(m.Data())
	if err != nil {
		return o, "", err
	}
	id := m.Headers().Get(jetstream.MsgIDHeader)
	if id == "" {
		sum := sha256.Sum256(m.Data())
		id = hex.EncodeToString(sum[:16])
	}
	return o, id, nil
}

// decodeObs reads and normalizes one observation: in the plain form the
// ingest publisher writes with ingest.DecodeCanonical, in any other with
// json/v2 (and obsOptions), whose result is the same where both read it.
func decodeObs(data []byte) (ingest.Observation, error) {
	var o ingest.Observation
	if !ingest.DecodeCanonical(data, &o) {
		o = ingest.Observation{}
		if err := jsonv2.Unmarshal(data, &o, obsOptions); err != nil {
			return o, fmt.Errorf("decode observation: %w", err)
		}
	}
	if err := o.Normalize(); err != nil {
		return o, fmt.Errorf("invalid observation: %w", err)
	}
	return o, nil
}

// stateKey is the KV key of an address ("h.<ip>") or range ("r.<cidr>");
// colons of IPv6 become underscores, which KV keys allow.
func stateKey(o *ingest.Observation) string {
	if o.Type == ingest.TypeRange {
		return "r." + strings.ReplaceAll(o.Network, ":", "_")
	}
	return "h." + strings.ReplaceAll(o.IP, ":", "_")
}

// maxAttempts bounds the write retries of one key within a loop's batch;
// a key that loses more races is written again beside the loop (park).
const maxAttempts = 8

// stateAckWait is how long a state write may go unacknowledged before its
// observations are returned for redelivery (as the connection's async
// publish timeout).
const stateAckWait = 15 * time.Second

// process enriches and stores a batch; a message is acknowledged only
// after the state it changed is stored.
//
// A key whose write lost a race to another writer is re-read and written
// again, up to maxAttempts times within the loop, then beside it (park),
// for as long as it takes. A key whose write failed because the
// state bucket is unavailable for a moment (no stream leader during an
// election, no acknowledgement in time) is written again after a pause
// growing to unavailableMaxWait, for as long as that lasts, its messages
// kept from redelivery meanwhile (InProgress): an outage delays
// observations, it never sends them to the dead-letter subject. That
// retry runs beside the loop (storeKeys, park), so the keys of the other
// shards go on being stored. Other failures return the messages for
// redelivery (fail).
func (w *Worker) process(ctx context.Context, msgs []jetstream.Msg) {
	groups := make(map[string][]*item, len(msgs))
	keys := make([]string, 0, len(msgs))
	all := make([]item, len(msgs)) // one allocation for the batch's items
	for i, m := range msgs {
		if n := deliveries(m); n > w.cfg.MaxFailures*unsettledFactor {
			w.deadLetter(ctx, m, fmt.Errorf("delivered %d times without being stored or failing (more than %d x enrich.max_failures)", n, unsettledFactor), "unsettled")
			continue
		}
		o, id, err := decode(m)
		if err != nil {
			w.deadLetter(ctx, m, err, "malformed")
			continue
		}
		k := stateKey(&o)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		all[i] = item{msg: m, obs: o, id: id}
		groups[k] = append(groups[k], &all[i])
	}
	if w.beforeStore != nil {
		w.beforeStore(ctx)
	}
	w.storeKeys(ctx, keys, groups, true, false)
}

// storeKeys writes the state of keys (process). Keys whose shard is
// unavailable are written again after a pause, for as long as that lasts:
// by the loop itself when background is set, else by a goroutine of
// their own (tracked by w.parked), so that the loop goes on with the keys
// of the other shards in its next batches. What the parked keys' messages
// hold counts against the consumer's max_ack_pending, which bounds how far
// the other shards get ahead of an unavailable one.
func (w *Worker) storeKeys(ctx context.Context, keys []string, groups map[string][]*item, first, background bool) {
	races, pauses := 0, 0
	for len(keys) > 0 {
		if ctx.Err() != nil {
			return // left unacknowledged: redelivered to another worker
		}
		mine, busy, wait := w.cache.claim(keys)
		var conflicts []string
		var failed map[string]error
		if len(mine) > 0 {
			conflicts, failed = w.store.writeGroups(ctx, w.cache, mine, groups, first, w.writeEnv())
			first = false
		}
		w.cache.release(mine)
		// Keys another loop was writing go after its writes are answered.
		for _, ch := range wait {
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
		var unavailable []string
		var cause error
		for k, err := range failed {
			if bus.Transient(err) {
				unavailable, cause = append(unavailable, k), err
				continue
			}
			w.fail(ctx, groups[k], err)
		}
		if len(conflicts) > 0 {
			w.m.retries.WithLabelValues("conflict").Add(float64(len(conflicts)))
			// A parked write races the loops that took newer batches
			// of its keys meanwhile: it is not given up for that. A
			// key the loop lost maxAttempts races for (writers that
			// keep answering late, a replica that serves reads behind
			// its leader) is parked too: contention is no fault of its
			// observations, and failing them would dead-letter those
			// already delivered enrich.max_failures times by earlier
			// ack waits, though nothing is wrong with them.
			if races++; races >= maxAttempts && !background {
				w.log.Warn("state writes kept conflicting, writing again in the background", "keys", len(conflicts))
				w.parkByShard(ctx, conflicts, groups)
				conflicts = nil
			}
		}
		if len(unavailable) > 0 && !background {
			w.m.retries.WithLabelValues("unavailable").Add(float64(len(unavailable)))
			w.log.Warn("state bucket unavailable, writing again in the background", "keys", len(unavailable), "err", cause)
			w.parkByShard(ctx, unavailable, groups)
			unavailable = nil
		}
		if len(unavailable) > 0 {
			w.m.retries.WithLabelValues("unavailable").Add(float64(len(unavailable)))
			wait := min(unavailableFirstWait<<min(pauses, 10), unavailableMaxWait)
			pauses++
			w.log.Warn("state bucket unavailable, writing again", "keys", len(unavailable), "in", wait, "err", cause)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			inProgress(unavailable, groups)
		}
		keys = append(append(conflicts, unavailable...), busy...)
	}
}

// parkByShard parks keys (park), one goroutine per shard: the keys of a
// shard that answers are not held to the wait for one that does not.
func (w *Worker) parkByShard(ctx context.Context, keys []string, groups map[string][]*item) {
	n := len(w.store.shards)
	byShard := map[int][]string{}
	for _, k := range keys {
		byShard[ShardOf(k, n)] = append(byShard[ShardOf(k, n)], k)
	}
	for _, ks := range byShard {
		w.park(ctx, ks, groups)
	}
}

// park writes keys again in a goroutine of their own, after a first pause
// (storeKeys in the background). Their messages are kept from redelivery
// meanwhile by keepInProgress, however long a pause or a write takes
// against the consumer's ack wait.
func (w *Worker) park(ctx context.Context, keys []string, groups map[string][]*item) {
	w.parked.Add(1)
	go func() {
		defer w.parked.Done()
		kctx, stop := context.WithCancel(ctx)
		kept := make(chan struct{})
		go func() {
			defer close(kept)
			w.keepInProgress(kctx, keys, groups)
		}()
		defer func() { stop(); <-kept }()
		select {
		case <-ctx.Done():
			return
		case <-time.After(unavailableFirstWait):
		}
		inProgress(keys, groups)
		w.storeKeys(ctx, keys, groups, false, true)
	}()
}

// keepInProgress tells the server that the messages of keys are being
// worked on, every third of the consumer's ack wait, until ctx ends. Without it, a consumer ack_wait shorter than a pause
// between writes (up to unavailableMaxWait) plus a write's own wait
// (stateAckWait) would have the parked messages redelivered over and
// over, and those deliveries crowd out the other shards' writes.
func (w *Worker) keepInProgress(ctx context.Context, keys []string, groups map[string][]*item) {
	every := w.consumerAckWait / 3
	if every <= 0 {
		every = defaultConsumerAckWait / 3
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			inProgress(keys, groups)
		}
	}
}

// inProgress tells the server that the messages of keys are being worked
// on (an acknowledged message refuses it, harmlessly).
func inProgress(keys []string, groups map[string][]*item) {
	for _, k := range keys {
		for _, it := range groups[k] {
			_ = it.msg.InProgress()
		}
	}
}

// defaultConsumerAckWait is the enrich consumer's ack wait when its
// configuration cannot be read (the default configuration's).
const defaultConsumerAckWait = 30 * time.Second

// The pause before writing again to an unavailable state bucket: the
// first, doubled each time up to the most.
const (
	unavailableFirstWait = 100 * time.Millisecond
	unavailableMaxWait   = 5 * time.Second
)

// unsettledFactor bounds the deliveries of a message that never reaches
// an outcome (stored, failed, malformed), as one that kills or stalls
// every process it reaches would: past enrich.max_failures times this, it
// is dead-lettered on arrival. The enrich consumers deliver without a
// limit of their own (max_deliver 0): the server drops a message after
// max_deliver ack waits without telling anyone, so a merely slow one (a
// backlog, a short ack_wait) could be lost with no trace. At the defaults
// (5 failures, 30 s ack wait) a message is held for at least 10 minutes of
// ack waits before this.
const unsettledFactor = 4

// deliveries is how many times m has been delivered (0 if unknown).
func deliveries(m jetstream.Msg) int {
	if meta, err := m.Metadata(); err == nil {
		return int(meta.NumDelivered)
	}
	return 0
}

// fail returns the messages for redelivery, or dead-letters those that
// have failed MaxFailures times.
func (w *Worker) fail(ctx context.Context, items []*item, err error) {
	w.m.retries.WithLabelValues("error").Inc()
	for _, it := range items {
		delivered := deliveries(it.msg)
		if delivered >= w.cfg.MaxFailures {
			w.deadLetter(ctx, it.msg, err, "failed")
			continue
		}
		w.log.Warn("observation failed, will retry", "key", it.obs.Key(), "err", err)
		_ = it.msg.NakWithDelay(time.Duration(min(delivered+1, 10)) * 100 * time.Millisecond)
	}
}

// deadLetter publishes m to dlq.enrich with the error, then terminates it.
// If the dead-letter publish fails the message is returned for redelivery.
func (w *Worker) deadLetter(ctx context.Context, m jetstream.Msg, cause error, reason string) {
	dm := nats.NewMsg(DeadLetterSubject)
	dm.Data = m.Data()
	msg := cause.Error()
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	dm.Header.Set(ErrorHeader, msg)
	dm.Header.Set(SubjectHeader, m.Subject())
	if meta, err := m.Metadata(); err == nil {
		dm.Header.Set(SequenceHeader, strconv.FormatUint(meta.Sequence.Stream, 10))
		dm.Header.Set(DeliveriesHeader, strconv.FormatUint(meta.NumDelivered, 10))
		dm.Header.Set(jetstream.MsgIDHeader, "enrich-"+strconv.FormatUint(meta.Sequence.Stream, 10))
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := w.js.PublishMsg(pctx, dm); err != nil {
		w.log.Error("dead-letter publish failed, will retry", "subject", m.Subject(), "err", err)
		_ = m.NakWithDelay(time.Second)
		return
	}
	w.m.dead.WithLabelValues(reason).Inc()
	w.log.Warn("observation dead-lettered", "subject", m.Subject(), "reason", reason, "err", cause)
	_ = m.Term()
}

// readMany reads the stored records of keys, with batch direct gets (one
// request per 1,000 keys of one shard, the shards read at once); a key
// never written comes back at revision 0. If the server does not answer
// a shard's batch gets, each of its keys is read on its own, 128 at a
// time. Keys that could not be read are added to failed.
func (s *Store) readMany(ctx context.Context, keys []string, failed map[string]error, log *slog.Logger) map[string]record {
	out := make(map[string]record, len(keys))
	if len(keys) == 0 {
		return out
	}
	if len(s.shards) == 1 {
		s.readShard(ctx, s.shards[0], keys, out, failed, log)
		return out
	}
	byShard := make([][]string, len(s.shards))
	for _, k := range keys {
		i := ShardOf(k, len(s.shards))
		byShard[i] = append(byShard[i], k)
	}
	var wg sync.WaitGroup
	outs := make([]map[string]record, len(s.shards))
	fails := make([]map[string]error, len(s.shards))
	for i, ks := range byShard {
		if len(ks) == 0 {
			continue
		}
		outs[i], fails[i] = make(map[string]record, len(ks)), map[string]error{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.readShard(ctx, s.shards[i], ks, outs[i], fails[i], log)
		}()
	}
	wg.Wait()
	for i := range s.shards {
		maps.Copy(out, outs[i])
		maps.Copy(failed, fails[i])
	}
	return out
}

// readShard is readMany of keys that all live in shard sh.
func (s *Store) readShard(ctx context.Context, sh *shard, keys []string, out map[string]record, failed map[string]error, log *slog.Logger) {
	subjects := make([]string, len(keys))
	for i, k := range keys {
		subjects[i] = sh.prefix + k
	}
	err := bus.DirectGetLast(ctx, s.js, sh.stream, subjects, func(subject string, seq uint64, op jetstream.KeyValueOp, data []byte) {
		r := record{rev: seq}
		if op == jetstream.KeyValuePut {
			r.data = data
		}
		out[strings.TrimPrefix(subject, sh.prefix)] = r
	})
	if err == nil {
		for _, k := range keys {
			if _, ok := out[k]; !ok {
				out[k] = record{}
			}
		}
		return
	}
	for _, k := range keys {
		delete(out, k)
	}
	// A server without batch gets answers a read of one key; a shard
	// that is unavailable does not, and its keys fail at once rather
	// than one by one.
	if bus.Transient(err) {
		data, rev, gerr := s.getRaw(ctx, keys[0])
		if gerr != nil {
			for _, k := range keys {
				failed[k] = gerr
			}
			return
		}
		out[keys[0]] = record{rev: rev, data: data}
		keys = keys[1:]
	}
	if s.batchGetFailed.CompareAndSwap(false, true) {
		log.Warn("batch read of state records failed; reading them one by one", "bucket", sh.bucket, "err", err)
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(128)
	for _, k := range keys {
		g.Go(func() error {
			data, rev, err := s.getRaw(gctx, k)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[k] = err
				return nil
			}
			out[k] = record{rev: rev, data: data}
			return nil
		})
	}
	_ = g.Wait()
}

func isConflict(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}
