package gateway

import (
	"context"
	"errors"
	"strconv"
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

// Charge is the outcome of a successful Usage.Charge.
type Charge struct {
	// Used is the user's credits this month after this request, as this
	// copy sees them (other copies' unspent leases count as used).
	Used int64
	// Quota is the applied monthly quota; 0 = unlimited.
	Quota int64
	// RateRemaining is how many more requests the key may make in this window.
	RateRemaining int
	// Reset is when the rate window ends.
	Reset time.Time
	key   string
	month int64
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

// Usage counts requests and credits shared by every gateway copy: the
// per-key rate window (w.<key-id> in the usage bucket) and the per-user
// monthly credits (u.<user>.<YYYYMM>) are Budgets counters, so a request
// is counted from this copy's lease in memory and NATS is asked only for
// a new lease (see Budgets for the bound).
type Usage struct {
	b   *Budgets
	now func() time.Time
}

// NewUsage returns usage counters on kv (the usage bucket) with the
// default lease sizing.
func NewUsage(kv jetstream.KeyValue) *Usage {
	return NewUsageOn(NewBudgets(kv, LeaseConfig{}))
}

// NewUsageOn returns usage counters on b.
func NewUsageOn(b *Budgets) *Usage { return &Usage{b: b, now: time.Now} }

// SetNow replaces the clock that picks the rate window and the month
// (tests pin it away from a window's edge). Call it before any Charge.
func (u *Usage) SetNow(now func() time.Time) { u.now, u.b.now = now, now }

// Budgets returns the shared counters under u (Run them to give back idle leases).
func (u *Usage) Budgets() *Budgets { return u.b }

// Run gives back idle leases until ctx ends, then every unspent one.
func (u *Usage) Run(ctx context.Context) error { return u.b.Run(ctx) }

func monthKey(user string, t time.Time) string {
	return "u." + user + "." + strconv.FormatInt(monthID(t), 10)
}

func monthID(t time.Time) int64 { return int64(t.Year())*100 + int64(t.Month()) }

func nextMonth(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
}

func rateKey(keyID string) string { return "w." + keyID }

// Charge counts one request of keyID for user and adds credits to the
// user's month. With enforceQuota false the credits are counted but the
// quota is not applied (Option B: the external service owns credits).
// It returns a *LimitError wrapping ErrRateLimited or ErrQuotaExceeded when
// a limit is hit (nothing is counted then), or ErrUnavailable when NATS
// cannot be reached and this copy's leases cannot cover the request.
func (u *Usage) Charge(ctx context.Context, user, keyID string, lim Limits, credits int64, enforceQuota bool) (Charge, error) {
	now := u.now().UTC()
	minute := now.Unix() / 60
	reset := time.Unix((minute+1)*60, 0).UTC()
	rk := rateKey(keyID)
	rateUsed, err := u.b.Spend(ctx, rk, Window{ID: minute, Limit: int64(lim.RatePerMinute), Ends: reset}, 1)
	if errors.Is(err, errExhausted) {
		return Charge{}, &LimitError{Err: ErrRateLimited, RetryAfter: reset.Sub(now), Limit: int64(lim.RatePerMinute), Used: rateUsed}
	}
	if err != nil {
		return Charge{}, err
	}
	quota := lim.MonthlyQuota
	if !enforceQuota {
		quota = 0
	}
	mk, mid := monthKey(user, now), monthID(now)
	used, err := u.b.Spend(ctx, mk, Window{ID: mid, Limit: quota, Ends: nextMonth(now)}, credits)
	if err != nil {
		u.b.Give(rk, minute, 1) // nothing is counted when refused
		if errors.Is(err, errExhausted) {
			return Charge{}, &LimitError{Err: ErrQuotaExceeded, RetryAfter: nextMonth(now).Sub(now), Limit: lim.MonthlyQuota, Used: used}
		}
		return Charge{}, err
	}
	return Charge{Used: used, Quota: lim.MonthlyQuota, RateRemaining: max(0, lim.RatePerMinute-int(rateUsed)), Reset: reset, key: mk, month: mid}, nil
}

// Refund gives back credits taken by ch (the rate window is not refunded).
// They return to this copy's lease, without a round trip.
func (u *Usage) Refund(_ context.Context, ch Charge, credits int64) error {
	if ch.key == "" || credits == 0 {
		return nil
	}
	u.b.Give(ch.key, ch.month, credits)
	return nil
}

// Used returns the user's credits in the month of t, as this copy sees
// them (one read of the shared counter).
func (u *Usage) Used(ctx context.Context, user string, t time.Time) (int64, error) {
	t = t.UTC()
	return u.b.Used(ctx, monthKey(user, t), Window{ID: monthID(t), Ends: nextMonth(t)})
}
