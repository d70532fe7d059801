package gateway_test

import (
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/netintel/netintel/gateway"
	"github.com/netintel/netintel/gateway/gatewaytest"
)

func TestValidator(t *testing.T) {
	rec := &Record{ID: "00000000000000aa", User: "u", Tier: "pro"}
	tests := []struct {
		name        string
		setup       func(f *gatewaytest.FakeValidator)
		credits     int64
		wantErr     error
		wantDeduct  int
		wantDeducts int // calls to /deduct
	}{
		{"ok", nil, 3, nil, 3, 1},
		{"inactive", func(f *gatewaytest.FakeValidator) { f.Inactive[rec.ID] = true }, 1, ErrSubscriptionInactive, 0, 0},
		{"not enough credits", func(f *gatewaytest.FakeValidator) { f.Credits[rec.ID] = 2 }, 3, ErrNoCredits, 0, 0},
		{"check 5xx then ok", func(f *gatewaytest.FakeValidator) { f.FailNext["/check"] = 1 }, 1, nil, 1, 1},
		{"check always 5xx", func(f *gatewaytest.FakeValidator) { f.FailNext["/check"] = 9 }, 1, ErrValidatorUnavailable, 0, 0},
		{"deduct times out once: retried, deducted once", func(f *gatewaytest.FakeValidator) { f.StallNext["/deduct"] = 1 }, 2, nil, 2, 2},
		{"deduct always times out: fails closed, at most once", func(f *gatewaytest.FakeValidator) { f.StallNext["/deduct"] = 9 }, 2, ErrValidatorUnavailable, 2, 2},
		{"deduct 5xx always", func(f *gatewaytest.FakeValidator) { f.FailNext["/deduct"] = 9 }, 1, ErrValidatorUnavailable, 0, 2},
		{"check times out", func(f *gatewaytest.FakeValidator) { f.StallNext["/check"] = 9 }, 1, ErrValidatorUnavailable, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := gatewaytest.NewFakeValidator()
			f.Token = "svc-token"
			f.Credits[rec.ID] = 100
			f.Stall = 500 * time.Millisecond
			if tc.setup != nil {
				tc.setup(f)
			}
			srv := httptest.NewServer(f)
			t.Cleanup(srv.Close)
			v := NewValidator(srv.URL+"/", "svc-token", 150*time.Millisecond, 1)
			_, err := v.Check(t.Context(), rec, tc.credits)
			if err == nil {
				_, err = v.Deduct(t.Context(), rec, tc.credits, IdempotencyKey(IdemRequest{KeyID: rec.ID, Credits: tc.credits}))
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got := f.Deducted(); got != tc.wantDeduct {
				t.Fatalf("deducted %d credits, want %d", got, tc.wantDeduct)
			}
			if calls := f.CallCount("/deduct"); calls != tc.wantDeducts {
				t.Fatalf("%d calls to /deduct, want %d", calls, tc.wantDeducts)
			}
		})
	}
}

func TestIdempotencyKey(t *testing.T) {
	base := IdemRequest{KeyID: "k1", Customer: "retry-1", Method: "POST", Path: "/api/v1/ip/batch",
		Query: "x=1", Body: []byte(`{"ips":["192.0.2.1"]}`), Credits: 1}
	a := IdempotencyKey(base)
	if b := IdempotencyKey(base); a != b {
		t.Fatal("the same request with the same customer key gives different idempotency keys")
	}
	// Any difference in the request is another deduction (issue 31 item 1:
	// a reused header made every later request free).
	tests := []struct {
		name string
		mod  func(r *IdemRequest)
	}{
		{"key id", func(r *IdemRequest) { r.KeyID = "k2" }},
		{"customer key", func(r *IdemRequest) { r.Customer = "retry-2" }},
		{"method", func(r *IdemRequest) { r.Method = "GET" }},
		{"path", func(r *IdemRequest) { r.Path = "/api/v1/shadow_vpn/lookup/192.0.2.1" }},
		{"query", func(r *IdemRequest) { r.Query = "x=2" }},
		{"body", func(r *IdemRequest) { r.Body = []byte(`{"ips":["192.0.2.2"]}`) }},
		{"credits", func(r *IdemRequest) { r.Credits = 2 }},
		{"field boundary", func(r *IdemRequest) { r.Path, r.Query = r.Path+"x", "=1" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			tc.mod(&r)
			if IdempotencyKey(r) == a {
				t.Fatal("a different request shares the idempotency key")
			}
		})
	}
	r1 := IdempotencyKey(IdemRequest{KeyID: "k1"})
	if r2 := IdempotencyKey(IdemRequest{KeyID: "k1"}); r1 == r2 {
		t.Fatal("random idempotency keys repeat")
	}
}
