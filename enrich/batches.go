package enrich

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// batchWait is the most a batch waits for each message after its first.
const batchWait = 2 * time.Millisecond

// batches hands what a consumer delivers to one loop in batches. It
// consumes with a callback that passes each message on through a channel,
// and waits for a batch's further messages with one reusable timer: the
// consumer's Messages iterator would start two timers for every message
// (its wait and its heartbeat check), which cost a worker about 2% of its
// CPU.
type batches struct {
	cc     jetstream.ConsumeContext
	msgs   chan jetstream.Msg
	closed <-chan struct{} // consuming has ended: msgs gets nothing more
	done   chan struct{}   // the loop has returned: msgs is read no more
	wait   *time.Timer
	ctx    context.Context
	// unwatch cancels the stop registered for the end of ctx.
	unwatch func() bool
	once    sync.Once
}

// consumeBatches starts consuming cons for batches of up to size: one
// batch waits in msgs, and up to twice as many messages more are fetched
// ahead (the consumer counts a message fetched until the callback has
// passed it on). Consuming stops when ctx ends, or at stop.
func consumeBatches(ctx context.Context, cons jetstream.Consumer, size int, log *slog.Logger) (*batches, error) {
	b := &batches{msgs: make(chan jetstream.Msg, size), done: make(chan struct{}), ctx: ctx}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		select {
		case b.msgs <- m:
		case <-b.done: // left unacknowledged: redelivered
		}
	}, jetstream.PullMaxMessages(2*size), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		log.Warn("next observation", "err", err)
	}))
	if err != nil {
		return nil, err
	}
	b.cc, b.closed = cc, cc.Closed()
	b.wait = time.NewTimer(time.Hour)
	b.wait.Stop()
	b.unwatch = context.AfterFunc(ctx, b.stop)
	return b, nil
}

// next waits for the next message, then takes up to size in all into
// batch (reusing its array), waiting at most batchWait for each after the
// first. Once consuming has ended (stop, drain) it returns what was
// delivered before, then jetstream.ErrMsgIteratorClosed; once ctx has
// ended, jetstream.ErrMsgIteratorClosed instead of a batch (what it
// held is left unacknowledged, to be redelivered).
func (b *batches) next(batch []jetstream.Msg, size int) ([]jetstream.Msg, error) {
	batch, err := b.fill(batch[:0], size)
	if err == nil && b.ctx.Err() != nil {
		return batch[:0], jetstream.ErrMsgIteratorClosed
	}
	return batch, err
}

func (b *batches) fill(batch []jetstream.Msg, size int) ([]jetstream.Msg, error) {
	select {
	case m := <-b.msgs:
		batch = append(batch, m)
	case <-b.closed:
		// The callback has returned for the last time: what it passed on
		// is all in msgs.
		select {
		case m := <-b.msgs:
			batch = append(batch, m)
		default:
			return batch, jetstream.ErrMsgIteratorClosed
		}
	}
	for len(batch) < size {
		select {
		case m := <-b.msgs:
			batch = append(batch, m)
			continue
		default:
		}
		b.wait.Reset(batchWait)
		select {
		case m := <-b.msgs:
			b.wait.Stop()
			batch = append(batch, m)
		case <-b.wait.C:
			return batch, nil
		case <-b.closed:
			b.wait.Stop()
			return batch, nil
		}
	}
	return batch, nil
}

// drain stops fetching; what was fetched is still delivered.
func (b *batches) drain() { b.cc.Drain() }

// stop stops consuming; what was fetched and not taken is left
// unacknowledged, to be redelivered.
func (b *batches) stop() {
	b.unwatch()
	b.cc.Stop()
	b.once.Do(func() { close(b.done) })
}
