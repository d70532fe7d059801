package main

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The group's stop waits for every part, and says when one did not return
// in time; the first failure is the group's and ends the other parts.
func TestPartGroup_StopAndFailure(t *testing.T) {
	t.Parallel()
	g := newPartGroup(t.Context())
	var stopped atomic.Int32
	for range 3 {
		g.start("worker", func(ctx context.Context) error {
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond) // finishing what it holds
			stopped.Add(1)
			return nil
		})
	}
	g.start("failing", func(context.Context) error { return errors.New("boom") })
	select {
	case err := <-g.errc:
		if !strings.Contains(err.Error(), "failing: boom") {
			t.Fatalf("group error = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the failure did not reach the group")
	}
	if !g.stop(5 * time.Second) {
		t.Fatal("stop gave up on parts that return")
	}
	if n := stopped.Load(); n != 3 {
		t.Fatalf("stop returned with %d of 3 parts finished", n)
	}

	stuck := newPartGroup(t.Context())
	release := make(chan struct{})
	defer close(release)
	stuck.start("stuck", func(context.Context) error { <-release; return nil })
	if stuck.stop(50 * time.Millisecond) {
		t.Fatal("stop said a part that never returns had stopped")
	}
}
