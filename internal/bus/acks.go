package bus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Acks sends JetStream publishes whose acknowledgements come back to one
// wildcard inbox subscription of the connection, and hands each to the
// channel of the caller that sent it. It does what a jetstream
// PublishMsgAsync does for a caller that sends a batch and then waits for
// the whole batch, at about half the CPU: no future, channels and timer
// per message, and an acknowledgement is read without reflection (only an
// error answer is decoded in full). A hot loop writing one state record
// per observation spent 6% of the process's CPU in the async publish
// machinery (BenchmarkPipeline's profile).
//
// Acks is safe for concurrent use.
type Acks struct {
	nc     *nats.Conn
	prefix string // reply subjects are prefix + a number
	sub    *nats.Subscription

	mu   sync.Mutex
	next uint64
	wait map[uint64]ackTo
}

type ackTo struct {
	ch  chan<- Ack
	idx int
}

// Ack is the answer to one publish sent with Acks.Publish: the stream
// sequence it was stored at, or why it was not (a *jetstream.APIError for
// an error the server gave, as PublishMsgAsync reports it).
type Ack struct {
	Index int // the index given to Publish
	Seq   uint64
	Err   error
}

// ErrNoAck is what a caller of Acks reports for a publish whose
// acknowledgement did not come in the time it waited (Transient).
var ErrNoAck = errors.New("no acknowledgement")

// NewAcks subscribes to a fresh inbox of nc for acknowledgements.
func NewAcks(nc *nats.Conn) (*Acks, error) {
	a := &Acks{nc: nc, prefix: nc.NewInbox() + ".", wait: map[uint64]ackTo{}}
	sub, err := nc.Subscribe(a.prefix+"*", a.deliver)
	if err != nil {
		return nil, fmt.Errorf("acknowledgement inbox: %w", err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return nil, fmt.Errorf("acknowledgement inbox: %w", err)
	}
	a.sub = sub
	return a, nil
}

// Close stops receiving acknowledgements.
func (a *Acks) Close() error { return a.sub.Unsubscribe() }

// Publish sends m and returns a ticket for Cancel. Its acknowledgement
// arrives on ch as Ack{Index: idx}; ch must have room for every publish
// the caller awaits, since acknowledgements are never waited on to be
// received. m is sent before Publish returns and not kept: the caller may
// reuse it.
func (a *Acks) Publish(m *nats.Msg, idx int, ch chan<- Ack) (uint64, error) {
	a.mu.Lock()
	a.next++
	id := a.next
	a.wait[id] = ackTo{ch, idx}
	a.mu.Unlock()
	m.Reply = a.prefix + strconv.FormatUint(id, 10)
	if err := a.nc.PublishMsg(m); err != nil {
		a.Cancel(id)
		return 0, err
	}
	return id, nil
}

// Cancel forgets publishes whose acknowledgement the caller no longer
// awaits (it gave up waiting); if one still comes, it is dropped.
func (a *Acks) Cancel(ids ...uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range ids {
		delete(a.wait, id)
	}
}

// Pending is how many publishes await an acknowledgement.
func (a *Acks) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.wait)
}

func (a *Acks) deliver(m *nats.Msg) {
	id, err := strconv.ParseUint(m.Subject[len(a.prefix):], 10, 64)
	if err != nil {
		return
	}
	a.mu.Lock()
	to, ok := a.wait[id]
	delete(a.wait, id)
	a.mu.Unlock()
	if !ok {
		return
	}
	seq, aerr := parseAck(m)
	to.ch <- Ack{Index: to.idx, Seq: seq, Err: aerr}
}

var seqField = []byte(`"seq":`)

// parseAck reads a publish acknowledgement: {"stream":...,"seq":N,...}, or
// {"error":{...}}, or a no-responders status when the stream has no
// leader to take the publish.
func parseAck(m *nats.Msg) (uint64, error) {
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
		return 0, nats.ErrNoResponders
	}
	if i := bytes.Index(m.Data, seqField); i >= 0 && !bytes.Contains(m.Data, []byte(`"error"`)) {
		d := m.Data[i+len(seqField):]
		n := 0
		for n < len(d) && d[n] >= '0' && d[n] <= '9' {
			n++
		}
		if seq, err := strconv.ParseUint(string(d[:n]), 10, 64); err == nil {
			return seq, nil
		}
	}
	var res struct {
		Seq   uint64              `json:"seq"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &res); err != nil {
		return 0, fmt.Errorf("acknowledgement %q: %w", m.Data, err)
	}
	if res.Error != nil {
		return 0, res.Error
	}
	if res.Seq == 0 {
		return 0, errors.New("acknowledgement without a sequence")
	}
	return res.Seq, nil
}
