package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SweepStats counts what one sweep removed.
type SweepStats struct {
	// Records are expired secret and upload records deleted.
	Records int
	// Blobs are orphaned or expired blobs deleted.
	Blobs int
}

// Sweep deletes what the per-key TTL does not cover: blobs whose secret
// record is gone (expired by TTL, or a save that died between blob and
// record), slices of discarded or completed uploads, and records whose
// expiry passed on the service clock. Any number of sweepers may run at
// once; every delete is idempotent and guarded by the record's revision.
func (s *Service) Sweep(ctx context.Context) (SweepStats, error) {
	var st SweepStats
	now := s.now()
	// Records past their expiry (normally the TTL deleted them already).
	for _, b := range []bucket{s.kv, s.up} {
		keys, err := listKeys(ctx, b)
		if err != nil {
			return st, err
		}
		for _, key := range keys {
			data, rev, live, err := b.load(ctx, key)
			if err != nil || !live {
				continue
			}
			if b.name == s.kv.name {
				var rec record
				if json.Unmarshal(data, &rec) == nil && now.UnixMilli() >= rec.Exp {
					s.expire(ctx, key, rev, rec)
					st.Records++
				}
				continue
			}
			var u upload
			if json.Unmarshal(data, &u) != nil {
				continue
			}
			idle := u.State != upDone && now.UnixMilli() >= max(u.Last, u.FinishAt)+s.opt.UploadIdle.Milliseconds()
			forgotten := u.State == upDone && now.UnixMilli() >= u.DoneAt+s.opt.UploadMemory.Milliseconds()
			if (idle || forgotten) && b.purge(ctx, key, rev) == nil {
				st.Records++
				if idle {
					s.deleteSlices(ctx, key, u)
				}
			}
		}
	}
	grace := now.Add(-s.opt.SweepGrace)
	// Secret blobs without a live record.
	objs, err := s.blobs.List(ctx, s.opt.BlobPrefix+"b/")
	if err != nil {
		return st, fmt.Errorf("list blobs: %w", err)
	}
	for _, o := range objs {
		id := strings.TrimPrefix(o.Key, s.opt.BlobPrefix+"b/")
		if o.ModTime.After(grace) {
			continue
		}
		data, _, live, err := s.kv.load(ctx, id)
		if err != nil {
			continue
		}
		var rec record
		if live && json.Unmarshal(data, &rec) == nil && rec.Blob == o.Key {
			continue
		}
		if s.blobs.Delete(ctx, o.Key) == nil {
			st.Blobs++
		}
	}
	// Slices whose upload is gone, discarded, done or of an older generation.
	objs, err = s.blobs.List(ctx, s.opt.BlobPrefix+"u/")
	if err != nil {
		return st, fmt.Errorf("list slices: %w", err)
	}
	for _, o := range objs {
		upID, gen, ok := parseSliceKey(strings.TrimPrefix(o.Key, s.opt.BlobPrefix+"u/"))
		if o.ModTime.After(grace) && ok {
			continue
		}
		if ok {
			data, _, live, err := s.up.load(ctx, upID)
			if err != nil {
				continue
			}
			var u upload
			if live && json.Unmarshal(data, &u) == nil && u.Gen == gen && u.State != upDone &&
				now.UnixMilli() < max(u.Last, u.FinishAt)+s.opt.UploadIdle.Milliseconds() {
				continue
			}
		}
		if s.blobs.Delete(ctx, o.Key) == nil {
			st.Blobs++
		}
	}
	return st, nil
}

func listKeys(ctx context.Context, b bucket) ([]string, error) {
	l, err := b.kv.ListKeys(ctx)
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s keys: %w", b.name, err)
	}
	var keys []string
	for k := range l.Keys() {
		keys = append(keys, k)
	}
	return keys, nil
}

// RunSweeper sweeps every interval until ctx ends.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		st, err := s.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("sweep failed", "err", err)
		} else if st.Records+st.Blobs > 0 {
			s.log.Info("swept", "records", st.Records, "blobs", st.Blobs)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
