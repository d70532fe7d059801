package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Budgets shares limits between every copy of a service through a NATS KV
// bucket without a round trip per request: a copy takes a block of units
// (a lease) from the shared counter with one compare-and-set, then spends
// it from memory. A limit is never exceeded by the copies together, since
// every unit spent was reserved in the shared counter first; the price is
// that units leased to one copy and not spent yet are not available to the
// others. A copy holds at most one lease per counter, of at most
// LeaseConfig.Cap(limit) units, and gives back what it did not spend after
// LeaseConfig.Idle without use (and when it stops). So the copies together
// may refuse a request while at most copies × Cap(limit) units of the limit
// are still unspent, and a copy that dies loses at most its own leases.
// docs/gateway.md states the bound.
//
// Two kinds of counter are kept: fixed windows (Spend: n units per window,
// such as a minute or a calendar month) and token buckets (Allow: a rate
// with a burst, for the per-address limits of the public APIs).
type Budgets struct {
	kv  jetstream.KeyValue
	cfg LeaseConfig
	now func() time.Time

	mu     sync.Mutex
	leases map[string]*lease
	lastGC time.Time
}

// LeaseConfig sizes the leases of Budgets.
type LeaseConfig struct {
	// Fraction is the largest lease as a fraction of the limit (default
	// 0.01: one percent).
	Fraction float64
	// Max is the largest lease in units, whatever the limit (default 1000).
	Max int64
	// Idle is how long a lease may go unused before its unspent units are
	// given back (default 2s).
	Idle time.Duration
	// TokenTTL is how long tokens taken from a token bucket stay usable;
	// unspent ones are then dropped, never given back (default 1s).
	TokenTTL time.Duration
}

// DefaultLeaseConfig is the lease sizing used when a field is zero.
var DefaultLeaseConfig = LeaseConfig{Fraction: 0.01, Max: 1000, Idle: 2 * time.Second, TokenTTL: time.Second}

func (c LeaseConfig) withDefaults() LeaseConfig {
	d := DefaultLeaseConfig
	if c.Fraction <= 0 || c.Fraction > 1 {
		c.Fraction = d.Fraction
	}
	if c.Max <= 0 {
		c.Max = d.Max
	}
	if c.Idle <= 0 {
		c.Idle = d.Idle
	}
	if c.TokenTTL <= 0 {
		c.TokenTTL = d.TokenTTL
	}
	return c
}

// Cap is the largest lease of a counter with the given limit (0 =
// unlimited): max(1, min(Max, floor(limit × Fraction))), or Max when
// unlimited. A request needing more units than that (a batch) takes
// exactly what it needs.
func (c LeaseConfig) Cap(limit int64) int64 {
	c = c.withDefaults()
	if limit <= 0 {
		return c.Max
	}
	return max(1, min(c.Max, int64(float64(limit)*c.Fraction)))
}

// errExhausted: the shared counter has not enough units left.
var errExhausted = errors.New("budget exhausted")

// lease is one copy's share of one counter.
type lease struct {
	lock chan struct{} // a mutex that a waiter with a deadline can give up on
	key  string

	token   bool      // a token bucket (else a fixed window)
	window  int64     // fixed window: the window the lease belongs to
	ends    time.Time // fixed window: its end; token bucket: when the tokens lapse
	left    int64     // units leased and not spent
	granted int64     // fixed window: the shared total after our last write or read
	block   int64     // the size of the last lease taken
	took    time.Time // when the last lease was taken
	used    time.Time // when a unit was last spent

	// filling: a goroutine is taking a lease (without the lock); fillDone
	// closes when it is done.
	filling  bool
	fillDone chan struct{}

	val   []byte // the last value read or written, and its revision (only
	rev   uint64 // the filler, or a holder of the lock while not filling,
	known bool   // touches them); rev 0 with known: the key does not exist
}

func (l *lease) acquire(ctx context.Context) error {
	// Held for a few map and counter operations, except during a refill:
	// yield a few times before waiting on ctx (which may make its timer).
	for range 4 {
		select {
		case l.lock <- struct{}{}:
			return nil
		default:
			runtime.Gosched()
		}
	}
	select {
	case l.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for a budget: %w", ErrUnavailable, ctx.Err())
	}
}

func (l *lease) release() { <-l.lock }

// settle takes l's lock once no lease is being taken for it; false when
// ctx ends first.
func (l *lease) settle(ctx context.Context) bool {
	for {
		if l.acquire(ctx) != nil {
			return false
		}
		if !l.filling {
			return true
		}
		done := l.fillDone
		l.release()
		select {
		case <-done:
		case <-ctx.Done():
			return false
		}
	}
}

// NewBudgets returns shared budgets on kv.
func NewBudgets(kv jetstream.KeyValue, cfg LeaseConfig) *Budgets {
	return &Budgets{kv: kv, cfg: cfg.withDefaults(), now: time.Now, leases: map[string]*lease{}}
}

// Config returns the lease sizing in force.
func (b *Budgets) Config() LeaseConfig { return b.cfg }

func (b *Budgets) lease(key string) *lease {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.leases[key]
	if !ok {
		l = &lease{lock: make(chan struct{}, 1), key: key}
		b.leases[key] = l
	}
	return l
}

// Window is one fixed window of a counter: ID numbers it (a unix minute, a
// YYYYMM month); Limit is the units it allows, 0 = unlimited; Ends is when
// the next window starts.
type Window struct {
	ID    int64
	Limit int64
	Ends  time.Time
}

// windowDoc is the stored value of a fixed-window counter: the units
// leased out in the window (spent, or held by a copy). A document without
// a window (written before leases) belongs to the current one.
type windowDoc struct {
	Window  int64 `json:"window,omitempty"`
	Credits int64 `json:"credits"`
}

// Spend takes n units of key's window w and returns the units of the
// window used so far as this copy sees them (the shared total minus what
// this copy holds unspent; other copies' unspent leases count as used).
// It returns errExhausted (with that figure) when fewer than n are left,
// and nothing is taken then; ErrUnavailable when NATS cannot be reached
// and this copy's lease cannot cover n.
//
// When a lease of a busy counter is half spent the next one is taken in
// the background, so that requests do not wait for NATS while it comes; a copy still holds at
// most Cap(limit) units of a counter (or what one request needs, if more).
func (b *Budgets) Spend(ctx context.Context, key string, w Window, n int64) (int64, error) {
	l := b.lease(key)
	if err := l.acquire(ctx); err != nil {
		return 0, err
	}
	for {
		now := b.now()
		l.used = now
		switch {
		case w.ID > l.window:
			l.window, l.left, l.granted = w.ID, 0, 0
		case w.ID < l.window:
			// A request timed just before the window turned: it counts
			// in the new one (windows only move forward).
			w.ID, w.Ends = l.window, l.ends
		}
		l.ends = w.Ends
		if l.left >= n {
			l.left -= n
			used := l.granted - l.left
			b.prefetch(l, w, now)
			l.release()
			return used, nil
		}
		if l.filling {
			done := l.fillDone
			l.release()
			select {
			case <-done:
			case <-ctx.Done():
				return 0, fmt.Errorf("%w: waiting for a lease: %w", ErrUnavailable, ctx.Err())
			}
			if err := l.acquire(ctx); err != nil {
				return 0, err
			}
			continue
		}
		want := b.nextBlock(l, w.Limit, n, now)
		need := n - l.left
		done := l.startFill()
		l.release()
		got, granted, err := b.takeWindow(ctx, l, w, want, need)
		l.lock <- struct{}{}
		l.endFill(done)
		if err != nil && !errors.Is(err, errExhausted) {
			l.release()
			return 0, err
		}
		if l.window == w.ID {
			l.granted = granted
			l.left += got
		}
		if err != nil {
			used := l.granted - l.left
			l.release()
			return used, err
		}
	}
}

// prefetch starts taking the next lease in the background when l is half
// spent and leases have grown to prefetchMinBlock (called with l's lock held). The new lease is sized so that l
// never holds more than Cap(limit).
func (b *Budgets) prefetch(l *lease, w Window, now time.Time) {
	if l.filling || l.block < prefetchMinBlock || l.left*2 >= l.block || (w.Limit > 0 && l.granted >= w.Limit) {
		return
	}
	room := b.cfg.Cap(w.Limit) - l.left
	if room < 1 {
		return
	}
	want := min(b.nextBlock(l, w.Limit, 1, now), room)
	done := l.startFill()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), prefetchTimeout)
		got, granted, err := b.takeWindow(ctx, l, w, want, 1)
		cancel()
		l.lock <- struct{}{}
		defer l.release()
		l.endFill(done)
		if (err == nil || errors.Is(err, errExhausted)) && l.window == w.ID {
			l.granted = granted
			l.left += got
		}
	}()
}

// prefetchMinBlock: leases are taken ahead only once they have grown to
// this size (a busy counter). A counter of a small limit (Cap 1: free,
// starter, pro rate windows) is leased one unit at a time, when needed,
// so no copy holds a unit another copy's request could use.
const prefetchMinBlock = 4

// prefetchTimeout bounds a background lease.
const prefetchTimeout = 5 * time.Second

// startFill marks l as being filled (called with l's lock held): only the
// filler reads or writes the shared counter of l until endFill.
func (l *lease) startFill() chan struct{} {
	l.filling = true
	l.fillDone = make(chan struct{})
	return l.fillDone
}

func (l *lease) endFill(done chan struct{}) {
	l.filling = false
	close(done)
}

// takeWindow leases want units of window w, or what is left of the limit
// if that covers need. It runs without l's lock, as l's only filler. It
// returns the units got and the shared total after the write (or as read,
// with errExhausted).
func (b *Budgets) takeWindow(ctx context.Context, l *lease, w Window, want, need int64) (got, granted int64, err error) {
	wrote, err := b.cas(ctx, l, func(cur []byte) ([]byte, bool) {
		var d windowDoc
		if cur != nil {
			_ = json.Unmarshal(cur, &d)
		}
		if d.Window != 0 && d.Window < w.ID {
			d = windowDoc{}
		}
		if d.Window > w.ID { // the counter moved to a later window
			return nil, false
		}
		d.Window = w.ID
		take := want
		if w.Limit > 0 {
			take = min(want, w.Limit-d.Credits)
		}
		granted = d.Credits
		if take < need {
			return nil, false
		}
		got = take
		d.Credits += take
		granted = d.Credits
		v, _ := json.Marshal(d)
		return v, true
	})
	if err != nil {
		return 0, 0, err
	}
	if !wrote {
		return 0, granted, errExhausted
	}
	return got, granted, nil
}

// nextBlock sizes the next lease: it doubles when the last one was spent
// within a second and halves otherwise, between 1 and Cap(limit), and is
// never less than what the request needs.
func (b *Budgets) nextBlock(l *lease, limit, n int64, now time.Time) int64 {
	switch {
	case l.block == 0:
		l.block = 1
	case now.Sub(l.took) < time.Second:
		l.block *= 2
	default:
		l.block = max(1, l.block/2)
	}
	l.block = min(l.block, b.cfg.Cap(limit))
	l.took = now
	return max(l.block, n-l.left)
}

// Give returns n units to this copy's lease of key's window id, without a
// round trip (a refund); they are spent by later requests or given back
// to the shared counter when the lease goes idle.
func (b *Budgets) Give(key string, id, n int64) {
	if n <= 0 {
		return
	}
	l := b.lease(key)
	l.lock <- struct{}{}
	defer l.release()
	if l.window == id && !l.token {
		l.left += n
	}
}

// Used returns the units of key's window w used so far as this copy sees
// them: the shared total (one read) minus this copy's unspent lease.
func (b *Budgets) Used(ctx context.Context, key string, w Window) (int64, error) {
	l := b.lease(key)
	if !l.settle(ctx) { // a lease being taken is counted on both sides
		return 0, fmt.Errorf("%w: waiting for a lease: %w", ErrUnavailable, ctx.Err())
	}
	defer l.release()
	e, err := b.kv.Get(ctx, key)
	var d windowDoc
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
	case err != nil:
		return 0, fmt.Errorf("%w: read usage: %w", ErrUnavailable, err)
	default:
		if err := json.Unmarshal(e.Value(), &d); err != nil {
			return 0, fmt.Errorf("decode usage: %w", err)
		}
	}
	if d.Window != 0 && d.Window != w.ID {
		return 0, nil
	}
	if l.window == w.ID {
		return max(0, d.Credits-l.left), nil
	}
	return d.Credits, nil
}

// Bucket is a token bucket: PerSecond tokens added a second, at most Burst held.
type Bucket struct {
	PerSecond float64
	Burst     int64
}

// bucketDoc is the stored value of a token bucket: its tokens at At (unix ns).
type bucketDoc struct {
	Tokens float64 `json:"tokens"`
	At     int64   `json:"at"`
}

// Allow takes one token of key's bucket. When none is left it returns
// false and the wait until one is; ErrUnavailable when NATS cannot be
// reached and this copy holds no token.
func (b *Budgets) Allow(ctx context.Context, key string, bk Bucket) (bool, time.Duration, error) {
	l := b.lease(key)
	if err := l.acquire(ctx); err != nil {
		return false, 0, err
	}
	defer l.release()
	now := b.now()
	l.token, l.used = true, now
	if now.Before(l.ends) && l.left >= 1 {
		l.left--
		return true, 0, nil
	}
	l.left = 0
	want := b.nextBlock(l, bk.Burst, 1, now)
	var got int64
	var wait time.Duration
	wrote, err := b.cas(ctx, l, func(cur []byte) ([]byte, bool) {
		d := bucketDoc{Tokens: float64(bk.Burst), At: now.UnixNano()}
		if cur != nil && json.Unmarshal(cur, &d) == nil {
			el := time.Duration(now.UnixNano() - d.At)
			d.Tokens = math.Min(float64(bk.Burst), d.Tokens+max(0, el.Seconds())*bk.PerSecond)
			d.At = max(d.At, now.UnixNano())
		}
		if d.Tokens < 1 {
			wait = time.Minute
			if bk.PerSecond > 0 {
				wait = time.Duration((1 - d.Tokens) / bk.PerSecond * float64(time.Second))
			}
			return nil, false
		}
		got = min(want, int64(d.Tokens))
		d.Tokens -= float64(got)
		v, _ := json.Marshal(d)
		return v, true
	})
	if err != nil {
		return false, 0, err
	}
	if !wrote {
		return false, max(wait, time.Millisecond), nil
	}
	l.left, l.ends = got-1, now.Add(b.cfg.TokenTTL)
	return true, 0, nil
}

// cas applies fn to the current value of l's key (nil: none) and writes
// its result if nobody changed the key meanwhile, retrying on a conflict.
// fn returns false to write nothing (a refusal, always decided on a value
// read just now); cas then returns false. It tries until ctx ends (then
// ErrUnavailable), backing off at random after a few conflicts.
func (b *Budgets) cas(ctx context.Context, l *lease, fn func(cur []byte) ([]byte, bool)) (bool, error) {
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("%w: budget counter: %w", ErrUnavailable, err)
		}
		if attempt >= 4 {
			// Copies writing the same counter at once: back off a little,
			// at random, so that one of them wins.
			time.Sleep(time.Duration(rand.Int64N(int64(min(attempt, 40)) * int64(50*time.Microsecond))))
		}
		fresh := !l.known
		if fresh {
			if err := b.load(ctx, l); err != nil {
				return false, err
			}
		}
		next, write := fn(l.val)
		if !write && !fresh {
			// A refusal is never made on a remembered value: another copy
			// may have given units back since. Read and decide again.
			l.known = false
			continue
		}
		if !write {
			return false, nil
		}
		var rev uint64
		var err error
		if l.rev == 0 {
			rev, err = b.kv.Create(ctx, l.key, next)
		} else {
			rev, err = b.kv.Update(ctx, l.key, next, l.rev)
		}
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			l.known = false // another copy wrote first: read its value and retry
			continue
		}
		if err != nil {
			l.known = false
			return false, fmt.Errorf("%w: write budget: %w", ErrUnavailable, err)
		}
		l.val, l.rev, l.known = next, rev, true
		return true, nil
	}
}

func (b *Budgets) load(ctx context.Context, l *lease) error {
	e, err := b.kv.Get(ctx, l.key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		l.val, l.rev = nil, 0 // Create also succeeds on a deleted key
	case err != nil:
		return fmt.Errorf("%w: read budget: %w", ErrUnavailable, err)
	default:
		l.val, l.rev = e.Value(), e.Revision()
	}
	l.known = true
	return nil
}

// Run gives back idle leases every Idle/2 and forgets leases unused for
// ten minutes, until ctx ends; then it gives back every unspent lease
// (within 3 s) so that a copy stopping cleanly loses nothing.
func (b *Budgets) Run(ctx context.Context) error {
	t := time.NewTicker(b.cfg.Idle / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
			b.ReturnIdle(fctx, 0)
			cancel()
			return nil
		case <-t.C:
			b.ReturnIdle(ctx, b.cfg.Idle)
		}
	}
}

// ReturnIdle gives back the unspent units of every fixed-window lease not
// used for idle (0: every lease) to the shared counters. Token-bucket
// leases lapse on their own.
func (b *Budgets) ReturnIdle(ctx context.Context, idle time.Duration) {
	now := b.now()
	b.mu.Lock()
	var due []*lease
	gc := now.Sub(b.lastGC) > time.Minute
	for k, l := range b.leases {
		if gc && now.Sub(l.used) > 10*time.Minute && len(l.lock) == 0 {
			delete(b.leases, k)
			continue
		}
		due = append(due, l)
	}
	if gc {
		b.lastGC = now
	}
	b.mu.Unlock()
	for _, l := range due {
		if ctx.Err() != nil {
			return
		}
		if idle == 0 {
			// Everything goes back: wait for the lease and for a lease
			// being taken in the background.
			if !l.settle(ctx) {
				return
			}
		} else {
			select {
			case l.lock <- struct{}{}:
			default:
				continue // busy: in use, not idle
			}
		}
		b.giveBack(ctx, l, now, idle)
		l.release()
	}
}

func (b *Budgets) giveBack(ctx context.Context, l *lease, now time.Time, idle time.Duration) {
	if l.token || l.filling || l.left <= 0 || now.Sub(l.used) < idle {
		return
	}
	if !now.Before(l.ends) { // the window is over: nothing to give back
		l.left = 0
		return
	}
	back := l.left
	// The lease's lock is held meanwhile: a request arriving waits at most this.
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := b.cas(ctx, l, func(cur []byte) ([]byte, bool) {
		var d windowDoc
		if cur != nil {
			_ = json.Unmarshal(cur, &d)
		}
		if d.Window != 0 && d.Window != l.window {
			return nil, false
		}
		d.Window = l.window
		d.Credits = max(0, d.Credits-back)
		l.granted = d.Credits
		v, _ := json.Marshal(d)
		return v, true
	})
	if err == nil {
		l.left = 0
		l.block = 0
	}
}
