package bus_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
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

// DirectGetLast answers for many keys at once, across more than one
// request, with each key's newest revision, delete markers marked, and
// keys never written left out.
func TestDirectGetLast(t *testing.T) {
	n := testutil.StartNATS(t)
	ctx := t.Context()
	kv, err := n.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "dg", History: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	var subjects []string
	for i := range 2500 {
		k := "k" + strconv.Itoa(i)
		subjects = append(subjects, "$KV.dg."+k)
		if i%5 == 4 {
			continue // never written
		}
		rev, err := kv.Put(ctx, k, []byte("v1-"+k))
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if rev, err = kv.Put(ctx, k, []byte("v2-"+k)); err != nil {
				t.Fatal(err)
			}
		}
		want[k] = rev
	}
	if err := kv.Delete(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	err = bus.DirectGetLast(ctx, n.JS, "KV_dg", subjects, func(subject string, seq uint64, op jetstream.KeyValueOp, data []byte) {
		k := strings.TrimPrefix(subject, "$KV.dg.")
		got[k] = seq
		i, _ := strconv.Atoi(k[1:])
		switch {
		case k == "k1":
			if op != jetstream.KeyValueDelete || len(data) != 0 {
				t.Errorf("k1: op %v, %q: want the delete marker", op, data)
			}
		case op != jetstream.KeyValuePut:
			t.Errorf("%s: op %v", k, op)
		case i%3 == 0 && string(data) != "v2-"+k, i%3 != 0 && string(data) != "v1-"+k:
			t.Errorf("%s: %q", k, data)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("answered %d keys, want %d", len(got), len(want))
	}
	for k, rev := range want {
		if k == "k1" {
			if got[k] <= rev {
				t.Errorf("k1 answered at %d, not the delete after %d", got[k], rev)
			}
			continue
		}
		if got[k] != rev {
			t.Errorf("%s at %d, want %d", k, got[k], rev)
		}
	}
	// None of the subjects stored: no answers, no error.
	if err := bus.DirectGetLast(ctx, n.JS, "KV_dg", []string{"$KV.dg.none"}, func(string, uint64, jetstream.KeyValueOp, []byte) {
		t.Error("answer for a key never written")
	}); err != nil {
		t.Fatal(err)
	}
	// A stream that does not exist is an error, not an empty answer.
	if err := bus.DirectGetLast(ctx, n.JS, "KV_nope", []string{"$KV.nope.a"}, func(string, uint64, jetstream.KeyValueOp, []byte) {}); err == nil {
		t.Fatal("no error for a missing stream")
	}
}

// flakyJS times out the first fails KeyValue lookups, as a cluster still
// electing leaders does.
type flakyJS struct {
	jetstream.JetStream
	fails, calls int
}

func (f *flakyJS) KeyValue(ctx context.Context, bucket string) (jetstream.KeyValue, error) {
	f.calls++
	if f.fails > 0 {
		f.fails--
		return nil, context.DeadlineExceeded
	}
	return f.JetStream.KeyValue(ctx, bucket)
}

// OpenKV waits out lookups that time out, and reports a missing bucket at
// once.
func TestOpenKV(t *testing.T) {
	n := testutil.StartNATS(t)
	ctx := t.Context()
	if _, err := n.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "ok"}); err != nil {
		t.Fatal(err)
	}
	js := &flakyJS{JetStream: n.JS, fails: 2}
	kv, err := bus.OpenKV(ctx, js, testutil.Logger(t), "ok")
	if err != nil || kv.Bucket() != "ok" || js.calls != 3 {
		t.Fatalf("after two timeouts: %v, %d calls", err, js.calls)
	}
	js = &flakyJS{JetStream: n.JS}
	if _, err := bus.OpenKV(ctx, js, testutil.Logger(t), "missing"); !errors.Is(err, jetstream.ErrBucketNotFound) || js.calls != 1 {
		t.Fatalf("missing bucket: %v after %d calls", err, js.calls)
	}
}
