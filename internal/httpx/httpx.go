// Package httpx holds the small HTTP helpers every product's handlers share:
// JSON responses, client addresses and per-client rate limiting.
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// WriteJSON writes v as JSON with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// Error is a failed request as every JSON API of netintel answers it: an
// HTTP status and the body {"error": {"code", "message"[, "required_tier"]}}
// (ErrorBody). Handlers build or return one; Write answers it. The secret
// service's original-compatible routes and streamed bodies keep their own
// plain shapes.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// RequiredTier names the tier a 403 asks for.
	RequiredTier string `json:"required_tier,omitempty"`
	// RetryAfter, when set, is sent as the Retry-After header (seconds).
	RetryAfter string `json:"-"`
}

// Error says the code and message (for logs).
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// ErrorBody is the JSON body of an Error.
type ErrorBody struct {
	Error *Error `json:"error"`
}

// Write answers err: an *Error (anywhere in its chain) as its status,
// headers and body; any other error as 500 "internal", without its text
// (the caller logs it).
func Write(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error; see the server log"}
	}
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	WriteJSON(w, e.Status, ErrorBody{Error: e})
}

// WriteError answers an Error of status, code and msg.
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	Write(w, &Error{Status: status, Code: code, Message: msg})
}

// MethodNotAllowed answers 405 with Allow and the JSON error body
// (code method_not_allowed), for the paths ServeMux would otherwise answer
// in plain text.
func MethodNotAllowed(allow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		WriteError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here; use "+allow)
	})
}

// ClientIP returns the caller's address. With trustProxy (one trusted
// proxy, a load balancer, in front) it is the last X-Forwarded-For entry:
// the address that proxy saw and appended. Entries to its left come from
// the client and can be forged, so they never count. Otherwise, and when
// the last entry is not an address, it is the connection's remote address.
func ClientIP(r *http.Request, trustProxy bool) string {
	if trustProxy {
		if vals := r.Header.Values("X-Forwarded-For"); len(vals) > 0 {
			last := vals[len(vals)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if ip := net.ParseIP(strings.TrimSpace(last)); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Limiter is a per-key token bucket (for example per client address).
// Idle keys are forgotten after a while, so memory stays bounded by the
// number of recently active clients.
type Limiter struct {
	rate  rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*entry
	lastGC  time.Time
}

type entry struct {
	l    *rate.Limiter
	seen time.Time
}

// NewLimiter allows perMinute requests a minute per key with the given burst.
func NewLimiter(perMinute float64, burst int) *Limiter {
	return &Limiter{rate: rate.Limit(perMinute / 60), burst: burst, buckets: map[string]*entry{}, lastGC: time.Now()}
}

// Allow takes a token for key. When none is left it returns false and the
// time until one is available.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastGC) > time.Minute {
		for k, e := range l.buckets {
			if now.Sub(e.seen) > 10*time.Minute {
				delete(l.buckets, k)
			}
		}
		l.lastGC = now
	}
	e, ok := l.buckets[key]
	if !ok {
		e = &entry{l: rate.NewLimiter(l.rate, l.burst)}
		l.buckets[key] = e
	}
	e.seen = now
	res := e.l.ReserveN(now, 1)
	if !res.OK() {
		return false, time.Minute
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d
	}
	return true, 0
}

// AddrLimiter limits requests per key (a client address). *Limiter keeps
// its buckets in this process; gateway.AddrLimiter shares them between
// every copy of the API through NATS.
type AddrLimiter interface {
	// Take takes one request of key's budget. It returns false and the
	// wait until one is free when none is left, or an error when the
	// shared budget cannot be reached (the request is then refused: 503).
	Take(ctx context.Context, key string) (bool, time.Duration, error)
}

// AddrLimiters makes the limiter of one scope (an endpoint or a group of
// endpoints sharing a budget) allowing perMinute requests a minute per
// key with the given burst.
type AddrLimiters func(scope string, perMinute float64, burst int) AddrLimiter

// LocalLimiters makes per-process limiters (NewLimiter).
func LocalLimiters(_ string, perMinute float64, burst int) AddrLimiter {
	return NewLimiter(perMinute, burst)
}

// Take is Allow; a local limiter never fails.
func (l *Limiter) Take(_ context.Context, key string) (bool, time.Duration, error) {
	ok, wait := l.Allow(key)
	return ok, wait, nil
}

// RetryAfter formats a wait as whole seconds for the Retry-After header (at least 1).
func RetryAfter(d time.Duration) string {
	return strconv.Itoa(int(math.Max(1, math.Ceil(d.Seconds()))))
}
