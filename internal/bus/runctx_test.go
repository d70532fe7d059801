package bus_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/testutil"
)

// A run's context ends after its limit without carrying a deadline, and
// says why it ended; cancelled early, it says nothing more.
func TestRunContext_EndsAfterItsLimitWithoutADeadline(t *testing.T) {
	ctx, cancel := bus.RunContext(t.Context(), 50*time.Millisecond)
	defer cancel()
	if d, ok := ctx.Deadline(); ok {
		t.Fatalf("run context has a deadline (%s); JetStream requests under it would lose their own timeout", d)
	}
	if err := bus.RunErr(ctx, errors.New("x")); err.Error() != "x" {
		t.Fatalf("RunErr before the end = %q, want x unchanged", err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("run context not ended 5 s after its 50 ms limit")
	}
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Fatalf("cause = %v, want one wrapping context.DeadlineExceeded", context.Cause(ctx))
	}
	err := bus.RunErr(ctx, ctx.Err())
	if !strings.Contains(err.Error(), "timed out after 50ms") || !errors.Is(err, context.Canceled) {
		t.Fatalf("RunErr after the limit = %v, want the timeout named and context.Canceled kept", err)
	}

	ctx2, cancel2 := bus.RunContext(t.Context(), time.Hour)
	cancel2()
	if err := bus.RunErr(ctx2, ctx2.Err()); !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "timed out") {
		t.Fatalf("RunErr after cancel = %v, want context.Canceled alone", err)
	}

	ctx3, cancel3 := bus.RunContext(t.Context(), 0)
	defer cancel3()
	select {
	case <-ctx3.Done():
		t.Fatal("run context without a limit ended")
	case <-time.After(100 * time.Millisecond):
	}
}

// A JetStream request whose reply never comes (a plain subscriber takes
// it, as a stream leader that dies after taking a publish does) fails in
// the request's own timeout under a run context of an hour, and under
// RequestContext inside a deadline of an hour.
func TestRunContext_RequestKeepsItsOwnTimeout(t *testing.T) {
	n := testutil.StartNATS(t)
	sub, err := n.NC.Subscribe("silent.>", func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	js, err := jetstream.New(n.NC, jetstream.WithDefaultTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	long, cancelLong := context.WithTimeout(t.Context(), time.Hour)
	defer cancelLong()
	cases := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"RunContext", func() (context.Context, context.CancelFunc) { return bus.RunContext(t.Context(), time.Hour) }},
		{"RequestContext", func() (context.Context, context.CancelFunc) { return bus.RequestContext(long, js) }},
	}
	for _, c := range cases {
		name := c.name
		ctx, cancel := c.ctx()
		defer cancel()
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := js.Publish(ctx, "silent.x", []byte("x"))
			done <- err
		}()
		select {
		case err := <-done:
			t.Logf("%s: %v after %s", name, err, time.Since(start).Round(time.Millisecond))
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: publish without a reply = %v, want its request timeout", name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: publish without a reply still waiting after 20 s", name)
		}
	}
}
