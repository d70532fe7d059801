package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestLeaseConfig_Cap(t *testing.T) {
	tests := []struct {
		limit, want int64
	}{
		{0, 1000}, {1, 1}, {2, 1}, {99, 1}, {250, 2}, {10_000, 100}, {10_000_000, 1000},
	}
	for _, tc := range tests {
		if got := DefaultLeaseConfig.Cap(tc.limit); got != tc.want {
			t.Errorf("Cap(%d) = %d, want %d", tc.limit, got, tc.want)
		}
	}
}

// Leases grow while they are spent fast, up to Cap; a batch bigger than
// the cap takes exactly what it needs; the shared counter never exceeds
// the limit; what is not spent goes back on ReturnIdle and on Run's end.
func TestBudgets_Spend(t *testing.T) {
	n := startNATS(t)
	_, kvA := kvPair(t, n)
	_, kvB := kvPair(t, n)
	a, b := NewBudgets(kvA, LeaseConfig{}), NewBudgets(kvB, LeaseConfig{})
	w := Window{ID: 7, Limit: 10_000, Ends: time.Now().Add(time.Hour)}
	ctx := t.Context()
	for range 150 {
		if _, err := a.Spend(ctx, "k", w, 1); err != nil {
			t.Fatal(err)
		}
	}
	shared := func() int64 {
		t.Helper()
		e, err := kvA.Get(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		var d windowDoc
		if err := jsonDecode(e.Value(), &d); err != nil {
			t.Fatal(err)
		}
		return d.Credits
	}
	settle(t, a)
	// Blocks of 1, 2, 4, ... up to Cap 100, the next taken when one is
	// half spent: the copy holds at most Cap unspent.
	leased := shared()
	if c := DefaultLeaseConfig.Cap(w.Limit); leased < 150 || leased > 150+c {
		t.Fatalf("leased %d after 150 requests, want 150..%d", leased, 150+c)
	}
	if used, err := b.Used(ctx, "k", w); err != nil || used != leased {
		t.Fatalf("another copy sees %d used (%v), want %d: unspent leases count", used, err, leased)
	}
	if used, _ := a.Used(ctx, "k", w); used != 150 {
		t.Fatalf("the leasing copy sees %d used, want 150", used)
	}
	// A batch of 500 takes 500 at once.
	if used, err := b.Spend(ctx, "k", w, 500); err != nil || used != leased+500 {
		t.Fatalf("batch: used %d, %v; want %d", used, err, leased+500)
	}
	settle(t, b)
	a.ReturnIdle(ctx, 0)
	b.ReturnIdle(ctx, 0)
	if got := shared(); got != 650 {
		t.Fatalf("after giving back: %d leased, want the 650 spent", got)
	}
	// Up to the limit and no further, whoever asks.
	if _, err := a.Spend(ctx, "k", w, 10_000-650); err != nil {
		t.Fatal(err)
	}
	if used, err := b.Spend(ctx, "k", w, 1); !errors.Is(err, errExhausted) || used != 10_000 {
		t.Fatalf("over the limit: used %d, %v", used, err)
	}
	// A new window starts from zero.
	w2 := Window{ID: 8, Limit: 10, Ends: time.Now().Add(time.Hour)}
	if used, err := b.Spend(ctx, "k", w2, 3); err != nil || used != 3 {
		t.Fatalf("new window: %d %v", used, err)
	}
	// Run gives every unspent lease back when it stops.
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(rctx) }()
	for range 5 {
		if _, err := b.Spend(ctx, "k2", Window{ID: 1, Limit: 1 << 20, Ends: time.Now().Add(time.Hour)}, 1); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	<-done
	if used, _ := a.Used(ctx, "k2", Window{ID: 1}); used != 5 {
		t.Fatalf("after a clean stop %d leased, want the 5 spent", used)
	}
}

// A token bucket shared by two copies allows its burst once, whichever
// copy is asked, and then one token per 1/rate.
func TestBudgets_Allow(t *testing.T) {
	n := startNATS(t)
	_, kvA := kvPair(t, n)
	_, kvB := kvPair(t, n)
	copies := []*Budgets{NewBudgets(kvA, LeaseConfig{}), NewBudgets(kvB, LeaseConfig{})}
	bk := Bucket{PerSecond: 1.0 / 60, Burst: 5}
	ok := 0
	var wait time.Duration
	for i := range 12 {
		allowed, w, err := copies[i%2].Allow(t.Context(), "a.scope.2001_db8__1", bk)
		if err != nil {
			t.Fatal(err)
		}
		if allowed {
			ok++
		} else {
			wait = w
		}
	}
	if ok != 5 {
		t.Fatalf("%d allowed, want the burst of 5", ok)
	}
	if wait < 50*time.Second || wait > time.Minute {
		t.Fatalf("wait %s, want about a minute (one token a minute)", wait)
	}
}

func TestKVSafe(t *testing.T) {
	for in, want := range map[string]string{"192.0.2.1": "192.0.2.1", "2001:db8::1": "2001_db8__1", "fe80::1%eth0": "fe80__1_eth0", "": "_"} {
		if got := kvSafe(in); got != want {
			t.Errorf("kvSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

func jsonDecode(b []byte, v any) error { return json.Unmarshal(b, v) }

// settle waits until no lease of b is being taken in the background.
func settle(t *testing.T, b *Budgets) {
	t.Helper()
	b.mu.Lock()
	var ls []*lease
	for _, l := range b.leases {
		ls = append(ls, l)
	}
	b.mu.Unlock()
	for _, l := range ls {
		if !l.settle(t.Context()) {
			t.Fatal("lease never settled")
		}
		l.release()
	}
}
