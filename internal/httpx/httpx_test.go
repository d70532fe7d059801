package httpx

import (
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
