package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/config"
)

// EnsureWait bounds how long Ensure retries while a cluster is still
// forming; a caller that wants less gives a context with a deadline.
const EnsureWait = 2 * time.Minute

// Ensure creates every stream, consumer and bucket that cfg declares, and
// updates one whose declared settings differ. It is idempotent and safe to
// run from many processes at once. A change the server refuses (for example
// a replica count the cluster cannot hold) is returned as an error naming
// the object and the change, never ignored.
func Ensure(ctx context.Context, js jetstream.JetStream, cfg *config.Config, log *slog.Logger) error {
	for _, s := range cfg.Streams {
		if err := Retry(ctx, log, "stream "+s.Name, func() error { return ensureStream(ctx, js, s) }); err != nil {
			return err
		}
	}
	for _, c := range cfg.Consumers {
		if err := Retry(ctx, log, "consumer "+c.Stream+"/"+c.Name, func() error { return ensureConsumer(ctx, js, c) }); err != nil {
			return err
		}
	}
	for _, k := range cfg.KV {
		decls := []config.KVBucket{k}
		if k.Bucket == cfg.Enrich.Bucket {
			// The enrich state: its shard buckets (the bucket itself
			// when enrich.shards is 1).
			decls = cfg.StateShards(cfg.Enrich.Shards)
		}
		for _, k := range decls {
			if err := EnsureKV(ctx, js, log, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// EnsureKV creates bucket k as declared, or updates it where its settings
// differ, waiting as Ensure does while the cluster is not ready.
func EnsureKV(ctx context.Context, js jetstream.JetStream, log *slog.Logger, k config.KVBucket) error {
	return Retry(ctx, log, "kv "+k.Bucket, func() error { return ensureKV(ctx, js, k) })
}

// StreamConfig converts a declared stream into a JetStream config.
func StreamConfig(s config.Stream) jetstream.StreamConfig {
	sc := jetstream.StreamConfig{
		Name:              s.Name,
		Description:       config.StreamDescription(s),
		Subjects:          s.Subjects,
		Replicas:          config.Replicas(s.Replicas),
		MaxAge:            s.MaxAge,
		MaxBytes:          orUnlimited(s.MaxBytes),
		MaxMsgsPerSubject: orUnlimited(s.MaxMsgsPerSubject),
		Duplicates:        s.Duplicates,
		Storage:           jetstream.FileStorage,
		MaxMsgs:           -1,
		MaxConsumers:      -1,
		Discard:           jetstream.DiscardOld,
	}
	if s.Storage == "memory" {
		sc.Storage = jetstream.MemoryStorage
	}
	switch s.Retention {
	case "workqueue":
		sc.Retention = jetstream.WorkQueuePolicy
	case "interest":
		sc.Retention = jetstream.InterestPolicy
	}
	return sc
}

func orUnlimited(n int64) int64 {
	if n <= 0 {
		return -1
	}
	return n
}

func ensureStream(ctx context.Context, js jetstream.JetStream, s config.Stream) error {
	want := StreamConfig(s)
	st, err := js.Stream(ctx, s.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, want)
		if err == nil || !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return wrap("create stream", s.Name, err)
		}
		st, err = js.Stream(ctx, s.Name)
	}
	if err != nil {
		return wrap("get stream", s.Name, err)
	}
	have := st.CachedInfo().Config
	if streamSame(have, want) {
		return nil
	}
	if _, err := js.UpdateStream(ctx, want); err != nil {
		return &RefusedError{Object: "stream " + s.Name, Change: streamDiff(have, want), Err: err}
	}
	return nil
}

func streamSame(a, b jetstream.StreamConfig) bool {
	return slices.Equal(a.Subjects, b.Subjects) && a.Replicas == b.Replicas && a.MaxAge == b.MaxAge &&
		a.MaxBytes == b.MaxBytes && a.MaxMsgsPerSubject == b.MaxMsgsPerSubject && a.Storage == b.Storage &&
		a.Retention == b.Retention && (b.Duplicates == 0 || a.Duplicates == b.Duplicates) && a.Description == b.Description
}

func streamDiff(a, b jetstream.StreamConfig) string {
	switch {
	case a.Replicas != b.Replicas:
		return fmt.Sprintf("replicas %d -> %d", a.Replicas, b.Replicas)
	case a.Storage != b.Storage:
		return fmt.Sprintf("storage %s -> %s", a.Storage, b.Storage)
	case a.Retention != b.Retention:
		return fmt.Sprintf("retention %s -> %s", a.Retention, b.Retention)
	}
	return "settings"
}

// ensureConsumer creates or updates c and, when c has partitions, each
// of them (config.PartitionConsumer) with the same settings.
func ensureConsumer(ctx context.Context, js jetstream.JetStream, c config.Consumer) error {
	one := c
	one.Description = config.ConsumerDescription(c, -1)
	if err := ensureOneConsumer(ctx, js, one); err != nil {
		return err
	}
	for p := range c.Partitions {
		pc := c
		pc.Name, pc.FilterSubject, pc.Partitions = config.PartitionConsumer(c.Name, p), config.PartitionSubject(c.FilterSubject, p), 0
		pc.Description = config.ConsumerDescription(c, p)
		if err := ensureOneConsumer(ctx, js, pc); err != nil {
			return err
		}
	}
	return nil
}

func ensureOneConsumer(ctx context.Context, js jetstream.JetStream, c config.Consumer) error {
	cc := jetstream.ConsumerConfig{
		Durable:       c.Name,
		Description:   c.Description,
		FilterSubject: c.FilterSubject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		MaxDeliver:    c.MaxDeliver,
		MaxAckPending: c.MaxAckPending,
		Replicas:      c.Replicas,
	}
	if cc.MaxDeliver == 0 {
		cc.MaxDeliver = -1
	}
	_, err := js.CreateOrUpdateConsumer(ctx, c.Stream, cc)
	if err != nil {
		return &RefusedError{Object: "consumer " + c.Stream + "/" + c.Name, Change: "create or update", Err: err}
	}
	return nil
}

// KVConfig converts a declared bucket into a JetStream KV config.
func KVConfig(k config.KVBucket) jetstream.KeyValueConfig {
	kc := jetstream.KeyValueConfig{
		Bucket:      k.Bucket,
		Description: config.KVDescription(k),
		Replicas:    config.Replicas(k.Replicas),
		History:     uint8(max(k.History, 1)),
		TTL:         k.TTL,
		Storage:     jetstream.FileStorage,
	}
	if k.Storage == "memory" {
		kc.Storage = jetstream.MemoryStorage
	}
	if k.PerKeyTTL {
		// Delete markers of expired keys are kept this long so watchers see them.
		kc.LimitMarkerTTL = time.Minute
	}
	if p := k.Placement; p != nil {
		kc.Placement = &jetstream.Placement{Cluster: p.Cluster, Tags: p.Tags}
	}
	return kc
}

func ensureKV(ctx context.Context, js jetstream.JetStream, k config.KVBucket) error {
	want := KVConfig(k)
	kv, err := js.KeyValue(ctx, k.Bucket)
	if err == nil {
		st, err := kv.Status(ctx)
		if err != nil {
			return wrap("kv status", k.Bucket, err)
		}
		info := st.(*jetstream.KeyValueBucketStatus).StreamInfo()
		if info.Config.Replicas == want.Replicas && int64(want.History) == info.Config.MaxMsgsPerSubject &&
			info.Config.MaxAge == want.TTL && (want.LimitMarkerTTL > 0) == info.Config.AllowMsgTTL && info.Config.Description == want.Description &&
			samePlacement(info.Config.Placement, want.Placement) {
			return nil
		}
		if _, err := js.UpdateKeyValue(ctx, want); err != nil {
			return &RefusedError{Object: "kv " + k.Bucket, Change: fmt.Sprintf("replicas %d -> %d", info.Config.Replicas, want.Replicas), Err: err}
		}
		return nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return wrap("get kv", k.Bucket, err)
	}
	_, err = js.CreateOrUpdateKeyValue(ctx, want)
	return wrap("create kv", k.Bucket, err)
}

// samePlacement reports whether a stream placed as have satisfies the
// declared want: nil declares nothing.
func samePlacement(have, want *jetstream.Placement) bool {
	if want == nil {
		return true
	}
	if have == nil {
		return false
	}
	return (want.Cluster == "" || want.Cluster == have.Cluster) && slices.Equal(slices.Sorted(slices.Values(have.Tags)), slices.Sorted(slices.Values(want.Tags)))
}

func wrap(verb, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", verb, name, err)
}

// OpenKV returns the handle of an existing bucket, waiting as Ensure does
// while the cluster is not ready: a role started beside a cluster that is
// still electing leaders waits for it rather than exiting. A missing
// bucket is an error at once (jetstream.ErrBucketNotFound).
func OpenKV(ctx context.Context, js jetstream.JetStream, log *slog.Logger, bucket string) (jetstream.KeyValue, error) {
	var kv jetstream.KeyValue
	err := Retry(ctx, log, "kv "+bucket, func() (err error) {
		kv, err = js.KeyValue(ctx, bucket)
		return err
	})
	return kv, err
}

// OpenOrCreateKV opens the bucket decl names, creating it as declared when
// it is missing (a role started before Ensure ran, or against a config
// that does not declare it), waiting as OpenKV does while the cluster is
// not ready.
func OpenOrCreateKV(ctx context.Context, js jetstream.JetStream, log *slog.Logger, decl config.KVBucket) (jetstream.KeyValue, error) {
	kv, err := OpenKV(ctx, js, log, decl.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		err = Retry(ctx, log, "kv "+decl.Bucket, func() (err error) {
			kv, err = js.CreateOrUpdateKeyValue(ctx, KVConfig(decl))
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("kv bucket %s: %w", decl.Bucket, err)
	}
	return kv, nil
}

// OpenConsumer returns the handle of an existing durable consumer, waiting
// as OpenKV does while the cluster is not ready.
func OpenConsumer(ctx context.Context, js jetstream.JetStream, log *slog.Logger, stream, name string) (jetstream.Consumer, error) {
	var c jetstream.Consumer
	err := Retry(ctx, log, "consumer "+stream+"/"+name, func() (err error) {
		c, err = js.Consumer(ctx, stream, name)
		return err
	})
	return c, err
}

// RefusedError is a declared change that the server would not apply.
type RefusedError struct {
	Object string
	Change string
	Err    error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: server refused %s (fix pipeline.yaml or the cluster): %v", e.Object, e.Change, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Retry repeats f while the cluster is not ready (no leader yet, no peers,
// timeouts), for at most EnsureWait or until ctx ends, logging each wait
// on what.
func Retry(ctx context.Context, log *slog.Logger, what string, f func() error) error {
	deadline := time.Now().Add(EnsureWait)
	wait := 200 * time.Millisecond
	for {
		err := f()
		if err == nil || !Transient(err) || time.Now().After(deadline) {
			return err
		}
		log.Warn("jetstream not ready, retrying", "object", what, "err", err)
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(wait*2, 3*time.Second)
	}
}

// Transient reports whether err says JetStream is not there yet or for a
// moment (no stream leader during an election, a reconnect, an answer
// that did not come in time), so that the same request may succeed if
// sent again, rather than that the request itself is wrong.
func Transient(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, ErrNoAck) ||
		errors.Is(err, nats.ErrReconnectBufExceeded) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jetstream.JSErrCodeJetStreamNotEnabled, 10008 /* cluster not available */, 10005 /* no peers */, 10023 /* insufficient resources */, 10074 /* cluster not leader */ :
			return true
		}
	}
	return false
}
