package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Limits are one tier's limits.
type Limits struct {
	// RatePerMinute is requests per key per fixed one-minute window (UTC).
	RatePerMinute int
	// MonthlyQuota is credits per user per calendar month (UTC); 0 = unlimited.
	MonthlyQuota int64
}

// usageRecord is the value of u.<user>.<YYYYMM> in the usage bucket: the
// user's credits this month and, per key, the current rate window.
type usageRecord struct {
	Credits int64                 `json:"credits"`
	Windows map[string]rateWindow `json:"windows,omitempty"`
}

type rateWindow struct {
	Start int64 `json:"start"` // unix minute
	Count int   `json:"count"`
}

// Charge is the outcome of a successful Usage.Charge.
type Charge struct {
	// Used is the user's credits this month after this request.
	Used int64
	// Quota is the applied monthly quota; 0 = unlimited.
	Quota int64
	// RateRemaining is how many more requests the key may make in this window.
	RateRemaining int
	// Reset is when the rate window ends.
	Reset time.Time
	key   string
}

// LimitError is ErrRateLimited or ErrQuotaExceeded with the wait until it lifts.
type LimitError struct {
	Err        error
	RetryAfter time.Duration
	Limit      int64
	Used       int64
}

func (e *LimitError) Error() string { return e.Err.Error() }
func (e *LimitError) Unwrap() error { return e.Err }

// Usage counts requests and credits in the usage bucket with compare-and-set,
// so every gateway instance sees and enforces the same numbers. One CAS per
// request does both the per-key rate window and the per-user monthly credits.
type Usage struct {
	kv  jetstream.KeyValue
	now func() time.Time

	mu    sync.Mutex
	users map[string]*userCounter
}

// userCounter serialises one user's updates within an instance (no self
// conflicts) and remembers the last seen value and revision, so that the
// common case is a single Update round trip.
type userCounter struct {
	mu   sync.Mutex
	key  string
	rec  usageRecord
	rev  uint64 // 0: unknown, read first
	seen time.Time
}

// NewUsage returns usage counters on kv (the usage bucket).
func NewUsage(kv jetstream.KeyValue) *Usage {
	return &Usage{kv: kv, now: time.Now, users: map[string]*userCounter{}}
}

func monthKey(user string, t time.Time) string {
	return fmt.Sprintf("u.%s.%04d%02d", user, t.Year(), int(t.Month()))
}

func nextMonth(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
}

func (u *Usage) counter(key string, now time.Time) *userCounter {
	u.mu.Lock()
	defer u.mu.Unlock()
	c, ok := u.users[key]
	if !ok {
		c = &userCounter{key: key}
		u.users[key] = c
		if len(u.users) > 10000 { // forget idle users so memory stays bounded
			for k, o := range u.users {
				if now.Sub(o.seen) > 10*time.Minute && o.mu.TryLock() {
					delete(u.users, k)
					o.mu.Unlock()
				}
			}
		}
	}
	c.seen = now
	return c
}

// Charge counts one request of keyID for user and adds credits to the
// user's month. With enforceQuota false the credits are counted but the
// quota is not applied (Option B: the external service owns credits).
// It returns a *LimitError wrapping ErrRateLimited or ErrQuotaExceeded when
// a limit is hit (nothing is counted then), or ErrUnavailable when NATS
// cannot be reached.
func (u *Usage) Charge(ctx context.Context, user, keyID string, lim Limits, credits int64, enforceQuota bool) (Charge, error) {
	now := u.now().UTC()
	key := monthKey(user, now)
	c := u.counter(key, now)
	c.mu.Lock()
	defer c.mu.Unlock()
	win := now.Unix() / 60
	reset := time.Unix((win+1)*60, 0).UTC()
	for attempt := 0; attempt < 32; attempt++ {
		if c.rev == 0 {
			if err := c.load(ctx, u.kv); err != nil {
				return Charge{}, err
			}
		}
		rec := c.rec.clone()
		w := rec.Windows[keyID]
		if w.Start != win {
			w = rateWindow{Start: win}
		}
		if w.Count >= lim.RatePerMinute {
			return Charge{}, &LimitError{Err: ErrRateLimited, RetryAfter: reset.Sub(now), Limit: int64(lim.RatePerMinute), Used: int64(w.Count)}
		}
		if enforceQuota && lim.MonthlyQuota > 0 && rec.Credits+credits > lim.MonthlyQuota {
			return Charge{}, &LimitError{Err: ErrQuotaExceeded, RetryAfter: nextMonth(now).Sub(now), Limit: lim.MonthlyQuota, Used: rec.Credits}
		}
		w.Count++
		rec.Credits += credits
		for id, o := range rec.Windows { // drop other keys' stale windows
			if o.Start != win {
				delete(rec.Windows, id)
			}
		}
		rec.Windows[keyID] = w
		ok, err := c.store(ctx, u.kv, rec)
		if err != nil {
			return Charge{}, err
		}
		if ok {
			return Charge{Used: rec.Credits, Quota: lim.MonthlyQuota, RateRemaining: lim.RatePerMinute - w.Count, Reset: reset, key: key}, nil
		}
	}
	return Charge{}, fmt.Errorf("%w: usage counter too contended", ErrUnavailable)
}

// Refund gives back credits taken by ch (the rate window is not refunded).
func (u *Usage) Refund(ctx context.Context, ch Charge, credits int64) error {
	if ch.key == "" || credits == 0 {
		return nil
	}
	c := u.counter(ch.key, u.now())
	c.mu.Lock()
	defer c.mu.Unlock()
	for attempt := 0; attempt < 32; attempt++ {
		if c.rev == 0 {
			if err := c.load(ctx, u.kv); err != nil {
				return err
			}
		}
		rec := c.rec.clone()
		rec.Credits = max(0, rec.Credits-credits)
		ok, err := c.store(ctx, u.kv, rec)
		if err != nil || ok {
			return err
		}
	}
	return fmt.Errorf("%w: usage counter too contended", ErrUnavailable)
}

// Used returns the user's credits in the month of t.
func (u *Usage) Used(ctx context.Context, user string, t time.Time) (int64, error) {
	e, err := u.kv.Get(ctx, monthKey(user, t.UTC()))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	var rec usageRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return 0, fmt.Errorf("decode usage: %w", err)
	}
	return rec.Credits, nil
}

func (r usageRecord) clone() usageRecord {
	out := usageRecord{Credits: r.Credits, Windows: make(map[string]rateWindow, len(r.Windows)+1)}
	for k, v := range r.Windows {
		out.Windows[k] = v
	}
	return out
}

// load reads the current value; a missing key is an empty record whose
// first write is a Create.
func (c *userCounter) load(ctx context.Context, kv jetstream.KeyValue) error {
	e, err := kv.Get(ctx, c.key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		c.rec, c.rev = usageRecord{}, 0
		return nil
	case err != nil:
		return fmt.Errorf("%w: read usage: %w", ErrUnavailable, err)
	}
	var rec usageRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return fmt.Errorf("%w: decode usage: %w", ErrUnavailable, err)
	}
	c.rec, c.rev = rec, e.Revision()
	return nil
}

// store writes rec if nobody changed the key since c.rev. It returns false
// (and forgets the revision) on a conflict.
func (c *userCounter) store(ctx context.Context, kv jetstream.KeyValue, rec usageRecord) (bool, error) {
	b, _ := json.Marshal(rec)
	var rev uint64
	var err error
	if c.rev == 0 {
		rev, err = kv.Create(ctx, c.key, b)
	} else {
		rev, err = kv.Update(ctx, c.key, b, c.rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		// Somebody else wrote first: read their value and let the caller retry.
		if err := c.load(ctx, kv); err != nil {
			return false, err
		}
		return false, nil
	}
	if err != nil {
		c.rev = 0
		return false, fmt.Errorf("%w: write usage: %w", ErrUnavailable, err)
	}
	c.rec, c.rev = rec, rev
	return true, nil
}
