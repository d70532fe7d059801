package bus_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/testutil"
)

// Publishes through Acks are acknowledged to the caller's channel under
// the index it gave: the stream sequence of a stored message, the
// server's error (a *jetstream.APIError, as PublishMsgAsync gives it) for
// a refused one, no responders where no stream takes the subject; and a
// cancelled publish's acknowledgement is dropped. Several callers share
// one Acks at once.
func TestAcks(t *testing.T) {
	n := testutil.StartNATS(t)
	ctx := t.Context()
	if _, err := n.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "A", Subjects: []string{"a.>"}}); err != nil {
		t.Fatal(err)
	}
	acks, err := bus.NewAcks(n.NC)
	if err != nil {
		t.Fatal(err)
	}
	defer acks.Close()

	// Four callers of 250 publishes each, on their own subjects.
	const callers, each = 4, 250
	errs := make(chan error, callers)
	for c := range callers {
		go func() {
			ch := make(chan bus.Ack, each)
			for i := range each {
				m := &nats.Msg{Subject: "a." + strconv.Itoa(c) + "." + strconv.Itoa(i), Data: []byte("x")}
				if _, err := acks.Publish(m, i, ch); err != nil {
					errs <- err
					return
				}
			}
			seen := map[int]bool{}
			seqs := map[uint64]bool{}
			for range each {
				select {
				case a := <-ch:
					if a.Err != nil || a.Seq == 0 || seen[a.Index] || seqs[a.Seq] {
						errs <- errors.New("bad or repeated acknowledgement " + strconv.Itoa(a.Index))
						return
					}
					seen[a.Index], seqs[a.Seq] = true, true
				case <-time.After(10 * time.Second):
					errs <- errors.New("acknowledgements missing")
					return
				}
			}
			errs <- nil
		}()
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st, err := n.JS.Stream(ctx, "A")
	if err != nil || st.CachedInfo().State.Msgs != callers*each {
		t.Fatalf("stream holds %d messages (%v), want %d", st.CachedInfo().State.Msgs, err, callers*each)
	}

	ch := make(chan bus.Ack, 4)
	last, err := st.GetLastMsgForSubject(ctx, "a.0.0")
	if err != nil {
		t.Fatal(err)
	}
	// A wrong expected last sequence: the server's error, with its code.
	m := &nats.Msg{Subject: "a.0.0", Data: []byte("y"),
		Header: nats.Header{jetstream.ExpectedLastSubjSeqHeader: {strconv.FormatUint(last.Sequence+1, 10)}}}
	if _, err := acks.Publish(m, 7, ch); err != nil {
		t.Fatal(err)
	}
	a := <-ch
	var apiErr *jetstream.APIError
	if a.Index != 7 || !errors.As(a.Err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamWrongLastSequence {
		t.Errorf("conflicting write: %+v", a)
	}
	// The expected sequence right: stored, after everything before.
	m = &nats.Msg{Subject: "a.0.0", Data: []byte("z"),
		Header: nats.Header{jetstream.ExpectedLastSubjSeqHeader: {strconv.FormatUint(last.Sequence, 10)}}}
	if _, err := acks.Publish(m, 8, ch); err != nil {
		t.Fatal(err)
	}
	if a := <-ch; a.Err != nil || a.Seq != callers*each+1 {
		t.Errorf("write at the expected sequence: %+v", a)
	}
	// No stream takes the subject.
	if _, err := acks.Publish(&nats.Msg{Subject: "nowhere", Data: []byte("x")}, 9, ch); err != nil {
		t.Fatal(err)
	}
	if a := <-ch; !errors.Is(a.Err, nats.ErrNoResponders) {
		t.Errorf("publish to no stream: %+v", a)
	}
	// A cancelled publish's acknowledgement is not passed on. The stream
	// answers nothing (NoAck), so the acknowledgement is sent by hand, to
	// the reply subject Publish set, after the Cancel.
	if _, err := n.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "N", Subjects: []string{"n.>"}, NoAck: true}); err != nil {
		t.Fatal(err)
	}
	m = &nats.Msg{Subject: "n.x", Data: []byte("x")}
	ticket, err := acks.Publish(m, 10, ch)
	if err != nil {
		t.Fatal(err)
	}
	if p := acks.Pending(); p != 1 {
		t.Errorf("%d acknowledgements awaited, want 1", p)
	}
	acks.Cancel(ticket)
	if err := n.NC.Publish(m.Reply, []byte(`{"stream":"N","seq":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := acks.Publish(&nats.Msg{Subject: "a.y", Data: []byte("x")}, 11, ch); err != nil {
		t.Fatal(err)
	}
	if a := <-ch; a.Index != 11 {
		t.Errorf("after a cancelled publish, got %+v", a)
	}
	if p := acks.Pending(); p != 0 {
		t.Errorf("%d acknowledgements still awaited", p)
	}
}
