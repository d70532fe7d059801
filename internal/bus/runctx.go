package bus

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// RunContext returns a context for a long run that is cancelled after d,
// without carrying a deadline.
//
// A deadline would leave every JetStream request made under it unbounded
// but for that deadline: nats.go applies its default request timeout (5 s)
// only to a context without one, and so does withDefaultTimeout here. A
// reply lost to a node that died after taking a request (a publish whose
// stream leader was killed, say) would then hold the whole run, and every
// scheduled run after it, for d. Under RunContext each request keeps its
// own short timeout, and the run as a whole still ends after d.
//
// Once d has passed, ctx.Err() is context.Canceled and context.Cause(ctx)
// says the run timed out, wrapping context.DeadlineExceeded. d <= 0 means
// no limit.
func RunContext(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	if d <= 0 {
		return ctx, func() { cancel(nil) }
	}
	t := time.AfterFunc(d, func() {
		cancel(fmt.Errorf("timed out after %s: %w", d, context.DeadlineExceeded))
	})
	return ctx, func() {
		t.Stop()
		cancel(nil)
	}
}

// RunErr returns err with the reason ctx ended added when ctx has ended
// for a reason of its own (a RunContext's timeout), since err itself
// then often says no more than "context canceled".
func RunErr(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	if cause == nil || cause == ctx.Err() {
		return err
	}
	return fmt.Errorf("%w (%w)", err, cause)
}

// RequestContext bounds one JetStream request made under ctx by js's
// default request timeout (5 s when it has none), whether or not ctx has
// a deadline of its own; the earlier of the two holds. A loop that polls
// under a long deadline uses it so that one lost reply costs one timeout.
func RequestContext(ctx context.Context, js jetstream.JetStream) (context.Context, context.CancelFunc) {
	wait := js.Options().DefaultTimeout
	if wait <= 0 {
		wait = 5 * time.Second
	}
	return context.WithTimeout(ctx, wait)
}
