package ipapi

import (
	"testing"

	gw "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/internal/httpx"
	"github.com/netintel/netintel/internal/testutil"
)

// sharedLimiters is one API copy's shared per-address limiters: its own
// NATS connection and leases on the ratelimits bucket of n.
func sharedLimiters(t *testing.T, n *testutil.NATS) httpx.AddrLimiters {
	t.Helper()
	_, js := testutil.Connect(t, n.URL)
	kv, err := js.KeyValue(t.Context(), gw.RateLimitsBucket)
	if err != nil {
		t.Fatal(err)
	}
	return gw.AddrLimiters(gw.NewBudgets(kv, gw.LeaseConfig{}))
}

// Two API copies give one client address one /public budget, not one
// each; without NATS a request needing a fresh budget fails closed.
func TestPublic_SharedAcrossCopies(t *testing.T) {
	n := testutil.StartNATS(t)
	n.Ensure(t)
	copies := []*fixture{
		newFixture(t, Options{PublicPerMinute: 0.01, PublicBurst: 3, TrustProxy: true, Limiters: sharedLimiters(t, n)}),
		newFixture(t, Options{PublicPerMinute: 0.01, PublicBurst: 3, TrustProxy: true, Limiters: sharedLimiters(t, n)}),
	}
	var codes []int
	for i := range 8 {
		r := call(t, copies[i%2].srv.URL, "GET", "/public/v1/lookup/198.51.100.7", "", "X-Forwarded-For: 2001:db8::7")
		codes = append(codes, r.status)
	}
	want := []int{200, 200, 200, 429, 429, 429, 429, 429}
	for i := range want {
		if codes[i] != want[i] {
			t.Fatalf("statuses %v, want %v (burst 3 for both copies together)", codes, want)
		}
	}
	n.Stop()
	if r := call(t, copies[0].srv.URL, "GET", "/public/v1/lookup/198.51.100.7", "", "X-Forwarded-For: 192.0.2.99"); r.status != 503 {
		t.Fatalf("NATS down: status %d, want 503", r.status)
	}
}
