// Package secretapitest runs the real one-time secret API for tests in
// other packages (for example the client library's interop tests): an
// in-process nats-server with the default buckets, a folder object store,
// and the handlers behind an httptest server on loopback.
package secretapitest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netintel/netintel/api/secretapi"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/secrets"
)

// Options tune the test server.
type Options struct {
	// RateLimits keeps the spec's per-client rate limits and the caps on
	// open uploads; by default they are off so that tests can send as
	// fast and as many at once as they like.
	RateLimits bool
	// API, when set, adjusts the handler options last (tests of the
	// limits set small ones).
	API func(*secretapi.Options)
	// InlineMax overrides secrets.inline_max when not 0.
	InlineMax int
	// BeforeFinish runs in the request that assembles a chunked upload.
	BeforeFinish func(uploadID string)
	// Store holds the ciphertext blobs; nil means a folder in t.TempDir().
	Store objstore.Store
	// Registerer receives the API's metrics when set.
	Registerer prometheus.Registerer
}

// Server is a running API. Everything stops at test cleanup.
type Server struct {
	// URL is the base URL (http://127.0.0.1:port); endpoints are URL+"/api/...".
	URL string
	// Service is the store behind the API.
	Service *secrets.Service
	// NATS is the JetStream server holding the buckets.
	NATS *testutil.NATS
	// Store is the object store holding file ciphertext.
	Store objstore.Store
	// Config is the configuration the server runs with.
	Config *config.Config
	// Clock is the service clock; Advance moves it forward.
	Clock *Clock
}

// Clock is a clock that tests can move forward.
type Clock struct {
	mu  sync.Mutex
	off time.Duration
}

// Now is the real time plus every Advance so far.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// Start runs the API and returns once it accepts requests.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	n := testutil.StartNATS(t)
	cfg := n.Ensure(t)
	var store objstore.Store = o.Store
	if store == nil {
		f, err := objstore.NewFolder(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		store = f
	}
	s := &Server{NATS: n, Store: store, Config: cfg, Clock: &Clock{}}
	opt := secrets.OptionsFrom(cfg.Secrets)
	opt.Now = s.Clock.Now
	opt.BeforeFinish = o.BeforeFinish
	if o.InlineMax != 0 {
		opt.InlineMax = o.InlineMax
	}
	var err error
	s.Service, err = secrets.New(t.Context(), n.JS, store, opt, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	aopt := secretapi.OptionsFrom(cfg)
	aopt.Registerer = o.Registerer
	if !o.RateLimits {
		aopt.TextRate, aopt.FileRate, aopt.ReadRate = config.Rate{}, config.Rate{}, config.Rate{}
		aopt.OpenUploadsPerClient, aopt.OpenUploads = 0, 0
	}
	if o.API != nil {
		o.API(&aopt)
	}
	mux := http.NewServeMux()
	secretapi.New(s.Service, aopt, testutil.Logger(t)).Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}
