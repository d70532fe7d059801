package tldapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/probe"
)

// Two copies of the TLD API give one client one budget of RatePerMinute,
// not one each; without NATS a request needing a fresh budget gets 503.
func TestRateLimit_SharedAcrossCopies(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	store, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for range 2 {
		_, js := testutil.Connect(t, n.URL)
		kv, err := js.KeyValue(t.Context(), gw.RateLimitsBucket)
		if err != nil {
			t.Fatal(err)
		}
		h := New(&fakeState{progress: probe.Progress{Status: probe.StatusIdle}}, store,
			Options{Prefix: "tld/", RatePerMinute: 10, Limiters: gw.AddrLimiters(gw.NewBudgets(kv, gw.LeaseConfig{}))}, testutil.Logger(t))
		mux := http.NewServeMux()
		h.Mount(mux)
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	ok := 0
	for i := range 30 {
		resp, _ := get(t, urls[i%2]+"/api/status")
		switch resp.StatusCode {
		case 200:
			ok++
		case 429:
		default:
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	// 10 a minute refill one every 6 s: at most one more while the loop runs.
	if ok < 10 || ok > 11 {
		t.Fatalf("%d requests served by two copies, want 10 (one budget)", ok)
	}
	n.Stop()
	if resp, _ := get(t, urls[0]+"/api/results"); resp.StatusCode != 503 {
		t.Fatalf("NATS down: status %d, want 503", resp.StatusCode)
	}
}
