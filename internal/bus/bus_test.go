package bus_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/bus"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

func TestEnsure_CreatesEverythingIdempotently(t *testing.T) {
	n := testutil.StartNATS(t)
	cfg := config.Default()
	ctx := t.Context()
	log := testutil.Logger(t)
	for i := 0; i < 2; i++ {
		if err := bus.Ensure(ctx, n.JS, cfg, log); err != nil {
			t.Fatalf("Ensure #%d: %v", i+1, err)
		}
	}
	for _, s := range cfg.Streams {
		info, err := n.JS.Stream(ctx, s.Name)
		if err != nil {
			t.Fatalf("stream %s: %v", s.Name, err)
		}
		if got := info.CachedInfo().Config.Subjects; strings.Join(got, ",") != strings.Join(s.Subjects, ",") {
			t.Errorf("stream %s subjects = %v", s.Name, got)
		}
	}
	for _, c := range cfg.Consumers {
		if _, err := n.JS.Consumer(ctx, c.Stream, c.Name); err != nil {
			t.Errorf("consumer %s/%s: %v", c.Stream, c.Name, err)
		}
	}
	for _, k := range cfg.KV {
		if _, err := n.JS.KeyValue(ctx, k.Bucket); err != nil {
			t.Errorf("kv %s: %v", k.Bucket, err)
		}
	}
	wq, _ := n.JS.Stream(ctx, "TLDWORK")
	if wq.CachedInfo().Config.Retention != jetstream.WorkQueuePolicy {
		t.Errorf("TLDWORK retention = %v", wq.CachedInfo().Config.Retention)
	}
}

func TestEnsure_AppliesChangedSetting(t *testing.T) {
	n := testutil.StartNATS(t)
	cfg := config.Default()
	ctx := t.Context()
	if err := bus.Ensure(ctx, n.JS, cfg, testutil.Logger(t)); err != nil {
		t.Fatal(err)
	}
	cfg.Streams[0].MaxAge = 3 * time.Hour
	if err := bus.Ensure(ctx, n.JS, cfg, testutil.Logger(t)); err != nil {
		t.Fatal(err)
	}
	s, _ := n.JS.Stream(ctx, cfg.Streams[0].Name)
	if got := s.CachedInfo().Config.MaxAge; got != 3*time.Hour {
		t.Fatalf("max_age = %s, want 3h", got)
	}
}

func TestEnsure_RefusedReplicaChangeIsAnError(t *testing.T) {
	n := testutil.StartNATS(t)
	cfg := config.Default()
	ctx := t.Context()
	if err := bus.Ensure(ctx, n.JS, cfg, testutil.Logger(t)); err != nil {
		t.Fatal(err)
	}
	cfg.Streams[0].Replicas = 3 // a single server cannot hold R3
	// The refusal looks like a cluster still forming (no peers), so Ensure
	// retries it: for 2 s here, not EnsureWait.
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err := bus.Ensure(short, n.JS, cfg, testutil.Logger(t))
	var re *bus.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want RefusedError", err)
	}
	if !strings.Contains(err.Error(), "stream OBSERVATIONS") || !strings.Contains(err.Error(), "replicas 1 -> 3") {
		t.Fatalf("message does not name the object and change: %v", err)
	}
}

func TestOpen_EmbeddedLocksDataDir(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default().NATS
	ctx := t.Context()
	b, err := bus.Open(ctx, cfg, dir, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	u, err := bus.URLFromDataDir(dir)
	if err != nil || u != b.URL {
		t.Fatalf("URLFromDataDir = %q, %v; want %q", u, err, b.URL)
	}
	if _, err := bus.Open(ctx, cfg, dir, testutil.Logger(t)); !errors.Is(err, bus.ErrLocked) {
		t.Fatalf("second Open on same dir: %v, want ErrLocked", err)
	}
	b.Close()
	if _, err := os.Stat(filepath.Join(dir, bus.URLFile)); !os.IsNotExist(err) {
		t.Errorf("nats.url left behind after Close")
	}
	b2, err := bus.Open(ctx, cfg, dir, testutil.Logger(t))
	if err != nil {
		t.Fatalf("reopen after Close: %v", err)
	}
	b2.Close()
}

func TestConnect_UnreachableGivesUpAfterConnectWait(t *testing.T) {
	port, _ := bus.FreePort()
	cfg := config.NATS{URLs: []string{"nats://user:pw-secret@127.0.0.1:" + itoa(port)}, ConnectWait: 600 * time.Millisecond, ConnectTimeout: 200 * time.Millisecond}
	start := time.Now()
	_, err := bus.Connect(context.Background(), cfg, testutil.Logger(t))
	if err == nil {
		t.Fatal("connected to nothing")
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
	if strings.Contains(err.Error(), "pw-secret") {
		t.Errorf("error leaks the password: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestEnsure_EveryObjectDescribed: what `nats stream ls`, `nats consumer
// ls` and `nats kv ls` show has a description for every stream, consumer
// (each partition too) and bucket, from the built-in config and from the
// shipped pipeline.yaml; an object created earlier without one gets it.
func TestEnsure_EveryObjectDescribed(t *testing.T) {
	shipped, err := config.Load("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	extra := config.Default()
	extra.Streams = append(extra.Streams, config.Stream{Name: "CUSTOM", Subjects: []string{"custom.>"}, Replicas: 1, Storage: "file", Retention: "limits"})
	extra.KV = append(extra.KV, config.KVBucket{Bucket: "custom", Replicas: 1, History: 1})
	for _, tt := range []struct {
		name string
		cfg  *config.Config
	}{{"defaults", config.Default()}, {"pipeline.yaml", shipped}, {"undeclared names", extra}} {
		t.Run(tt.name, func(t *testing.T) {
			n := testutil.StartNATS(t)
			ctx := t.Context()
			// Created bare, as an older version did.
			if _, err := n.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}, MaxAge: 7 * 24 * time.Hour}); err != nil {
				t.Fatal(err)
			}
			if _, err := n.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "ipstate"}); err != nil {
				t.Fatal(err)
			}
			if err := bus.Ensure(ctx, n.JS, tt.cfg, testutil.Logger(t)); err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.cfg.Streams {
				st, err := n.JS.Stream(ctx, s.Name)
				if err != nil {
					t.Fatal(err)
				}
				info, err := st.Info(ctx)
				if err != nil || info.Config.Description == "" {
					t.Errorf("stream %s: description %q, %v", s.Name, info.Config.Description, err)
				}
			}
			for _, c := range tt.cfg.Consumers {
				names := []string{c.Name}
				for p := range c.Partitions {
					names = append(names, config.PartitionConsumer(c.Name, p))
				}
				for _, name := range names {
					cons, err := n.JS.Consumer(ctx, c.Stream, name)
					if err != nil {
						t.Fatal(err)
					}
					info, err := cons.Info(ctx)
					if err != nil || info.Config.Description == "" {
						t.Errorf("consumer %s/%s: description %q, %v", c.Stream, name, info.Config.Description, err)
					}
				}
			}
			for _, k := range tt.cfg.KV {
				kv, err := n.JS.KeyValue(ctx, k.Bucket)
				if err != nil {
					t.Fatal(err)
				}
				st, err := kv.Status(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if d := st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.Description; d == "" {
					t.Errorf("kv %s: no description", k.Bucket)
				}
			}
		})
	}
}
