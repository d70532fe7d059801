package bus_test

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/testutil"
)

func TestLeaderGet(t *testing.T) {
	n := testutil.StartNATS(t)
	ctx := t.Context()
	kv, err := n.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "lg", History: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.LeaderGet(ctx, n.JS, "lg", "progress"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	for _, v := range []string{`{"n":1}`, `{"n":2}`} {
		if _, err := kv.Put(ctx, "progress", []byte(v)); err != nil {
			t.Fatal(err)
		}
		got, err := bus.LeaderGet(ctx, n.JS, "lg", "progress")
		if err != nil || string(got) != v {
			t.Fatalf("after put %s: %q %v", v, got, err)
		}
	}
	if err := kv.Delete(ctx, "progress"); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.LeaderGet(ctx, n.JS, "lg", "progress"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("deleted key: %v", err)
	}
	if err := kv.Purge(ctx, "progress"); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.LeaderGet(ctx, n.JS, "lg", "progress"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("purged key: %v", err)
	}
	if _, err := bus.LeaderGet(ctx, n.JS, "nosuchbucket", "progress"); err == nil || errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("missing bucket: %v", err)
	}
}
