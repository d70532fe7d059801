package secretapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/api/secretapi"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/secrets"
)

// clock is the service clock; tests move it forward.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

type env struct {
	c      *client
	svc    *secrets.Service
	nats   *testutil.NATS
	clock  *clock
	store  *objstore.Folder
	kv, up jetstream.KeyValue
	url    string
}

type envOpts struct {
	// limits keeps the default rate limits; otherwise they are off.
	limits       bool
	beforeFinish func(string)
	inlineMax    int
}

// newEnv runs the real service: an in-process nats-server with the default
// buckets, a folder object store, and the handlers behind an HTTP server.
func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	n := testutil.StartNATS(t)
	cfg := n.Ensure(t)
	store, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{nats: n, clock: &clock{}, store: store}
	opt := secrets.OptionsFrom(cfg.Secrets)
	opt.Now = e.clock.Now
	opt.BeforeFinish = o.beforeFinish
	if o.inlineMax != 0 {
		opt.InlineMax = o.inlineMax
	}
	e.svc, err = secrets.New(t.Context(), n.JS, store, opt, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	aopt := secretapi.OptionsFrom(cfg)
	if !o.limits {
		aopt.TextRate, aopt.FileRate, aopt.ReadRate = config.Rate{}, config.Rate{}, config.Rate{}
	}
	mux := http.NewServeMux()
	secretapi.New(e.svc, aopt, testutil.Logger(t)).Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e.url = srv.URL
	e.c = &client{base: srv.URL, hc: &http.Client{Timeout: 60 * time.Second}}
	e.kv, err = n.JS.KeyValue(context.Background(), cfg.Secrets.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	e.up, err = n.JS.KeyValue(context.Background(), cfg.Secrets.UploadsBucket)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// stored reports whether the KV bucket still holds a record for id.
func (e *env) stored(t testing.TB, id string) bool {
	t.Helper()
	_, err := e.kv.Get(t.Context(), id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// blobs lists the object keys under secrets/.
func (e *env) blobs(t testing.TB) []string {
	t.Helper()
	infos, err := e.store.List(t.Context(), "secrets/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, i := range infos {
		keys = append(keys, i.Key)
	}
	return keys
}
