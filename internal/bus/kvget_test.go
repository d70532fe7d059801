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
		rev, err := kv.Put(ctx, "progress", []byte(v))
		if err != nil {
			t.Fatal(err)
		}
		got, err := bus.LeaderGet(ctx, n.JS, "lg", "progress")
		if err != nil || string(got.Value) != v || got.Revision != rev || got.Op != jetstream.KeyValuePut {
			t.Fatalf("after put %s at %d: %+v %v", v, rev, got, err)
		}
	}
	if err := kv.Delete(ctx, "progress"); err != nil {
		t.Fatal(err)
	}
	got, err := bus.LeaderGet(ctx, n.JS, "lg", "progress")
	if !errors.Is(err, jetstream.ErrKeyDeleted) || got.Op != jetstream.KeyValueDelete || got.Revision == 0 {
		t.Fatalf("deleted key: %+v %v", got, err)
	}
	if err := kv.Purge(ctx, "progress"); err != nil {
		t.Fatal(err)
	}
	if got, err := bus.LeaderGet(ctx, n.JS, "lg", "progress"); !errors.Is(err, jetstream.ErrKeyDeleted) || got.Op != jetstream.KeyValuePurge {
		t.Fatalf("purged key: %+v %v", got, err)
	}
	if _, err := bus.LeaderGet(ctx, n.JS, "nosuchbucket", "progress"); err == nil || errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("missing bucket: %v", err)
	}
}

// When the leader does not answer, GetLatest falls back to the direct get
// and says so.
func TestGetLatest_FallsBackToDirectGet(t *testing.T) {
	n := testutil.StartNATS(t)
	ctx := t.Context()
	kv, err := n.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "gl"})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := kv.Put(ctx, "k", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	rec, leader, err := bus.GetLatest(ctx, n.JS, kv, "k")
	if err != nil || !leader || string(rec.Value) != "v" || rec.Revision != rev {
		t.Fatalf("with a leader: %+v %v %v", rec, leader, err)
	}
	// A JetStream handle whose API requests nobody answers: no leader.
	deaf, err := jetstream.NewWithAPIPrefix(n.NC, "$NOBODY.API")
	if err != nil {
		t.Fatal(err)
	}
	rec, leader, err = bus.GetLatest(ctx, deaf, kv, "k")
	if err != nil || leader || string(rec.Value) != "v" || rec.Revision != rev {
		t.Fatalf("without a leader: %+v %v %v", rec, leader, err)
	}
	if _, leader, err := bus.GetLatest(ctx, deaf, kv, "missing"); !errors.Is(err, jetstream.ErrKeyNotFound) || leader {
		t.Fatalf("missing key without a leader: %v %v", leader, err)
	}
}
