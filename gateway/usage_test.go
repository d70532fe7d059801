package gateway

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestUsage_RateWindow(t *testing.T) {
	n := startNATS(t)
	_, kv := kvPair(t, n)
	u := NewUsage(kv)
	now := time.Date(2026, 11, 23, 8, 0, 15, 0, time.UTC)
	u.now = func() time.Time { return now }
	lim := Limits{RatePerMinute: 3}
	for i := range 3 {
		ch, err := u.Charge(t.Context(), "alice", "k1", lim, 1, true)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if ch.RateRemaining != 2-i || ch.Used != int64(i+1) {
			t.Fatalf("request %d: %+v", i, ch)
		}
	}
	_, err := u.Charge(t.Context(), "alice", "k1", lim, 1, true)
	var le *LimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrRateLimited) {
		t.Fatalf("4th request: err = %v, want rate limited", err)
	}
	if le.RetryAfter != 45*time.Second {
		t.Fatalf("RetryAfter = %s, want 45s (to the next minute)", le.RetryAfter)
	}
	// Another key of the same user has its own window but shares credits.
	ch, err := u.Charge(t.Context(), "alice", "k2", lim, 1, true)
	if err != nil || ch.Used != 4 {
		t.Fatalf("other key: %+v %v", ch, err)
	}
	now = now.Add(45 * time.Second)
	if _, err := u.Charge(t.Context(), "alice", "k1", lim, 1, true); err != nil {
		t.Fatalf("next window: %v", err)
	}
}

func TestUsage_QuotaAndMonths(t *testing.T) {
	n := startNATS(t)
	_, kv := kvPair(t, n)
	u := NewUsage(kv)
	now := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
	u.now = func() time.Time { return now }
	lim := Limits{RatePerMinute: 1000, MonthlyQuota: 10}
	tests := []struct {
		credits int64
		wantErr error
		used    int64
	}{
		{4, nil, 4}, {4, nil, 8}, {3, ErrQuotaExceeded, 8}, {2, nil, 10}, {1, ErrQuotaExceeded, 10},
	}
	for i, tc := range tests {
		ch, err := u.Charge(t.Context(), "bob", "k", lim, tc.credits, true)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Fatalf("step %d: err = %v, want %v", i, err, tc.wantErr)
		}
		if err == nil && ch.Used != tc.used {
			t.Fatalf("step %d: used %d, want %d", i, ch.Used, tc.used)
		}
		var le *LimitError
		if errors.As(err, &le) && le.RetryAfter != time.Minute {
			t.Fatalf("step %d: RetryAfter %s, want 1m (to Dec 1st)", i, le.RetryAfter)
		}
	}
	// Not enforced (Option B): counted anyway.
	ch, err := u.Charge(t.Context(), "bob", "k", lim, 5, false)
	if err != nil || ch.Used != 15 {
		t.Fatalf("unenforced: %+v %v", ch, err)
	}
	// Refund gives credits back.
	if err := u.Refund(t.Context(), ch, 5); err != nil {
		t.Fatal(err)
	}
	if got, _ := u.Used(t.Context(), "bob", now); got != 10 {
		t.Fatalf("after refund used %d, want 10", got)
	}
	now = now.Add(time.Minute) // December: a new month
	if ch, err := u.Charge(t.Context(), "bob", "k", lim, 10, true); err != nil || ch.Used != 10 {
		t.Fatalf("new month: %+v %v", ch, err)
	}
}

// Two instances (separate connections, separate counters) charging the
// same user at once never grant more than the quota, and count exactly.
func TestUsage_SharedAcrossInstancesExact(t *testing.T) {
	n := startNATS(t)
	_, kvA := kvPair(t, n)
	_, kvB := kvPair(t, n)
	instances := []*Usage{NewUsage(kvA), NewUsage(kvB)}
	lim := Limits{RatePerMinute: 1_000_000, MonthlyQuota: 50}
	var ok, over atomic.Int64
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := instances[i%2]
			for range 8 {
				_, err := u.Charge(t.Context(), "shared", "k"+string(rune('a'+i)), lim, 1, true)
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, ErrQuotaExceeded):
					over.Add(1)
				default:
					t.Errorf("charge: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 50 || over.Load() != 128-50 {
		t.Fatalf("granted %d, refused %d; want 50 and 78", ok.Load(), over.Load())
	}
	if got, _ := instances[0].Used(t.Context(), "shared", time.Now()); got != 50 {
		t.Fatalf("stored credits %d, want 50", got)
	}
}

func TestUsage_FailsClosedWithoutNATS(t *testing.T) {
	n := startNATS(t)
	_, kv := kvPair(t, n)
	u := NewUsage(kv)
	n.Server.Shutdown()
	n.Server.WaitForShutdown()
	ctx, cancel := contextTimeout(t, 3*time.Second)
	defer cancel()
	if _, err := u.Charge(ctx, "x", "k", Limits{RatePerMinute: 5}, 1, true); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}
