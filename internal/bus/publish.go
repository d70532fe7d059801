package bus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publisher sends messages to JetStream asynchronously, at most
// maxInFlight unacknowledged at a time, each with its message id so the
// stream's duplicate window stores a repeated message once. A publish that
// fails or goes unacknowledged (a stream leader dying, a reconnect) is sent
// again with the same message id until the stream stores it or RetryFor
// passes, so a failover loses nothing and doubles nothing.
//
// A Publisher is not safe for concurrent use.
type Publisher struct {
	js          jetstream.JetStream
	maxInFlight int
	pending     []pendingMsg
	// Published counts messages the stream stored; Duplicates those it
	// recognised as already stored; Resent the publishes sent again.
	Published, Duplicates, Resent int
	// Last maps each subject published on to the highest stream sequence
	// of its messages, stored now or found stored before (a duplicate's
	// acknowledgement carries the sequence of the stored copy): a reader
	// that has acknowledged that far has seen every message sent here.
	Last map[string]uint64
	// RetryFor bounds how long one Flush keeps resending (default 2m);
	// AckWait is how long an acknowledgement may take before the message
	// is sent again (default 10s).
	RetryFor, AckWait time.Duration
}

type pendingMsg struct {
	f   jetstream.PubAckFuture // nil: the send itself failed with err
	msg *nats.Msg
	err error
}

// maxWindow stays below the connection's default async publish window
// (4000), leaving room for other publishers on the same connection.
const maxWindow = 2048

// NewPublisher returns a publisher; maxInFlight <= 0 means 1024, and it
// is capped at 2048.
func NewPublisher(js jetstream.JetStream, maxInFlight int) *Publisher {
	if maxInFlight <= 0 {
		maxInFlight = 1024
	}
	maxInFlight = min(maxInFlight, maxWindow)
	return &Publisher{js: js, maxInFlight: maxInFlight}
}

// Publish sends data on subject with message id id ("" sends none, so the
// stream does not de-duplicate it). The stream's acknowledgement is checked
// by a later Publish or by Flush; an error here is one that sending again
// cannot fix, or a failed Flush.
func (p *Publisher) Publish(ctx context.Context, subject, id string, data []byte) error {
	if len(p.pending) >= p.maxInFlight {
		if err := p.Flush(ctx); err != nil {
			return err
		}
	}
	msg := &nats.Msg{Subject: subject, Data: data}
	if id != "" {
		msg.Header = nats.Header{jetstream.MsgIDHeader: []string{id}}
	}
	f, err := p.js.PublishMsgAsync(msg)
	if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
		// The connection's async window is shared with other publishers
		// (enrich workers in the same process): drain ours and try again.
		if err := p.Flush(ctx); err != nil {
			return err
		}
		f, err = p.js.PublishMsgAsync(msg)
	}
	if err != nil {
		if Permanent(err) {
			return fmt.Errorf("publish %s: %w", subject, err)
		}
		// Disconnected or stalled: Flush sends it again.
		p.pending = append(p.pending, pendingMsg{msg: msg, err: err})
		return nil
	}
	p.pending = append(p.pending, pendingMsg{f: f, msg: msg})
	return nil
}

// Permanent reports errors that sending a message (or a KV write) again
// cannot fix: a request the server refused as bad, a message too large, a
// bad subject, a closed connection. Anything else (no response from the
// stream, a timeout, a reconnect) may succeed when sent again.
func Permanent(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.Code == http.StatusBadRequest {
		return true
	}
	return errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) || errors.Is(err, nats.ErrConnectionClosed)
}

// Flush waits until the stream has stored every pending message, sending
// again (same message id) whatever failed or went unacknowledged, for at
// most RetryFor. Past it, the error counts the messages not stored.
func (p *Publisher) Flush(ctx context.Context) error {
	retryFor, ackWait := p.RetryFor, p.AckWait
	if retryFor <= 0 {
		retryFor = 2 * time.Minute
	}
	if ackWait <= 0 {
		ackWait = 10 * time.Second
	}
	deadline := time.Now().Add(retryFor)
	backoff := 100 * time.Millisecond
	for {
		retry, lastErr, err := p.collect(ctx, ackWait)
		if err != nil {
			return err
		}
		if len(retry) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d not stored after %s: %w", len(retry), retryFor, lastErr)
		}
		select {
		case <-ctx.Done():
			p.pending = p.pending[:0]
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
		for _, m := range retry {
			p.Resent++
			f, err := p.js.PublishMsgAsync(m)
			if err != nil {
				if Permanent(err) {
					p.pending = p.pending[:0]
					return fmt.Errorf("publish %s: %w", m.Subject, err)
				}
				f = nil
			}
			p.pending = append(p.pending, pendingMsg{f: f, msg: m, err: err})
		}
	}
}

// collect waits for the pending acknowledgements, all within one ackWait,
// and returns the messages to send again with the last error seen.
func (p *Publisher) collect(ctx context.Context, ackWait time.Duration) (retry []*nats.Msg, lastErr error, err error) {
	timer := time.NewTimer(ackWait)
	defer timer.Stop()
	expired := false
	for _, pm := range p.pending {
		if pm.f == nil {
			lastErr = pm.err
			retry = append(retry, pm.msg)
			continue
		}
		if expired {
			// Past the wait: take what has arrived, resend the rest.
			select {
			case ack := <-pm.f.Ok():
				p.count(ack, pm.msg.Subject)
			default:
				retry = append(retry, pm.msg)
			}
			continue
		}
		select {
		case ack := <-pm.f.Ok():
			p.count(ack, pm.msg.Subject)
		case e := <-pm.f.Err():
			if Permanent(e) {
				p.pending = p.pending[:0]
				return nil, nil, e
			}
			lastErr = e
			retry = append(retry, pm.msg)
		case <-ctx.Done():
			p.pending = p.pending[:0]
			return nil, nil, ctx.Err()
		case <-timer.C:
			expired = true
			lastErr = errors.New("no acknowledgement")
			retry = append(retry, pm.msg)
		}
	}
	p.pending = p.pending[:0]
	return retry, lastErr, nil
}

func (p *Publisher) count(ack *jetstream.PubAck, subject string) {
	if p.Last == nil {
		p.Last = map[string]uint64{}
	}
	p.Last[subject] = max(p.Last[subject], ack.Sequence)
	if ack.Duplicate {
		p.Duplicates++
	} else {
		p.Published++
	}
}
