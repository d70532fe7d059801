package schedule_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/schedule"
	"github.com/netintel/netintel/internal/testutil"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr bool
	}{
		{"0 3 * * *", false},
		{"@daily", false},
		{"@every 48h", false},
		{"@every 10ms", true},
		{"@every soon", true},
		{"0 25 * * *", true},
		{"* * *", true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := schedule.Parse(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("schedule.Parse(%q) err = %v, wantErr %v", tc.in, err, tc.wantErr)
			}
		})
	}
}

func TestEvery_AlignedToEpoch(t *testing.T) {
	s, _ := schedule.Parse("@every 48h")
	base := time.Date(2026, 11, 23, 7, 31, 0, 0, time.UTC)
	n1 := s.Next(base)
	if n1.Unix()%(48*3600) != 0 || !n1.After(base) || n1.Sub(base) > 48*time.Hour {
		t.Fatalf("Next(%s) = %s, not an epoch-aligned 48h tick after it", base, n1)
	}
	// A process started an hour later gets the same tick.
	if n2 := s.Next(base.Add(time.Hour)); !n2.Equal(n1) && n1.Sub(base) > time.Hour {
		t.Fatalf("ticks differ between copies: %s vs %s", n1, n2)
	}
	if got := schedule.TickOf(s, n1.Add(300*time.Millisecond)); !got.Equal(n1) {
		t.Fatalf("tickOf late fire = %s, want %s", got, n1)
	}
}

func TestScheduler_OneFirePerTickAcrossCopies(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	kv, err := n.JS.KeyValue(t.Context(), "schedule")
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	job := schedule.Job{Name: "snapshot", Spec: "@every 1s", Run: func(context.Context) error { runs.Add(1); return nil }}
	var copies []*schedule.Scheduler
	for i := 0; i < 3; i++ {
		s, err := schedule.New(kv, testutil.Logger(t), []schedule.Job{job})
		if err != nil {
			t.Fatal(err)
		}
		copies = append(copies, s)
	}
	// All copies fire the same ticks at the same moment, as cron would.
	tick := time.Now().Truncate(time.Second)
	for k := 0; k < 5; k++ {
		var wg sync.WaitGroup
		for _, s := range copies {
			wg.Add(1)
			go func() { defer wg.Done(); s.Fire(t.Context(), job, tick.Add(time.Duration(k)*time.Second)) }()
		}
		wg.Wait()
	}
	if got := runs.Load(); got != 5 {
		t.Fatalf("runs = %d, want 5 (one per tick across 3 copies)", got)
	}
}

func TestScheduler_RunFiresOnSchedule(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	kv, _ := n.JS.KeyValue(t.Context(), "schedule")
	fired := make(chan time.Time, 10)
	s, err := schedule.New(kv, testutil.Logger(t), []schedule.Job{{Name: "j", Spec: "@every 1s", Run: func(context.Context) error { return nil }}})
	if err != nil {
		t.Fatal(err)
	}
	s.OnFire = func(_ string, tick time.Time) { fired <- tick }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	select {
	case tick := <-fired:
		if tick.Nanosecond() != 0 {
			t.Errorf("tick %s not aligned to the second", tick)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("job did not fire within 5s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestNew_RejectsBadSpec(t *testing.T) {
	if _, err := schedule.New(nil, testutil.Logger(t), []schedule.Job{{Name: "x", Spec: "nope"}}); err == nil {
		t.Fatal("accepted a bad spec")
	}
}

// A failed run is run again within its tick, after a doubling wait, as
// many times as the job allows, and no more once it succeeds; a retry
// that would start after the next tick is left to that tick.
func TestScheduler_RetriesAFailedRunWithinItsTick(t *testing.T) {
	tests := []struct {
		name      string
		spec      string
		retries   int
		wait      time.Duration
		failFirst int
		wantRuns  int32
	}{
		{"succeeds on the third run", "@every 1h", 3, 20 * time.Millisecond, 2, 3},
		{"fails every run", "@every 1h", 2, 20 * time.Millisecond, 100, 3},
		{"succeeds at once", "@every 1h", 3, 20 * time.Millisecond, 0, 1},
		{"no retries", "@every 1h", 0, 20 * time.Millisecond, 100, 1},
		{"next tick comes first", "@every 1s", 3, 2 * time.Second, 100, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int32
			job := schedule.Job{Name: "snapshot", Spec: tt.spec, Retries: tt.retries, RetryWait: tt.wait,
				Run: func(context.Context) error {
					if runs.Add(1) <= int32(tt.failFirst) {
						return errors.New("store unavailable")
					}
					return nil
				}}
			s, err := schedule.New(nil, testutil.Logger(t), []schedule.Job{job})
			if err != nil {
				t.Fatal(err)
			}
			d, _ := schedule.Parse(tt.spec)
			tick := time.Now().Truncate(d.(schedule.Every).D)
			s.Fire(t.Context(), job, tick)
			if got := runs.Load(); got != tt.wantRuns {
				t.Fatalf("runs = %d, want %d", got, tt.wantRuns)
			}
		})
	}
}

// A retry's wait ends with the scheduler's context.
func TestScheduler_RetryWaitEndsWithTheContext(t *testing.T) {
	var runs atomic.Int32
	job := schedule.Job{Name: "snapshot", Spec: "@every 24h", Retries: 3, RetryWait: time.Hour,
		Run: func(context.Context) error { runs.Add(1); return errors.New("store unavailable") }}
	s, err := schedule.New(nil, testutil.Logger(t), []schedule.Job{job})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan struct{})
	go func() { s.Fire(ctx, job, time.Now().Truncate(24*time.Hour)); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Fire still waiting to retry 10 s after its context ended")
	}
	if got := runs.Load(); got != 1 {
		t.Fatalf("runs = %d, want 1", got)
	}
}
