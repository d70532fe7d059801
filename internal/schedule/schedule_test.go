package schedule_test

import (
	"context"
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
