// Package httpx holds the small HTTP helpers every product's handlers share:
// JSON responses, the one error shape and its writer, client addresses and
// per-client rate limiting.
//
// A JSON handler is a HandlerFunc: it writes its successful answer and
// returns its failure, an *Error (status, code, message, Retry-After) or a
// Responder (a body of another shape, such as a 422), which Handle answers
// with Write; any other error is a failure of ours, logged and answered
// 500 internal without its text. Middleware answers with Write too. A
// handler that streams a body (a CSV export, a file download, a proxied
// answer) stays a plain http.HandlerFunc and hands the failures before its
// first byte to Fail.
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
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

// Responder is a failure that writes its own answer: a body of another
// shape than ErrorBody (the IP API's 422 validation body). Write lets it
// answer itself.
type Responder interface {
	error
	// Respond writes the whole answer (status, headers, body).
	Respond(w http.ResponseWriter)
}

// Write answers err: an *Error (anywhere in its chain) as its status,
// headers and body; a Responder as it writes itself; any other error as 500
// "internal", without its text (Handle logs it).
func Write(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		var r Responder
		if errors.As(err, &r) {
			r.Respond(w)
			return
		}
		e = errInternal
	}
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	WriteJSON(w, e.Status, ErrorBody{Error: e})
}

// errInternal answers an error that is neither an *Error nor a Responder.
var errInternal = &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error; see the server log"}

// HandlerFunc is a JSON handler: it writes its own successful answer and
// returns its failure (an *Error, a Responder or any other error) for the
// one writer, Write, to answer. Handlers that stream a body (a CSV export,
// a file download) stay plain http.HandlerFuncs.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Handle adapts h: a non-nil error h returns is answered by Fail.
func Handle(log *slog.Logger, h HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			Fail(log, w, r, err)
		}
	}
}

// Fail answers the failure of r with Write. An error that is neither an
// *Error nor a Responder is a failure of ours: it is logged at error level
// with the request's method and route pattern (not its path, which may
// carry an address or a secret's id) and answered 500 internal without its
// text. Handle calls it; a streaming handler calls it for a failure before
// its first byte.
func Fail(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	var resp Responder
	if !errors.As(err, &e) && !errors.As(err, &resp) {
		log.Error("request failed", "method", r.Method, "route", r.Pattern, "err", err)
	}
	Write(w, err)
}

// MethodNotAllowed answers 405 with Allow and the JSON error body
// (code method_not_allowed), for the paths ServeMux would otherwise answer
// in plain text.
func MethodNotAllowed(allow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		Write(w, &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Message: r.Method + " is not allowed here; use " + allow})
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

// LimitTimeout bounds the wait for a shared per-address budget; past it the
// request is refused (fail closed).
const LimitTimeout = 2 * time.Second

// RateLimit is the middleware of a per-client-address budget for the JSON
// APIs: past the budget it answers 429 rate_limited with Retry-After; when
// the budget cannot be reached (the shared one, over NATS) 503 unavailable
// with Retry-After 5, and the request is refused.
type RateLimit struct {
	// Limiter holds the budgets, one per client address (ClientIP).
	Limiter AddrLimiter
	// TrustProxy takes the client address from X-Forwarded-For.
	TrustProxy bool
	// Log gets a warning when the budget cannot be reached.
	Log *slog.Logger
	// Down is the message of the 503.
	Down string
	// Exceeded is the message of the 429, given the wait in whole seconds
	// (the Retry-After value).
	Exceeded func(retryAfter string) string
}

// Wrap returns next behind the budget.
func (l RateLimit) Wrap(next http.Handler) http.Handler {
	down := &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: l.Down, RetryAfter: "5"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), LimitTimeout)
		ok, wait, err := l.Limiter.Take(ctx, ClientIP(r, l.TrustProxy))
		cancel()
		if err != nil {
			l.Log.Warn("rate limit unavailable", "err", err)
			Write(w, down)
			return
		}
		if !ok {
			after := RetryAfter(wait)
			Write(w, &Error{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: l.Exceeded(after), RetryAfter: after})
			return
		}
		next.ServeHTTP(w, r)
	})
}
