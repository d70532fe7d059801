package enrich

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
)

// Phases of a reshard (ReshardProgress.Phase).
const (
	// phaseCopy: the records are being copied into the new shards; the
	// state's layout is still the old one, and nothing may use the state
	// (CheckLayout refuses).
	phaseCopy = "copy"
	// phaseCleanup: the new layout is recorded and in use; the old
	// shard buckets are being deleted.
	phaseCleanup = "cleanup"
)

// ReshardProgress is a reshard in progress, as the meta bucket records it
// (key "reshard"): the layouts, the phase, and per old shard bucket how
// far its records have been copied.
type ReshardProgress struct {
	From    int             `json:"from"`
	To      int             `json:"to"`
	Phase   string          `json:"phase"`
	Started string          `json:"started"`
	Sources []ReshardSource `json:"sources"`
}

// ReshardSource is the copy of one old shard bucket: its records up to
// stream sequence Seq are copied (Copied of them values; deletion markers
// are not copied), all of them when Done.
type ReshardSource struct {
	Bucket string `json:"bucket"`
	Seq    uint64 `json:"seq"`
	Copied int64  `json:"copied"`
	Done   bool   `json:"done"`
}

// ReshardOptions adjust Reshard.
type ReshardOptions struct {
	// Force reshards even while enrich workers are announced as running.
	Force bool
	// Log receives progress lines; nil logs nothing.
	Log *slog.Logger
	// Progress, when set, is called with the records copied so far after
	// each checkpoint.
	Progress func(copied int64)
	// checkpoint, when set (tests), is called after each recorded
	// checkpoint; its error stops the reshard as a kill would.
	checkpoint func(ReshardProgress) error
	// batch replaces reshardBatch (tests).
	batch int
}

// ReshardResult is what a completed Reshard did.
type ReshardResult struct {
	From, To int
	Copied   int64 // records in the new layout
	Resumed  bool  // an interrupted reshard was finished
}

// reshardBatch is how many records are copied between two checkpoints.
const reshardBatch = 1000

// Reshard moves the state of cfg.Enrich.Bucket to a layout of `to` shards
// (config.StateShards): it copies every record of the old shard buckets
// into the new ones, recording in the meta bucket how far it got (a
// killed run, started again with the same `to`, goes on from there),
// checks that the new layout holds as many records as were copied,
// records the new layout, then deletes the old buckets. The enrich workers
// must be stopped meanwhile (it refuses while any is announced, unless
// opt.Force): what they would write to the old layout during the copy
// would be lost. Observations wait in their stream.
func Reshard(ctx context.Context, js jetstream.JetStream, cfg *config.Config, to int, opt ReshardOptions) (ReshardResult, error) {
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bucket := cfg.Enrich.Bucket
	if to < 1 || to > config.MaxShards {
		return ReshardResult{}, fmt.Errorf("reshard: --to must be 1..%d, got %d", config.MaxShards, to)
	}
	l, err := ReadLayout(ctx, js, bucket)
	if err != nil {
		return ReshardResult{}, err
	}
	meta, err := openMeta(ctx, js, bucket, config.ShardBucket(bucket, 0, l.Shards))
	if err != nil {
		return ReshardResult{}, err
	}
	p, rev, err := readProgress(ctx, meta)
	if err != nil {
		return ReshardResult{}, err
	}
	r := &resharder{js: js, cfg: cfg, meta: meta, opt: opt, log: log, p: p, rev: rev}
	res := ReshardResult{From: l.Shards, To: to, Resumed: p != nil}
	switch {
	case p != nil && p.To != to:
		return res, fmt.Errorf("reshard: a reshard from %d to %d shards is in progress: finish it with --to %d, or undo it with --abort", p.From, p.To, p.To)
	case p == nil && l.Shards == to:
		return res, nil // nothing to do
	case p == nil:
		if err := r.begin(ctx, l.Shards, to); err != nil {
			return res, err
		}
	default:
		log.Info("reshard resumed", "from", p.From, "to", p.To, "phase", p.Phase)
	}
	if r.p.Phase == phaseCopy {
		if err := r.copyAndSwitch(ctx, to); err != nil {
			return res, err
		}
	}
	if res.Copied, err = r.cleanup(ctx); err != nil {
		return res, err
	}
	log.Info("reshard done", "from", res.From, "to", res.To, "records", res.Copied)
	return res, nil
}

// resharder is one Reshard run: its progress record p (at revision rev in
// the meta bucket) and what it needs to move the records.
type resharder struct {
	js   jetstream.JetStream
	cfg  *config.Config
	meta jetstream.KeyValue
	opt  ReshardOptions
	log  *slog.Logger
	p    *ReshardProgress
	rev  uint64
}

// begin starts a new reshard from `from` shards to `to`: no worker may run
// (unless forced), buckets of the new layout left by an abandoned attempt
// are made again, empty, and the progress record is created.
func (r *resharder) begin(ctx context.Context, from, to int) error {
	if !r.opt.Force {
		if n, err := liveMembers(ctx, r.js); err != nil {
			return err
		} else if n > 0 {
			return fmt.Errorf("reshard: %d enrich worker(s) are running: stop them first (observations wait in their stream), or pass --force", n)
		}
	}
	for _, k := range r.cfg.StateShards(to) {
		if err := r.js.DeleteKeyValue(ctx, k.Bucket); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
			return fmt.Errorf("reshard: delete %s: %w", k.Bucket, err)
		}
	}
	p := &ReshardProgress{From: from, To: to, Phase: phaseCopy, Started: time.Now().UTC().Format(time.RFC3339)}
	for i := range from {
		p.Sources = append(p.Sources, ReshardSource{Bucket: config.ShardBucket(r.cfg.Enrich.Bucket, i, from)})
	}
	b, _ := json.Marshal(p)
	rev, err := r.meta.Create(ctx, reshardKey, b)
	if err != nil {
		return fmt.Errorf("reshard: record progress (another reshard started?): %w", err)
	}
	r.p, r.rev = p, rev
	r.log.Info("reshard started", "from", p.From, "to", p.To)
	return nil
}

// save records the progress (a compare-and-set on its revision, so two
// reshards never run at once).
func (r *resharder) save(ctx context.Context) error {
	b, _ := json.Marshal(r.p)
	rev, err := r.meta.Update(ctx, reshardKey, b, r.rev)
	if err != nil {
		return fmt.Errorf("reshard: record progress (another reshard running?): %w", err)
	}
	r.rev = rev
	if r.opt.checkpoint != nil {
		return r.opt.checkpoint(*r.p)
	}
	return nil
}

// copyAndSwitch copies every source shard into the new layout's buckets,
// checks that they hold what was copied, and records the new layout.
func (r *resharder) copyAndSwitch(ctx context.Context, to int) error {
	targets := make([]*shard, to)
	for i, k := range r.cfg.StateShards(to) {
		if err := bus.EnsureKV(ctx, r.js, r.log, k); err != nil {
			return fmt.Errorf("reshard: %w", err)
		}
		targets[i] = newShard(k.Bucket)
	}
	save := func() error { return r.save(ctx) }
	var copied int64
	for i := range r.p.Sources {
		if err := copyShard(ctx, r.js, &r.p.Sources[i], targets, save, r.opt, r.p); err != nil {
			return err
		}
		copied += r.p.Sources[i].Copied
	}
	var held uint64
	for _, t := range targets {
		n, err := bucketRecords(ctx, r.js, t.bucket)
		if err != nil {
			return err
		}
		held += n
	}
	if held != uint64(copied) {
		return fmt.Errorf("reshard: the new shards hold %d records, %d were copied: not switching (run it again with --abort, then anew)", held, copied)
	}
	lb, _ := json.Marshal(layoutRecord{Shards: to, Since: time.Now().UTC().Format(time.RFC3339)})
	if _, err := r.meta.Put(ctx, layoutKey, lb); err != nil {
		return fmt.Errorf("reshard: record layout: %w", err)
	}
	r.p.Phase = phaseCleanup
	if err := r.save(ctx); err != nil {
		return err
	}
	r.log.Info("reshard switched", "shards", to, "records", copied)
	return nil
}

// cleanup deletes the old layout's buckets and the progress record, and
// returns how many records were copied.
func (r *resharder) cleanup(ctx context.Context) (int64, error) {
	var copied int64
	for _, s := range r.p.Sources {
		copied += s.Copied
		if err := r.js.DeleteKeyValue(ctx, s.Bucket); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
			return copied, fmt.Errorf("reshard: delete old shard %s: %w", s.Bucket, err)
		}
	}
	if err := r.meta.Purge(ctx, reshardKey, jetstream.LastRevision(r.rev)); err != nil {
		return copied, fmt.Errorf("reshard: clear progress: %w", err)
	}
	return copied, nil
}

// AbortReshard undoes a reshard that has not switched yet: it deletes the
// new layout's buckets and the progress record, leaving the state as it
// was. It returns the reshard undone, nil if there was none; a reshard
// past its switch cannot be undone (finish it).
func AbortReshard(ctx context.Context, js jetstream.JetStream, cfg *config.Config) (*ReshardProgress, error) {
	bucket := cfg.Enrich.Bucket
	meta, err := js.KeyValue(ctx, config.StateMetaBucket(bucket))
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reshard: %w", err)
	}
	p, rev, err := readProgress(ctx, meta)
	if err != nil || p == nil {
		return nil, err
	}
	if p.Phase != phaseCopy {
		return p, fmt.Errorf("reshard: the reshard from %d to %d shards has switched already: finish it with --to %d", p.From, p.To, p.To)
	}
	for _, k := range cfg.StateShards(p.To) {
		if err := js.DeleteKeyValue(ctx, k.Bucket); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
			return p, fmt.Errorf("reshard: delete %s: %w", k.Bucket, err)
		}
	}
	if err := meta.Purge(ctx, reshardKey, jetstream.LastRevision(rev)); err != nil {
		return p, fmt.Errorf("reshard: clear progress: %w", err)
	}
	return p, nil
}

// readProgress reads the reshard in progress and its revision; nil when
// there is none.
func readProgress(ctx context.Context, meta jetstream.KeyValue) (*ReshardProgress, uint64, error) {
	e, err := meta.Get(ctx, reshardKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reshard: read progress: %w", err)
	}
	var p ReshardProgress
	if err := json.Unmarshal(e.Value(), &p); err != nil {
		return nil, 0, fmt.Errorf("reshard: read progress: %w", err)
	}
	return &p, e.Revision(), nil
}

// copyShard copies the records of one old shard bucket from where src
// says it got to into the new shards by key, with a checkpoint (save)
// every reshardBatch records: the copies are acknowledged first, so a
// run killed after a checkpoint misses nothing, and copies again only
// what came after it (a copy is a plain put of the same value: copying a
// record twice leaves one).
func copyShard(ctx context.Context, js jetstream.JetStream, src *ReshardSource, targets []*shard, save func() error, opt ReshardOptions, p *ReshardProgress) error {
	batch := cmp.Or(opt.batch, reshardBatch)
	if src.Done {
		return nil
	}
	st, err := js.Stream(ctx, "KV_"+src.Bucket)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		src.Done = true // a layout never written to
		return save()
	}
	if err != nil {
		return fmt.Errorf("reshard: %s: %w", src.Bucket, err)
	}
	last := st.CachedInfo().State.LastSeq
	if st.CachedInfo().State.Msgs == 0 || src.Seq >= last {
		src.Done = true
		return save()
	}
	prefix := "$KV." + src.Bucket + "."
	oc, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{prefix + ">"}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: src.Seq + 1,
	})
	if err != nil {
		return fmt.Errorf("reshard: read %s: %w", src.Bucket, err)
	}
	it, err := oc.Messages(jetstream.PullMaxMessages(batch))
	if err != nil {
		return fmt.Errorf("reshard: read %s: %w", src.Bucket, err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	futs := make([]jetstream.PubAckFuture, 0, batch)
	var seq uint64
	copied := src.Copied
	n := 0
	flush := func() error {
		for _, f := range futs {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return fmt.Errorf("reshard: copy %s: %w", f.Msg().Subject, err)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		futs = futs[:0]
		src.Seq, src.Copied, n = seq, copied, 0
		if err := save(); err != nil {
			return err
		}
		if opt.Progress != nil {
			var all int64
			for _, s := range p.Sources {
				all += s.Copied
			}
			opt.Progress(all)
		}
		return nil
	}
	for {
		m, err := it.Next(jetstream.NextMaxWait(walkStall))
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return fmt.Errorf("reshard: read %s at sequence %d of %d: %w", src.Bucket, seq, last, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("reshard: read %s: %w", src.Bucket, err)
		}
		seq = md.Sequence.Stream
		if bus.KVOp(m.Headers()) == jetstream.KeyValuePut {
			key := strings.TrimPrefix(m.Subject(), prefix)
			t := targets[ShardOf(key, len(targets))]
			f, err := js.PublishMsgAsync(&nats.Msg{Subject: t.prefix + key, Data: m.Data()})
			if err != nil {
				return fmt.Errorf("reshard: copy %s: %w", key, err)
			}
			futs = append(futs, f)
			copied++
		}
		n++
		end := md.NumPending == 0 && seq >= last
		if n >= batch || end {
			if end {
				src.Done = true
			}
			if err := flush(); err != nil {
				src.Done = false
				return err
			}
		}
		if end {
			return nil
		}
	}
}

// liveMembers is how many enrich worker processes are announced as
// running (partition.go's member keys not yet expired).
func liveMembers(ctx context.Context, js jetstream.JetStream) (int, error) {
	now := time.Now().UnixMilli()
	n := 0
	err := bus.DirectGetLast(ctx, js, "KV_"+MembersKV, []string{"$KV." + MembersKV + "." + memberPrefix + ">"}, func(_ string, _ uint64, op jetstream.KeyValueOp, data []byte) {
		var v memberValue
		if op == jetstream.KeyValuePut && json.Unmarshal(data, &v) == nil && v.Expires > now {
			n++
		}
	})
	if err != nil && !errors.Is(err, nats.ErrNoResponders) {
		return 0, fmt.Errorf("reshard: read enrich members: %w", err)
	}
	return n, nil
}
