package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestLimiter_BurstThenRetryAfter(t *testing.T) {
	l := NewLimiter(60, 3) // one a second, burst 3
	for i := 0; i < 3; i++ {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("request %d refused inside the burst", i+1)
		}
	}
	ok, wait := l.Allow("a")
	if ok || wait <= 0 || wait > time.Second {
		t.Fatalf("4th = %v wait %s, want refused with wait in (0,1s]", ok, wait)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another key shares the bucket")
	}
	if got := RetryAfter(wait); got != "1" {
		t.Fatalf("RetryAfter(%s) = %q, want 1", wait, got)
	}
}

func TestClientIP(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.7:5555"
	r.Header.Set("X-Forwarded-For", "198.51.100.9, 10.0.0.1")
	if got := ClientIP(r, false); got != "192.0.2.7" {
		t.Errorf("untrusted = %s", got)
	}
	// The proxy appended 10.0.0.1; 198.51.100.9 came from the client.
	if got := ClientIP(r, true); got != "10.0.0.1" {
		t.Errorf("trusted = %s, want the entry the proxy appended", got)
	}
	// A client forging the header cannot pick its own address.
	r.Header.Set("X-Forwarded-For", "203.0.113.1, 192.0.2.99")
	r.Header.Add("X-Forwarded-For", "198.51.100.20")
	if got := ClientIP(r, true); got != "198.51.100.20" {
		t.Errorf("forged chain = %s, want 198.51.100.20", got)
	}
	r.Header.Set("X-Forwarded-For", "garbage")
	if got := ClientIP(r, true); got != "192.0.2.7" {
		t.Errorf("garbage XFF = %s", got)
	}
}

// downLimiter is a shared budget that cannot be reached.
type downLimiter struct{}

func (downLimiter) Take(context.Context, string) (bool, time.Duration, error) {
	return false, 0, errors.New("nats: timeout")
}

// RateLimit passes requests inside the budget, answers 429 rate_limited
// with Retry-After past it, and 503 unavailable (Retry-After 5) when the
// budget cannot be reached.
func TestRateLimit_Wrap(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { WriteJSON(w, http.StatusOK, "ok") })
	exceeded := func(after string) string { return "over the budget; retry after " + after + "s" }
	tests := []struct {
		name   string
		lim    AddrLimiter
		status []int // of consecutive requests
		code   string
		retry  string
		msg    string
	}{
		{"inside, then past the budget", NewLimiter(1, 1), []int{200, 429}, "rate_limited", "60", "over the budget; retry after 60s"},
		{"budget unreachable", downLimiter{}, []int{503}, "unavailable", "5", "the limit cannot be checked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := RateLimit{Limiter: tt.lim, Log: slog.New(slog.DiscardHandler), Down: "the limit cannot be checked", Exceeded: exceeded}.Wrap(next)
			var rec *httptest.ResponseRecorder
			for i, want := range tt.status {
				rec = httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
				if rec.Code != want {
					t.Fatalf("request %d: %d, want %d (%s)", i+1, rec.Code, want, rec.Body)
				}
			}
			var body ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == nil {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if body.Error.Code != tt.code || body.Error.Message != tt.msg || rec.Header().Get("Retry-After") != tt.retry {
				t.Errorf("got %+v Retry-After %q", body.Error, rec.Header().Get("Retry-After"))
			}
		})
	}
}
