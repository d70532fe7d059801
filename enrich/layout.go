package enrich

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
)

// The layout of the state: how many shard buckets hold it. It is recorded
// in the meta bucket (config.StateMetaBucket, "ipstate-meta") under
// layoutKey once the state has more than one shard; a state without the
// record is the single bucket of before sharding. A reshard in progress
// is recorded there under reshardKey (reshard.go).
const (
	layoutKey  = "layout"
	reshardKey = "reshard"
)

// layoutRecord is the value of layoutKey.
type layoutRecord struct {
	Shards int    `json:"shards"`
	Since  string `json:"since,omitempty"`
}

// ErrLayout is the error of a state whose recorded layout is not the one
// the configuration asks for, or that is being resharded.
var ErrLayout = errors.New("state layout")

// Layout is what the meta bucket says of a state: its shard count (1 when
// nothing is recorded) and the reshard in progress, if any.
type Layout struct {
	Shards  int
	Reshard *ReshardProgress
}

// ReadLayout reads the layout of the state kept in bucket.
func ReadLayout(ctx context.Context, js jetstream.JetStream, bucket string) (Layout, error) {
	l := Layout{Shards: 1}
	kv, err := js.KeyValue(ctx, config.StateMetaBucket(bucket))
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return l, nil
	}
	if err != nil {
		return l, fmt.Errorf("read state layout: %w", err)
	}
	var rec layoutRecord
	switch found, err := getJSON(ctx, js, kv, layoutKey, &rec); {
	case err != nil:
		return l, fmt.Errorf("read state layout: %w", err)
	case found && rec.Shards >= 1:
		l.Shards = rec.Shards
	}
	var p ReshardProgress
	found, err := getJSON(ctx, js, kv, reshardKey, &p)
	if err != nil {
		return l, fmt.Errorf("read state layout: %w", err)
	}
	if found {
		l.Reshard = &p
	}
	return l, nil
}

// getJSON reads key of kv from the stream leader into v; false when the
// key has no value.
func getJSON(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue, key string, v any) (bool, error) {
	rec, _, err := bus.GetLatest(ctx, js, kv, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(rec.Value, v); err != nil {
		return false, fmt.Errorf("%s: %w", key, err)
	}
	return true, nil
}

// CheckLayout verifies that the state is laid out over as many shards as
// the store was opened with (enrich.shards), and that no reshard is in
// progress; the error names enrich.shards and the command that changes the
// layout. A state with nothing recorded is one bucket: with more shards
// configured, it is taken as new and the layout recorded, unless that one
// bucket holds records (they would be lost from view).
func (s *Store) CheckLayout(ctx context.Context) error {
	want := len(s.shards)
	l, err := ReadLayout(ctx, s.js, s.bucket)
	if err != nil {
		return err
	}
	if p := l.Reshard; p != nil && p.Phase == phaseCopy {
		return fmt.Errorf("%w: a reshard of the state from %d to %d shards is in progress: finish it with `netintel state reshard --to %d` (or undo it with `netintel state reshard --abort`), then set enrich.shards: %d",
			ErrLayout, p.From, p.To, p.To, p.To)
	}
	if l.Shards == want {
		return nil
	}
	if l.Shards == 1 && want > 1 {
		// One bucket: the state of before sharding, or a new one.
		n, err := bucketRecords(ctx, s.js, s.bucket)
		if err != nil {
			return err
		}
		if n == 0 {
			return s.recordLayout(ctx, want)
		}
	}
	return fmt.Errorf("%w: the state is kept in %d shard(s) but enrich.shards is %d: run `netintel state reshard --to %d` to move it (docs/operators.md), or set enrich.shards: %d",
		ErrLayout, l.Shards, want, want, l.Shards)
}

// checkLayout runs CheckLayout once before the first use of a store that
// asks for it (the worker's); a failed check runs again next time.
func (s *Store) checkLayout(ctx context.Context) error {
	if !s.verify || s.layoutOK.Load() {
		return nil
	}
	if err := s.CheckLayout(ctx); err != nil {
		return err
	}
	s.layoutOK.Store(true)
	return nil
}

// recordLayout records a new state's layout of n shards (processes
// started together with the same enrich.shards write the same record).
func (s *Store) recordLayout(ctx context.Context, n int) error {
	kv, err := openMeta(ctx, s.js, s.bucket, s.shards[0].bucket)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(layoutRecord{Shards: n, Since: time.Now().UTC().Format(time.RFC3339)})
	if _, err := kv.Put(ctx, layoutKey, b); err != nil {
		return fmt.Errorf("record state layout: %w", err)
	}
	l, err := ReadLayout(ctx, s.js, s.bucket)
	if err != nil {
		return err
	}
	if l.Shards != n {
		return fmt.Errorf("%w: another process recorded the state as %d shard(s), enrich.shards is %d", ErrLayout, l.Shards, n)
	}
	return nil
}

// openMeta opens the meta bucket of the state in bucket, creating it with
// the replicas of the stream of like (a bucket of the state).
func openMeta(ctx context.Context, js jetstream.JetStream, bucket, like string) (jetstream.KeyValue, error) {
	name := config.StateMetaBucket(bucket)
	kv, err := js.KeyValue(ctx, name)
	if err == nil {
		return kv, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("state meta bucket %s: %w", name, err)
	}
	replicas := 1
	if st, err := js.Stream(ctx, "KV_"+like); err == nil {
		replicas = st.CachedInfo().Config.Replicas
	}
	kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, History: 1, Replicas: replicas,
		Description: "netintel: layout of the " + bucket + " state (shard count) and a reshard's progress"})
	if err != nil {
		return nil, fmt.Errorf("state meta bucket %s: %w", name, err)
	}
	return kv, nil
}

// bucketRecords is how many messages the stream of bucket holds, 0 when
// the bucket does not exist.
func bucketRecords(ctx context.Context, js jetstream.JetStream, bucket string) (uint64, error) {
	st, err := js.Stream(ctx, "KV_"+bucket)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("state bucket %s: %w", bucket, err)
	}
	return st.CachedInfo().State.Msgs, nil
}

// Records is how many records (live keys and deletion markers) the
// state's shards hold, summed.
func (s *Store) Records(ctx context.Context) (uint64, error) {
	var n uint64
	for _, sh := range s.shards {
		st, err := s.js.Stream(ctx, sh.stream)
		if err != nil {
			return 0, fmt.Errorf("state bucket %s: %w", sh.bucket, err)
		}
		n += st.CachedInfo().State.Msgs
	}
	return n, nil
}
