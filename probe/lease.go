package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// lease is a run lock in the locks bucket: one holder at a time across every
// instance. The value carries its owner and expiry, renewed with
// compare-and-set; a holder that crashed stops renewing, and once the expiry
// passed another instance takes the lease over (the key also carries a
// per-key TTL when the bucket allows it, so a dead lease disappears).
type lease struct {
	kv    jetstream.KeyValue
	key   string
	owner string
	ttl   time.Duration
	rev   uint64
	now   func() time.Time
}

type leaseValue struct {
	Owner   string `json:"owner"`
	Expires int64  `json:"expires_unix_ms"`
}

func (l *lease) value() []byte {
	b, _ := json.Marshal(leaseValue{Owner: l.owner, Expires: l.now().Add(l.ttl).UnixMilli()})
	return b
}

// acquire takes the lease, or returns ErrBusy while another owner holds it.
func (l *lease) acquire(ctx context.Context) error {
	e, err := l.kv.Get(ctx, l.key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		rev, err := l.kv.Create(ctx, l.key, l.value(), jetstream.KeyTTL(2*l.ttl))
		if err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
			// A bucket without per-key TTL: the expiry in the value suffices.
			rev, err = l.kv.Create(ctx, l.key, l.value())
		}
		if errors.Is(err, jetstream.ErrKeyExists) {
			return ErrBusy
		}
		if err != nil {
			return fmt.Errorf("create lease: %w", err)
		}
		l.rev = rev
		return nil
	case err != nil:
		return fmt.Errorf("read lease: %w", err)
	}
	if held, ok := l.heldByOther(e.Value()); ok && held {
		return ErrBusy
	}
	rev, err := l.kv.Update(ctx, l.key, l.value(), e.Revision())
	if err != nil {
		// Someone else renewed or took it between our read and write.
		return ErrBusy
	}
	l.rev = rev
	return nil
}

// heldByOther reports whether v is a live lease of another owner.
func (l *lease) heldByOther(v []byte) (bool, bool) {
	var lv leaseValue
	if err := json.Unmarshal(v, &lv); err != nil {
		return false, true // unreadable: treat as free and overwrite
	}
	return lv.Owner != l.owner && time.UnixMilli(lv.Expires).After(l.now()), true
}

// renew extends the lease; an error means it was lost.
func (l *lease) renew(ctx context.Context) error {
	rev, err := l.kv.Update(ctx, l.key, l.value(), l.rev)
	if err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	l.rev = rev
	return nil
}

// release deletes the lease if this owner still holds it.
func (l *lease) release(ctx context.Context) {
	_ = l.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev))
}

// free reports whether nobody holds a live lease (for orphan detection).
func leaseFree(ctx context.Context, kv jetstream.KeyValue, key string, now time.Time) (bool, error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	var lv leaseValue
	if json.Unmarshal(e.Value(), &lv) != nil {
		return true, nil
	}
	return !time.UnixMilli(lv.Expires).After(now), nil
}
