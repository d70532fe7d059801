package apigw

import (
	"context"
	"sync"
	"time"
)

// lazyDeadline is a context with a deadline whose timer is made only when
// something waits on it: the state work of most requests is served from
// memory (the key cache, this copy's leases) and never waits, and a
// context.WithTimeout per request costs a timer and a registration with
// the parent.
type lazyDeadline struct {
	context.Context
	deadline time.Time

	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
}

func withLazyDeadline(parent context.Context, d time.Duration) *lazyDeadline {
	return &lazyDeadline{Context: parent, deadline: time.Now().Add(d)}
}

func (c *lazyDeadline) real() context.Context {
	c.once.Do(func() { c.ctx, c.cancel = context.WithDeadline(c.Context, c.deadline) })
	return c.ctx
}

// Deadline is the earlier of the parent's and this one.
func (c *lazyDeadline) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Done makes the timer and returns its channel.
func (c *lazyDeadline) Done() <-chan struct{} { return c.real().Done() }

// Err reports the parent's end, or the deadline's.
func (c *lazyDeadline) Err() error { return c.real().Err() }

// release frees the timer, if one was made. The context is done after it.
func (c *lazyDeadline) release() {
	c.once.Do(func() {
		ctx, cancel := context.WithCancel(c.Context)
		c.ctx, c.cancel = ctx, cancel
	})
	c.cancel()
}
