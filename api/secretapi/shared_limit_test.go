package secretapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/netintel/netintel/api/secretapi"
	"github.com/netintel/netintel/api/secretapi/secretapitest"
	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

// Two copies of the secret API give one client one budget per limit, not
// one each; without NATS a request needing a fresh budget gets 503.
func TestRateLimits_SharedAcrossCopies(t *testing.T) {
	s := secretapitest.Start(t, secretapitest.Options{})
	var urls []string
	for range 2 {
		_, js := testutil.Connect(t, s.NATS.URL)
		kv, err := js.KeyValue(t.Context(), gw.RateLimitsBucket)
		if err != nil {
			t.Fatal(err)
		}
		opt := secretapi.OptionsFrom(s.Config)
		opt.TextRate = config.Rate{PerMinute: 0.01, Burst: 4}
		opt.Limiters = gw.AddrLimiters(gw.NewBudgets(kv, gw.LeaseConfig{}))
		mux := http.NewServeMux()
		secretapi.New(s.Service, opt, testutil.Logger(t)).Mount(mux)
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	post := func(base string) int {
		res, err := http.Post(base+"/api/saveSecret", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	served := 0
	for i := range 12 {
		if code := post(urls[i%2]); code != 429 {
			served++
		}
	}
	if served != 4 {
		t.Fatalf("%d saves past the limit of two copies, want 4 (one burst)", served)
	}
	s.NATS.Stop()
	if code := post(urls[1]); code != 503 {
		t.Fatalf("NATS down: status %d, want 503", code)
	}
}
