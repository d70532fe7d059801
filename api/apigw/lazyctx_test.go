package apigw

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestLazyDeadline(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"expires", func(t *testing.T) {
			c := withLazyDeadline(t.Context(), 20*time.Millisecond)
			defer c.release()
			<-c.Done()
			if !errors.Is(c.Err(), context.DeadlineExceeded) {
				t.Fatalf("err %v", c.Err())
			}
		}},
		{"parent ends first", func(t *testing.T) {
			parent, cancel := context.WithCancel(t.Context())
			c := withLazyDeadline(parent, time.Hour)
			defer c.release()
			cancel()
			<-c.Done()
			if !errors.Is(c.Err(), context.Canceled) {
				t.Fatalf("err %v", c.Err())
			}
		}},
		{"earlier parent deadline", func(t *testing.T) {
			parent, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			c := withLazyDeadline(parent, time.Hour)
			defer c.release()
			if d, ok := c.Deadline(); !ok || time.Until(d) > time.Minute {
				t.Fatalf("deadline %v", d)
			}
		}},
		{"released unused", func(t *testing.T) {
			c := withLazyDeadline(t.Context(), time.Hour)
			c.release()
			select {
			case <-c.Done():
			default:
				t.Fatal("not done after release")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}
