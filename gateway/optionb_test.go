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
				_, err = v.Deduct(t.Context(), rec, tc.credits, IdempotencyKey(rec.ID, ""))
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
	a, b := IdempotencyKey("k1", "retry-1"), IdempotencyKey("k1", "retry-1")
	if a != b {
		t.Fatal("same customer key gives different idempotency keys")
	}
	if a == IdempotencyKey("k2", "retry-1") {
		t.Fatal("two keys share an idempotency key")
	}
	r1 := IdempotencyKey("k1", "")
	if r2 := IdempotencyKey("k1", ""); r1 == r2 {
		t.Fatal("random idempotency keys repeat")
	}
}
