package enrich

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/testutil"
)

// A loop's batches: full ones while messages wait, then what arrived
// within the wait; after a drain, what was fetched, then the end; and no
// message delivered twice or skipped.
func TestBatches(t *testing.T) {
	nt := testutil.StartNATS(t)
	ctx := t.Context()
	if _, err := nt.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "B", Subjects: []string{"b.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := nt.JS.Publish(ctx, "b.x", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := nt.JS.CreateOrUpdateConsumer(ctx, "B", jetstream.ConsumerConfig{Durable: "b", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	b, err := consumeBatches(ctx, cons, 4, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.stop()
	var got []string
	take := func(want int) {
		t.Helper()
		batch, err := b.next(nil, 4)
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		if len(batch) != want {
			t.Fatalf("batch of %d, want %d", len(batch), want)
		}
		for _, m := range batch {
			got = append(got, string(m.Data()))
			if err := m.Ack(); err != nil {
				t.Fatal(err)
			}
		}
	}
	take(4)
	take(4)
	// Two are left: the batch takes them and stops waiting for more.
	start := time.Now()
	take(2)
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("a short batch waited %s", waited)
	}
	// Published while the loop waits: the next batch starts with it.
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = nt.JS.Publish(ctx, "b.x", []byte("10"))
	}()
	take(1)
	// Fetched before a drain is still delivered; then the end.
	for i := 11; i < 14; i++ {
		if _, err := nt.JS.Publish(ctx, "b.x", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(b.msgs) < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	b.drain()
	take(3)
	if _, err := b.next(nil, 4); !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
		t.Fatalf("after a drain: %v, want ErrMsgIteratorClosed", err)
	}
	for i, s := range got {
		if s != strconv.Itoa(i) {
			t.Fatalf("messages in order %v", got)
		}
	}
	if len(got) != 14 {
		t.Fatalf("got %d messages: %v", len(got), got)
	}
	// Once its context ends, a loop gets no batch, though one waits.
	cctx, cancel := context.WithCancel(ctx)
	b2, err := consumeBatches(cctx, cons, 4, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b2.stop()
	if _, err := nt.JS.Publish(ctx, "b.x", []byte("14")); err != nil {
		t.Fatal(err)
	}
	for len(b2.msgs) < 1 && time.Now().Before(deadline.Add(5*time.Second)) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if batch, err := b2.next(nil, 4); !errors.Is(err, jetstream.ErrMsgIteratorClosed) || len(batch) != 0 {
		t.Fatalf("after the context ended: %d messages, %v; want none and ErrMsgIteratorClosed", len(batch), err)
	}
}
