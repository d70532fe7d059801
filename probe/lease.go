package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
)

// lease is a run lock in the locks bucket: one holder at a time across every
// instance. The value carries its owner and expiry, renewed with
// compare-and-set; a holder that crashed stops renewing, and once the expiry
// passed another instance takes the lease over (the key also carries a
// per-key TTL when the bucket allows it, so a dead lease disappears).
type lease struct {
	kv    jetstream.KeyValue
	js    jetstream.JetStream // reads the key from its stream leader
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

// renew extends the lease. It returns nil while this owner holds it, with
// a fresh expiry stored; an error wrapping errLeaseLost once another owner
// holds it or the key is gone; and, when the outcome stays unknown for
// budget, the last error.
//
// An update can fail without saying whether it was stored: during a stream
// leader election the acknowledgement is lost ("no response from stream")
// though the new leader may hold the write, and the next compare-and-set
// then conflicts with our own revision. So a failed update is settled by
// reading the key back from the stream leader: ours at a newer revision is
// still held (adopted, and renewed again); ours at the old revision was not
// stored (sent again); another owner's newer record is lost. While nothing
// can be read, or a replica that may lag answers with nothing conclusive,
// it tries again until budget is spent.
func (l *lease) renew(ctx context.Context, budget time.Duration) error {
	deadline := time.Now().Add(budget)
	wait := 50 * time.Millisecond
	for {
		actx, cancel := context.WithDeadline(ctx, deadline)
		again, err := l.renewOnce(actx)
		cancel()
		if err == nil || errors.Is(err, errLeaseLost) || ctx.Err() != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return err
		}
		if again {
			continue // our lost write was found: renew from it at once
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(min(wait, left)):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// renewOnce makes one compare-and-set of the lease and, when it fails,
// settles the outcome from the stored record. again asks for another
// attempt at once (the revision was adopted).
func (l *lease) renewOnce(ctx context.Context) (again bool, err error) {
	rev, err := l.kv.Update(ctx, l.key, l.value(), l.rev)
	if err == nil {
		l.rev = rev
		return false, nil
	}
	err = fmt.Errorf("renew lease: %w", err)
	rec, leader, rerr := bus.GetLatest(ctx, l.js, l.kv, l.key)
	var lv leaseValue
	ours := rerr == nil && json.Unmarshal(rec.Value, &lv) == nil && lv.Owner == l.owner
	switch {
	case ours && rec.Revision > l.rev:
		// Our earlier update was stored; only its acknowledgement was lost.
		l.rev = rec.Revision
		return true, err
	case ours:
		// Not stored (or not yet seen by the replica that answered): send again.
		return false, err
	case rerr == nil && rec.Revision > l.rev:
		return false, fmt.Errorf("%w: owner %q at revision %d (ours %d)", errLeaseLost, lv.Owner, rec.Revision, l.rev)
	case errors.Is(rerr, jetstream.ErrKeyDeleted):
		return false, fmt.Errorf("%w: deleted at revision %d (ours %d)", errLeaseLost, rec.Revision, l.rev)
	case leader && (rerr == nil || errors.Is(rerr, jetstream.ErrKeyNotFound)):
		// The leader has every acknowledged write, and ours is not the last.
		return false, fmt.Errorf("%w: the stream leader has no record of ours", errLeaseLost)
	case rerr != nil:
		return false, errors.Join(err, rerr)
	}
	// An older record from a replica that may lag: nothing to decide on.
	return false, err
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
