package secretapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/api/secretapi"
	"github.com/netintel/netintel/api/secretapi/secretapitest"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/secrets"
)

type env struct {
	c      *client
	svc    *secrets.Service
	nats   *testutil.NATS
	clock  *secretapitest.Clock
	store  objstore.Store
	kv, up jetstream.KeyValue
	url    string
}

type envOpts struct {
	// limits keeps the default rate limits; otherwise they are off.
	limits       bool
	beforeFinish func(string)
	inlineMax    int
	store        objstore.Store
	// api adjusts the handler options (limits under test).
	api func(*secretapi.Options)
}

// newEnv runs the real service (secretapitest.Start): an in-process
// nats-server with the default buckets, a folder object store, and the
// handlers behind an HTTP server.
func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	s := secretapitest.Start(t, secretapitest.Options{RateLimits: o.limits, InlineMax: o.inlineMax, BeforeFinish: o.beforeFinish, Store: o.store, API: o.api})
	e := &env{svc: s.Service, nats: s.NATS, clock: s.Clock, store: s.Store, url: s.URL,
		c: &client{base: s.URL, hc: &http.Client{Timeout: 60 * time.Second}}}
	var err error
	e.kv, err = s.NATS.JS.KeyValue(context.Background(), s.Config.Secrets.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	e.up, err = s.NATS.JS.KeyValue(context.Background(), s.Config.Secrets.UploadsBucket)
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

// waitNoBlobs waits until no blob is left under secrets/: a used-up file
// is deleted when its download ends, just after the client got the last
// byte.
func (e *env) waitNoBlobs(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for b := e.blobs(t); len(b) != 0; b = e.blobs(t) {
		if time.Now().After(deadline) {
			t.Fatalf("blobs left: %v", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
